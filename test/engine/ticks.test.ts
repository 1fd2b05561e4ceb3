/** Prices on the contract's tick grid (§3.1, §10): every way a price enters the engine is checked. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { serve, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => {
  t = testEngine();
});
afterEach(() => t.cleanup());

const ES = 'ES 12-25';
const esOrder = (extra: Record<string, unknown>) => ({ account: 'Sim101', instrument: ES, action: 'BUY', quantity: 1, timeInForce: 'GTC', ...extra });
const offTick = (field: string, price: number, below: number, above: number, root = 'ES', size = 0.25) =>
  `Invalid request: ${field}: ${price} is not a multiple of the tick size ${size} of ${root}; the nearest valid prices are ${below} and ${above}`;

describe('the tick grid', () => {
  it('PlaceOrder refuses a limit or stop off the grid, naming the nearest prices; nothing is written', () => {
    t.engine.setPrice(ES, 5000);
    const before = t.snapshot();
    expect(serve(t.engine, 'PlaceOrder', esOrder({ orderType: 'LIMIT', limitPrice: 4990.1 }))).toEqual({ status: 400, body: { error: offTick('limitPrice', 4990.1, 4990, 4990.25) } });
    expect(serve(t.engine, 'PlaceOrder', esOrder({ orderType: 'STOPMARKET', stopPrice: 5010.3 }))).toEqual({ status: 400, body: { error: offTick('stopPrice', 5010.3, 5010.25, 5010.5) } });
    expect(serve(t.engine, 'PlaceOrder', esOrder({ instrument: 'CL 12-25', orderType: 'LIMIT', limitPrice: 70.005 }))).toEqual({
      status: 400,
      body: { error: offTick('limitPrice', 70.005, 70, 70.01, 'CL', 0.01) },
    });
    expect(t.snapshot()).toEqual(before);
    // On the grid, including the 1/64 of ZN and the 0.00005 of 6E.
    expect(serve(t.engine, 'PlaceOrder', esOrder({ orderType: 'LIMIT', limitPrice: 4990.25 })).status).toBe(200);
    expect(serve(t.engine, 'PlaceOrder', esOrder({ instrument: 'ZN 12-25', orderType: 'LIMIT', limitPrice: 110.015625 })).status).toBe(200);
    expect(serve(t.engine, 'PlaceOrder', esOrder({ instrument: '6E 12-25', orderType: 'LIMIT', limitPrice: 1.08505 })).status).toBe(200);
  });

  it('Change and CancelAndBracket check their prices too; price set as well', () => {
    t.engine.setPrice(ES, 5000);
    const placed = serve(t.engine, 'PlaceOrder', esOrder({ orderType: 'LIMIT', limitPrice: 4990 }));
    const orderId = (placed.body as { orderId: string }).orderId;
    const before = t.snapshot();
    expect(serve(t.engine, 'Change', { account: 'Sim101', orderId, limitPrice: 4990.2 })).toEqual({ status: 400, body: { error: offTick('limitPrice', 4990.2, 4990, 4990.25) } });
    expect(serve(t.engine, 'CancelAndBracket', { account: 'Sim101', instrument: ES, action: 'BUY', quantity: 1, takeProfit: 5010.1, stopLoss: 4990 })).toEqual({
      status: 400,
      body: { error: offTick('takeProfit', 5010.1, 5010, 5010.25) },
    });
    expect(() => t.engine.setPrice(ES, 5000.13)).toThrow(offTick('price', 5000.13, 5000, 5000.25));
    expect(t.snapshot()).toEqual(before);
  });

  it('an instrument the contract table does not have takes any price', () => {
    t.engine.setPrice('XYZ 12-25', 12.3456);
    expect(serve(t.engine, 'PlaceOrder', esOrder({ instrument: 'XYZ 12-25', orderType: 'LIMIT', limitPrice: 12.3001 })).status).toBe(200);
  });
});
