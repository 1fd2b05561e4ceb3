/** The simulator's settings per root: a commission per contract on every fill, slippage on market and stop fills. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ok, order, serve, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => {
  t = testEngine();
});
afterEach(() => t.cleanup());

const ES = 'ES 09-25';

describe('commission', () => {
  it('is charged per contract on every fill, shown on the Execution and the account, and taken from cash (§4.3)', () => {
    expect(t.engine.setContractSettings('ES', { commission: 2.25 })).toEqual({ root: 'ES', commission: 2.25, slippageTicks: 0 });
    t.engine.setPrice(ES, 5000);
    t.engine.placeOrder(order({ quantity: 2 }));
    t.engine.setPrice(ES, 5004);
    t.engine.placeOrder(order({ action: 'SELL', quantity: 2 }));
    const executions = ok(t.engine, 'GetExecutions', { account: 'Sim101', lookbackTime: 900 }).executions as Array<{ commission: number; price: number }>;
    expect(executions.map((e) => [e.price, e.commission])).toEqual([[5000, 4.5], [5004, 4.5]]);
    const { item } = ok(t.engine, 'GetAccount', { account: 'Sim101' });
    // 4 points × 2 × $50 = $400 realized; $9 of commission.
    expect(item).toMatchObject({ realizedProfitLoss: 400, commission: 9, cashValue: 100_391, netLiquidation: 100_391 });
    // Another root is not charged.
    t.engine.setPrice('NQ 09-25', 20000);
    t.engine.placeOrder(order({ instrument: 'NQ 09-25' }));
    expect(ok(t.engine, 'GetAccount', { account: 'Sim101' }).item.commission).toBe(9);
  });
});

describe('slippage', () => {
  it('moves market and stop fills that many ticks against the trader; limits never slip', () => {
    t.engine.setContractSettings('ES', { slippageTicks: 2 });
    t.engine.setPrice(ES, 5000);
    const buy = t.engine.placeOrder(order());
    expect(buy.order.avgFillPrice).toBe(5000.5);
    const sell = t.engine.placeOrder(order({ action: 'SELL' }));
    expect(sell.order.avgFillPrice).toBe(4999.5);
    const stop = t.engine.placeOrder(order({ action: 'SELL', orderType: 'STOPMARKET', stopPrice: 4990, timeInForce: 'GTC' })).orderId;
    const limit = t.engine.placeOrder(order({ action: 'BUY', orderType: 'LIMIT', limitPrice: 4995, timeInForce: 'GTC' })).orderId;
    t.engine.setPrice(ES, 4995);
    t.engine.setPrice(ES, 4989);
    const filled = Object.fromEntries(t.engine.listOrders().map((o) => [o.orderId, o.avgFillPrice]));
    expect(filled[limit]).toBe(4995);
    // The move 4995 → 4989 trades every price between: touched at its stop, 4990, two ticks worse.
    expect(filled[stop]).toBe(4989.5);
    // Keeping only the commission leaves the slippage as it was.
    expect(t.engine.setContractSettings('ES', { commission: 1 })).toEqual({ root: 'ES', commission: 1, slippageTicks: 2 });
    expect(t.engine.contractSettings()).toEqual([{ root: 'ES', commission: 1, slippageTicks: 2 }]);
  });

  it('an ATM entry that slips sets its brackets from the price it filled at', () => {
    t.engine.setContractSettings('ES', { slippageTicks: 1 });
    t.engine.addAtmTemplate({ name: 'Scalp', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 });
    t.engine.setPrice(ES, 5000);
    const entry = serve(t.engine, 'PlaceOrder', { account: 'Sim101', instrument: ES, action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', strategy: 'Scalp' });
    expect(entry.status).toBe(200);
    const orders = t.engine.listOrders().map((o) => [o.origin, o.avgFillPrice ?? null, o.stopPrice ?? null, o.limitPrice ?? null]);
    expect(orders).toEqual([
      ['client', 5000.25, null, null],
      ['atm-stop-loss', null, 4998.25, null],
      ['atm-profit-target', null, null, 5004.25],
    ]);
  });
});
