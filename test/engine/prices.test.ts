import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { order, rejection, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => (t = testEngine()));
afterEach(() => t.cleanup());

const states = () => Object.fromEntries(t.engine.listOrders().map((o) => [o.id, o.state]));

describe('setPrice', () => {
  it('records the last price per instrument and lists prices', () => {
    const first = t.engine.setPrice('ES 09-25', 4500);
    expect(first).toMatchObject({ instrument: 'ES 09-25', price: 4500, previousPrice: null, fills: [] });
    expect(t.engine.setPrice('ES 09-25', 4501.25).previousPrice).toBe(4500);
    t.engine.setPrice('NQ 12-25', 21000);
    expect(t.engine.lastPrice('ES 09-25')).toBe(4501.25);
    expect(t.engine.listPrices()).toEqual([
      { instrument: 'ES 09-25', price: 4501.25, updatedAt: '2025-09-02T14:00:00.000Z' },
      { instrument: 'NQ 12-25', price: 21000, updatedAt: '2025-09-02T14:00:00.000Z' },
    ]);
  });

  it('fills a resting BUY LIMIT at its limit when the price trades through it, with price and time', () => {
    t.engine.setPrice('ES 09-25', 4510);
    const { orderId } = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4500, quantity: 2 }));
    expect(t.engine.setPrice('ES 09-25', 4500.25).fills).toEqual([]);
    t.setTime('2025-09-02T15:30:00Z');
    const outcome = t.engine.setPrice('ES 09-25', 4495);
    expect(outcome.fills).toEqual([
      {
        executionId: expect.stringMatching(/^[0-9a-f]{32}$/), orderId, account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 2,
        price: 4500, time: '2025-09-02T15:30:00.000Z', orderType: 'LIMIT', origin: 'client', positionAfter: 2, realized: 0, commission: 0,
      },
    ]);
    expect(t.engine.listOrders()[0]).toMatchObject({ state: 'FILLED', filledQuantity: 2, avgFillPrice: 4500 });
    expect(t.engine.getPosition('Sim101', 'ES 09-25')).toMatchObject({ quantity: 2, avgPrice: 4500 });
    expect(t.engine.listFills()).toEqual(outcome.fills);
  });

  it('fills a SELL LIMIT at or above its limit, a BUY STOP at or above, a SELL STOP at or below', () => {
    t.engine.setPrice('ES 09-25', 100);
    const sellLimit = t.engine.placeOrder(order({ action: 'SELL', orderType: 'LIMIT', limitPrice: 102 })).orderId;
    const buyStop = t.engine.placeOrder(order({ orderType: 'STOPMARKET', stopPrice: 101 })).orderId;
    const sellStop = t.engine.placeOrder(order({ action: 'SELL', orderType: 'STOPMARKET', stopPrice: 98 })).orderId;
    const up = t.engine.setPrice('ES 09-25', 103);
    expect(up.fills.map((f) => [f.orderId, f.price])).toEqual([
      [sellLimit, 102],
      [buyStop, 101],
    ]);
    const down = t.engine.setPrice('ES 09-25', 97);
    expect(down.fills.map((f) => [f.orderId, f.price])).toEqual([[sellStop, 98]]);
  });

  it('fills crossing orders in time priority, across accounts', () => {
    t.engine.addAccount('Sim102');
    t.engine.setPrice('ES 09-25', 100);
    const a = t.engine.placeOrder(order({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 98 })).orderId;
    const b = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 99 })).orderId;
    const c = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 97 })).orderId;
    const outcome = t.engine.setPrice('ES 09-25', 97.5);
    expect(outcome.fills.map((f) => f.orderId)).toEqual([a, b]);
    expect(states()[c]).toBe('WORKING');
  });

  it('does not touch other instruments', () => {
    t.engine.placeOrder(order({ instrument: 'NQ 12-25', orderType: 'LIMIT', limitPrice: 100 }));
    expect(t.engine.setPrice('ES 09-25', 50).fills).toEqual([]);
  });

  it('fills orders placed while no price was known at the first price', () => {
    const limit = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4500 })).orderId;
    const stop = t.engine.placeOrder(order({ orderType: 'STOPMARKET', stopPrice: 4400 })).orderId;
    const outcome = t.engine.setPrice('ES 09-25', 4450);
    expect(outcome.fills.map((f) => [f.orderId, f.price])).toEqual([
      [limit, 4450],
      [stop, 4450],
    ]);
  });

  it('STOPLIMIT: triggers at the stop and rests as a limit, then fills at the limit', () => {
    t.engine.setPrice('ES 09-25', 100);
    const { orderId } = t.engine.placeOrder(order({ orderType: 'STOPLIMIT', stopPrice: 102, limitPrice: 101 }));
    const trigger = t.engine.setPrice('ES 09-25', 103);
    expect(trigger).toMatchObject({ fills: [], triggeredOrderIds: [orderId] });
    expect(t.engine.listOrders()[0]).toMatchObject({ state: 'WORKING', triggered: true });
    expect(t.engine.setPrice('ES 09-25', 101.5).fills).toEqual([]);
    expect(t.engine.setPrice('ES 09-25', 100).fills).toEqual([expect.objectContaining({ orderId, price: 101 })]);
  });

  it('STOPLIMIT: fills at the stop when its limit is marketable there', () => {
    t.engine.setPrice('ES 09-25', 100);
    const { orderId } = t.engine.placeOrder(order({ action: 'SELL', orderType: 'STOPLIMIT', stopPrice: 98, limitPrice: 97 }));
    expect(t.engine.setPrice('ES 09-25', 96).fills).toEqual([expect.objectContaining({ orderId, price: 98 })]);
  });

  it('keeps average price and realized P&L across fills', () => {
    t.engine.setPrice('ES 09-25', 100);
    t.engine.placeOrder(order({ quantity: 2 }));
    t.engine.placeOrder(order({ action: 'SELL', orderType: 'LIMIT', limitPrice: 104, quantity: 1 }));
    t.engine.setPrice('ES 09-25', 105);
    expect(t.engine.getPosition('Sim101', 'ES 09-25')).toEqual({
      account: 'Sim101', instrument: 'ES 09-25', quantity: 1, avgPrice: 100, realizedPnl: 4,
    });
  });
});

