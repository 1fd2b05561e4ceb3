/**
 * The simulator answering the position operations of service-reference.md §3.10–§3.14, §3.20 and
 * §8.5 (ClosePosition, Reverse, ReversePosition, Flatten, FlattenEverything, CloseStrategy): the
 * exact body of each, which orders each cancels, the positions and fills after, and that each is
 * one transaction (a failure injected midway leaves the store's snapshot as it was).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok, positionObject, serve, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => {
  t = testEngine();
  t.engine.addAccount('Sim102');
  t.engine.addAtmTemplate({ name: 'Scalp', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 });
});
afterEach(() => t.cleanup());

const BASE = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
const place = (args: Record<string, unknown> = {}): string => ok(t.engine, 'PlaceOrder', { ...BASE, ...args }).orderId;
const getOrder = (orderId: string, account = 'Sim101') => ok(t.engine, 'GetOrder', { account, orderId });
const statesOf = (...ids: string[]) => ids.map((id) => getOrder(id).orderState);
const positionOf = (instrument = 'ES 09-25', account = 'Sim101') => {
  const { marketPosition, quantity, averagePrice } = ok(t.engine, 'GetPosition', { account, instrument });
  return { marketPosition, quantity, averagePrice };
};
const working = (account = 'Sim101'): string[] =>
  ok(t.engine, 'GetOrders', { account, activeOnly: true }).orders.map((o: { orderId: string }) => o.orderId);
const executions = (account = 'Sim101') => ok(t.engine, 'GetExecutions', { account }).executions;
const realized = (account = 'Sim101'): number => ok(t.engine, 'GetAccount', { account }).item.realizedProfitLoss;

describe('ClosePosition (§3.10)', () => {
  /** Long 4 ES 09-25 at an average of 101, last 104; an OCO pair working in ES and an order in NQ. */
  function long4() {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 200);
    place({ quantity: 2 });
    t.engine.setPrice('ES 09-25', 102);
    place({ quantity: 2 });
    place({ action: 'SELL', quantity: 4, orderType: 'LIMIT', limitPrice: 110, ocoId: 'b', orderId: 'target' });
    place({ action: 'SELL', quantity: 4, orderType: 'STOPMARKET', stopPrice: 95, ocoId: 'b', orderId: 'stop' });
    place({ instrument: 'NQ 09-25', orderType: 'LIMIT', limitPrice: 150, orderId: 'nq' });
    t.engine.setPrice('ES 09-25', 104);
  }

  it("closes all of it at market, cancelling the instrument's working orders; the position as it was just before", () => {
    long4();
    expect(serve(t.engine, 'ClosePosition', { account: 'sim101', instrument: 'ES 09-25' })).toEqual({
      status: 200,
      body: {
        closedPositions: [positionObject({ marketPosition: 'Long', quantity: 4, averagePrice: 101, marketPrice: 104, unrealizedProfitLoss: 600 })],
        success: true,
      },
    });
    expect(statesOf('target', 'stop', 'nq')).toEqual(['Cancelled', 'Cancelled', 'Working']);
    expect(ok(t.engine, 'GetPosition', { account: 'Sim101', instrument: 'ES 09-25' })).toEqual({ ...positionObject({ marketPrice: 104 }), success: true });
    expect(executions().at(-1)).toMatchObject({ marketPosition: 'Short', quantity: 4, price: 104, position: 0, isEntry: false, isExit: true, name: 'Exit' });
    const closing = ok(t.engine, 'GetOrders', { account: 'Sim101' }).orders.at(-1);
    expect(closing).toMatchObject({ name: 'Close', orderType: 'Market', orderAction: 'Sell', quantity: 4, orderState: 'Filled', averageFillPrice: 104 });
    expect(realized()).toBe(600);
  });

  it('closes a part by quantity at market, keeping the working orders and the average price', () => {
    long4();
    expect(ok(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25', quantity: 1 })).toEqual({
      closedPositions: [positionObject({ marketPosition: 'Long', quantity: 1, averagePrice: 101, marketPrice: 104, unrealizedProfitLoss: 150 })],
      success: true,
    });
    expect(positionOf()).toEqual({ marketPosition: 'Long', quantity: 3, averagePrice: 101 });
    expect(statesOf('target', 'stop', 'nq')).toEqual(['Working', 'Working', 'Working']);
    expect(realized()).toBe(150);
  });

  it.each([
    [10, 0.3, 3],
    [1, 0.1, 1],
    [1, 0.5, 1],
    [4, 0.25, 1],
    [3, 0.5, 2],
    [3, 0.34, 2],
    [7, 0.99, 7],
    [10, 1, 10],
  ])('by percent: %s contracts × %s closes ceil(p × n − 1e-9) = %d', (size, percent, closes) => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: size });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110, orderId: 'w' });
    const body = ok(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25', percent });
    expect(body.closedPositions).toEqual([positionObject({ marketPosition: 'Long', quantity: closes, averagePrice: 100, marketPrice: 100 })]);
    expect(positionOf().quantity).toBe(size - closes);
    // Only a close of everything cancels the instrument's orders.
    expect(statesOf('w')).toEqual([closes === size ? 'Cancelled' : 'Working']);
  });

  it('buys back a short (unrealized negated for the short side, NQ at 20 a point)', () => {
    t.engine.setPrice('NQ 09-25', 200);
    place({ instrument: 'NQ 09-25', action: 'SELL', quantity: 3 });
    t.engine.setPrice('NQ 09-25', 190);
    expect(ok(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'NQ 09-25', quantity: 2 }).closedPositions).toEqual([
      positionObject({ instrument: 'NQ 09-25', marketPosition: 'Short', quantity: 2, averagePrice: 200, marketPrice: 190, unrealizedProfitLoss: 400 }),
    ]);
    expect(positionOf('NQ 09-25')).toEqual({ marketPosition: 'Short', quantity: 1, averagePrice: 200 });
    expect(realized()).toBe(400);
  });

  it('a quantity larger than the position closes all of it (and cancels the orders); with both, quantity wins', () => {
    long4();
    expect(ok(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25', quantity: 1, percent: 0.9 }).closedPositions[0].quantity).toBe(1);
    // percent is not even checked when quantity is given.
    expect(ok(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25', quantity: 1, percent: 5 }).closedPositions[0].quantity).toBe(1);
    expect(statesOf('target', 'stop')).toEqual(['Working', 'Working']);
    expect(ok(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25', quantity: 50 }).closedPositions[0].quantity).toBe(2);
    expect(positionOf().quantity).toBe(0);
    expect(statesOf('target', 'stop', 'nq')).toEqual(['Cancelled', 'Cancelled', 'Working']);
  });

  it.each([
    ['never traded', () => {}],
    ['closed before', () => (place({ quantity: 2 }), place({ action: 'SELL', quantity: 2 }))],
  ])('with no position (%s): the exact text, and nothing cancelled or written', (_what, make) => {
    t.engine.setPrice('ES 09-25', 100);
    make();
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110 });
    const before = t.snapshot();
    const refusal = { status: 400, body: { error: "No positions found for instrument 'ES 09-25'" } };
    expect(serve(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25' })).toEqual(refusal);
    expect(serve(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25', quantity: 1 })).toEqual(refusal);
    expect(serve(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25', percent: 0.5 })).toEqual(refusal);
    expect(t.snapshot()).toEqual(before);
  });

  it('an injected failure on the closing order undoes the cancels', () => {
    long4();
    const before = t.snapshot();
    t.failAfterIds(0);
    expect(() => serve(t.engine, 'ClosePosition', { account: 'Sim101', instrument: 'ES 09-25' })).toThrow('injected failure');
    expect(t.snapshot()).toEqual(before);
  });
});

describe('Reverse (§3.11): the true inversion', () => {
  it.each([
    ['BUY', 'Long', 'Short', 300],
    ['SELL', 'Short', 'Long', -300],
  ] as const)('%s 2 then Reverse: two MARKET orders, two executions, %s 2 becomes %s 2', (action, from, to, pnl) => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 200);
    place({ action, quantity: 2 });
    const exit = action === 'BUY' ? 'SELL' : 'BUY';
    place({ action: exit, orderType: 'LIMIT', limitPrice: action === 'BUY' ? 110 : 90, ocoId: 'b', orderId: 'target' });
    place({ instrument: 'NQ 09-25', orderType: 'LIMIT', limitPrice: 150, orderId: 'nq' });
    t.engine.setPrice('ES 09-25', 103);
    expect(positionOf()).toEqual({ marketPosition: from, quantity: 2, averagePrice: 100 });
    const body = ok(t.engine, 'Reverse', { account: 'sim101', instrument: 'ES 09-25' });
    expect(body).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
    expect(positionOf()).toEqual({ marketPosition: to, quantity: 2, averagePrice: 103 });
    expect(statesOf('target', 'nq')).toEqual(['Cancelled', 'Working']);
    const side = action === 'BUY' ? 'Short' : 'Long';
    expect(executions().slice(1)).toEqual([
      expect.objectContaining({ marketPosition: side, quantity: 2, price: 103, position: 0, isEntry: false, isExit: true }),
      expect.objectContaining({ orderId: body.orderId, marketPosition: side, quantity: 2, price: 103, position: 2, isEntry: true, isExit: false }),
    ]);
    const [, , , closing, opening] = ok(t.engine, 'GetOrders', { account: 'Sim101' }).orders;
    expect(closing).toMatchObject({ name: 'Close', orderType: 'Market', orderAction: exit === 'SELL' ? 'Sell' : 'Buy', quantity: 2, orderState: 'Filled' });
    expect(opening).toMatchObject({ orderId: body.orderId, name: '', orderType: 'Market', quantity: 2, orderState: 'Filled', averageFillPrice: 103 });
    expect(realized()).toBe(pnl);
  });

  it('with no position: the text with the account as typed, and nothing done', () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ orderType: 'LIMIT', limitPrice: 90 });
    const before = t.snapshot();
    expect(serve(t.engine, 'Reverse', { account: 'sIM101', instrument: 'ES 09-25' })).toEqual({
      status: 400,
      body: { error: "No position found for instrument 'ES 09-25' in account 'sIM101'" },
    });
    expect(t.snapshot()).toEqual(before);
  });

  it('an injected failure on the opening order undoes the close and the cancels', () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2 });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110 });
    const before = t.snapshot();
    t.failAfterIds(1);
    expect(() => serve(t.engine, 'Reverse', { account: 'Sim101', instrument: 'ES 09-25' })).toThrow('injected failure');
    expect(t.snapshot()).toEqual(before);
  });
});

