/**
 * The simulator answering the order operations of service-reference.md §3.1–§3.8 (PlaceOrder,
 * FlatPlace, Cancel, CancelOrders, CancelAllOrders, Change, Replace, CancelAndBracket): the exact
 * body of each, and the store afterwards. "Nothing written" is the store's snapshot unchanged.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok, orderObject, serve, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => {
  t = testEngine();
  t.engine.addAccount('Sim102');
});
afterEach(() => t.cleanup());

const BASE = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
/** Places through PlaceOrder; the new order's id. */
const place = (args: Record<string, unknown> = {}): string => ok(t.engine, 'PlaceOrder', { ...BASE, ...args }).orderId;
const getOrder = (orderId: string, account = 'Sim101') => ok(t.engine, 'GetOrder', { account, orderId });
const stateOf = (orderId: string, account = 'Sim101'): string => getOrder(orderId, account).orderState;
const statesOf = (...ids: string[]) => ids.map((id) => stateOf(id));
const positionOf = (instrument = 'ES 09-25', account = 'Sim101') => {
  const { marketPosition, quantity, averagePrice } = ok(t.engine, 'GetPosition', { account, instrument });
  return { marketPosition, quantity, averagePrice };
};
const terminal = (id: string) => ({ status: 400, body: { error: `Order linked to '${id}' not found or already terminal.` } });
const invalid = (text: string) => ({ status: 400, body: { error: `Invalid request: ${text}` } });
const scalp = { name: 'Scalp', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 };

describe('PlaceOrder with a client orderId (§1.6)', () => {
  it('answers the client id, and the order carries it as orderId and id', () => {
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, orderType: 'LIMIT', limitPrice: 95, orderId: 'ex-1' })).toEqual({
      status: 200,
      body: { orderId: 'ex-1', success: true },
    });
    expect(getOrder('ex-1')).toEqual({ ...orderObject({ orderId: 'ex-1', orderType: 'Limit', limitPrice: 95 }), success: true });
  });

  it.each([
    ['working', () => place({ orderType: 'LIMIT', limitPrice: 95, orderId: 'ex-1' })],
    ['filled', () => (t.engine.setPrice('ES 09-25', 100), place({ orderId: 'ex-1' }))],
    ['cancelled', () => ok(t.engine, 'Cancel', { account: 'Sim101', orderId: place({ orderType: 'LIMIT', limitPrice: 95, orderId: 'ex-1' }) })],
    ['expired', () => (place({ orderType: 'LIMIT', limitPrice: 95, orderId: 'ex-1' }), t.setTime('2025-09-03T14:00:00Z'))],
  ])('refuses the id again once used by a %s order, in any spelling of the account, writing nothing', (_state, make) => {
    make();
    t.engine.setPrice('ES 09-25', 100);
    const before = t.snapshot();
    const refusal = invalid("orderId: 'ex-1' is already used in account 'Sim101'");
    // A MARKET order would fill at once: refused, it fills nothing.
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, account: 'SIM101', orderId: 'ex-1' })).toEqual(refusal);
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, instrument: 'NQ 09-25', action: 'SELL', orderType: 'LIMIT', limitPrice: 1, orderId: 'ex-1' })).toEqual(refusal);
    expect(t.snapshot()).toEqual(before);
  });

  it('refuses a used id in FlatPlace and ReversePosition too, before closing anything', () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2, orderId: 'ex-1' });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110 });
    const before = t.snapshot();
    const refusal = invalid("orderId: 'ex-1' is already used in account 'Sim101'");
    expect(serve(t.engine, 'FlatPlace', { ...BASE, action: 'SELL', orderId: 'ex-1' })).toEqual(refusal);
    expect(serve(t.engine, 'ReversePosition', { ...BASE, action: 'SELL', orderId: 'ex-1' })).toEqual(refusal);
    expect(t.snapshot()).toEqual(before);
  });

  it('allows the same id in another account: each account finds its own order', () => {
    place({ orderType: 'LIMIT', limitPrice: 95, orderId: 'ex-1' });
    expect(ok(t.engine, 'PlaceOrder', { ...BASE, account: 'Sim102', instrument: 'NQ 09-25', orderType: 'LIMIT', limitPrice: 1, orderId: 'ex-1' })).toEqual({
      orderId: 'ex-1',
      success: true,
    });
    expect(getOrder('ex-1').instrument).toBe('ES 09-25');
    expect(getOrder('ex-1', 'Sim102')).toMatchObject({ account: 'Sim102', instrument: 'NQ 09-25' });
    ok(t.engine, 'Cancel', { account: 'Sim102', orderId: 'ex-1' });
    expect([stateOf('ex-1'), stateOf('ex-1', 'Sim102')]).toEqual(['Working', 'Cancelled']);
  });
});

