/**
 * One contract, five targets: the embedded engine in-process; the http and ws backends against a
 * real `trade serve` on 127.0.0.1 port 0; and the http and ws backends against the reference
 * double (test/helpers/reference-double.ts), a server written from service-reference.md alone.
 * Each behaviour must be the same whichever serves it, and every assertion reads the service's
 * shapes through the backend itself (GetOrder, GetPosition, ...), never our own records.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEmbeddedBackend } from '../../src/backends/embedded.js';
import { createHttpBackend } from '../../src/backends/http.js';
import type { Backend } from '../../src/backends/types.js';
import { createWsBackend } from '../../src/backends/ws.js';
import { RejectedError } from '../../src/common/errors.js';
import { parseOrder, type Order } from '../../src/service/order.js';
import { startReferenceDouble } from '../helpers/reference-double.js';
import { startServer, TOKEN } from '../server/harness.js';

const INSTRUMENT = 'ES 09-26';
const TARGETS = ['embedded', 'http+serve', 'ws+serve', 'http+double', 'ws+double'] as const;
type TargetName = (typeof TARGETS)[number];

interface Target {
  backend: Backend;
  setPrice(instrument: string, price: number): void;
  close(): Promise<void>;
}

async function open(name: TargetName): Promise<Target> {
  const [transport, server] = name.split('+') as ['embedded' | 'http' | 'ws', 'serve' | 'double' | undefined];
  if (server === 'double') {
    const double = await startReferenceDouble({ prices: { [INSTRUMENT]: 5000, 'NQ 09-26': 20000 } });
    const remote = { token: double.token, timeoutMs: 5000, baseUrl: double.url };
    const backend = transport === 'http' ? createHttpBackend(remote) : createWsBackend({ ...remote, wsUrl: double.wsUrl });
    return {
      backend,
      setPrice: (instrument, price) => double.setPrice(instrument, price),
      async close() {
        await backend.close();
        await double.close();
      },
    };
  }
  const harness = await startServer();
  harness.engine.setPrice(INSTRUMENT, 5000);
  harness.engine.setPrice('NQ 09-26', 20000);
  const remote = { token: TOKEN, timeoutMs: 5000, baseUrl: harness.url };
  const backend =
    transport === 'embedded'
      ? createEmbeddedBackend({ file: harness.engine.file })
      : transport === 'http'
        ? createHttpBackend(remote)
        : createWsBackend({ ...remote, wsUrl: harness.wsUrl });
  return {
    backend,
    setPrice: (instrument, price) => harness.engine.setPrice(instrument, price),
    async close() {
      await backend.close();
      await harness.close();
    },
  };
}

function order(change: Partial<Record<keyof Order, unknown>> = {}): Order {
  return parseOrder({ account: 'Sim101', instrument: INSTRUMENT, action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', ...change });
}

async function rejection(promise: Promise<unknown>): Promise<RejectedError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RejectedError);
  return error as RejectedError;
}

describe.each(TARGETS)('the backend on %s', (name) => {
  let target: Target;
  let backend: Backend;

  beforeEach(async () => {
    target = await open(name);
    backend = target.backend;
  });
  afterEach(async () => {
    await target.close();
  });

  const position = async (instrument = INSTRUMENT) => (await backend.call('GetPosition', { account: 'Sim101', instrument })).value;

  it('places an order and returns its id; the order reads back in the service shape', async () => {
    const { value, body } = await backend.call('PlaceOrder', order({ quantity: 2 }));
    expect(value.orderId).toMatch(/^[0-9a-f]{32}$/);
    expect(body).toMatchObject({ orderId: value.orderId });
    const placed = (await backend.call('GetOrder', { account: 'Sim101', orderId: value.orderId })).value;
    expect(placed).toMatchObject({
      orderId: value.orderId,
      account: 'Sim101',
      instrument: INSTRUMENT,
      orderAction: 'Buy',
      orderType: 'Market',
      orderState: 'Filled',
      quantity: 2,
      filled: 2,
      averageFillPrice: 5000,
      timeInForce: 'Day',
    });
    expect((await backend.call('GetOrderStatus', { account: 'Sim101', orderId: value.orderId })).value.status).toBe('Filled');
  });

  it('shows a long as Long and a short as Short, with an unsigned quantity', async () => {
    await backend.call('PlaceOrder', order({ quantity: 2 }));
    expect(await position()).toMatchObject({ marketPosition: 'Long', quantity: 2, averagePrice: 5000 });
    await backend.call('PlaceOrder', order({ action: 'SELL', quantity: 5 }));
    expect(await position()).toMatchObject({ marketPosition: 'Short', quantity: 3, averagePrice: 5000 });
    target.setPrice(INSTRUMENT, 4990);
    expect(await position()).toMatchObject({ marketPosition: 'Short', quantity: 3, marketPrice: 4990, unrealizedProfitLoss: 1500 });
    const all = (await backend.call('GetAllPositions', {})).value.positions;
    expect(all).toEqual([expect.objectContaining({ account: 'Sim101', instrument: INSTRUMENT, marketPosition: 'Short', quantity: 3 })]);
    const mine = (await backend.call('GetPositions', { account: 'sim101' })).value.positions;
    expect(mine).toEqual([expect.objectContaining({ marketPosition: 'Short', quantity: 3 })]);
  });

  it('reads a flat instrument as Flat, and lists flat positions only when asked', async () => {
    expect(await position('NQ 09-26')).toMatchObject({ marketPosition: 'Flat', quantity: 0 });
    await backend.call('PlaceOrder', order());
    await backend.call('PlaceOrder', order({ action: 'SELL' }));
    expect((await backend.call('GetAllPositions', {})).value.positions).toEqual([]);
    expect((await backend.call('GetAllPositions', { includeFlat: true })).value.positions).toEqual([
      expect.objectContaining({ instrument: INSTRUMENT, marketPosition: 'Flat', quantity: 0 }),
    ]);
  });

  it("rejects an unknown account with the service's message", async () => {
    const error = await rejection(backend.call('PlaceOrder', order({ account: 'Ghost' })));
    expect(error.message).toBe('Account Ghost not found');
    expect(error.body).toEqual({ success: false, error: 'invalid_account', detail: 'Account Ghost not found' });
    expect(error.exitCode).toBe(1);
    expect((await backend.call('GetOrders', { account: 'Sim101' })).value.orders).toEqual([]);
  });

  it('reverses an open position, returning the new order id', async () => {
    await backend.call('PlaceOrder', order({ quantity: 2 }));
    const { value } = await backend.call('ReversePosition', order({ action: 'SELL', quantity: 1 }));
    const placed = (await backend.call('GetOrder', { account: 'Sim101', orderId: value.orderId })).value;
    expect(placed).toMatchObject({ orderAction: 'Sell', quantity: 1, orderState: 'Filled' });
    expect(await position()).toMatchObject({ marketPosition: 'Short', quantity: 1 });
  });

  it('refuses to reverse with no position, word for word, with the account as typed, changing nothing', async () => {
    const error = await rejection(backend.call('ReversePosition', order({ account: 'sim101', instrument: 'NQ 09-26' })));
    expect(error.message).toBe("No position found for instrument 'NQ 09-26' in account 'sim101'");
    expect((await backend.call('GetOrders', { account: 'Sim101' })).value.orders).toEqual([]);
  });

  it('cancels a working order once; a second cancel is refused', async () => {
    const { value } = await backend.call('PlaceOrder', order({ orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' }));
    const { orderId } = value;
    expect((await backend.call('Cancel', { account: 'Sim101', orderId })).value.orderId).toBe(orderId);
    expect((await backend.call('GetOrder', { account: 'Sim101', orderId })).value).toMatchObject({ orderState: 'Cancelled', limitPrice: 4000 });
    const error = await rejection(backend.call('Cancel', { account: 'Sim101', orderId }));
    expect(error.message).toBe(`Order linked to '${orderId}' not found or already terminal.`);
  });

  it('lists orders: every one of the day, or only the active ones', async () => {
    const filled = (await backend.call('PlaceOrder', order())).value.orderId;
    const working = (await backend.call('PlaceOrder', order({ orderType: 'LIMIT', limitPrice: 4000 }))).value.orderId;
    const all = (await backend.call('GetOrders', { account: 'Sim101' })).value.orders;
    expect(all.map((o) => [o.orderId, o.orderState])).toEqual([
      [filled, 'Filled'],
      [working, 'Working'],
    ]);
    const active = (await backend.call('GetOrders', { account: 'Sim101', activeOnly: true })).value.orders;
    expect(active.map((o) => o.orderId)).toEqual([working]);
  });

  it('closes a position, reporting what was closed; with none it is refused', async () => {
    await backend.call('PlaceOrder', order({ action: 'SELL', quantity: 3 }));
    const { value } = await backend.call('ClosePosition', { account: 'Sim101', instrument: INSTRUMENT });
    expect(value.closedPositions).toEqual([
      expect.objectContaining({ account: 'Sim101', instrument: INSTRUMENT, marketPosition: 'Short', quantity: 3, averagePrice: 5000 }),
    ]);
    expect(await position()).toMatchObject({ marketPosition: 'Flat', quantity: 0 });
    const error = await rejection(backend.call('ClosePosition', { account: 'Sim101', instrument: INSTRUMENT }));
    expect(error.message).toBe(`No positions found for instrument '${INSTRUMENT}'`);
  });

  it('answers many requests at once, each with its own order', async () => {
    const results = await Promise.all(Array.from({ length: 25 }, () => backend.call('PlaceOrder', order())));
    expect(new Set(results.map((r) => r.value.orderId)).size).toBe(25);
    expect(await position()).toMatchObject({ marketPosition: 'Long', quantity: 25 });
  });
});