describe('ReversePosition (§3.12): close, then place', () => {
  const NEW = { ...BASE, action: 'SELL', quantity: 1, orderType: 'LIMIT', limitPrice: 110, timeInForce: 'GTC' };

  it("cancels the instrument's orders, closes the position, places the order asked for", () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2 });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 120, orderId: 'old' });
    expect(ok(t.engine, 'ReversePosition', { ...NEW, orderId: 'rp-1' })).toEqual({ orderId: 'rp-1', success: true });
    expect(statesOf('old', 'rp-1')).toEqual(['Cancelled', 'Working']);
    expect(positionOf()).toEqual({ marketPosition: 'Flat', quantity: 0, averagePrice: 0 });
  });

  it('with no position: the Reverse text with the account as typed, nothing done', () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ orderType: 'LIMIT', limitPrice: 90 });
    const before = t.snapshot();
    expect(serve(t.engine, 'ReversePosition', { ...NEW, account: 'sim101' })).toEqual({
      status: 400,
      body: { error: "No position found for instrument 'ES 09-25' in account 'sim101'" },
    });
    expect(t.snapshot()).toEqual(before);
  });

  it('a refused new order leaves the position and its orders as they were', () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2 });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 120 });
    const before = t.snapshot();
    expect(serve(t.engine, 'ReversePosition', { ...NEW, strategy: 'Nope' })).toEqual({ status: 400, body: { error: "ATM strategy template 'Nope' not found" } });
    expect(t.snapshot()).toEqual(before);
  });
});