describe('PlaceOrder guards (§3.1, §8.7)', () => {
  /** Puts Sim101 in ES 09-25 into a side: flat (never traded), flat (traded and closed), long 2 or short 1. */
  const sides: Record<string, () => void> = {
    'never traded': () => {},
    flat: () => (place({ quantity: 2 }), place({ action: 'SELL', quantity: 2 })),
    long: () => place({ quantity: 2 }),
    short: () => place({ action: 'SELL' }),
  };
  const held = { 'never traded': 'Flat', flat: 'Flat', long: 'Long', short: 'Short' } as const;

  it.each([
    ['never traded', 'flat', true],
    ['never traded', 'long,short', false],
    ['flat', 'flat', true],
    ['flat', 'long', false],
    ['long', 'long', true],
    ['long', 'flat', false],
    ['long', 'flat, short', false],
    ['long', 'Short , LONG', true],
    ['short', 'short', true],
    ['short', 'long,flat', false],
    ['short', 'flat,long,short', true],
  ] as const)('requireMarketPosition with the position %s and %j: placed %s', (side, required, placed) => {
    t.engine.setPrice('ES 09-25', 100);
    sides[side]!();
    const before = t.snapshot();
    const reply = serve(t.engine, 'PlaceOrder', { ...BASE, account: 'sim101', orderType: 'LIMIT', limitPrice: 90, requireMarketPosition: required });
    if (placed) {
      expect(reply).toEqual({ status: 200, body: { orderId: expect.any(String), success: true } });
      expect(stateOf(reply.body.orderId)).toBe('Working');
    } else {
      const list = required.split(',').map((s) => s.trim().toLowerCase()).join(', ');
      expect(reply).toEqual({
        status: 400,
        body: { error: `Market position requirement not met: ES 09-25 in account 'Sim101' is ${held[side]}; required ${list}` },
      });
      expect(t.snapshot()).toEqual(before);
    }
  });

  it('maxPositions counts the open positions of the account only (not flat ones, working orders or other accounts)', () => {
    for (const instrument of ['ES 09-25', 'NQ 09-25', 'CL 10-25', 'YM 09-25']) t.engine.setPrice(instrument, 100);
    place({ instrument: 'ES 09-25' });
    place({ instrument: 'NQ 09-25', action: 'SELL' });
    place({ instrument: 'CL 10-25' });
    place({ instrument: 'CL 10-25', action: 'SELL' }); // CL is flat again
    place({ instrument: 'YM 09-25', orderType: 'LIMIT', limitPrice: 90 }); // working, not a position
    place({ account: 'Sim102', instrument: 'GC 10-25' });
    const before = t.snapshot();
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, instrument: 'YM 09-25', maxPositions: 2 })).toEqual({
      status: 400,
      body: { error: "Max positions reached: account 'Sim101' has 2 open positions; maxPositions is 2" },
    });
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, instrument: 'CL 10-25', maxPositions: 1 }).body.error).toBe(
      "Max positions reached: account 'Sim101' has 2 open positions; maxPositions is 1",
    );
    expect(t.snapshot()).toEqual(before);
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, instrument: 'YM 09-25', maxPositions: 3 }).status).toBe(200);
    expect(positionOf('YM 09-25').quantity).toBe(1);
  });

  it('maxPositions applies only when the instrument is flat: adding to, reducing or turning a position over passes', () => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 100);
    place({ instrument: 'ES 09-25' });
    place({ instrument: 'NQ 09-25' });
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, quantity: 2, maxPositions: 1 }).status).toBe(200);
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, action: 'SELL', maxPositions: 1 }).status).toBe(200);
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, action: 'SELL', quantity: 5, maxPositions: 1 }).status).toBe(200);
    expect(positionOf()).toEqual({ marketPosition: 'Short', quantity: 3, averagePrice: 100 });
  });

  it('refuses a stop on the wrong side of the last price, and an unknown ATM template, writing nothing', () => {
    t.engine.setPrice('ES 09-25', 100);
    const before = t.snapshot();
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, orderType: 'STOPMARKET', stopPrice: 100 })).toEqual({
      status: 400,
      body: { error: 'Invalid request: stopPrice: a BUY stop must be above the last price 100 of ES 09-25' },
    });
    expect(serve(t.engine, 'PlaceOrder', { ...BASE, strategy: 'Nope' })).toEqual({ status: 400, body: { error: "ATM strategy template 'Nope' not found" } });
    expect(t.snapshot()).toEqual(before);
  });

  it('refuses a MARKET order while the instrument has no last price and its source is manual, writing nothing (§3.1)', () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPriceSource('*', 'manual', {});
    const before = t.snapshot();
    for (const args of [BASE, { ...BASE, strategy: 'Scalp' }]) {
      expect(serve(t.engine, 'PlaceOrder', args)).toEqual({ status: 400, body: { error: 'Invalid request: instrument: no last price for ES 09-25 in the simulator' } });
    }
    expect(t.snapshot()).toEqual(before);
  });

  it('fills a MARKET order with no last price at its root\'s demo price under the default source, brackets included', () => {
    t.engine.addAtmTemplate(scalp);
    const reply = serve(t.engine, 'PlaceOrder', { ...BASE, strategy: 'Scalp' });
    expect(reply.status).toBe(200);
    expect(t.engine.lastPrice('ES 09-25')).toBe(6000);
    expect(t.engine.listOrders().map((o) => [o.origin, o.state, o.avgFillPrice ?? o.stopPrice ?? o.limitPrice])).toEqual([
      ['client', 'FILLED', 6000],
      ['atm-stop-loss', 'WORKING', 6000 - scalp.stopLossTicks * scalp.tickSize],
      ['atm-profit-target', 'WORKING', 6000 + scalp.profitTargetTicks * scalp.tickSize],
    ]);
  });
});

