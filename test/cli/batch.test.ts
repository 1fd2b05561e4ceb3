import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { Env } from '../../src/config/paths.js';
import { parseLine } from '../../src/cli/commands/batch.js';
import { runBin, tempHome } from '../helpers/cli.js';

let env: Env;
let dir: string;
let cleanup: () => void;
beforeEach(() => ({ env, dir, cleanup } = tempHome()));
afterEach(() => cleanup());

const args = (change: Record<string, unknown> = {}) => ({
  account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', ...change,
});
const place = (id: unknown, change: Record<string, unknown> = {}) => JSON.stringify({ api: 'PlaceOrder', id, args: args(change) });
const results = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l));

describe('trade batch on the embedded engine', () => {
  it('runs its lines in their order though 64 are in flight, sharing commits: every fill in line order, every read after the lines before it', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) {
      lines.push(place(`p${i}`, { action: i % 3 === 2 ? 'SELL' : 'BUY', quantity: 1 + (i % 4), orderId: `line-${i}` }));
      if (i % 50 === 49) lines.push(JSON.stringify({ api: 'GetPositions', id: `g${i}`, args: { account: 'Sim101' } }));
      if (i % 60 === 30) lines.push(JSON.stringify({ api: 'ReversePosition', id: `r${i}`, args: args({ action: 'SELL', quantity: 1, orderId: `rev-${i}` }) }));
    }
    const result = await runBin(['batch', '-'], env, `${lines.join('\n')}\n`);
    expect(result.code, result.stderr).toBe(0);
    const out = results(result.stdout);
    expect(out.every((r) => r.status === 200)).toBe(true);
    // What each line should see, had the lines run one by one.
    let held = 0;
    const want: Array<[string, number]> = [];
    for (const line of lines) {
      const { api, id, args: a } = JSON.parse(line) as { api: string; id: string; args: { action: string; quantity: number } };
      if (api === 'PlaceOrder') held += a.action === 'BUY' ? a.quantity : -a.quantity;
      else if (api === 'ReversePosition') held = -a.quantity;
      else want.push([id, held]);
    }
    const seen = out
      .filter((r) => String(r.id).startsWith('g'))
      .map((r) => [r.id, (r.data as { positions: Array<{ quantity: number; marketPosition: string }> }).positions.reduce((n, p) => n + (p.marketPosition === 'Short' ? -p.quantity : p.quantity), 0)]);
    expect(seen).toEqual(want);
    const executions = await runBin(['executions', '--account', 'Sim101', '--json'], env);
    const ids = (JSON.parse(executions.stdout) as { executions: Array<{ orderId: string }> }).executions.map((e) => e.orderId).filter((id) => id.startsWith('line-'));
    expect(ids).toEqual(Array.from({ length: 300 }, (_, i) => `line-${i}`));
  });

  it('writes one result per line, in input order, and goes on after bad lines (exit 1)', async () => {
    const input = [
      place('a'),
      '{not json',
      JSON.stringify({ api: 'CancelEverything', id: 'c', args: args() }),
      place('b', { quantity: 0 }),
      JSON.stringify({ api: 'ReversePosition', id: 'r', args: args({ action: 'Sell', quantity: 2, orderType: 'Market', timeInForce: 'Gtc' }) }),
      JSON.stringify({ api: 'ReversePosition', id: 'nq', args: args({ instrument: 'NQ 12-25' }) }),
      place(7, { account: 'Ghost' }),
    ].join('\n');
    const result = await runBin(['batch', '-'], env, `${input}\n`);
    expect(result.code).toBe(1);
    const out = results(result.stdout);
    expect(out.map((r) => [r.line, r.id, r.status])).toEqual([
      [1, 'a', 200], [2, null, 400], [3, 'c', 400], [4, 'b', 400], [5, 'r', 200], [6, 'nq', 400], [7, 7, 404],
    ]);
    expect(out[0].data).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
    expect(out[1].data).toEqual({ error: 'Invalid request: the line is not valid JSON' });
    expect(out[2].data).toEqual({ error: expect.stringMatching(/^Invalid request: api: must be one of PlaceOrder, .*, got 'CancelEverything'$/) });
    expect(out[3].data).toEqual({ error: 'Invalid request: quantity: must be at least 1, got 0' });
    expect(out[5].data).toEqual({ error: "No position found for instrument 'NQ 12-25' in account 'Sim101'" });
    expect(out[6].data).toEqual({ success: false, error: 'invalid_account', detail: 'Account Ghost not found' });
    expect(result.stderr).toBe('Error: Batch of 7 lines: 2 succeeded, 5 rejected.\n');
    const positions = JSON.parse((await runBin(['positions', '--json'], env)).stdout).positions;
    expect(positions).toEqual([expect.objectContaining({ instrument: 'ES 09-25', marketPosition: 'Short', quantity: 2 })]);
  });

  it('takes every operation of the table by its WebSocket name, aliases included, and reads come back as data', async () => {
    const input = [
      place('p', { orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' }),
      JSON.stringify({ api: 'ListOrders', id: 'l', args: { account: 'Sim101', activeOnly: true } }),
      JSON.stringify({ api: 'GetPosition', id: 'g', args: { account: 'Sim101', instrument: 'ES 09-25' } }),
      JSON.stringify({ api: 'GetAllPositions', id: 'a', args: { includeFlat: 'yes' } }),
    ].join('\n');
    const result = await runBin(['batch', '-'], env, `${input}\n`);
    const out = results(result.stdout);
    expect(out.map((r) => [r.id, r.status])).toEqual([['p', 200], ['l', 200], ['g', 200], ['a', 400]]);
    expect(out[1].data).toMatchObject({ count: 1, orders: [{ orderId: out[0].data.orderId, orderState: 'Working' }] });
    expect(out[2].data).toMatchObject({ marketPosition: 'Flat', quantity: 0, success: true });
    expect(out[3].data).toEqual({ error: "Invalid request: includeFlat: must be true or false (or 1 or 0), got 'yes'" });
    // Cancel by the id the batch itself was given.
    const cancel = JSON.stringify({ api: 'CancelOrder', id: 'c', args: { account: 'Sim101', orderId: out[0].data.orderId } });
    expect(results((await runBin(['batch', '-'], env, `${cancel}\n`)).stdout)[0]).toMatchObject({ status: 200, data: { orderId: out[0].data.orderId } });
  });

  it('reads a file, exits 0 when every line succeeds, and stores every order', async () => {
    const file = join(dir, 'orders.ndjson');
    // Blank lines (a trailing one, one in the middle) ask for nothing: no result, no error.
    writeFileSync(file, `${Array.from({ length: 50 }, (_, i) => place(i)).join('\r\n').replace(place(25), `\r\n${place(25)}`)}\r\n  \r\n`);
    const result = await runBin(['batch', file], env);
    expect(result).toMatchObject({ code: 0, stderr: 'Batch of 50 lines: 50 succeeded, 0 rejected.\n' });
    const out = results(result.stdout);
    expect(out.map((r) => r.id)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    const orders = JSON.parse((await runBin(['orders', '--account', 'Sim101', '--json'], env)).stdout).orders;
    expect(orders.map((o: { orderId: string }) => o.orderId)).toEqual(out.map((r) => r.data.orderId));
  });

  it('refuses a bad --concurrency and a missing file with exit 2', async () => {
    expect(await runBin(['batch', '-', '--concurrency', '0'], env, '')).toMatchObject({ code: 2 });
    const missing = await runBin(['batch', join(dir, 'nope.ndjson')], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ENOENT');
  });

  it('parses the RPC form, with or without action:"rpc"', () => {
    expect(parseLine('{"action":"rpc","id":"x","api":"PlaceOrder","args":{}}')).toEqual({ ok: true, name: 'PlaceOrder', args: {}, id: 'x' });
    expect(parseLine('{"api":"CancelOrder","args":{}}')).toEqual({ ok: true, name: 'Cancel', args: {}, id: null });
    expect(parseLine('{"api":"PlaceOrder","args":{},"extra":1}')).toMatchObject({ ok: false, error: 'Invalid request: extra: is not a known field' });
    expect(parseLine('[1]')).toMatchObject({ ok: false, error: 'Invalid request: the line must be a JSON object, got an array' });
  });

  it('reads a line as a typed client writes it: null args are no args, a BOM before the line is skipped', () => {
    expect(parseLine('{"api":"ListAccounts","args":null,"id":"n"}')).toEqual({ ok: true, name: 'ListAccounts', args: {}, id: 'n' });
    expect(parseLine('\ufeff{"api":"FlattenEverything","args":{"account":null,"marketPosition":null}}')).toEqual({
      ok: true,
      name: 'FlattenEverything',
      args: { account: null, marketPosition: null },
      id: null,
    });
  });
});

describe('trade batch when the connection dies mid-batch', () => {
  let server: Server;
  let wss: WebSocketServer;
  let url: string;
  let seen = 0;
  beforeAll(async () => {
    server = createServer();
    wss = new WebSocketServer({ server });
    // Answers the first two requests, holds the next two, then kills the connection.
    wss.on('connection', (ws) => {
      ws.on('message', (raw) => {
        const { id } = JSON.parse(raw.toString());
        seen += 1;
        if (seen <= 2) ws.send(JSON.stringify({ id, status: 200, data: { orderId: String(seen).padStart(32, '0'), success: true } }));
        else if (seen === 4) setTimeout(() => ws.terminate(), 50);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/stream`;
  });
  afterAll(async () => {
    wss.close();
    await new Promise((r) => server.close(r));
  });

  it('marks in-flight lines unknown and unsent lines not sent, exit 4', async () => {
    const input = Array.from({ length: 8 }, (_, i) => place(`o${i + 1}`)).join('\n');
    const result = await runBin(['batch', '--concurrency', '4'], { ...env, TRADE_BACKEND: 'ws', TRADE_WS_URL: url, TRADE_TOKEN: 'batch-ws-kill-token-0123' }, input);
    expect(result.code).toBe(4);
    const out = results(result.stdout);
    expect(out.map((r) => [r.id, r.status, r.outcome ?? 'done'])).toEqual([
      ['o1', 200, 'done'],
      ['o2', 200, 'done'],
      ['o3', null, 'unknown'],
      ['o4', null, 'unknown'],
      // o1 and o2 answered, so two workers sent o5 and o6 before the connection died.
      ['o5', null, 'unknown'],
      ['o6', null, 'unknown'],
      ['o7', null, 'not-sent'],
      ['o8', null, 'not-sent'],
    ]);
    // Every line marked sent or unknown reached the server; none marked not-sent did.
    expect(seen).toBe(6);
    expect(result.stderr).toContain('Batch of 8 lines: 2 succeeded, 0 rejected, 4 outcome unknown (check with `trade orders`), 2 not sent.');
  });
});
