/**
 * `trade batch --backend http|ws` against a real `trade serve`: results in input order whatever
 * the concurrency, good, bad and reverse lines mixed, exit codes; and a server killed mid-batch,
 * after which the store shows exactly which lines were placed.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { parseOrder } from '../../src/service/order.js';
import { BIN, runBin, tempHome } from '../helpers/cli.js';
import { killServes, startServe, storeFile } from '../helpers/serve-process.js';
import { type Harness, startServer, TOKEN } from '../server/harness.js';
import { spawnRecorded } from '../helpers/spawn.js';

let env: Env;
let cleanup: () => void;
let server: Harness | undefined;
beforeEach(() => ({ env, cleanup } = tempHome()));
afterEach(async () => {
  await server?.close();
  server = undefined;
  await killServes();
  cleanup();
});

type Backend = 'http' | 'ws';
const remote = (backend: Backend, url: string, wsUrl: string, token = TOKEN): Env => ({
  ...env,
  TRADE_BACKEND: backend,
  TRADE_BASE_URL: url,
  TRADE_WS_URL: wsUrl,
  TRADE_TOKEN: token,
  TRADE_TIMEOUT: '5',
});

const args = (change: Record<string, unknown> = {}) => ({
  account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', ...change,
});
const rpc = (api: string, id: unknown, change: Record<string, unknown> = {}) => JSON.stringify({ action: 'rpc', api, id, args: args(change) });
const place = (id: unknown, change: Record<string, unknown> = {}) => rpc('PlaceOrder', id, change);

interface Result {
  line: number;
  id: unknown;
  status: number | null;
  data: { orderId?: string; error?: string };
  outcome?: 'unknown' | 'not-sent';
}
const results = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l) as Result);

describe.each(['http', 'ws'] as const)('trade batch --backend %s against trade serve', (backend) => {
  it('answers every line in input order at concurrency 8: places, reverses and bad lines mixed (exit 1)', async () => {
    server = await startServer();
    server.engine.placeOrder(parseOrder(args({ instrument: 'NQ 12-25', quantity: 2 })));
    const places = Array.from({ length: 24 }, (_, i) => place(`p${i}`, { action: i % 3 ? 'Buy' : 'Sell', quantity: 1 + (i % 4) }));
    const lines = [
      ...places.slice(0, 6),
      '{not json',
      place('zero', { quantity: 0 }),
      place('ghost', { account: 'Ghost' }),
      rpc('ReversePosition', 'rev', { instrument: 'NQ 12-25', action: 'SELL', quantity: 3 }),
      rpc('ReversePosition', 'flat', { instrument: 'CL 12-25' }),
      rpc('CancelEverything', 'cancel'),
      ...places.slice(6),
    ];
    // A local trade serve has no budget to keep to: --rate 0 turns the pacing off.
    const result = await runBin(['batch', '-', '--concurrency', '8', '--rate', '0'], remote(backend, server.url, server.wsUrl), `${lines.join('\n')}\n`);
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`Error: Batch of ${lines.length} lines: 25 succeeded, 5 rejected.\n`);
    const out = results(result.stdout);
    expect(out.map((r) => r.line)).toEqual(lines.map((_, i) => i + 1));
    expect(out.map((r) => [r.id, r.status])).toEqual([
      ...places.slice(0, 6).map((_, i) => [`p${i}`, 200]),
      [null, 400],
      ['zero', 400],
      ['ghost', 404],
      ['rev', 200],
      ['flat', 400],
      ['cancel', 400],
      ...places.slice(6).map((_, i) => [`p${i + 6}`, 200]),
    ]);
    expect(out.slice(6, 12).map((r) => r.data.error)).toEqual([
      'Invalid request: the line is not valid JSON',
      'Invalid request: quantity: must be at least 1, got 0',
      'invalid_account',
      undefined,
      "No position found for instrument 'CL 12-25' in account 'Sim101'",
      expect.stringMatching(/^Invalid request: api: must be one of PlaceOrder, .*, got 'CancelEverything'$/),
    ]);
    expect(out[8]!.data).toEqual({ success: false, error: 'invalid_account', detail: 'Account Ghost not found' });
    // The store holds exactly the answered orders (and the reverse's closing order), with their positions.
    const ok = out.filter((r) => r.status === 200).map((r) => r.data.orderId!);
    const client = server.engine.listOrders().filter((o) => o.origin === 'client');
    expect(client.map((o) => o.orderId).sort()).toEqual([...ok, client[0]!.orderId].sort());
    const signed = (i: number) => (i % 3 ? 1 : -1) * (1 + (i % 4));
    const es = Array.from({ length: 24 }, (_, i) => signed(i)).reduce((a, b) => a + b, 0);
    expect(server.engine.listPositions().map((p) => [p.instrument, p.quantity])).toEqual([['ES 09-25', es], ['NQ 12-25', -3]]);
  });

  it.each([
    ['paced to the budget by default', []],
    ['with --rate 0, every 429 waits and is sent again', ['--rate', '0']],
  ])('a batch of 30 against the service\'s budget (3/s, bursts of 20): %s; exit 0, 30 placed, none sent twice', async (_, flags) => {
    server = await startServer({ rateLimit: { count: 3, periodMs: 1_000, burst: 20 } });
    const lines = Array.from({ length: 30 }, (_, i) => place(`b${i}`));
    const result = await runBin(['batch', '-', '--concurrency', '4', ...flags], remote(backend, server.url, server.wsUrl), `${lines.join('\n')}\n`);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: 'Batch of 30 lines: 30 succeeded, 0 rejected.\n' });
    const out = results(result.stdout);
    expect(out.map((r) => [r.id, r.status])).toEqual(lines.map((_, i) => [`b${i}`, 200]));
    const ids = out.map((r) => r.data.orderId!);
    expect(new Set(ids).size).toBe(30);
    expect(server.engine.listOrders().map((o) => o.orderId).sort()).toEqual([...ids].sort());
    // The server's own log: exactly one answered placement per line; the rest of the requests were 429s.
    const placements = server.logs.filter((l) => /(POST \S+\/orders\/place|WS PlaceOrder id=\S+) 200 /.test(l));
    expect(placements).toHaveLength(30);
    const refused = server.logs.filter((l) => /(POST \S+\/orders\/place|WS PlaceOrder id=\S+) 429 /.test(l));
    // Unpaced, the burst runs out and lines are refused and sent again; paced, hardly ever.
    if (flags.length > 0) expect(refused.length).toBeGreaterThan(0);
    else expect(refused.length).toBeLessThanOrEqual(2);
  });
});

describe.each(['http', 'ws'] as const)('trade serve killed with SIGKILL in the middle of trade batch --backend %s', (backend) => {
  it('lines in flight are unknown, the rest not sent, and the store shows exactly which were placed (exit 4)', async () => {
    const LINES = 1000;
    const CONCURRENCY = 4;
    const serve = await startServe(env, TOKEN);
    // Each line's quantity is its line number, so the store tells which lines were placed.
    const input = Array.from({ length: LINES }, (_, i) => place(`l${i + 1}`, { quantity: i + 1 })).join('\n');
    const child = spawnRecorded(process.execPath, [BIN, 'batch', '-', '--concurrency', String(CONCURRENCY), '--rate', '0'], {
      env: { PATH: process.env.PATH, ...remote(backend, serve.url, serve.wsUrl) },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      // Killed once 50 results are out: the batch is well under way, and far from done.
      if (!serve.child.killed && stdout.split('\n').length > 50) serve.child.kill('SIGKILL');
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdin!.end(`${input}\n`);
    const code = await new Promise((resolve) => child.on('close', resolve));
    await serve.exited;

    expect(code).toBe(4);
    const out = results(stdout);
    expect(out.map((r) => r.line)).toEqual(Array.from({ length: LINES }, (_, i) => i + 1));
    const lines = (kind: string) => out.filter((r) => String(r.outcome ?? r.status) === kind).map((r) => r.line);
    const [placed, unknown, notSent] = [lines('200'), lines('unknown'), lines('not-sent')];
    expect(placed.length + unknown.length + notSent.length).toBe(LINES);
    expect(placed.length).toBeGreaterThanOrEqual(50);
    expect(unknown.length).toBeLessThanOrEqual(CONCURRENCY);
    expect(notSent).toContain(LINES);
    expect(Math.min(...notSent)).toBeGreaterThan(Math.max(...placed));
    // The kill may land while no line is in flight (every answer read, the next connection
    // refused): then there is no unknown line, and the summary names none.
    const unknownPart = unknown.length > 0 ? `${unknown.length} outcome unknown (check with \`trade orders\`), ` : '';
    expect(stderr).toContain(`Error: Batch of ${LINES} lines: ${placed.length} succeeded, 0 rejected, ${unknownPart}${notSent.length} not sent.`);

    // Opened read-write, so the WAL the killed server left is recovered as trade would.
    const db = new Database(storeFile(env));
    const stored = new Map(db.prepare<[], { id: string; quantity: number }>('SELECT order_id AS id, quantity FROM orders').all().map((o) => [o.quantity, o.id]));
    db.close();
    for (const r of out.filter((r) => r.status === 200)) expect(stored.get(r.line)).toBe(r.data.orderId);
    for (const line of notSent) expect(stored.has(line)).toBe(false);
    for (const line of stored.keys()) expect([...placed, ...unknown]).toContain(line);
  });
});