describe('FlatPlace (§3.2)', () => {
  it("cancels the instrument's orders, closes the position, then places: one answer, the new order's id", () => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 200);
    place({ quantity: 2 });
    const target = place({ action: 'SELL', quantity: 2, orderType: 'LIMIT', limitPrice: 110, ocoId: 'b1' });
    const stop = place({ action: 'SELL', quantity: 2, orderType: 'STOPMARKET', stopPrice: 95, ocoId: 'b1' });
    const nq = place({ instrument: 'NQ 09-25', orderType: 'LIMIT', limitPrice: 150 });
    const other = place({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 90 });
    t.engine.setPrice('ES 09-25', 102);
    const body = ok(t.engine, 'FlatPlace', { ...BASE, action: 'SELL', quantity: 1, orderType: 'LIMIT', limitPrice: 105, orderId: 'fp-1' });
    expect(body).toEqual({ orderId: 'fp-1', success: true });
    expect(statesOf(target, stop, nq)).toEqual(['Cancelled', 'Cancelled', 'Working']);
    expect(stateOf(other, 'Sim102')).toBe('Working');
    expect(getOrder('fp-1')).toMatchObject({ orderState: 'Working', orderAction: 'Sell', limitPrice: 105 });
    expect(positionOf()).toEqual({ marketPosition: 'Flat', quantity: 0, averagePrice: 0 });
    const { executions } = ok(t.engine, 'GetExecutions', { account: 'Sim101' });
    expect(executions.at(-1)).toMatchObject({ marketPosition: 'Short', quantity: 2, price: 102, position: 0, isExit: true });
    expect(ok(t.engine, 'GetAccount', { account: 'Sim101' }).item.realizedProfitLoss).toBe(200);
  });

  it("cancels the instrument's orders even when flat, then places (a MARKET fills at once)", () => {
    t.engine.setPrice('ES 09-25', 100);
    const working = place({ orderType: 'LIMIT', limitPrice: 90 });
    const { orderId } = ok(t.engine, 'FlatPlace', { ...BASE, action: 'SELL', quantity: 3 });
    expect(stateOf(working)).toBe('Cancelled');
    expect(getOrder(orderId)).toMatchObject({ orderState: 'Filled', averageFillPrice: 100, filled: 3 });
    expect(positionOf()).toEqual({ marketPosition: 'Short', quantity: 3, averagePrice: 100 });
  });

  it.each([
    ['an unknown ATM template', { strategy: 'Nope' }, "ATM strategy template 'Nope' not found"],
    ['a stop on the wrong side', { orderType: 'STOPMARKET', stopPrice: 99 }, 'Invalid request: stopPrice: a BUY stop must be above the last price 100 of ES 09-25'],
    ['a used client id', { orderId: 'ex-1' }, "Invalid request: orderId: 'ex-1' is already used in account 'Sim101'"],
  ])('refused for %s, leaves the old orders working and the position open', (_what, change, error) => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2, orderId: 'ex-1' });
    const working = place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110, ocoId: 'b1' });
    const before = t.snapshot();
    expect(serve(t.engine, 'FlatPlace', { ...BASE, ...change })).toEqual({ status: 400, body: { error } });
    expect(t.snapshot()).toEqual(before);
    expect(stateOf(working)).toBe('Working');
    expect(positionOf()).toEqual({ marketPosition: 'Long', quantity: 2, averagePrice: 100 });
  });

  it('checks requireMarketPosition against the position as it was before the close', () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2 });
    const before = t.snapshot();
    expect(serve(t.engine, 'FlatPlace', { ...BASE, action: 'SELL', requireMarketPosition: 'short' })).toEqual({
      status: 400,
      body: { error: "Market position requirement not met: ES 09-25 in account 'Sim101' is Long; required short" },
    });
    expect(t.snapshot()).toEqual(before);
    expect(serve(t.engine, 'FlatPlace', { ...BASE, action: 'SELL', requireMarketPosition: 'long' }).status).toBe(200);
    expect(positionOf()).toEqual({ marketPosition: 'Short', quantity: 1, averagePrice: 100 });
  });

  it('checks maxPositions when the order is placed, into the instrument it has just flattened', () => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 200);
    place({ quantity: 2 });
    place({ instrument: 'NQ 09-25' });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110, orderId: 'w' });
    const before = t.snapshot();
    expect(serve(t.engine, 'FlatPlace', { ...BASE, action: 'SELL', maxPositions: 1 })).toEqual({
      status: 400,
      body: { error: "Max positions reached: account 'Sim101' has 1 open positions; maxPositions is 1" },
    });
    expect(t.snapshot()).toEqual(before);
    expect(serve(t.engine, 'FlatPlace', { ...BASE, action: 'SELL', maxPositions: 2 }).status).toBe(200);
    expect(positionOf()).toEqual({ marketPosition: 'Short', quantity: 1, averagePrice: 100 });
    expect(stateOf('w')).toBe('Cancelled');
  });

  it('an injected failure while placing the new order undoes the cancels and the close', () => {
    t.engine.setPrice('ES 09-25', 100);
    place({ quantity: 2 });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110 });
    const before = t.snapshot();
    t.failAfterIds(1); // the closing order gets its id; the new order's throws
    expect(() => serve(t.engine, 'FlatPlace', { ...BASE, action: 'SELL' })).toThrow('injected failure');
    expect(t.snapshot()).toEqual(before);
  });
});

