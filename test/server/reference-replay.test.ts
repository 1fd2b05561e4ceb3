/**
 * `trade serve` checked against the reference: every request example of service-reference.md
 * §12 is read from the reference itself and replayed, in order, over real HTTP and WebSocket
 * against a real server with the stated preconditions. Replies are compared field by field
 * except ids, times and money figures (§12's last line), and every Order and Position in them is
 * checked against the field tables of §4.1 and §4.2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine.js';
import { parseOrder } from '../../src/service/order.js';
import { OPERATIONS, operationForWsName, type OperationName } from '../../src/service/operations.js';
import { WS_ACTIONS } from '../../src/server/ws-rpc.js';
import { checkShapes, compare, examples, type HttpStep, REFERENCE, SECTION, type Step, TOKEN_IN_EXAMPLES } from '../helpers/reference-examples.js';
import { connect, startServer, TOKEN, type Harness, type RpcClient } from './harness.js';

/** The operation a request of the examples stands for, when the server has it. */
function operationOf(step: Step): OperationName | undefined {
  if (step.kind === 'ws') return typeof step.send.api === 'string' ? operationForWsName(step.send.api) : undefined;
  const path = step.path.split('?')[0]!.replace(/^\/v1\/api/, '');
  return (Object.keys(OPERATIONS) as OperationName[]).find((name) => {
    const op = OPERATIONS[name];
    const pattern = new RegExp(`^${op.path.replace(/\{\w+\}/g, '[^/]+')}$`);
    return op.method === step.method && pattern.test(path);
  });
}

const ES = 'ES 06-26';
function operationOfPath(method: string, path: string): OperationName | undefined {
  return operationOf({ kind: 'http', method, path: `/v1/api${path}`, auth: true, expect: { status: 200 }, example: 0, index: 0, text: '' });
}

let server: Harness;
let client: RpcClient;
const STEPS = examples();

/**
 * The examples' own moment (§12: 03/18/2026 09:30 AM Chicago, a Wednesday with the market open),
 * moving on from there: isMarketOpen, the trading day and DAY orders do not depend on when the
 * suite runs.
 */
const EXAMPLE_TIME = Date.parse('2026-03-18T14:30:00Z');
const started = Date.now();
const exampleClock = () => new Date(EXAMPLE_TIME + (Date.now() - started));