describe('Flatten (§3.13): one account', () => {
  /**
   * Sim101: long 2 ES from an ATM entry (its Stop1 and Target1 working, OCO-linked), short 1 NQ,
   * an OCO pair working in the flat CL; Sim102: long 1 ES and a working order.
   */
  function book() {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 200);
    t.engine.setPrice('CL 10-25', 60);
    place({ quantity: 2, strategy: 'Scalp', orderId: 'atm' });
    const [stop, target] = working();
    place({ instrument: 'NQ 09-25', action: 'SELL' });
    place({ instrument: 'CL 10-25', orderType: 'LIMIT', limitPrice: 55, ocoId: 'cl', orderId: 'cl-limit' });
    place({ instrument: 'CL 10-25', orderType: 'STOPMARKET', stopPrice: 65, ocoId: 'cl', orderId: 'cl-stop' });
    place({ account: 'Sim102' });
    place({ account: 'Sim102', action: 'SELL', orderType: 'LIMIT', limitPrice: 110, orderId: 'other' });
    t.engine.setPrice('ES 09-25', 101);
    t.engine.setPrice('NQ 09-25', 195);
    return { stop: stop!, target: target! };
  }

  it('cancels every working order of the account (OCO and ATM brackets included) and closes every position', () => {
    const { stop, target } = book();
    expect(working()).toEqual([stop, target, 'cl-limit', 'cl-stop']);
    expect(serve(t.engine, 'Flatten', { account: 'sim101' })).toEqual({
      status: 200,
      body: {
        closedPositions: [
          positionObject({ marketPosition: 'Long', quantity: 2, averagePrice: 100, marketPrice: 101, unrealizedProfitLoss: 100 }),
          positionObject({ instrument: 'NQ 09-25', marketPosition: 'Short', quantity: 1, averagePrice: 200, marketPrice: 195, unrealizedProfitLoss: 100 }),
        ],
        success: true,
      },
    });
    expect(working()).toEqual([]);
    expect(statesOf(stop, target, 'cl-limit', 'cl-stop')).toEqual(['Cancelled', 'Cancelled', 'Cancelled', 'Cancelled']);
    expect(ok(t.engine, 'GetPositions', { account: 'Sim101' })).toEqual({ positions: [], count: 0, success: true });
    expect(realized()).toBe(200);
    expect(working('Sim102')).toEqual(['other']);
    expect(positionOf('ES 09-25', 'Sim102').quantity).toBe(1);
    // Later prices fill nothing of what was cancelled.
    t.engine.setPrice('ES 09-25', 90);
    expect(positionOf().quantity).toBe(0);
  });

  it("with an instrument: only that instrument's orders and position", () => {
    const { stop, target } = book();
    expect(ok(t.engine, 'Flatten', { account: 'Sim101', instrument: 'ES 09-25' }).closedPositions).toEqual([
      positionObject({ marketPosition: 'Long', quantity: 2, averagePrice: 100, marketPrice: 101, unrealizedProfitLoss: 100 }),
    ]);
    expect(statesOf(stop, target)).toEqual(['Cancelled', 'Cancelled']);
    expect(working()).toEqual(['cl-limit', 'cl-stop']);
    expect(positionOf('NQ 09-25').quantity).toBe(1);
  });

  it('with no position: the warning body, and the working orders still cancelled', () => {
    t.engine.setPrice('CL 10-25', 60);
    place({ instrument: 'CL 10-25', orderType: 'LIMIT', limitPrice: 55, orderId: 'cl' });
    const empty = { closedPositions: [], success: true, warning: 'No positions to flatten' };
    expect(ok(t.engine, 'Flatten', { account: 'Sim101' })).toEqual(empty);
    expect(statesOf('cl')).toEqual(['Cancelled']);
    const before = t.snapshot();
    expect(ok(t.engine, 'Flatten', { account: 'Sim101' })).toEqual(empty);
    expect(t.snapshot()).toEqual(before);
  });

  it('is one transaction: a failure injected on the second close undoes the cancels and the first close', () => {
    book();
    const before = t.snapshot();
    t.failAfterIds(1);
    expect(() => serve(t.engine, 'Flatten', { account: 'Sim101' })).toThrow('injected failure');
    expect(t.snapshot()).toEqual(before);
  });
});