describe('Cancel (§3.3)', () => {
  it('cancels the order and the rest of its OCO group, in other instruments too', () => {
    const a = place({ orderType: 'LIMIT', limitPrice: 90, ocoId: 'g' });
    const b = place({ orderType: 'LIMIT', limitPrice: 91, ocoId: 'g' });
    const c = place({ instrument: 'NQ 09-25', orderType: 'LIMIT', limitPrice: 1, ocoId: 'g' });
    const d = place({ orderType: 'LIMIT', limitPrice: 92 });
    expect(serve(t.engine, 'Cancel', { account: 'sim101', orderId: b })).toEqual({ status: 200, body: { orderId: b, success: true } });
    expect(statesOf(a, b, c, d)).toEqual(['Cancelled', 'Cancelled', 'Cancelled', 'Working']);
  });

  it("cancelling an ATM bracket cancels its other bracket", () => {
    t.engine.addAtmTemplate(scalp);
    t.engine.setPrice('ES 09-25', 100);
    place({ strategy: 'Scalp' });
    const [stop, target] = [t.id(2), t.id(3)];
    ok(t.engine, 'Cancel', { account: 'Sim101', orderId: target });
    expect(statesOf(stop, target)).toEqual(['Cancelled', 'Cancelled']);
  });

  it.each([
    ['unknown', () => 'nope'],
    ['filled', () => (t.engine.setPrice('ES 09-25', 100), place())],
    ['cancelled', () => {
      const id = place({ orderType: 'LIMIT', limitPrice: 90 });
      ok(t.engine, 'Cancel', { account: 'Sim101', orderId: id });
      return id;
    }],
    ['expired', () => {
      const id = place({ orderType: 'LIMIT', limitPrice: 90 });
      t.setTime('2025-09-02T21:00:00Z');
      return id;
    }],
    ["another account's", () => place({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 90 })],
  ])('refuses an %s order with the exact text, changing nothing', (_what, make) => {
    const id = make();
    t.engine.expireDayOrders();
    const before = t.snapshot();
    expect(serve(t.engine, 'Cancel', { account: 'Sim101', orderId: id })).toEqual(terminal(id));
    expect(t.snapshot()).toEqual(before);
  });
});

