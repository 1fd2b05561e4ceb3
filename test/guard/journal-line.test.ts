/**
 * What the guard builds for every order, exactly: its intent (src/guard/guard.ts intentOf: every
 * key, in order, for each kind of operation), and the journal lines of an order sent over the ws
 * backend to a real `trade serve` on 127.0.0.1 port 0, read back from the real SQLite ledger: the
 * request as sent with the client order id added last, the line's outcome, and a refused line's
 * rule and message. These are built without object spreads (a slow path on Node 20), so the
 * shapes are held here key by key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createWsBackend } from '../../src/backends/ws.js';
import { GuardError } from '../../src/common/errors.js';
import { guardBackend, intentOf } from '../../src/guard/guard.js';
import { openLedger } from '../../src/guard/ledger.js';
import { buildRules, normalizeRule } from '../../src/guard/rules.js';
import { startServer, TOKEN } from '../server/harness.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const MARKET = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' } as const;

describe('intentOf: the intent of a request, every key in order', () => {
  it('an order: the order fields, undefined prices included', () => {
    const intent = intentOf('PlaceOrder', MARKET);
    expect(Object.entries(intent)).toStrictEqual([
      ['operation', 'PlaceOrder'],
      ['kind', 'order'],
      ['account', 'Sim101'],
      ['instrument', 'ES 09-25'],
      ['action', 'BUY'],
      ['quantity', 1],
      ['orderType', 'MARKET'],
      ['limitPrice', undefined],
      ['stopPrice', undefined],
    ]);
    expect(intentOf('Replace', { ...MARKET, orderId: 'a'.repeat(32), orderType: 'STOPLIMIT', limitPrice: 4500, stopPrice: 4499 })).toStrictEqual({
      operation: 'Replace',
      kind: 'order',
      account: 'Sim101',
      instrument: 'ES 09-25',
      action: 'BUY',
      quantity: 1,
      orderType: 'STOPLIMIT',
      limitPrice: 4500,
      stopPrice: 4499,
    });
  });

  it('a bracket protects one side: its legs are the other, at the take-profit and stop-loss', () => {
    const intent = intentOf('CancelAndBracket', { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 2, takeProfit: 4510, stopLoss: 4490 });
    expect(Object.entries(intent)).toStrictEqual([
      ['operation', 'CancelAndBracket'],
      ['kind', 'order'],
      ['account', 'Sim101'],
      ['instrument', 'ES 09-25'],
      ['action', 'SELL'],
      ['quantity', 2],
      ['orderType', 'BRACKET'],
      ['limitPrice', 4510],
      ['stopPrice', 4490],
    ]);
  });

  it('a change: no instrument or side until the order is read', () => {
    const intent = intentOf('Change', { account: 'Sim101', orderId: 'b'.repeat(32), quantity: 3, limitPrice: 4400 });
    expect(Object.entries(intent)).toStrictEqual([
      ['operation', 'Change'],
      ['kind', 'order'],
      ['account', 'Sim101'],
      ['instrument', undefined],
      ['quantity', 3],
      ['limitPrice', 4400],
      ['stopPrice', undefined],
      ['orderType', `CHANGE ${'b'.repeat(32)}`],
    ]);
  });

  it('an exit and a reverse: the account and instrument alone', () => {
    expect(Object.entries(intentOf('ClosePosition', { account: 'Sim101', instrument: 'ES 09-25' }))).toStrictEqual([
      ['operation', 'ClosePosition'],
      ['kind', 'exit'],
      ['account', 'Sim101'],
      ['instrument', 'ES 09-25'],
    ]);
    expect(Object.entries(intentOf('Reverse', { account: 'Sim101', instrument: 'ES 09-25' }))).toStrictEqual([
      ['operation', 'Reverse'],
      ['kind', 'order'],
      ['account', 'Sim101'],
      ['instrument', 'ES 09-25'],
    ]);
  });
});

describe('the journal of orders sent over ws to trade serve', () => {
  it('a sent order: the request with its client order id last, then its outcome; a refused one: its rule and message', async () => {
    const harness = await startServer();
    cleanups.push(() => harness.close());
    harness.engine.setPrice('ES 09-25', 4500);
    const dir = mkdtempSync(join(tmpdir(), 'trade-journal-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const ledgerFile = join(dir, 'guard.db');
    const rules = buildRules({ 'max-order-qty': normalizeRule('max-order-qty', '2') }, { 'max-order-qty': 'profile default' });
    const inner = createWsBackend({ token: TOKEN, timeoutMs: 5000, baseUrl: harness.url, wsUrl: harness.wsUrl });
    const guard = guardBackend(inner, { rules, ledgerFile, profile: 'default', source: 'batch', machine: 'box-1' });
    let closed = false;
    cleanups.push(() => (closed ? undefined : guard.close()));

    const placed = await guard.call('PlaceOrder', { ...MARKET });
    const refusal = await guard.call('PlaceOrder', { ...MARKET, quantity: 5 }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(GuardError);
    await guard.close();
    closed = true;

    const ledger = await openLedger({ kind: 'sqlite', file: ledgerFile });
    cleanups.push(() => ledger.close());
    const [sent, refused] = await ledger.lines({});
    const request = JSON.parse(sent!.request) as Record<string, unknown>;
    expect(Object.keys(request)).toStrictEqual([...Object.keys(MARKET), 'orderId']);
    expect(request).toStrictEqual({ ...MARKET, orderId: expect.stringMatching(/^[0-9a-f]{32}$/) });
    expect(sent).toStrictEqual({
      id: 1,
      at: expect.any(String),
      profile: 'default',
      backend: 'ws',
      source: 'batch',
      operation: 'PlaceOrder',
      account: 'Sim101',
      instrument: 'ES 09-25',
      request: JSON.stringify(request),
      client_order_id: request.orderId,
      outcome: 'accepted',
      order_id: placed.value.orderId,
      message: null,
      rule: null,
      pid: process.pid,
      machine: 'box-1',
      done_at: expect.any(String),
    });
    expect(placed.value.orderId).toBe(request.orderId);
    expect(refused).toStrictEqual({
      ...sent,
      id: 2,
      at: expect.any(String),
      request: expect.stringMatching(/^\{"account":"Sim101","instrument":"ES 09-25","action":"BUY","quantity":5,"orderType":"MARKET","timeInForce":"DAY","orderId":"[0-9a-f]{32}"\}$/),
      client_order_id: expect.stringMatching(/^[0-9a-f]{32}$/),
      outcome: 'refused',
      order_id: null,
      rule: 'max-order-qty',
      message: 'quantity 5 is above the limit of 2',
      done_at: null,
    });
  });
});