describe('FlattenEverything (§3.14)', () => {
  /** Sim101 long 2 ES, short 1 NQ, orders in ES and the flat CL; Sim102 short 1 ES, long 3 NQ, orders in NQ and CL. */
  function book() {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 200);
    t.engine.setPrice('CL 10-25', 60);
    place({ quantity: 2 });
    place({ instrument: 'NQ 09-25', action: 'SELL' });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110, orderId: 'a-es' });
    place({ instrument: 'CL 10-25', orderType: 'LIMIT', limitPrice: 50, orderId: 'a-cl' });
    place({ account: 'Sim102', action: 'SELL' });
    place({ account: 'Sim102', instrument: 'NQ 09-25', quantity: 3 });
    place({ account: 'Sim102', instrument: 'NQ 09-25', action: 'SELL', orderType: 'LIMIT', limitPrice: 250, orderId: 'b-nq' });
    place({ account: 'Sim102', instrument: 'CL 10-25', orderType: 'LIMIT', limitPrice: 50, orderId: 'b-cl' });
  }
  const A_ES = positionObject({ marketPosition: 'Long', quantity: 2, averagePrice: 100, marketPrice: 100 });
  const A_NQ = positionObject({ instrument: 'NQ 09-25', marketPosition: 'Short', quantity: 1, averagePrice: 200, marketPrice: 200 });
  const B_ES = positionObject({ account: 'Sim102', marketPosition: 'Short', quantity: 1, averagePrice: 100, marketPrice: 100 });
  const B_NQ = positionObject({ account: 'Sim102', instrument: 'NQ 09-25', marketPosition: 'Long', quantity: 3, averagePrice: 200, marketPrice: 200 });
  const open = () => ok(t.engine, 'GetAllPositions', {}).positions.map((p: { account: string; instrument: string }) => `${p.account} ${p.instrument}`);
  const allWorking = () => [...working('Sim101'), ...working('Sim102')];

  it('{} closes every position and cancels every working order in every account', () => {
    book();
    expect(serve(t.engine, 'FlattenEverything', {})).toEqual({
      status: 200,
      body: { orderIds: ['a-es', 'a-cl', 'b-nq', 'b-cl'], closedPositions: [A_ES, A_NQ, B_ES, B_NQ], success: true },
    });
    expect(open()).toEqual([]);
    expect(allWorking()).toEqual([]);
  });

  it("with an account: that account's positions, and all its orders (in flat instruments too)", () => {
    book();
    expect(ok(t.engine, 'FlattenEverything', { account: 'sim102' })).toEqual({ orderIds: ['b-nq', 'b-cl'], closedPositions: [B_ES, B_NQ], success: true });
    expect(open()).toEqual(['Sim101 ES 09-25', 'Sim101 NQ 09-25']);
    expect(allWorking()).toEqual(['a-es', 'a-cl']);
  });

  it("with an instrument: that instrument's positions and orders in every account", () => {
    book();
    expect(ok(t.engine, 'FlattenEverything', { instrument: 'NQ 09-25' })).toEqual({ orderIds: ['b-nq'], closedPositions: [A_NQ, B_NQ], success: true });
    expect(open()).toEqual(['Sim101 ES 09-25', 'Sim102 ES 09-25']);
    expect(allWorking()).toEqual(['a-es', 'a-cl', 'b-cl']);
  });

  it('with a side: only positions of that side, and only the orders of the positions closed', () => {
    book();
    expect(ok(t.engine, 'FlattenEverything', { marketPosition: 'long' })).toEqual({ orderIds: ['a-es', 'b-nq'], closedPositions: [A_ES, B_NQ], success: true });
    expect(open()).toEqual(['Sim101 NQ 09-25', 'Sim102 ES 09-25']);
    expect(allWorking()).toEqual(['a-cl', 'b-cl']);
  });

  it('with every filter: the positions meeting all of them', () => {
    book();
    expect(ok(t.engine, 'FlattenEverything', { account: 'Sim101', instrument: 'NQ 09-25', marketPosition: 'Short' })).toEqual({
      orderIds: [],
      closedPositions: [A_NQ],
      success: true,
    });
    expect(open()).toEqual(['Sim101 ES 09-25', 'Sim102 ES 09-25', 'Sim102 NQ 09-25']);
  });

  it('with nothing matching: the warning, nothing written', () => {
    book();
    const before = t.snapshot();
    expect(ok(t.engine, 'FlattenEverything', { account: 'Sim101', instrument: 'ES 09-25', marketPosition: 'short' })).toEqual({
      orderIds: [],
      closedPositions: [],
      success: true,
      warning: 'No positions to flatten',
    });
    expect(t.snapshot()).toEqual(before);
  });

  it('is one transaction: a failure injected on the last close undoes everything', () => {
    book();
    const before = t.snapshot();
    t.failAfterIds(3);
    expect(() => serve(t.engine, 'FlattenEverything', {})).toThrow('injected failure');
    expect(t.snapshot()).toEqual(before);
  });
});

