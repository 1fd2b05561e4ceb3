/**
 * One contract, three backends: the embedded engine in-process, and the http and ws backends
 * against a real `trade serve` on 127.0.0.1 port 0 over the same store. Each behaviour must be
 * the same whichever backend serves it.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEmbeddedBackend } from '../../src/backends/embedded.js';
import { createHttpBackend } from '../../src/backends/http.js';
import type { Backend } from '../../src/backends/types.js';
import { createWsBackend } from '../../src/backends/ws.js';
import { RejectedError } from '../../src/order/errors.js';
import { parseOrder, type Order } from '../../src/order/schema.js';
import { startServer, TOKEN, type Harness } from '../server/harness.js';

const KINDS = ['embedded', 'http', 'ws'] as const;

function order(change: Partial<Record<keyof Order, unknown>> = {}): Order {
  return parseOrder({
    account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', ...change,
  });
}

async function rejection(promise: Promise<unknown>): Promise<RejectedError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(RejectedError);
  return error as RejectedError;
}

describe.each(KINDS)('the %s backend', (kind) => {
  let harness: Harness;
  let backend: Backend;

  beforeEach(async () => {
    harness = await startServer();
    const remote = { token: TOKEN, timeoutMs: 5000, baseUrl: harness.url };
    backend =
      kind === 'embedded'
        ? createEmbeddedBackend({ file: harness.engine.file })
        : kind === 'http'
          ? createHttpBackend(remote)
          : createWsBackend({ ...remote, wsUrl: harness.wsUrl });
  });
  afterEach(async () => {
    await backend.close();
    await harness.close();
  });

  it('names itself, and the host when remote', () => {
    expect(backend.name).toBe(kind);
    expect(backend.label).toBe(kind === 'embedded' ? `embedded (${harness.engine.file})` : `${kind} (${new URL(harness.url).host})`);
  });

  it('places an order and returns its id', async () => {
    const result = await backend.placeOrder(order({ quantity: 2 }));
    expect(result).toMatchObject({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
    expect(harness.engine.listOrders()).toEqual([expect.objectContaining({ id: result.orderId, quantity: 2, state: 'FILLED' })]);
  });

  it("rejects an unknown account with the engine's message", async () => {
    const error = await rejection(backend.placeOrder(order({ account: 'Ghost' })));
    expect(error.message).toBe("Account 'Ghost' not found");
    expect(error.exitCode).toBe(1);
    expect(harness.engine.listOrders()).toEqual([]);
  });

  it('rejects an unknown ATM template and places nothing', async () => {
    const error = await rejection(backend.placeOrder(order({ orderType: 'LIMIT', limitPrice: 1, strategy: 'Nope' })));
    expect(error.message).toBe("ATM strategy template 'Nope' not found");
    expect(harness.engine.listOrders()).toEqual([]);
  });

  it('reverses an open position, returning the new order id', async () => {
    await backend.placeOrder(order({ quantity: 2 }));
    const result = await backend.reversePosition(order({ action: 'SELL', quantity: 1 }));
    expect(harness.engine.listOrders().at(-1)).toMatchObject({ id: result.orderId, action: 'SELL', quantity: 1 });
    expect(harness.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(-1);
  });

  it('refuses to reverse with no position, word for word, changing nothing', async () => {
    const error = await rejection(backend.reversePosition(order({ instrument: 'NQ 12-25' })));
    expect(error.message).toBe("No position found for instrument 'NQ 12-25' in account 'Sim101'");
    expect(harness.snapshot().orders).toEqual([]);
  });

  it('cancels a working order once; a second cancel is refused', async () => {
    const { orderId } = await backend.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4000 }));
    expect(await backend.cancelOrder('Sim101', orderId)).toMatchObject({ orderId, success: true });
    expect(harness.engine.listOrders()[0]).toMatchObject({ id: orderId, state: 'CANCELLED' });
    const error = await rejection(backend.cancelOrder('Sim101', orderId));
    expect(error.message).toBe(`Order linked to '${orderId}' not found or already terminal.`);
  });

  it('closes a position, reporting what was closed; with none it is refused', async () => {
    await backend.placeOrder(order({ action: 'SELL', quantity: 3 }));
    const result = await backend.closePosition('Sim101', 'ES 09-25');
    expect(result).toMatchObject({
      success: true,
      closedPositions: [{ account: 'Sim101', instrument: 'ES 09-25', marketPosition: 'Short', quantity: 3, averagePrice: null }],
    });
    expect(harness.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(0);
    const error = await rejection(backend.closePosition('Sim101', 'ES 09-25'));
    expect(error.message).toBe("No positions found for instrument 'ES 09-25'");
  });

  it('lists orders and positions as the engine holds them', async () => {
    await backend.placeOrder(order({ quantity: 2 }));
    await backend.placeOrder(order({ instrument: 'NQ 12-25', orderType: 'LIMIT', limitPrice: 20000 }));
    expect(await backend.listOrders({ account: 'Sim101' })).toEqual(harness.engine.listOrders({ account: 'Sim101' }));
    expect(await backend.listOrders({ account: 'Sim101', instrument: 'NQ 12-25' })).toHaveLength(1);
    expect(await backend.listPositions()).toEqual(harness.engine.listPositions());
    expect(await backend.listPositions({ account: 'sim101', instrument: 'ES 09-25' })).toEqual([
      expect.objectContaining({ account: 'Sim101', quantity: 2 }),
    ]);
  });

  it('answers many requests at once, each with its own order', async () => {
    const results = await Promise.all(Array.from({ length: 25 }, () => backend.placeOrder(order())));
    expect(new Set(results.map((r) => r.orderId)).size).toBe(25);
    expect(harness.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(25);
  });
});