describe('placing against a known price', () => {
  it('fills a marketable LIMIT at once, at the last price (at or better than the limit)', () => {
    t.engine.setPrice('ES 09-25', 4498);
    const buy = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4500 }));
    expect(buy.order).toMatchObject({ state: 'FILLED', avgFillPrice: 4498 });
    expect(buy.fills).toEqual([expect.objectContaining({ orderId: buy.orderId, price: 4498 })]);
    const sell = t.engine.placeOrder(order({ action: 'SELL', orderType: 'LIMIT', limitPrice: 4498 }));
    expect(sell.order).toMatchObject({ state: 'FILLED', avgFillPrice: 4498 });
  });

  it('leaves a LIMIT that is not marketable working', () => {
    t.engine.setPrice('ES 09-25', 4498);
    expect(t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4497.75 })).order.state).toBe('WORKING');
  });

  it('fills a MARKET order at the last price', () => {
    t.engine.setPrice('ES 09-25', 4498.5);
    expect(t.engine.placeOrder(order()).order).toMatchObject({ state: 'FILLED', avgFillPrice: 4498.5 });
  });

  it.each([
    ['BUY', 'STOPMARKET', { stopPrice: 4500 }, 'Invalid request: stopPrice: a BUY stop must be above the last price 4500 of ES 09-25'],
    ['BUY', 'STOPLIMIT', { stopPrice: 4490, limitPrice: 4491 }, 'Invalid request: stopPrice: a BUY stop must be above the last price 4500 of ES 09-25'],
    ['SELL', 'STOPMARKET', { stopPrice: 4510 }, 'Invalid request: stopPrice: a SELL stop must be below the last price 4500 of ES 09-25'],
  ])('rejects a %s %s on the wrong side of the market, changing nothing', (action, orderType, prices, message) => {
    t.engine.setPrice('ES 09-25', 4500);
    const before = t.snapshot();
    expect(rejection(() => t.engine.placeOrder(order({ action, orderType, ...prices }))).message).toBe(message);
    expect(t.snapshot()).toEqual(before);
  });
});