describe('CloseStrategy (§3.20)', () => {
  beforeEach(() => t.engine.setPrice('ES 09-25', 100));

  it("cancels the strategy's orders and closes its part of the position, leaving the rest", () => {
    place({ quantity: 2, strategy: 'Scalp', orderId: 'atm-1' });
    const [stop, target] = working();
    place({ quantity: 1 });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 120, orderId: 'plain' });
    expect(getOrder(stop!).ownerStrategy).toEqual({ id: 'atm-1', name: 'Scalp', displayName: 'Scalp' });
    expect(serve(t.engine, 'CloseStrategy', { account: 'sim101', strategyId: 'atm-1' })).toEqual({
      status: 200,
      body: { strategyId: 'atm-1', success: true },
    });
    expect(statesOf(stop!, target!, 'plain')).toEqual(['Cancelled', 'Cancelled', 'Working']);
    expect(positionOf()).toEqual({ marketPosition: 'Long', quantity: 1, averagePrice: 100 });
    expect(executions().at(-1)).toMatchObject({ marketPosition: 'Short', quantity: 2, position: 1, isExit: true });
    // The close belongs to the strategy, which is now finished.
    expect(ok(t.engine, 'GetOrders', { account: 'Sim101' }).orders.at(-1)).toMatchObject({
      name: 'Close',
      orderAction: 'Sell',
      quantity: 2,
      orderState: 'Filled',
      ownerStrategy: { id: 'atm-1', name: 'Scalp', displayName: 'Scalp' },
    });
    expect(serve(t.engine, 'CloseStrategy', { account: 'Sim101', strategyId: 'atm-1' }).status).toBe(400);
  });

  it('is one transaction: a failure injected on the close undoes the cancels', () => {
    place({ quantity: 2, strategy: 'Scalp', orderId: 'atm-1' });
    const before = t.snapshot();
    t.failAfterIds(0);
    expect(() => serve(t.engine, 'CloseStrategy', { account: 'Sim101', strategyId: 'atm-1' })).toThrow('injected failure');
    expect(t.snapshot()).toEqual(before);
  });

  it('cancels an entry that has not filled, and fills nothing', () => {
    place({ orderType: 'LIMIT', limitPrice: 95, strategy: 'Scalp', orderId: 'atm-2' });
    expect(ok(t.engine, 'CloseStrategy', { account: 'Sim101', strategyId: 'atm-2' })).toEqual({ strategyId: 'atm-2', success: true });
    expect(statesOf('atm-2')).toEqual(['Cancelled']);
    expect(executions()).toEqual([]);
  });

  it.each([
    ['unknown', () => {}],
    ['closed already', () => {
      place({ strategy: 'Scalp', orderId: 'x' });
      ok(t.engine, 'CloseStrategy', { account: 'Sim101', strategyId: 'x' });
    }],
    ['finished by its target', () => {
      place({ strategy: 'Scalp', orderId: 'x' });
      t.engine.setPrice('ES 09-25', 105);
    }],
    ['flattened', () => {
      place({ strategy: 'Scalp', orderId: 'x' });
      ok(t.engine, 'Flatten', { account: 'Sim101' });
    }],
    ['closed by a plain order', () => {
      place({ strategy: 'Scalp', orderId: 'x' });
      ok(t.engine, 'CancelOrders', { account: 'Sim101' });
      place({ action: 'SELL' });
    }],
    ['not an ATM order', () => place({ orderType: 'LIMIT', limitPrice: 90, orderId: 'x' })],
    ["another account's", () => place({ account: 'Sim102', strategy: 'Scalp', orderId: 'x' })],
  ])('refuses a strategy that is %s with the exact text, changing nothing', (_what, make) => {
    make();
    const before = t.snapshot();
    expect(serve(t.engine, 'CloseStrategy', { account: 'sim101', strategyId: 'x' })).toEqual({
      status: 400,
      body: { error: "Invalid request: strategyId: no active strategy 'x' in account 'Sim101'" },
    });
    expect(t.snapshot()).toEqual(before);
  });
});
