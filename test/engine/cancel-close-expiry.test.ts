import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { order, rejection, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => (t = testEngine()));
afterEach(() => t.cleanup());

const stateOf = (id: string) => t.engine.listOrders().find((o) => o.id === id)?.state;

describe('cancelOrder', () => {
  it('cancels a working order, with or without the account', () => {
    const a = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90 })).orderId;
    const b = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 91 })).orderId;
    const outcome = t.engine.cancelOrder('sim101', a);
    expect(outcome).toMatchObject({ orderId: a, order: { state: 'CANCELLED' }, cancelledOrderIds: [a] });
    expect(t.engine.cancelOrder(undefined, b).order.state).toBe('CANCELLED');
  });

  it.each([
    ['an unknown order', () => 'f'.repeat(32)],
    ['a filled order', () => t.engine.placeOrder(order()).orderId],
    ['a cancelled order', () => {
      const id = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90 })).orderId;
      t.engine.cancelOrder(undefined, id);
      return id;
    }],
    ['an order of another account', () => {
      t.engine.addAccount('Sim102');
      return t.engine.placeOrder(order({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 90 })).orderId;
    }],
  ])('refuses %s with the service message, changing nothing', (_what, make) => {
    const id = make();
    const before = t.snapshot();
    const error = rejection(() => t.engine.cancelOrder('Sim101', id));
    expect(error.message).toBe(`Order linked to '${id}' not found or already terminal.`);
    expect(error.exitCode).toBe(1);
    expect(t.snapshot()).toEqual(before);
  });

  it('refuses an unknown account', () => {
    expect(rejection(() => t.engine.cancelOrder('Ghost', 'x')).message).toBe('Account Ghost not found');
  });
});

describe('closePosition', () => {
  it("cancels the instrument's working orders and flattens at market, realizing P&L", () => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.placeOrder(order({ quantity: 3 }));
    const working = t.engine.placeOrder(order({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110 })).orderId;
    const other = t.engine.placeOrder(order({ instrument: 'NQ 12-25', orderType: 'LIMIT', limitPrice: 1 })).orderId;
    t.engine.setPrice('ES 09-25', 104);
    const outcome = t.engine.closePosition('sim101', 'ES 09-25');
    expect(outcome.cancelledOrderIds).toEqual([working]);
    expect(outcome.closed).toMatchObject({ quantity: 3, avgPrice: 100 });
    expect(outcome.closingOrder).toMatchObject({ action: 'SELL', quantity: 3, orderType: 'MARKET', state: 'FILLED', avgFillPrice: 104, origin: 'close' });
    expect(t.engine.getPosition('Sim101', 'ES 09-25')).toMatchObject({ quantity: 0, realizedPnl: 12 });
    expect(stateOf(other)).toBe('WORKING');
  });

  it('buys back a short position', () => {
    t.engine.placeOrder(order({ action: 'SELL', quantity: 2 }));
    expect(t.engine.closePosition('Sim101', 'ES 09-25').closingOrder).toMatchObject({ action: 'BUY', quantity: 2 });
  });

  it('cancels the OCO siblings of the cancelled orders, in other instruments too', () => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.placeOrder(order());
    const es = t.engine.placeOrder(order({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110, ocoId: 'g' })).orderId;
    const nq = t.engine.placeOrder(order({ instrument: 'NQ 12-25', orderType: 'LIMIT', limitPrice: 1, ocoId: 'g' })).orderId;
    expect(t.engine.closePosition('Sim101', 'ES 09-25').cancelledOrderIds).toEqual([es, nq]);
  });

  it('cancels ATM brackets', () => {
    t.engine.addAtmTemplate({ name: 'A', stopLossTicks: 4, profitTargetTicks: 4, tickSize: 0.25 });
    t.engine.setPrice('ES 09-25', 100);
    const brackets = t.engine.placeOrder(order({ strategy: 'A' })).bracketOrders.map((o) => o.id);
    expect(t.engine.closePosition('Sim101', 'ES 09-25').cancelledOrderIds).toEqual(brackets);
  });

  it('with no position: the exact message, and nothing changes (working orders stay)', () => {
    t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90 }));
    t.engine.placeOrder(order({ instrument: 'NQ 12-25' }));
    t.engine.placeOrder(order({ instrument: 'NQ 12-25', action: 'SELL' }));
    const before = t.snapshot();
    expect(rejection(() => t.engine.closePosition('Sim101', 'ES 09-25')).message).toBe("No positions found for instrument 'ES 09-25'");
    expect(rejection(() => t.engine.closePosition('Sim101', 'NQ 12-25')).message).toBe("No positions found for instrument 'NQ 12-25'");
    expect(t.snapshot()).toEqual(before);
  });

  it('reverse uses the same close: brackets and OCO siblings cancelled, then the new order', () => {
    t.engine.addAtmTemplate({ name: 'A', stopLossTicks: 4, profitTargetTicks: 4, tickSize: 0.25 });
    t.engine.setPrice('ES 09-25', 100);
    const brackets = t.engine.placeOrder(order({ strategy: 'A' })).bracketOrders.map((o) => o.id);
    const outcome = t.engine.reversePosition(order({ action: 'SELL', strategy: 'A' }));
    expect(outcome.cancelledOrderIds).toEqual(brackets);
    expect(outcome.closingOrder).toMatchObject({ origin: 'reverse-close', state: 'FILLED' });
    expect(outcome.bracketOrders.map((o) => [o.action, o.orderType])).toEqual([
      ['BUY', 'STOPMARKET'],
      ['BUY', 'LIMIT'],
    ]);
    expect(t.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(-1);
  });

  it('a rejected reverse (unknown template) leaves the position and its orders as they were', () => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.placeOrder(order());
    t.engine.placeOrder(order({ action: 'SELL', orderType: 'LIMIT', limitPrice: 110 }));
    const before = t.snapshot();
    expect(rejection(() => t.engine.reversePosition(order({ action: 'SELL', strategy: 'Nope' }))).message).toBe(
      "ATM strategy template 'Nope' not found",
    );
    expect(t.snapshot()).toEqual(before);
  });
});

