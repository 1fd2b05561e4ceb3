/**
 * The dispatch table: every entry is served on both transports with the same answer, so a new
 * operation is covered here the moment it is added.
 */
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOrder } from '../../src/order/schema.js';
import { RejectedError, UsageError, ValidationError } from '../../src/order/errors.js';
import { errorResult, inputFromArgs, OPERATIONS, type Operation, pathParams } from '../../src/server/operations.js';
import { connect, ES_MARKET, startServer, type Harness, type RpcClient } from './harness.js';

const WORKING = '<working order>';
let server: Harness;
let client: RpcClient;
beforeAll(async () => {
  server = await startServer();
  client = await connect(server.wsUrl);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

/** The HTTP request an operation's flat RPC args stand for: path parameters into the path, the rest into body or query. */
function httpRequest(operation: Operation, args: Record<string, unknown>): { path: string; body?: unknown } {
  const { params, data } = inputFromArgs(operation, args);
  const path = operation.path.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(String(params[name])));
  if (operation.method === 'POST') return { path, body: data };
  const query = new URLSearchParams(data as Record<string, string>).toString();
  return { path: query ? `${path}?${query}` : path };
}

const ARG_SETS: Array<Record<string, unknown>> = [
  { account: 'Sim101', ...ES_MARKET },
  { account: 'Sim101', instrument: 'ES 09-25' },
  { account: 'Nobody', instrument: 'ES 09-25' },
  { account: 'Sim101', instrument: 'nonsense' },
  { account: 'Sim101', unknownField: 'x' },
  { account: 'Sim101', orderId: WORKING },
  { account: 'Sim101', orderId: 'f'.repeat(32) },
  { account: 'Sim101', orderId: 'not-an-id' },
];

/**
 * The same starting state before every call, so that operations that change it (Close, Cancel)
 * meet the same store on both transports: a long position and one working order in ES 09-25.
 */
function reset(): string {
  const db = new Database(server.engine.file);
  db.exec('DELETE FROM fills; DELETE FROM orders; DELETE FROM positions;');
  db.close();
  server.engine.placeOrder(parseOrder({ account: 'Sim101', ...ES_MARKET }));
  return server.engine.placeOrder(parseOrder({ account: 'Sim101', ...ES_MARKET, orderType: 'LIMIT', limitPrice: 1 })).orderId;
}

// Order ids and times differ between two runs; everything else must not.
const normalize = (data: unknown) =>
  JSON.parse(JSON.stringify(data).replace(/"[0-9a-f]{32}"/g, '"<id>"').replace(/"\d{4}-\d\d-\d\dT[\d:.]+Z"/g, '"<time>"'));

describe('every operation in the table', () => {
  for (const [api, operation] of Object.entries(OPERATIONS) as Array<[string, Operation]>) {
    it(`${api} answers the same status and body over HTTP (${operation.method} ${operation.path}) and WebSocket`, async () => {
      // An RPC without one of the path parameters has no HTTP form to compare with.
      const sets = ARG_SETS.filter((args) => pathParams(operation).every((p) => p in args));
      expect(sets.length).toBeGreaterThan(0);
      for (const [i, template] of sets.entries()) {
        const withWorking = (id: string) => ({ ...template, ...(template.orderId === WORKING ? { orderId: id } : {}) });
        const { path, body } = httpRequest(operation, withWorking(reset()));
        const overHttp = await server.http(operation.method, path, { body });
        const overWs = await client.call(`${api}-${i}`, api, withWorking(reset()));
        expect({ status: overWs.status, data: normalize(overWs.data) }).toEqual({
          status: overHttp.status,
          data: normalize(overHttp.body),
        });
        expect(overHttp.status).not.toBe(500);
      }
    });
  }
});

describe('table helpers', () => {
  it('reads the path parameters from the route', () => {
    expect(pathParams(OPERATIONS.PlaceOrder)).toEqual(['account']);
    expect(pathParams(OPERATIONS.GetPositions)).toEqual([]);
    expect(pathParams({ method: 'POST', path: '/v1/api/accounts/:account/orders/:orderId/cancel', run: () => ({ status: 200, body: {} }) })).toEqual([
      'account',
      'orderId',
    ]);
  });

  it('splits flat RPC args into path parameters and the body', () => {
    expect(inputFromArgs(OPERATIONS.PlaceOrder, { account: 'Sim101', quantity: 1 })).toEqual({
      params: { account: 'Sim101' },
      data: { quantity: 1 },
    });
    expect(inputFromArgs(OPERATIONS.GetPositions, { account: 'Sim101' })).toEqual({ params: {}, data: { account: 'Sim101' } });
  });

  it('maps errors in one place and keeps internals from the client', () => {
    expect(errorResult(new ValidationError([{ field: 'quantity', message: 'is required' }]))).toEqual({
      status: 400,
      body: { error: 'Invalid request: quantity: is required' },
      internal: false,
    });
    expect(errorResult(new RejectedError("Account 'X' not found", { status: 404 }))).toEqual({
      status: 404,
      body: { error: "Account 'X' not found" },
      internal: false,
    });
    expect(errorResult(new UsageError('bad'))).toEqual({ status: 400, body: { error: 'bad' }, internal: false });
    expect(errorResult(new Error('SQLITE_CORRUPT: /home/me/trade.db'))).toEqual({
      status: 500,
      body: { error: 'Internal server error' },
      internal: true,
    });
    expect(errorResult('thrown string')).toMatchObject({ status: 500, body: { error: 'Internal server error' } });
  });
});