describe('CancelOrders (§3.4) and CancelAllOrders (§3.5)', () => {
  /** Two working orders in each of ES and NQ, in both accounts; ES's first pair an OCO group. */
  function book() {
    const ids: Record<string, string> = {};
    for (const account of ['Sim101', 'Sim102'])
      for (const instrument of ['ES 09-25', 'NQ 09-25'])
        for (const n of [1, 2])
          ids[`${account} ${instrument.slice(0, 2)} ${n}`] = place({ account, instrument, orderType: 'LIMIT', limitPrice: 10 * n, ...(instrument === 'ES 09-25' ? { ocoId: 'g' } : {}) });
    return ids;
  }
  const working = () =>
    ['Sim101', 'Sim102'].flatMap((account) => ok(t.engine, 'GetOrders', { account, activeOnly: true }).orders.map((o: { orderId: string }) => o.orderId));

  it('CancelOrders without an instrument cancels every working order of the account, oldest first', () => {
    const ids = book();
    expect(ok(t.engine, 'CancelOrders', { account: 'sim101' })).toEqual({
      orderIds: [ids['Sim101 ES 1'], ids['Sim101 ES 2'], ids['Sim101 NQ 1'], ids['Sim101 NQ 2']],
      success: true,
    });
    expect(working()).toEqual([ids['Sim102 ES 1'], ids['Sim102 ES 2'], ids['Sim102 NQ 1'], ids['Sim102 NQ 2']]);
  });

  it("CancelOrders with an instrument cancels only that instrument's orders of the account", () => {
    const ids = book();
    expect(ok(t.engine, 'CancelOrders', { account: 'Sim101', instrument: 'NQ 09-25' })).toEqual({
      orderIds: [ids['Sim101 NQ 1'], ids['Sim101 NQ 2']],
      success: true,
    });
    expect(working()).toEqual([ids['Sim101 ES 1'], ids['Sim101 ES 2'], ids['Sim102 ES 1'], ids['Sim102 ES 2'], ids['Sim102 NQ 1'], ids['Sim102 NQ 2']]);
  });

  it('CancelOrders with nothing to cancel answers an empty list and writes nothing', () => {
    book();
    ok(t.engine, 'CancelOrders', { account: 'Sim101' });
    const before = t.snapshot();
    expect(ok(t.engine, 'CancelOrders', { account: 'Sim101' })).toEqual({ orderIds: [], success: true });
    expect(ok(t.engine, 'CancelAllOrders', { instrument: 'CL 10-25' })).toEqual({ orderIds: [], success: true });
    expect(t.snapshot()).toEqual(before);
  });

  it("CancelAllOrders with an instrument cancels that instrument's orders in every account, and only those", () => {
    const ids = book();
    expect(ok(t.engine, 'CancelAllOrders', { instrument: 'ES 09-25' })).toEqual({
      orderIds: [ids['Sim101 ES 1'], ids['Sim101 ES 2'], ids['Sim102 ES 1'], ids['Sim102 ES 2']],
      success: true,
    });
    expect(working()).toEqual([ids['Sim101 NQ 1'], ids['Sim101 NQ 2'], ids['Sim102 NQ 1'], ids['Sim102 NQ 2']]);
  });

  it('CancelAllOrders without an instrument cancels every working order everywhere; filled orders stay filled', () => {
    t.engine.setPrice('ES 09-25', 100);
    const filled = place();
    const ids = book();
    expect(ok(t.engine, 'CancelAllOrders', {}).orderIds).toEqual(Object.values(ids));
    expect(working()).toEqual([]);
    expect(stateOf(filled)).toBe('Filled');
  });
});

