/**
 * `trade batch` reading its input as it arrives, run as the built bin the way a user runs it: a
 * producer that holds its pipe open gets each result before it writes the next line; a line over
 * the cap is refused while the lines around it are answered; a line with a duplicate key is
 * refused with nothing placed; and on ws, a connection lost while lines wait on the pacer sends
 * none of them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import type { Env } from '../../src/config/paths.js';
import { MAX_LINE_BYTES } from '../../src/cli/ndjson.js';
import { BIN, queryStore, runBin, tempHome } from '../helpers/cli.js';
import { spawnRecorded } from '../helpers/spawn.js';

let env: Env;
let cleanup: () => void;
beforeEach(() => ({ env, cleanup } = tempHome()));
afterEach(() => cleanup());

const ARGS = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
const place = (id: string) => JSON.stringify({ api: 'PlaceOrder', id, args: ARGS });
const results = (stdout: string) => stdout.trim().split('\n').map((l) => JSON.parse(l));

describe('trade batch - reads its input line by line', () => {
  it('answers each line of a pipe held open before the next is written', async () => {
    const child = spawnRecorded(process.execPath, [BIN, 'batch', '-'], { env: { PATH: process.env.PATH, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let arrived: (() => void) | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      arrived?.();
    });
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    /** Resolves once `count` result lines are out; fails if they are not within 5 s while the pipe stays open. */
    const lines = (count: number) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no result ${count} while the pipe is open; got ${JSON.stringify(stdout)} ${stderr}`)), 5_000);
        arrived = () => {
          if (stdout.split('\n').length > count) {
            clearTimeout(timer);
            resolve();
          }
        };
        arrived();
      });

    for (let i = 1; i <= 3; i++) {
      child.stdin!.write(`${place(`s${i}`)}\n`);
      await lines(i);
      expect(results(stdout).at(-1)).toMatchObject({ line: i, id: `s${i}`, status: 200 });
    }
    child.stdin!.end();
    expect(await exited).toBe(0);
    expect(stderr).toBe('Batch of 3 lines: 3 succeeded, 0 rejected.\n');
  });

  it(`refuses a line over ${MAX_LINE_BYTES} bytes (413) and a line with a duplicate key (400), and answers the others`, async () => {
    const huge = JSON.stringify({ api: 'PlaceOrder', id: 'huge', args: { ...ARGS, strategy: 'x'.repeat(2 * 1024 * 1024) } });
    const doubled = place('dup').replace('"action":"BUY"', '"action":"BUY","quantity":3,"action":"SELL"');
    const input = [place('a'), huge, doubled, `{"api":"PlaceOrder","id":"d","id":"e","args":{}}`, place('b')];
    const result = await runBin(['batch', '-'], env, `${input.join('\n')}\n`);
    const out = results(result.stdout);
    expect(out.map((r) => [r.line, r.id, r.status])).toEqual([[1, 'a', 200], [2, null, 413], [3, 'dup', 400], [4, null, 400], [5, 'b', 200]]);
    expect(out[1].data).toEqual({ error: `Invalid request: line: larger than ${MAX_LINE_BYTES} bytes` });
    expect(out[2].data).toEqual({ error: "Invalid request: line: duplicate key 'args.action'; line: duplicate key 'args.quantity'" });
    expect(out[3].data).toEqual({ error: "Invalid request: line: duplicate key 'id'" });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('Error: Batch of 5 lines: 2 succeeded, 3 rejected.\n');
    // Nothing of the refused lines reached the store: two orders, both buys of one.
    expect(queryStore(env, 'SELECT action, quantity FROM orders ORDER BY seq')).toEqual([
      { action: 'BUY', quantity: 1 },
      { action: 'BUY', quantity: 1 },
    ]);
  });
});

describe('trade batch --backend ws when the connection dies while lines wait on the pacer', () => {
  let server: Server;
  let wss: WebSocketServer;
  afterEach(async () => {
    wss.close();
    await new Promise((r) => server.close(r));
  });

  it('sends none of the waiting lines, on this connection or a new one: they are "not sent", exit 4', async () => {
    const seen: string[] = [];
    server = createServer();
    wss = new WebSocketServer({ server });
    // Answers every request but the 22nd, which it holds and then drops the connection on.
    // A new connection would be accepted and answered: only the batch itself can keep from sending.
    wss.on('connection', (ws) => {
      ws.on('message', (raw) => {
        const { id, args } = JSON.parse(raw.toString());
        seen.push(args.orderId);
        if (seen.length === 22) setTimeout(() => ws.terminate(), 50);
        else ws.send(JSON.stringify({ id, data: { orderId: args.orderId, success: true } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/stream`;
    const order = (i: number) => JSON.stringify({ api: 'PlaceOrder', id: `o${i}`, args: { ...ARGS, orderId: `o${i}` } });
    const input = Array.from({ length: 26 }, (_, i) => order(i + 1)).join('\n');
    // 2/s after the burst of 20: line 21 goes at about 0.5 s, 22 at 1 s, 23 would at 1.5 s.
    const ws = { ...env, TRADE_BACKEND: 'ws', TRADE_WS_URL: url, TRADE_TOKEN: 'batch-pacer-drop-token-0123' };
    const result = await runBin(['batch', '-', '--rate', '2', '--concurrency', '4'], ws, `${input}\n`);

    const out = results(result.stdout);
    // The pacer lets waiting workers go in any order, so which lines went is read from the server.
    expect(seen).toHaveLength(22);
    const fate = (id: string) => (seen.indexOf(id) < 0 ? [null, 'not-sent'] : seen.indexOf(id) < 21 ? [200, 'done'] : [null, 'unknown']);
    expect(out.map((r) => [r.line, r.id, r.status, r.outcome ?? 'done'])).toEqual(
      Array.from({ length: 26 }, (_, i) => [i + 1, `o${i + 1}`, ...fate(`o${i + 1}`)]),
    );
    // Every line before the four in the workers' hands when the connection died was sent.
    expect(seen.slice().sort()).toEqual(expect.arrayContaining(Array.from({ length: 18 }, (_, i) => `o${i + 1}`)));
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('Batch of 26 lines: 21 succeeded, 0 rejected, 1 outcome unknown (check with `trade orders`), 4 not sent.');
  });
});
