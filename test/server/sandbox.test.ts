/**
 * `trade serve` as a test bench (issue 22): every effect of a scenario rule, with `trade` itself
 * as the client over http and ws, checking what the client reports (exit code, message) and the
 * store afterwards; `times` under concurrent clients; a seeded probability; the request log.
 * A real `trade serve` subprocess on port 0, real sockets, a real SQLite store.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Client, request } from 'undici';
import WebSocket from 'ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { runCli, tempHome } from '../helpers/cli.js';
import { killServes, type ServeProcess, startServe, storeFile } from '../helpers/serve-process.js';
import { leaks } from '../helpers/token-forms.js';
import { inProcess, until } from '../helpers/in-process.js';
import { runWatchOrders } from '../../src/cli/commands/watch.js';

const TOKEN = 'Hd3fJ9kW2qZp7XvR5nLm';
let env: Env;
let dir: string;
let cleanup: () => void;
let serve: ServeProcess;

beforeEach(() => ({ env, dir, cleanup } = tempHome()));
afterEach(async () => {
  await killServes();
  cleanup();
});

async function start(args: string[] = []): Promise<void> {
  serve = await startServe(env, TOKEN, { args });
}

/** `trade` against the running serve, on a backend. */
function trade(backend: 'http' | 'ws' | null, ...argv: string[]) {
  const flags = backend === null ? [] : ['--backend', backend];
  return runCli([...flags, ...argv], { ...env, TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN });
}

const place = (backend: 'http' | 'ws', orderId: string, extra: string[] = []) =>
  trade(backend, 'place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY', '--order-id', orderId, ...extra);

async function inject(...argv: string[]): Promise<void> {
  const result = await trade(null, 'sandbox', 'inject', ...argv);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
}