describe('Change (§3.6, §8.6)', () => {
  beforeEach(() => t.engine.setPrice('ES 09-25', 100));

  it('changes quantity, limit and stop, keeps the id, and reports the changed prices', () => {
    const limit = place({ orderType: 'LIMIT', limitPrice: 95 });
    const stopLimit = place({ action: 'SELL', orderType: 'STOPLIMIT', stopPrice: 95, limitPrice: 94 });
    expect(serve(t.engine, 'Change', { account: 'sim101', orderId: limit, quantity: 3, limitPrice: 96 })).toEqual({
      status: 200,
      body: { orderId: limit, success: true },
    });
    expect(getOrder(limit)).toEqual({
      ...orderObject({ orderId: limit, orderType: 'Limit', quantity: 3, limitPrice: 96, limitPriceChanged: 96 }),
      success: true,
    });
    ok(t.engine, 'Change', { account: 'Sim101', orderId: stopLimit, stopPrice: 97 });
    expect(getOrder(stopLimit)).toMatchObject({ stopPrice: 97, stopPriceChanged: 97, limitPrice: 94, limitPriceChanged: 0, quantity: 1, orderState: 'Working' });
  });

  it('0 or absent leaves a value as it is; a Change with nothing to change writes nothing', () => {
    const id = place({ orderType: 'LIMIT', limitPrice: 95, quantity: 2 });
    t.setTime('2025-09-02T15:00:00Z');
    const before = t.snapshot();
    expect(ok(t.engine, 'Change', { account: 'Sim101', orderId: id, quantity: 0, limitPrice: 0, stopPrice: 0 })).toEqual({ orderId: id, success: true });
    expect(ok(t.engine, 'Change', { account: 'Sim101', orderId: id })).toEqual({ orderId: id, success: true });
    expect(t.snapshot()).toEqual(before);
    ok(t.engine, 'Change', { account: 'Sim101', orderId: id, quantity: 0, limitPrice: 94 });
    expect(getOrder(id)).toMatchObject({ quantity: 2, limitPrice: 94, limitPriceChanged: 94 });
  });

  it.each([
    ['BUY', 95, 102],
    ['SELL', 105, 97],
  ] as const)('a %s limit made marketable fills at once at the last price, never worse than the limit', (action, limitPrice, changed) => {
    const id = place({ action, orderType: 'LIMIT', limitPrice, quantity: 2 });
    expect(ok(t.engine, 'Change', { account: 'Sim101', orderId: id, limitPrice: changed })).toEqual({ orderId: id, success: true });
    expect(getOrder(id)).toMatchObject({ orderState: 'Filled', filled: 2, averageFillPrice: 100, limitPrice: changed, limitPriceChanged: changed });
    expect(positionOf()).toEqual({ marketPosition: action === 'BUY' ? 'Long' : 'Short', quantity: 2, averagePrice: 100 });
    expect(ok(t.engine, 'GetExecutions', { account: 'Sim101' }).executions).toEqual([
      expect.objectContaining({ orderId: id, price: 100, quantity: 2, isEntry: true }),
    ]);
  });

  it('a limit made marketable fills its OCO group out and its ATM brackets in', () => {
    t.engine.addAtmTemplate(scalp);
    const entry = place({ orderType: 'LIMIT', limitPrice: 95, strategy: 'Scalp', ocoId: 'g' });
    const sibling = place({ orderType: 'LIMIT', limitPrice: 94, ocoId: 'g' });
    ok(t.engine, 'Change', { account: 'Sim101', orderId: entry, limitPrice: 100 });
    expect(statesOf(entry, sibling)).toEqual(['Filled', 'Cancelled']);
    const brackets = ok(t.engine, 'GetOrders', { account: 'Sim101', activeOnly: true }).orders;
    expect(brackets.map((o: { name: string; stopPrice: number; limitPrice: number }) => [o.name, o.stopPrice, o.limitPrice])).toEqual([
      ['Stop1', 98, 0],
      ['Target1', 0, 104],
    ]);
  });

  it('a changed limit that is still not marketable keeps working', () => {
    const id = place({ orderType: 'LIMIT', limitPrice: 95 });
    ok(t.engine, 'Change', { account: 'Sim101', orderId: id, limitPrice: 99.75 });
    expect(getOrder(id)).toMatchObject({ orderState: 'Working', limitPrice: 99.75 });
  });

  it.each([
    ['SELL', 95, 100, 'a SELL stop must be below the last price 100 of ES 09-25'],
    ['SELL', 95, 101, 'a SELL stop must be below the last price 100 of ES 09-25'],
    ['BUY', 105, 99, 'a BUY stop must be above the last price 100 of ES 09-25'],
  ] as const)('refuses a %s stop moved from %d to %d (the wrong side), the order unchanged', (action, stopPrice, moved, why) => {
    const id = place({ action, orderType: 'STOPMARKET', stopPrice });
    const before = t.snapshot();
    expect(serve(t.engine, 'Change', { account: 'Sim101', orderId: id, stopPrice: moved, quantity: 5 })).toEqual(invalid(`stopPrice: ${why}`));
    expect(t.snapshot()).toEqual(before);
  });

  it.each([
    ['STOPMARKET', { stopPrice: 95 }, { limitPrice: 94 }, 'limitPrice: a StopMarket order has no limit price'],
    ['LIMIT', { limitPrice: 105 }, { stopPrice: 94 }, 'stopPrice: a Limit order has no stop price'],
  ] as const)('refuses a price for a field a %s order lacks, changing nothing', (orderType, prices, change, text) => {
    const id = place({ action: 'SELL', orderType, ...prices });
    const before = t.snapshot();
    expect(serve(t.engine, 'Change', { account: 'Sim101', orderId: id, ...change })).toEqual(invalid(text));
    expect(t.snapshot()).toEqual(before);
  });

  it.each([
    ['unknown', () => 'nope'],
    ['filled', () => place()],
    ['cancelled', () => {
      const id = place({ orderType: 'LIMIT', limitPrice: 90 });
      ok(t.engine, 'Cancel', { account: 'Sim101', orderId: id });
      return id;
    }],
    ["another account's", () => place({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 90 })],
  ])('refuses an %s order with the Cancel text, changing nothing', (_what, make) => {
    const id = make();
    const before = t.snapshot();
    expect(serve(t.engine, 'Change', { account: 'Sim101', orderId: id, quantity: 2 })).toEqual(terminal(id));
    expect(t.snapshot()).toEqual(before);
  });

  it("with strategyId: changes an ATM bracket of that strategy only", () => {
    t.engine.addAtmTemplate(scalp);
    const entry = place({ strategy: 'Scalp' });
    const stop = t.id(2);
    const plain = place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110 });
    expect(serve(t.engine, 'Change', { account: 'Sim101', orderId: stop, stopPrice: 97, strategyId: 'other' })).toEqual(terminal(stop));
    expect(serve(t.engine, 'Change', { account: 'Sim101', orderId: plain, limitPrice: 111, strategyId: entry })).toEqual(terminal(plain));
    expect(ok(t.engine, 'Change', { account: 'Sim101', orderId: stop, stopPrice: 97, strategyId: entry })).toEqual({ orderId: stop, success: true });
    expect(getOrder(stop)).toMatchObject({ stopPrice: 97, stopPriceChanged: 97, ownerStrategy: { id: entry, name: 'Scalp' } });
  });
});

