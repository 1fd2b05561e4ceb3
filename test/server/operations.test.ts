/**
 * The operation table, walked: every row is served by `trade serve` as a route and under every
 * WebSocket name, with the same body on both transports, has a simulator handler, is listed in
 * the catalog, and appears in the reference's operation index. A new row is covered here the
 * moment it is added.
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpRequest } from '../../src/backends/remote.js';
import { SIMULATOR } from '../../src/engine/service.js';
import { RejectedError, UsageError, ValidationError } from '../../src/common/errors.js';
import { parseOrder } from '../../src/service/order.js';
import { OPERATION_NAMES, OPERATIONS, operationForRpc, operationForWsName, pathParams, parseArgs, wsApiFor } from '../../src/service/operations.js';
import { CATALOG, errorResult, INTERNAL_ERROR_BODY } from '../../src/server/operations.js';
import { connect, ES_MARKET, startServer, type Harness, type RpcClient } from './harness.js';

const REFERENCE = readFileSync(new URL('../../docs/service-reference.md', import.meta.url), 'utf8');
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

const ARG_SETS: Array<Record<string, unknown>> = [
  { account: 'Sim101', ...ES_MARKET },
  { account: 'Sim101', instrument: 'ES 09-25' },
  { account: 'Sim101', instrument: 'ES 09-25', includeFlat: true, activeOnly: false },
  { account: 'Nobody', instrument: 'ES 09-25' },
  { account: 'Sim101', instrument: 'nonsense' },
  { account: 'Sim101', unknownField: 'x' },
  { account: 'Sim101', orderId: WORKING },
  { account: 'Sim101', orderId: 'f'.repeat(32) },
  { account: 'Sim101', orderId: WORKING, quantity: 3, limitPrice: 2 },
  { account: 'Sim101', executionId: 'f'.repeat(32), strategyId: 'nope', lookbackTime: 900 },
  { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, takeProfit: 2, stopLoss: 0.5, marketPosition: 'long' },
  {},
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
  JSON.parse(
    JSON.stringify(data)
      .replace(/"[0-9a-f]{32}"/g, '"<id>"')
      .replace(/"BRACKET-[0-9a-f]{32}"/g, '"<oco>"')
      .replace(/"\d{4}-\d\d-\d\dT[\d:.]+([+-]\d\d:\d\d)?"/g, '"<time>"')
      .replace(/"epoch":\d+/g, '"epoch":0'),
  );

describe('every operation in the table', () => {
  for (const name of OPERATION_NAMES) {
    const operation = OPERATIONS[name];
    it(`${name} is one route (${operation.method} ${operation.path}) and ${operation.ws.join(', ')} over WebSocket, with the same answers`, async () => {
      expect(SIMULATOR[name]).toBeTypeOf('function');
      expect(CATALOG).toContain(`${operation.method} /v1/api${operation.path}`);
      for (const ws of operation.ws) expect(operationForWsName(ws)).toBeDefined();
      let reached = 0;
      // An RPC without one of the path parameters has no HTTP form to compare with.
      const sets = ARG_SETS.filter((args) => pathParams(operation.path).every((p) => p in args));
      expect(sets.length).toBeGreaterThan(0);
      for (const [i, template] of sets.entries()) {
        // Every WebSocket name that stands for this operation with these args (§3.14, §3.17 route some by args).
        // Some args make a name another operation (a Flatten with a side is the filtered one): those are not compared.
        const names = [...new Set([wsApiFor(name, template as never), ...operation.ws])].filter((ws) => operationForRpc(ws, template) === name);
        reached += names.length;
        for (const ws of names) {
          const withWorking = (id: string) => ({ ...template, ...(template.orderId === WORKING ? { orderId: id } : {}) });
          const request = httpRequest(name, withWorking(reset()) as never);
          const overHttp = await server.http(request.method, request.path, request.body === undefined ? {} : { body: request.body });
          const overWs = (await client.call(`${ws}-${i}`, ws, withWorking(reset()))) as unknown as { id: string; data: unknown };
          expect(Object.keys(overWs)).toEqual(['id', 'data']);
          expect(normalize(overWs.data)).toEqual(normalize(overHttp.body));
          expect(overHttp.status).not.toBe(500);
        }
      }
      expect(reached, `no WebSocket name reaches ${name}`).toBeGreaterThan(0);
    });

    it(`${name} is in the reference's operation index, with the same route and WebSocket name`, () => {
      const index = REFERENCE.slice(REFERENCE.indexOf('## 2. Operation index'), REFERENCE.indexOf('## 3. Operations'));
      const line = index.split('\n').find((l) => l.startsWith(`| ${operation.indexName ?? name} `));
      expect(line, `no row for ${name}`).toBeDefined();
      expect(line).toContain(`\`${operation.method} ${operation.path}`);
      expect(line).toContain(`\`${operation.ws[0]}\``);
      expect(line!.split('|')[4]!.trim()).toBe(operation.movesMoney ? 'yes' : 'no');
    });
  }
});

describe('table helpers', () => {
  it('reads the path parameters from a path', () => {
    expect(pathParams(OPERATIONS.PlaceOrder.path)).toEqual(['account']);
    expect(pathParams(OPERATIONS.GetAllPositions.path)).toEqual([]);
    expect(pathParams(OPERATIONS.Cancel.path)).toEqual(['account', 'orderId']);
  });

  it('knows every WebSocket name and alias, and nothing else', () => {
    expect(operationForWsName('CancelOrder')).toBe('Cancel');
    expect(operationForWsName('ListOrders')).toBe('GetOrders');
    expect(operationForWsName('ListPositions')).toBe('GetPositions');
    expect(operationForWsName('placeorder')).toBeUndefined();
    expect(operationForWsName('toString')).toBeUndefined();
  });

  it('checks args strictly for a client and leniently for the server (§1.3)', () => {
    const args = { account: 'Sim101', instrument: 'ES 09-25', extra: 1 };
    expect(parseArgs('GetPosition', args, 'server')).toEqual({ account: 'Sim101', instrument: 'ES 09-25' });
    expect(() => parseArgs('GetPosition', args, 'client')).toThrow('Invalid request: extra: is not a known field');
    expect(() => parseArgs('GetOrders', { account: 'Sim101', activeOnly: 'yes' }, 'server')).toThrow(
      "Invalid request: activeOnly: must be true or false (or 1 or 0), got 'yes'",
    );
    expect(parseArgs('GetOrders', { account: 'Sim101', activeOnly: 'TRUE' }, 'server')).toEqual({ account: 'Sim101', activeOnly: true });
    expect(parseArgs('GetAllPositions', { includeFlat: '0' }, 'server')).toEqual({ includeFlat: false });
  });

  it('reads a null field as an absent one, on every row and in both modes (§1.3)', () => {
    const jackson = { account: 'Sim101', ...ES_MARKET, limitPrice: null, stopPrice: null, ocoId: null, strategy: null, orderId: null, requireMarketPosition: null, maxPositions: null };
    for (const mode of ['server', 'client'] as const) {
      expect(parseArgs('PlaceOrder', jackson, mode)).toEqual({ account: 'Sim101', ...ES_MARKET });
      expect(() => parseArgs('PlaceOrder', { ...jackson, quantity: null }, mode)).toThrow('Invalid request: quantity: is required');
      expect(parseArgs('Change', { account: 'Sim101', orderId: 'a1', quantity: null, limitPrice: 10, stopPrice: null, strategyId: null }, mode)).toEqual({ account: 'Sim101', orderId: 'a1', limitPrice: 10 });
      expect(parseArgs('GetOrders', { account: 'Sim101', activeOnly: null, limit: null, cursor: null }, mode)).toEqual({ account: 'Sim101' });
    }
    // Every row: its fields all null but the path's are the same as absent.
    for (const name of OPERATION_NAMES) {
      const nulls = Object.fromEntries(Object.keys(OPERATIONS[name].fields()).map((field) => [field, null]));
      const outcome = (args: object) => {
        try {
          return parseArgs(name, args, 'server');
        } catch (error) {
          return (error as Error).message;
        }
      };
      expect(outcome(nulls), name).toEqual(outcome({}));
    }
    // Go and C# write number fields as 0, never null: a price of 0 is none on the service (§3.1, §3.6), and a
    // price the order type does not use is ignored there (§3.1); a client is told of both instead.
    const go = { account: 'Sim101', ...ES_MARKET, limitPrice: 0, stopPrice: 0 };
    expect(parseArgs('PlaceOrder', go, 'server')).toEqual({ account: 'Sim101', ...ES_MARKET });
    expect(parseArgs('PlaceOrder', { ...go, limitPrice: 4500 }, 'server')).toEqual({ account: 'Sim101', ...ES_MARKET });
    expect(() => parseArgs('PlaceOrder', go, 'client')).toThrow('Invalid request: limitPrice: must be a positive number, got 0; stopPrice: must be a positive number, got 0');
    expect(() => parseArgs('PlaceOrder', { ...go, stopPrice: undefined, limitPrice: 4500 }, 'client')).toThrow('Invalid request: limitPrice: is not used by MARKET orders; remove it');
    expect(() => parseArgs('PlaceOrder', { ...go, orderType: 'LIMIT' }, 'server')).toThrow('Invalid request: limitPrice: is required for LIMIT orders');
    expect(() => parseArgs('CancelAndBracket', { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, takeProfit: 0, stopLoss: 0 }, 'server')).toThrow(
      'Invalid request: takeProfit: give takeProfit, stopLoss or both',
    );
    // A null for a field the row does not know is still an unknown field to a client.
    expect(() => parseArgs('ListAccounts', { account: null }, 'client')).toThrow('Invalid request: account: is not a known field');
    // A filter written null is no filter: FlattenEverything is the unfiltered one, Flatten needs a real one.
    expect(operationForRpc('FlattenEverything', { account: null, instrument: null, marketPosition: null })).toBe('FlattenEverything');
    expect(operationForRpc('Flatten', { account: 'Sim101', marketPosition: null })).toBe('Flatten');
    expect(operationForRpc('GetQuote', { instrument: 'ES', account: null })).toBe('GetQuote');
  });

  it('maps errors in one place and keeps internals from the client', () => {
    expect(errorResult(new ValidationError([{ field: 'quantity', message: 'is required' }]))).toEqual({
      status: 400,
      body: { error: 'Invalid request: quantity: is required' },
      internal: false,
    });
    expect(errorResult(new RejectedError('No positions found', { status: 400 }))).toEqual({
      status: 400,
      body: { error: 'No positions found' },
      internal: false,
    });
    expect(errorResult(new UsageError('bad'))).toEqual({ status: 400, body: { error: 'bad' }, internal: false });
    expect(errorResult(new Error('SQLITE_CORRUPT: /home/me/trade.db'))).toEqual({ status: 500, body: INTERNAL_ERROR_BODY, internal: true });
    expect(errorResult('thrown string')).toMatchObject({ status: 500, body: INTERNAL_ERROR_BODY });
  });
});