function storeRows(sql: string): unknown[] {
  const db = new Database(storeFile(env), { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}
const orderIds = () => (storeRows('SELECT order_id AS id FROM orders ORDER BY seq') as Array<{ id: string }>).map((r) => r.id);

async function getOrder(orderId: string): Promise<Record<string, unknown>> {
  const result = await trade('http', 'order', orderId, '--account', 'Sim101', '--json');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Record<string, unknown>;
}

async function sandboxLog(query = ''): Promise<{ entries: Array<Record<string, unknown>>; counts: Record<string, number>; total: number; size: number }> {
  const { body } = await request(`${serve.url}/_sandbox/log${query}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  return (await body.json()) as never;
}

describe.each(['http', 'ws'] as const)('every effect, with trade as the client over %s', (backend) => {
  it('drop-after: exit 4, outcome unknown, and the order exists', async () => {
    await start();
    await inject('drop-after', '--operation', 'PlaceOrder', '--transport', backend, '--nth', '1', '--times', '1');
    const result = await place(backend, 'lost-1');
    expect(result.code).toBe(4);
    expect(result.stderr).toMatch(/outcome unknown|closed before the reply|may have been placed/i);
    expect(orderIds()).toEqual(['lost-1']);
    // The next one is answered: the rule fired once.
    expect((await place(backend, 'lost-2')).code).toBe(0);
    expect(orderIds()).toEqual(['lost-1', 'lost-2']);
  });

  it('drop-before: exit 4, and no order', async () => {
    await start();
    await inject('drop-before', '--operation', 'PlaceOrder', '--times', '1');
    const result = await place(backend, 'never-1');
    expect(result.code).toBe(4);
    expect(orderIds()).toEqual([]);
    const log = await sandboxLog('?operation=PlaceOrder');
    expect(log.entries).toMatchObject([{ transport: backend, operation: 'PlaceOrder', account: 'Sim101', status: 0, rule: 'rule-1' }]);
  });

  // Over ws the status is not carried (service-reference.md §5.3): a readable `data` with
  // `success: false` is a refusal, exit 1, never "outcome unknown".
  const refused = backend === 'http' ? 4 : 1;

  it(`status 408: exit ${backend === 'http' ? 4 : 1}, the platform is not connected, and nothing placed`, async () => {
    await start();
    await inject('status', '408', '--operation', 'PlaceOrder', '--times', '1');
    const result = await place(backend, 's408');
    expect(result.code).toBe(refused);
    expect(result.stderr).toMatch(/not connected/i);
    expect(orderIds()).toEqual([]);
  });

  it(`status 500: exit ${backend === 'http' ? 4 : 1}, and nothing placed`, async () => {
    await start();
    await inject('status', '500', '--operation', 'PlaceOrder', '--times', '1');
    const result = await place(backend, 's500');
    expect(result.code).toBe(refused);
    expect(result.stderr).toMatch(backend === 'http' ? /outcome unknown|may have been placed/i : /internal_error|injected/);
    expect(orderIds()).toEqual([]);
  });

  it('status 429: trade batch waits and places every line exactly once', async () => {
    await start();
    await inject('status', '429', '--operation', 'PlaceOrder', '--every', '2', '--times', '2');
    const lines = ['b1', 'b2', 'b3', 'b4'].map((id) =>
      JSON.stringify({ api: 'PlaceOrder', args: { account: 'Sim101', instrument: 'ES 09-25', action: 'Buy', quantity: 1, orderType: 'Market', timeInForce: 'Day', orderId: id } }),
    );
    const file = join(dir, 'orders.ndjson');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await trade(backend, 'batch', file, '--rate', '0', '--concurrency', '1');
    expect(result.code).toBe(0);
    expect(orderIds().sort()).toEqual(['b1', 'b2', 'b3', 'b4']);
    const log = await sandboxLog('?operation=PlaceOrder');
    expect(log.entries.filter((e) => e.status === 429)).toHaveLength(2);
    expect(log.entries).toHaveLength(6);
  });

  it('delay: the normal answer, late', async () => {
    await start();
    await inject('delay', '400ms', '--operation', 'PlaceOrder', '--times', '1');
    const started = Date.now();
    const result = await place(backend, 'late-1');
    expect(result.code).toBe(0);
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect(orderIds()).toEqual(['late-1']);
  });

  it('reject-late: accepted, then Rejected with the reason (GetOrder, its status, the store)', async () => {
    await start();
    // 1.5 s: time enough for the CLI to exit and the order to be read while still accepted, on a busy machine.
    await inject('reject-late', '1500ms', 'Insufficient margin', '--operation', 'PlaceOrder', '--times', '1');
    const result = await place(backend, 'rj-1');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('rj-1');
    expect(await getOrder('rj-1')).toMatchObject({ orderState: 'Accepted', filled: 0 });
    // Then rejected, read as soon as it is (not after a fixed wait a slow timer could overrun).
    const deadline = Date.now() + 10_000;
    let order = await getOrder('rj-1');
    while (order.orderState === 'Accepted' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      order = await getOrder('rj-1');
    }
    expect(order).toMatchObject({ orderState: 'Rejected', filled: 0, rejectReason: 'Insufficient margin' });
    const shown = await trade(backend, 'order', 'rj-1', '--account', 'Sim101');
    expect(shown.stdout).toContain('rejected: Insufficient margin');
    const status = await request(`${serve.url}/v1/api/accounts/Sim101/orders/rj-1/status`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(await status.body.json()).toEqual({ status: 'Rejected', orderId: 'rj-1', rejectReason: 'Insufficient margin', success: true });
    // Nothing filled: no position, no execution.
    expect(storeRows('SELECT * FROM fills')).toEqual([]);
    expect(storeRows('SELECT quantity FROM positions WHERE quantity <> 0')).toEqual([]);
  });

  it('partial: only QTY fills, the rest keeps working (and fills on the next price)', async () => {
    await start();
    await inject('partial', '2', '--operation', 'PlaceOrder', '--times', '1');
    const result = await trade(backend, 'place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '5', '--order-type', 'MARKET', '--tif', 'DAY', '--order-id', 'part-1');
    expect(result.code).toBe(0);
    expect(await getOrder('part-1')).toMatchObject({ orderState: 'PartFilled', quantity: 5, filled: 2 });
    expect(storeRows('SELECT quantity FROM positions')).toEqual([{ quantity: 2 }]);
    expect((await trade(null, 'price', 'set', 'ES 09-25', '6001')).code).toBe(0);
    expect(await getOrder('part-1')).toMatchObject({ orderState: 'Filled', quantity: 5, filled: 5 });
    expect(storeRows('SELECT quantity FROM positions')).toEqual([{ quantity: 5 }]);
    expect(storeRows('SELECT quantity FROM fills ORDER BY seq')).toEqual([{ quantity: 2 }, { quantity: 3 }]);
  });
});

describe('reject-late on the order event stream', () => {
  it.each(['http', 'ws'] as const)('trade watch orders over %s shows the order accepted, then Rejected', async (backend) => {
    await start();
    await inject('reject-late', '2500ms', 'Risk check failed', '--operation', 'PlaceOrder', '--times', '1');
    const run = inProcess({ ...env, TRADE_BACKEND: backend, TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN, TRADE_ACCOUNT: 'Sim101' });
    const done = runWatchOrders(run.ctx, { json: true }, run.deps);
    try {
      // The watch has read the (empty) list before the order is placed.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect((await place(backend, 'ev-1')).code).toBe(0);
      await until('the rejection', () => run.lines().some((l) => (JSON.parse(l) as { orderState?: string }).orderState === 'Rejected'), 8_000);
    } finally {
      run.stop();
      await done;
    }
    const events = run.lines().map((l) => JSON.parse(l) as { orderId: string; orderState: string; rejectReason?: string });
    expect(events.map((e) => `${e.orderId} ${e.orderState}`)).toEqual(['ev-1 Accepted', 'ev-1 Rejected']);
    expect(events[1]!.rejectReason).toBe('Risk check failed');
  });
});

describe('ws-close', () => {
  it('closes the WebSocket with the code on the matching message; trade exits 4; nothing done', async () => {
    await start();
    await inject('ws-close', '4001', '--operation', 'PlaceOrder', '--times', '1');
    const result = await place('ws', 'wc-1');
    expect(result.code).toBe(4);
    expect(orderIds()).toEqual([]);
    // The code itself, as a raw client sees it.
    await inject('ws-close', '4002', '--operation', 'ListAccounts', '--times', '1');
    const socket = new WebSocket(serve.wsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    await new Promise((resolve) => socket.once('open', resolve));
    socket.send(JSON.stringify({ action: 'rpc', id: 1, api: 'ListAccounts', args: {} }));
    const code = await new Promise<number>((resolve) => socket.once('close', (closeCode: number) => resolve(closeCode)));
    expect(code).toBe(4002);
  });

  it('with a delay: the message is answered, then the stream drops', async () => {
    await start();
    await inject('ws-close', '1011', '300ms', '--operation', 'subscribe');
    const socket = new WebSocket(serve.wsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    await new Promise((resolve) => socket.once('open', resolve));
    const messages: unknown[] = [];
    socket.on('message', (data) => messages.push(JSON.parse(String(data))));
    socket.send(JSON.stringify({ action: 'subscribe', instruments: ['ES 09-25'] }));
    const code = await new Promise<number>((resolve) => socket.once('close', (closeCode: number) => resolve(closeCode)));
    expect(code).toBe(1011);
    expect(messages[0]).toMatchObject({ type: 'marketData' });
  });
});

describe('when a rule fires', () => {
  it('times: 1 fires exactly once under 10 concurrent clients', async () => {
    await start();
    await inject('status', '500', '--operation', 'GetPositions', '--times', '1');
    const clients = Array.from({ length: 10 }, () => new Client(serve.url));
    try {
      const statuses = await Promise.all(
        clients.flatMap((client) =>
          Array.from({ length: 5 }, async () => {
            const { statusCode, body } = await client.request({ method: 'GET', path: '/v1/api/accounts/Sim101/positions', headers: { authorization: `Bearer ${TOKEN}` } });
            await body.dump();
            return statusCode;
          }),
        ),
      );
      expect(statuses.filter((s) => s === 500)).toHaveLength(1);
      expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
    const rules = JSON.parse((await trade(null, 'sandbox', 'rules', '--json')).stdout) as { rules: Array<{ seen: number; fired: number }> };
    expect(rules.rules).toMatchObject([{ seen: 50, fired: 1 }]);
  });

  it('a seeded probability fires on the same calls in two runs (a scenario file)', async () => {
    const scenario = join(dir, 'flaky.yaml');
    writeFileSync(scenario, ['seed: 7', 'rules:', '  - name: flaky', '    operation: GetPositions', '    probability: 0.3', '    effect: status 500', ''].join('\n'));
    const runs: number[][] = [];
    for (let run = 0; run < 2; run++) {
      await start(['--scenario', scenario]);
      const fired: number[] = [];
      for (let i = 0; i < 40; i++) {
        const { statusCode, body } = await request(`${serve.url}/v1/api/accounts/Sim101/positions`, { headers: { authorization: `Bearer ${TOKEN}` } });
        await body.dump();
        if (statusCode === 500) fired.push(i);
      }
      runs.push(fired);
      await killServes();
    }
    expect(runs[0]!.length).toBeGreaterThan(3);
    expect(runs[0]!.length).toBeLessThan(30);
    expect(runs[1]).toEqual(runs[0]);
  });

  it('matches by account and instrument (any form), and nth counts only matching calls', async () => {
    await start();
    expect((await trade(null, 'accounts', 'add', 'Sim202')).code).toBe(0);
    await inject('status', '500', '--operation', 'PlaceOrder', '--account', 'sim202', '--instrument', 'ES 09-25', '--nth', '2');
    expect((await place('http', 'a-1')).code).toBe(0);
    const other = (id: string) =>
      trade('http', 'place', '--account', 'Sim202', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY', '--order-id', id);
    expect((await other('b-1')).code).toBe(0);
    expect((await other('b-2')).code).toBe(4);
    expect((await other('b-3')).code).toBe(0);
    expect(orderIds()).toEqual(['a-1', 'b-1', 'b-3']);
  });
});

describe('the documented bodies, and the control routes', () => {
  it('408, 429 (with Retry-After) and 500 answer the reference\'s bodies over HTTP and as an RPC\'s data', async () => {
    // 9 tokens: three HTTP calls, three upgrades, three RPCs; the control requests take none.
    await start(['--rate-limit', '1/h', '--burst', '9']);
    const get = (path: string, token = TOKEN) => request(`${serve.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    // The control routes need the token, and never take from the rate limit (1 an hour here).
    expect((await get('/_sandbox/rules', 'wrong')).statusCode).toBe(401);
    for (const [effect, status, body] of [
      ['status 408', 408, { success: false, error: 'The trading platform is not connected (injected by a trade serve scenario rule)' }],
      ['status 429 7', 429, { error: 'Rate limit exceeded' }],
      ['status 500', 500, { success: false, error: 'internal_error', detail: 'injected by a trade serve scenario rule' }],
    ] as const) {
      const added = await request(`${serve.url}/_sandbox/rules`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}` },
        body: JSON.stringify({ operation: 'ListAccounts', times: 2, effect }),
      });
      expect(added.statusCode).toBe(200);
      await added.body.dump();
      const answer = await get('/v1/api/accounts');
      expect(answer.statusCode).toBe(status);
      expect(answer.headers['retry-after']).toBe(status === 429 ? '7' : undefined);
      expect(await answer.body.json()).toEqual(body);
      const socket = new WebSocket(serve.wsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
      const reply = new Promise<unknown>((resolve) => socket.once('message', (data) => resolve(JSON.parse(String(data)))));
      await new Promise((resolve) => socket.once('open', resolve));
      socket.send(JSON.stringify({ action: 'rpc', id: 'r1', api: 'ListAccounts', args: {} }));
      expect(await reply).toEqual({ id: 'r1', data: body });
      socket.close();
      expect((await request(`${serve.url}/_sandbox/rules`, { method: 'DELETE', headers: { authorization: `Bearer ${TOKEN}` } })).statusCode).toBe(200);
    }
    // Each request once in the log: three HTTP calls, three upgrades, three RPCs.
    const log = await sandboxLog();
    expect([log.counts.ListAccounts, log.counts['GET /ws/stream']]).toEqual([6, 3]);
    expect(log.entries.filter((e) => e.operation === 'ListAccounts').map((e) => `${e.transport} ${e.status} ${e.rule}`)).toEqual(
      ['408', '429', '500'].flatMap((status) => [`http ${status} rule-${status === '408' ? 1 : status === '429' ? 2 : 3}`, `ws ${status} rule-${status === '408' ? 1 : status === '429' ? 2 : 3}`]),
    );
    const bad = await request(`${serve.url}/_sandbox/rules`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}` }, body: JSON.stringify({ effect: 'partial 0', nth: 0 }) });
    expect(bad.statusCode).toBe(400);
    expect(((await bad.body.json()) as { error: string }).error).toMatch(/^Invalid request: nth: .*; effect: partial takes one QTY/);
  });
});