describe('Replace (§3.7)', () => {
  beforeEach(() => t.engine.setPrice('ES 09-25', 100));
  const REPLACEMENT = { ...BASE, action: 'SELL', quantity: 2, orderType: 'LIMIT', limitPrice: 110, timeInForce: 'GTC' };

  it('cancels the old order and places the new one in one step; the answer is the new id', () => {
    const old = place({ orderType: 'LIMIT', limitPrice: 95 });
    const body = ok(t.engine, 'Replace', { ...REPLACEMENT, account: 'sim101', orderId: old });
    expect(body).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
    expect(body.orderId).not.toBe(old);
    expect(stateOf(old)).toBe('Cancelled');
    expect(getOrder(body.orderId)).toEqual({
      ...orderObject({ orderId: body.orderId, orderAction: 'Sell', quantity: 2, orderType: 'Limit', limitPrice: 110, timeInForce: 'Gtc' }),
      success: true,
    });
  });

  it('a marketable replacement fills at once; the old order of an OCO group takes its siblings with it', () => {
    const old = place({ orderType: 'LIMIT', limitPrice: 95, ocoId: 'g' });
    const sibling = place({ orderType: 'LIMIT', limitPrice: 94, ocoId: 'g' });
    const { orderId } = ok(t.engine, 'Replace', { ...BASE, orderId: old, orderType: 'LIMIT', limitPrice: 101 });
    expect(statesOf(old, sibling, orderId)).toEqual(['Cancelled', 'Cancelled', 'Filled']);
    expect(getOrder(orderId).averageFillPrice).toBe(100);
  });

  it.each([
    ['an unknown ATM template', { strategy: 'Nope' }, "ATM strategy template 'Nope' not found"],
    ['a stop on the wrong side', { orderType: 'STOPMARKET', stopPrice: 101, limitPrice: undefined }, 'Invalid request: stopPrice: a SELL stop must be below the last price 100 of ES 09-25'],
  ])('with %s in the new order changes nothing: the old order still works', (_what, change, error) => {
    const old = place({ orderType: 'LIMIT', limitPrice: 95 });
    const before = t.snapshot();
    expect(serve(t.engine, 'Replace', { ...REPLACEMENT, ...change, orderId: old })).toEqual({ status: 400, body: { error } });
    expect(t.snapshot()).toEqual(before);
    expect(stateOf(old)).toBe('Working');
  });

  it.each([
    ['unknown', () => 'nope'],
    ['filled', () => place()],
    ['cancelled', () => {
      const id = place({ orderType: 'LIMIT', limitPrice: 90 });
      ok(t.engine, 'Cancel', { account: 'Sim101', orderId: id });
      return id;
    }],
    ["another account's", () => place({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 90 })],
  ])('refuses an %s old order with the Cancel text and places nothing', (_what, make) => {
    const id = make();
    const before = t.snapshot();
    expect(serve(t.engine, 'Replace', { ...REPLACEMENT, orderId: id })).toEqual(terminal(id));
    expect(t.snapshot()).toEqual(before);
  });

  it('an injected failure while placing the new order leaves the old one working', () => {
    const old = place({ orderType: 'LIMIT', limitPrice: 95 });
    const before = t.snapshot();
    t.failAfterIds(0);
    expect(() => serve(t.engine, 'Replace', { ...REPLACEMENT, orderId: old })).toThrow('injected failure');
    expect(t.snapshot()).toEqual(before);
    expect(stateOf(old)).toBe('Working');
  });
});

