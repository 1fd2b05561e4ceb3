/**
 * The engine's fills (src/engine/fills.ts) on the paths the other engine tests do not take: the
 * rest of an order a scenario part-filled (its average price over both fills, its executions, the
 * position), and a stop-limit whose stop is hit while its limit cannot fill (triggered, still
 * working, filled later at its limit).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok, order, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => {
  t = testEngine();
});
afterEach(() => t.cleanup());

const ES = 'ES 09-25';
const executions = () =>
  (ok(t.engine, 'GetExecutions', { account: 'Sim101', lookbackTime: 900 }).executions as Array<{ price: number; quantity: number; marketPosition: string }>).map((e) => [
    e.marketPosition,
    e.quantity,
    e.price,
  ]);

describe('an order a scenario part-filled (fillCap)', () => {
  it('a limit fills 2 of 5 at once and works for 3; moved, they fill at its new limit: the average is over both fills', () => {
    t.engine.setPrice(ES, 4500);
    const placed = t.engine.placeOrder(order({ quantity: 5, orderType: 'LIMIT', limitPrice: 4500, timeInForce: 'GTC' }), { fillCap: 2 });
    expect(placed.order).toMatchObject({ state: 'WORKING', quantity: 5, filledQuantity: 2, avgFillPrice: 4500 });
    expect(t.engine.getPosition('Sim101', ES)).toMatchObject({ quantity: 2, avgPrice: 4500 });
    ok(t.engine, 'Change', { account: 'Sim101', orderId: placed.orderId, limitPrice: 4490 });
    t.engine.setPrice(ES, 4495);
    expect(t.engine.orderRecord(placed.orderId)).toMatchObject({ state: 'WORKING', filledQuantity: 2, avgFillPrice: 4500 });
    t.engine.setPrice(ES, 4489);
    expect(t.engine.orderRecord(placed.orderId)).toMatchObject({ state: 'FILLED', quantity: 5, filledQuantity: 5, avgFillPrice: 4494 });
    expect(t.engine.getPosition('Sim101', ES)).toMatchObject({ quantity: 5, avgPrice: 4494 });
    expect(executions()).toEqual([
      ['Long', 2, 4500],
      ['Long', 3, 4490],
    ]);
  });

  it('the rest of a market order fills at the next move, from the price it was left working at', () => {
    t.engine.setContractSettings('ES', { slippageTicks: 1 });
    t.engine.setPrice(ES, 4500);
    const placed = t.engine.placeOrder(order({ action: 'SELL', quantity: 4 }), { fillCap: 1 });
    expect(placed.order).toMatchObject({ state: 'WORKING', filledQuantity: 1, avgFillPrice: 4499.75 });
    t.engine.setPrice(ES, 4498);
    expect(t.engine.orderRecord(placed.orderId)).toMatchObject({ state: 'FILLED', filledQuantity: 4, avgFillPrice: 4499.75 });
    expect(t.engine.getPosition('Sim101', ES)?.quantity).toBe(-4);
    expect(executions()).toEqual([
      ['Short', 1, 4499.75],
      ['Short', 3, 4499.75],
    ]);
  });

  it('a cap of the whole order fills it at once', () => {
    t.engine.setPrice(ES, 4500);
    expect(t.engine.placeOrder(order({ quantity: 2 }), { fillCap: 2 }).order).toMatchObject({ state: 'FILLED', filledQuantity: 2 });
  });
});

describe('a stop-limit whose stop is hit beyond its limit', () => {
  it('is triggered and keeps working, then fills at its limit when the price comes back', () => {
    t.engine.setPrice(ES, 4500);
    const placed = t.engine.placeOrder(order({ orderType: 'STOPLIMIT', stopPrice: 4510, limitPrice: 4505, timeInForce: 'GTC' }));
    expect(placed.order).toMatchObject({ state: 'WORKING', filledQuantity: 0 });
    expect(placed.order.triggered).toBeUndefined();
    t.engine.setPrice(ES, 4512);
    expect(t.engine.orderRecord(placed.orderId)).toMatchObject({ state: 'WORKING', filledQuantity: 0, triggered: true });
    expect(t.engine.getPosition('Sim101', ES)).toBeUndefined();
    t.engine.setPrice(ES, 4506);
    expect(t.engine.orderRecord(placed.orderId)?.filledQuantity).toBe(0);
    t.engine.setPrice(ES, 4504);
    expect(t.engine.orderRecord(placed.orderId)).toMatchObject({ state: 'FILLED', filledQuantity: 1, avgFillPrice: 4505 });
    expect(executions()).toEqual([['Long', 1, 4505]]);
  });
});