describe('rules at run time and from a file', () => {
  it('inject, rules, clear; a bad rule is exit 2 naming the flag, nothing sent', async () => {
    await start();
    const bad = await trade(null, 'sandbox', 'inject', 'status', '404');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('EFFECT: status takes 408, 429 or 500');
    const late = await trade(null, 'sandbox', 'inject', 'reject-late', '1s', 'no');
    expect(late.code).toBe(2);
    expect(late.stderr).toContain('--operation: reject-late needs operation: PlaceOrder');
    await inject('delay', '10ms', '--name', 'slow', '--operation', 'GetOrders', '--every', '3');
    const listed = await trade(null, 'sandbox', 'rules');
    expect(listed.stdout).toBe('#1 slow: GetOrders, every 3 → delay 10ms (seen 0, fired 0)\n');
    // Reached like the http backend: the base URL and the token, each missing or wrong said so.
    const noUrl = await runCli(['sandbox', 'rules'], { ...env, TRADE_TOKEN: TOKEN });
    expect([noUrl.code, noUrl.stderr]).toEqual([3, expect.stringContaining('No base URL is set')]);
    const wrong = await runCli(['sandbox', 'rules'], { ...env, TRADE_BASE_URL: serve.url, TRADE_TOKEN: 'Zz9yX8wV7uT6sR5q' });
    expect([wrong.code, wrong.stderr]).toEqual([3, expect.stringContaining('trade serve refused the token (401)')]);
    const closed = await runCli(['sandbox', 'rules'], { ...env, TRADE_BASE_URL: 'http://127.0.0.1:9', TRADE_TOKEN: TOKEN });
    expect([closed.code, closed.stderr]).toEqual([4, expect.stringContaining('Cannot reach trade serve at http://127.0.0.1:9')]);
    const cleared = await trade(null, 'sandbox', 'clear');
    expect(cleared.stdout).toBe('cleared 1 rule\n');
    expect((await trade(null, 'sandbox', 'rules')).stdout).toBe('no rules: every request is answered normally\n');
  });

  it('a bad scenario file: exit 2 naming the file, the line and the field; nothing served', async () => {
    const scenario = join(dir, 'bad.yaml');
    writeFileSync(scenario, ['rules:', '  - operation: PlaceOrder', '    nth: 2', '    effect: drop-after', '  - operation: PlaceOrdr', '    effect: drop-before', ''].join('\n'));
    const result = await runCli(['serve', '--port', '0', '--scenario', scenario], { ...env, TRADE_SERVE_TOKEN: TOKEN });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--scenario ${scenario}:5: rules[1].operation: must be an operation of the table`);
    const json = join(dir, 'bad.json');
    writeFileSync(json, '{\n  "rules": [\n    {"operation": "PlaceOrder",\n     "effect": "status 404"}\n  ]\n}\n');
    const second = await runCli(['serve', '--port', '0', '--scenario', json], { ...env, TRADE_SERVE_TOKEN: TOKEN });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`--scenario ${json}:4: rules[0].effect: status takes 408, 429 or 500, got '404'`);
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'rules:\n  - effect: drop-after\n  - effect: [\n');
    const third = await runCli(['serve', '--port', '0', '--scenario', broken], { ...env, TRADE_SERVE_TOKEN: TOKEN });
    expect(third.code).toBe(2);
    expect(third.stderr).toMatch(new RegExp(`--scenario ${broken}:\\d+: not valid YAML or JSON`));
  });
});

describe('the request log', () => {
  it('holds every request with its fields and counts per operation, and never the token in any form', async () => {
    await start(['--log-size', '3']);
    expect((await place('http', 'log-1')).code).toBe(0);
    expect((await place('ws', 'log-2')).code).toBe(0);
    // The token where a careless client puts it: a body field, the query, an RPC's args.
    await request(`${serve.url}/v1/api/accounts/Sim101/orders/place?token=${TOKEN}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', note: TOKEN, b64: Buffer.from(TOKEN).toString('base64') }),
    }).then((r) => r.body.dump());
    await request(`${serve.url}/v1/api/accounts/Sim101/positions?apiKey=${encodeURIComponent(TOKEN)}`, { headers: { authorization: `Bearer ${TOKEN}` } }).then((r) => r.body.dump());
    const log = await sandboxLog();
    expect(log.size).toBe(3);
    expect(log.entries.length).toBe(3);
    expect(log.total).toBeGreaterThan(3);
    expect(log.entries.map((e) => `${e.transport} ${e.operation} ${e.status}`)).toEqual(['ws PlaceOrder 200', 'http PlaceOrder 200', 'http GetPositions 200']);
    expect(log.entries[0]).toMatchObject({ account: 'Sim101', body: { orderId: 'log-2' } });
    expect(typeof log.entries[0]!.ms).toBe('number');
    const text = (await trade(null, 'sandbox', 'log')).stdout + (await trade(null, 'sandbox', 'log', '--json', '--operation', 'PlaceOrder')).stdout;
    expect(text).toContain('PlaceOrder');
    expect(text).toMatch(/^3 requests shown \(\d+ since start, the last 3 kept\)\n {2}\S.* +\d+\n/m);
    expect(log.counts).toEqual({ PlaceOrder: 2, GetPositions: 1 });
    expect(leaks(JSON.stringify(log), TOKEN)).toEqual([]);
    expect(leaks(text, TOKEN)).toEqual([]);
  });
});