describe('CancelAndBracket (§3.8)', () => {
  beforeEach(() => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.setPrice('NQ 09-25', 200);
  });
  const BRACKET = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 5, takeProfit: 110, stopLoss: 95 };

  it("cancels the instrument's orders, then brackets the position, clamped to its size, in one OCO group", () => {
    place({ quantity: 3 });
    const old = place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 120, ocoId: 'g' });
    const oldSibling = place({ instrument: 'NQ 09-25', action: 'SELL', orderType: 'LIMIT', limitPrice: 250, ocoId: 'g' });
    const nq = place({ instrument: 'NQ 09-25', orderType: 'LIMIT', limitPrice: 150 });
    const body = ok(t.engine, 'CancelAndBracket', { ...BRACKET, action: 'buy' });
    const [takeProfit, stopLoss] = body.orderIds;
    expect(body).toEqual({ orderIds: [takeProfit, stopLoss], cancelledOrderIds: [old, oldSibling], ocoId: body.ocoId, quantity: 3, success: true });
    expect(typeof body.ocoId).toBe('string');
    expect(statesOf(old, oldSibling, nq)).toEqual(['Cancelled', 'Cancelled', 'Working']);
    const common = { orderAction: 'Sell', quantity: 3, timeInForce: 'Gtc', oco: body.ocoId, ocoId: body.ocoId, orderState: 'Working' } as const;
    expect(getOrder(takeProfit)).toMatchObject({ ...common, orderType: 'Limit', limitPrice: 110 });
    expect(getOrder(stopLoss)).toMatchObject({ ...common, orderType: 'StopMarket', stopPrice: 95 });
    // One OCO group: the target fills, the stop goes.
    t.engine.setPrice('ES 09-25', 111);
    expect(statesOf(takeProfit, stopLoss)).toEqual(['Filled', 'Cancelled']);
    expect(positionOf()).toEqual({ marketPosition: 'Flat', quantity: 0, averagePrice: 0 });
  });

  it('without a position brackets the quantity asked; a SELL bracket protects a short with BUY orders; DAY when asked', () => {
    const body = ok(t.engine, 'CancelAndBracket', { ...BRACKET, quantity: 2, stopLoss: undefined, timeInForce: 'DAY' });
    expect(body).toEqual({ orderIds: [body.orderIds[0]], cancelledOrderIds: [], ocoId: body.ocoId, quantity: 2, success: true });
    expect(getOrder(body.orderIds[0])).toMatchObject({ orderAction: 'Sell', quantity: 2, orderType: 'Limit', limitPrice: 110, timeInForce: 'Day' });
    place({ instrument: 'NQ 09-25', action: 'SELL', quantity: 4 });
    const short = ok(t.engine, 'CancelAndBracket', { ...BRACKET, instrument: 'NQ 09-25', action: 'SELL', quantity: 1, takeProfit: 190, stopLoss: 205 });
    expect(short.quantity).toBe(1);
    expect(short.orderIds.map((id: string) => getOrder(id)).map((o: { orderAction: string; orderType: string }) => [o.orderAction, o.orderType])).toEqual([
      ['Buy', 'Limit'],
      ['Buy', 'StopMarket'],
    ]);
  });

  it('refuses to protect a position of the other side, cancelling nothing', () => {
    place({ action: 'SELL', quantity: 2 });
    place({ orderType: 'LIMIT', limitPrice: 90 });
    const before = t.snapshot();
    expect(serve(t.engine, 'CancelAndBracket', { ...BRACKET, account: 'sim101' })).toEqual(
      invalid("action: ES 09-25 in account 'Sim101' is Short; a BUY bracket protects a long position"),
    );
    expect(t.snapshot()).toEqual(before);
  });

  it('is one transaction: a failure injected on the stop-loss undoes the cancels and the take-profit', () => {
    place({ quantity: 2 });
    place({ action: 'SELL', orderType: 'LIMIT', limitPrice: 120 });
    const before = t.snapshot();
    t.failAfterIds(2); // the OCO id and the take-profit get theirs; the stop-loss's throws
    expect(() => serve(t.engine, 'CancelAndBracket', BRACKET)).toThrow('injected failure');
    expect(t.snapshot()).toEqual(before);
  });

  it.each([
    ['BUY', { takeProfit: 100 }, 'takeProfit: must be above the last price 100 of ES 09-25'],
    ['BUY', { stopLoss: 100.25 }, 'stopLoss: must be below the last price 100 of ES 09-25'],
    ['SELL', { takeProfit: 110, stopLoss: 105 }, 'takeProfit: must be below the last price 100 of ES 09-25'],
    ['SELL', { takeProfit: 90, stopLoss: 99 }, 'stopLoss: must be above the last price 100 of ES 09-25'],
  ] as const)('refuses a %s bracket with %j on the wrong side of the last price, cancelling nothing', (action, prices, text) => {
    place({ orderType: 'LIMIT', limitPrice: 90 });
    const before = t.snapshot();
    expect(serve(t.engine, 'CancelAndBracket', { ...BRACKET, action, ...prices })).toEqual(invalid(text));
    expect(t.snapshot()).toEqual(before);
  });
});
