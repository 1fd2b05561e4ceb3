/**
 * GetPositions and GetAllPositions of a store nothing has changed since are answered with the JSON
 * made the first time (src/common/json-once.ts, issue 34): the same bytes and headers as a body
 * serialised at the request, and never a stale one after any change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keptJson } from '../../src/common/json-once.js';
import { simulate } from '../../src/engine/service.js';
import { positionObject } from '../../src/engine/service-shapes.js';
import { parseArgs } from '../../src/service/operations.js';
import { AUTH, startServer, type Harness } from './harness.js';

let server: Harness;
beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => server.close());

async function raw(path: string): Promise<{ status: number; type: string | null; text: string }> {
  const reply = await fetch(`${server.url}${path}`, { headers: AUTH });
  return { status: reply.status, type: reply.headers.get('content-type'), text: await reply.text() };
}

/** The body as it would be made and serialised now, from the store, record by record. */
function expected(account?: string, includeFlat = false): string {
  const positions = server.engine.listPositions({ account, includeFlat }).map((p) => positionObject(server.engine, p));
  return JSON.stringify({ positions, count: positions.length, success: true });
}

async function place(instrument: string, action: string, quantity: number): Promise<void> {
  const reply = await server.post('/v1/api/accounts/Sim101/orders/place', { instrument, action, quantity, orderType: 'MARKET', timeInForce: 'DAY' });
  expect(reply.status).toBe(200);
}

describe('positions of an unchanged store, answered again', () => {
  it('answers the same bytes and content type as any JSON reply, and reads every change at once', async () => {
    await place('ES 09-25', 'BUY', 2);
    await place('NQ 09-25', 'SELL', 3);
    const orders = await raw('/v1/api/accounts/Sim101/orders');
    const first = await raw('/v1/api/accounts/Sim101/positions');
    expect(first).toEqual({ status: 200, type: orders.type, text: expected('Sim101') });
    expect(first.type).toBe('application/json; charset=utf-8');
    expect(await raw('/v1/api/accounts/Sim101/positions')).toEqual(first);
    // Answered again: the same body object, whose kept JSON is what went out.
    const answer = () => simulate(server.engine, 'GetPositions', parseArgs('GetPositions', { account: 'Sim101' }, 'server')).body;
    expect(answer()).toBe(answer());
    expect(keptJson(answer())).toBe(first.text);
    // Shared, so frozen: changing one fails at once instead of changing later answers.
    const body = answer() as unknown as { positions: Array<{ quantity: number }> };
    expect(() => {
      body.positions[0]!.quantity = 9;
    }).toThrow(TypeError);
    expect(() => body.positions.push({ quantity: 1 })).toThrow(TypeError);
    expect(await raw('/v1/api/positions')).toEqual({ status: 200, type: orders.type, text: expected() });

    // An order of this connection, a price, another account's order: each read anew.
    await place('ES 09-25', 'SELL', 2);
    const flat = await raw('/v1/api/accounts/Sim101/positions');
    expect(flat.text).toBe(expected('Sim101'));
    expect((JSON.parse(flat.text) as { positions: Array<{ instrument: string; quantity: number; marketPosition: string }> }).positions.map((p) => [p.instrument, p.quantity, p.marketPosition])).toEqual([['NQ 09-25', 3, 'Short']]);
    server.engine.setPrice('NQ 09-25', 20_000);
    const priced = await raw('/v1/api/accounts/Sim101/positions');
    expect(priced.text).not.toBe(flat.text);
    expect(priced.text).toBe(expected('Sim101'));
    expect((await raw('/v1/api/accounts/Sim101/positions?includeFlat=true')).text).toBe(expected('Sim101', true));
    expect((await raw('/v1/api/positions')).text).toBe(expected());
  });
});