beforeAll(async () => {
  server = await startServer({}, { now: exampleClock });
  server.engine.setPrice(ES, 5000);
  server.engine.setPrice('NQ 06-26', 20000);
  client = await connect(server.wsUrl);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

describe('§12 examples, replayed in order against trade serve', () => {
  it('reads every example of the reference', () => {
    expect(new Set(STEPS.map((s) => s.example))).toEqual(new Set(Array.from({ length: 17 }, (_, i) => i + 1)));
    expect(STEPS).toHaveLength(33);
  });

  let wsId = 0;
  for (const step of STEPS) {
    const key = `${step.example}.${step.index}`;
    const title = `${key} ${step.text.slice(0, 110)}`;
    it(title, async () => {
      if (step.kind === 'http') {
        const headers: Record<string, string> = step.auth ? { authorization: `Bearer ${TOKEN}` } : {};
        if (step.body !== undefined) headers['content-type'] = 'application/json';
        const reply = await server.http(step.method, step.path, { headers, body: step.body });
        expect(reply.status).toBe(step.expect.status);
        if (step.expect.body !== undefined) compare(reply.body, step.expect.body);
        checkShapes(reply.body);
      } else if (step.send.action === 'rpc') {
        const id = `replay-${wsId++}`;
        const reply = await client.call(id, step.send.api as string, step.send.args as Record<string, unknown>);
        const expected = step.expect as { id: unknown; data: unknown };
        expect(Object.keys(reply)).toEqual(['id', 'data']);
        compare(reply.data, expected.data);
        checkShapes(reply.data);
      } else {
        const seen = client.messages.length;
        client.send(step.send);
        compare((await client.waitFor(seen + 1))[seen], step.expect);
      }
    });
  }
});

describe('§5.2: the client messages', () => {
  it('WS_ACTIONS is exactly the actions of the table', () => {
    const table = REFERENCE.slice(REFERENCE.indexOf('### 5.2'), REFERENCE.indexOf('### 5.3'));
    const actions = [...table.matchAll(/^\| `(\w+)` \| `\{/gm)].map((m) => m[1]!);
    expect(actions).toHaveLength(5);
    expect([...WS_ACTIONS].sort()).toEqual(actions.sort());
  });
});

describe('§12 example 18: the service budget', () => {
  it('the 21st of 21 back-to-back requests is 429 with Retry-After: 1, and so is an RPC at that moment', async () => {
    // The clock stands still, so nothing refills. The WebSocket's upgrade is the first request.
    const limited = await startServer({ rateLimit: { count: 3, periodMs: 1_000, burst: 20 }, now: () => 0 });
    const ws = await connect(limited.wsUrl);
    try {
      const replies = [];
      for (let i = 0; i < 20; i++) replies.push(await limited.get('/v1/api/positions'));
      expect(replies.slice(0, 19).map((r) => r.status)).toEqual(Array(19).fill(200));
      expect({ status: replies[19]!.status, body: replies[19]!.body, retryAfter: replies[19]!.headers['retry-after'] }).toEqual({
        status: 429,
        body: { error: 'Rate limit exceeded' },
        retryAfter: '1',
      });
      expect(await ws.call('w7', 'GetAllPositions', {})).toEqual({ id: 'w7', data: { error: 'Rate limit exceeded' } });
    } finally {
      await ws.close();
      await limited.close();
    }
  });
});

it(`the examples send the token (${TOKEN_IN_EXAMPLES}) in the Authorization header only`, () => {
  expect(SECTION.match(/Authorization: Bearer (\w+)/)?.[1]).toBe(TOKEN_IN_EXAMPLES);
  for (const step of STEPS.filter((s): s is Step & HttpStep => s.kind === 'http')) expect(step.path).not.toContain(TOKEN_IN_EXAMPLES);
});

/**
 * §2's operation index, read from the reference: every REST route (with its query parameters) and
 * every WebSocket name. trade serve answers each: none is a 404 (a 400 for the made-up ids is an
 * answer), none an unknown RPC, and the routes §2 marks 501 answer 501 with §6.1's body.
 */
const INDEX = REFERENCE.slice(REFERENCE.indexOf('## 2. Operation index'), REFERENCE.indexOf('## 3. Operations'));
const INDEX_ROWS = INDEX.split('\n')
  .filter((line) => /^\| [A-Z]/.test(line) && !line.startsWith('| operation '))
  .map((line) => {
    const cells = line.split('|').map((c) => c.trim());
    const [, method, template] = /^`(GET|POST|PUT) ([^`]+)`$/.exec(cells[2]!)!;
    // WebSocket names are the capitalized backticked words (`account` in "with `account` in args" is an argument).
    const ws = [...cells[3]!.matchAll(/`([A-Z]\w+)`/g)].map((m) => m[1]!);
    return { operation: cells[1]!, method: method!, template: template!, ws, server: cells[6]! };
  });
/** Values for the parameters the index names; the ids exist nowhere, which the server must say with a 400, not a 404. */
const PARAMETERS: Record<string, string> = {
  account: 'Sim101',
  orderId: 'ex-nowhere',
  executionId: 'f'.repeat(32),
  strategyId: '334081723',
  instrument: 'ES%2006-26',
  activeOnly: 'true',
  includeFlat: 'true',
  lookbackTime: '900',
};
const concrete = (template: string) =>
  `/v1/api${template.replace(/\{(\w+)\}/g, (_, name: string) => PARAMETERS[name]!).replace(/(\w+)=(?=&|$)/g, (_, name: string) => `${name}=${PARAMETERS[name]}`)}`;

describe('§2: every route and WebSocket name of the operation index, against trade serve', () => {
  let fresh: Harness;
  let ws: RpcClient;
  beforeAll(async () => {
    // A server of its own: these requests include a flatten of everything.
    fresh = await startServer();
    fresh.engine.setPrice(ES, 5000);
    ws = await connect(fresh.wsUrl);
  });
  afterAll(async () => {
    await ws.close();
    await fresh.close();
  });

  it('reads every row of the index', () => {
    expect(INDEX_ROWS.map((r) => r.operation)).toContain('Catalog');
    expect(INDEX_ROWS).toHaveLength(Object.keys(OPERATIONS).length + 1);
    expect(INDEX_ROWS.filter((r) => r.server === '501').map((r) => r.operation)).toEqual(['GetOrderLifecycle', 'GetMarketInfo']);
  });

  it('answers every route: none 404, the 501 ones 501', async () => {
    const answers: Record<string, number> = {};
    const expected: Record<string, number | string> = {};
    for (const row of INDEX_ROWS) {
      const path = concrete(row.template);
      const reply = await fresh.http(row.method, path, row.method === 'GET' ? {} : { body: {} });
      const key = `${row.operation}: ${row.method} ${path}`;
      if (row.server === '501') {
        const route = `${row.method} /v1/api${row.template.split('?')[0]!}`;
        expect(reply.body, key).toEqual({ success: false, error: 'not_implemented', detail: `${route} is not simulated by trade serve` });
        answers[key] = reply.status;
        expected[key] = 501;
      } else {
        // A route that is served answers with its operation: 200, or 400 for the made-up ids and empty bodies.
        answers[key] = reply.status;
        expected[key] = [200, 400].includes(reply.status) ? reply.status : '200 or 400';
      }
    }
    expect(answers).toEqual(expected);
    expect(Object.values(answers)).not.toContain(404);
    const mcp = await fresh.http('POST', '/v1/api/mcp', { body: {} });
    expect({ status: mcp.status, error: (mcp.body as { error?: unknown }).error }).toEqual({ status: 501, error: 'not_implemented' });
  });

  it('knows every WebSocket name of the index', async () => {
    const names = [...new Set(INDEX_ROWS.flatMap((r) => r.ws))];
    expect(names).toEqual(expect.arrayContaining(['CancelOrder', 'CancelReplace', 'ListOrders', 'ListPositions', 'FlattenEverything']));
    const unknown: string[] = [];
    for (const name of names) {
      const reply = await ws.call(`index-${name}`, name, { account: 'Sim101', orderId: 'ex-nowhere' });
      const data = reply.data as { error?: unknown };
      if (typeof data?.error === 'string' && /unknown api/i.test(data.error)) unknown.push(name);
    }
    expect(unknown).toEqual([]);
  });
});