describe('DAY expiry', () => {
  it('expires DAY orders at 16:00 Chicago (21:00 UTC in summer); GTC orders stay', () => {
    const day = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90 })).orderId;
    const gtc = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90, timeInForce: 'GTC' })).orderId;
    t.setTime('2025-09-02T20:59:59Z');
    expect(stateOf(day)).toBe('WORKING');
    t.setTime('2025-09-02T21:00:00Z');
    expect(stateOf(day)).toBe('EXPIRED');
    expect(stateOf(gtc)).toBe('WORKING');
    expect(t.engine.listOrders().find((o) => o.id === day)?.updatedAt).toBe('2025-09-02T21:00:00.000Z');
  });

  it("expires each DAY order at its contract's close: a grain order at 13:20, though an older ES order is still working", () => {
    t.setTime('2025-09-03T14:00:00Z'); // 09:00 CDT Wednesday
    const es = t.engine.placeOrder(order({ instrument: 'ES 12-25', orderType: 'LIMIT', limitPrice: 90 })).orderId;
    t.setTime('2025-09-03T15:00:00Z');
    const corn = t.engine.placeOrder(order({ instrument: 'ZC 12-25', orderType: 'LIMIT', limitPrice: 400 })).orderId;
    t.setTime('2025-09-03T18:19:59Z');
    expect(t.engine.expireDayOrders()).toEqual([]);
    t.setTime('2025-09-03T18:20:00Z'); // 13:20 CDT
    // Any write expires what is due first: a price set for another instrument.
    t.engine.setPrice('NQ 12-25', 100);
    expect([stateOf(es), stateOf(corn)]).toEqual(['WORKING', 'EXPIRED']);
    // A grain order placed after the grains' close lives until the next day's 13:20, past the ES close.
    t.setTime('2025-09-03T19:00:00Z');
    const late = t.engine.placeOrder(order({ instrument: 'ZS 11-25', orderType: 'LIMIT', limitPrice: 1000 })).orderId;
    t.setTime('2025-09-03T21:00:00Z');
    t.engine.setPrice('NQ 12-25', 101);
    expect([stateOf(es), stateOf(late)]).toEqual(['EXPIRED', 'WORKING']);
    t.setTime('2025-09-04T18:20:00Z');
    expect(t.engine.expireDayOrders()).toEqual([late]);
  });

  it('expires in winter at 22:00 UTC, across the autumn DST change', () => {
    t.setTime('2025-10-31T21:30:00Z'); // Friday 16:30 CDT: after the close, the session ends Monday
    const id = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90 })).orderId;
    t.setTime('2025-11-03T21:30:00Z'); // Monday 15:30 CST
    expect(stateOf(id)).toBe('WORKING');
    t.setTime('2025-11-03T22:00:00Z');
    expect(t.engine.expireDayOrders()).toEqual([id]);
    expect(stateOf(id)).toBe('EXPIRED');
  });

  it('expires before the next operation, so a next-day price does not fill the old order', () => {
    t.engine.setPrice('ES 09-25', 100);
    const id = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 95 })).orderId;
    t.setTime('2025-09-03T14:00:00Z');
    expect(t.engine.setPrice('ES 09-25', 90).fills).toEqual([]);
    expect(stateOf(id)).toBe('EXPIRED');
  });

  it('expires on open, and cancels the OCO siblings of an expired order', () => {
    const day = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90, ocoId: 'g' })).orderId;
    const gtc = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 91, ocoId: 'g', timeInForce: 'GTC' })).orderId;
    t.setTime('2025-09-04T00:00:00Z');
    t.reopen();
    const rows = t.snapshot().orders as Array<{ id: string; state: string }>;
    expect(rows.map((r) => [r.id, r.state])).toEqual([
      [day, 'EXPIRED'],
      [gtc, 'CANCELLED'],
    ]);
  });

  it('a cancel of an expired order is refused as terminal', () => {
    const id = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 90 })).orderId;
    t.setTime('2025-09-03T14:00:00Z');
    expect(rejection(() => t.engine.cancelOrder('Sim101', id)).message).toBe(`Order linked to '${id}' not found or already terminal.`);
    expect(stateOf(id)).toBe('EXPIRED');
  });

  it('an ATM DAY bracket placed today expires at today\'s close', () => {
    t.engine.addAtmTemplate({ name: 'A', stopLossTicks: 4, profitTargetTicks: 4, tickSize: 0.25 });
    t.engine.setPrice('ES 09-25', 100);
    const [stop, target] = t.engine.placeOrder(order({ strategy: 'A' })).bracketOrders;
    t.setTime('2025-09-02T21:00:00Z');
    expect([stateOf(stop!.id), stateOf(target!.id)]).toEqual(['EXPIRED', 'EXPIRED']);
  });
});
