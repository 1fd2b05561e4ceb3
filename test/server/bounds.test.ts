/**
 * The server's bounds (issue 14, README "Limits"), with real sockets: a WebSocket client that
 * never reads, pipelined big reads, slow bodies with and without a token, idle connections and
 * the connection cap. Each test also checks that another client is still answered. No test bounds
 * a duration: what a bound would stand for is an event (a connection closed while another is
 * still open, an answer that came before the flood was done); how long answers take under abuse is
 * measured in bench/bounds.js, against the same server unabused.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as connectTcp, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createEngine } from '../../src/engine/engine.js';
import { runCli, tempHome } from '../helpers/cli.js';
import { killServes, startServe } from '../helpers/serve-process.js';
import { AUTH, connect, startServer, type Harness } from './harness.js';

const TOKEN = 'bounds-test-token-0123456789';
const ORDERS = '/v1/api/accounts/Sim101/orders';

let server: Harness | undefined;
const dirs: string[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await server?.close();
  server = undefined;
  await killServes();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A store whose Sim101 holds `count` working orders (each GetOrders page about 550 KB). */
function storeWithOrders(count: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'trade-bounds-'));
  dirs.push(dir);
  const engine = createEngine(join(dir, 'trade.db'));
  engine.setPrice('ES 12-26', 5000);
  for (let i = 0; i < count; i++)
    engine.placeOrder({ account: 'Sim101', instrument: 'ES 12-26', action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' });
  engine.close();
  return dir;
}

const rssMiB = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

/** A raw TCP connection to the server, collecting what it answers and when it ends. */
function tcp(url: string): Promise<{ socket: Socket; text: () => string; ended: Promise<number> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connectTcp({ host: hostname, port: Number(port) }, () => resolve({ socket, text: () => text, ended }));
    sockets.push(socket);
    let text = '';
    socket.setEncoding('latin1').on('data', (d: string) => (text += d));
    const ended = new Promise<number>((done) => socket.on('close', () => done(Date.now() - started)));
    socket.on('error', reject);
  });
}

describe('a WebSocket client that never reads its replies', () => {
  it('costs the server a bounded amount of memory, and other clients are answered all the while', async () => {
    const dir = storeWithOrders(2000);
    const serve = await startServe({ TRADE_HOME: dir }, TOKEN);
    const pid = serve.child.pid!;
    const baseline = rssMiB(pid);
    const greedy = new WebSocket(serve.wsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    await new Promise((resolve, reject) => greedy.once('open', resolve).once('error', reject));
    greedy.pause(); // reads nothing from here on
    const call = JSON.stringify({ action: 'rpc', id: 'g', api: 'GetOrders', args: { account: 'Sim101' } });
    for (let i = 0; i < 3000; i++) greedy.send(call); // 3,000 × ~550 KB of replies if all were built
    const other = await connect(serve.wsUrl, { authorization: `Bearer ${TOKEN}` });
    let peak = 0;
    for (let i = 0; i < 10; i++) {
      // Time for the server to build the greedy client's replies (a slow machine builds fewer: the
      // memory bound is then checked on less, never failed for want of time).
      await new Promise((resolve) => setTimeout(resolve, 400));
      const reply = await other.call(`o${i}`, 'GetPositions', { account: 'Sim101' });
      expect(reply.data).toMatchObject({ success: true });
      peak = Math.max(peak, rssMiB(pid));
    }
    await other.close();
    // Bounded, it grows about 20 MiB (the replies in flight and the heap's own growth); unbounded,
    // the replies it had built by then came to 100 MiB more (measured when this test was written).
    expect(peak - baseline).toBeLessThan(50);
    greedy.terminate();
  }, 30_000);

  it('is closed with 1008 when it stays over the high-water mark, and its queued work is dropped', async () => {
    const dir = storeWithOrders(1500);
    const engine = createEngine(join(dir, 'trade.db'));
    server = await startServer({ engine, wsBounds: { stallMs: 500, highWaterBytes: 64 * 1024, lowWaterBytes: 16 * 1024 } } as never);
    const greedy = new WebSocket(server.wsUrl, { headers: AUTH });
    await new Promise((resolve, reject) => greedy.once('open', resolve).once('error', reject));
    greedy.pause();
    const call = JSON.stringify({ action: 'rpc', id: 'g', api: 'GetOrders', args: { account: 'Sim101' } });
    for (let i = 0; i < 200; i++) greedy.send(call);
    const deadline = Date.now() + 8000;
    while (!server.logs.some((l) => l.includes('WS closed 1008')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(server.logs.find((l) => l.includes('WS closed 1008'))).toMatch(/more than 65536 bytes of replies unread for 500 ms/);
    // Far fewer than the 200 asked for were answered: the rest were dropped with the connection.
    const answered = server.logs.filter((l) => / WS GetOrders id='g' 200 /.test(l)).length;
    expect(answered).toBeGreaterThan(0);
    expect(answered).toBeLessThan(200);
    greedy.terminate();
  }, 20_000);
});

describe('pipelined HTTP requests', () => {
  it('beyond 16 in flight on one connection are refused as a rate limit (nothing done), and others are served', async () => {
    const dir = storeWithOrders(300);
    const engine = createEngine(join(dir, 'trade.db'));
    server = await startServer({ engine } as never);
    const { socket, text } = await tcp(server.url);
    const request = `GET ${ORDERS} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${AUTH.authorization.slice(7)}\r\n\r\n`;
    socket.write(request.repeat(200));
    const other = await server.get('/v1/api/positions');
    expect(other.status).toBe(200);
    const count = (re: RegExp) => (text().match(re) ?? []).length;
    while (count(/HTTP\/1\.1 \d{3} /g) < 200) await new Promise((r) => setTimeout(r, 50));
    const ok = count(/HTTP\/1\.1 200 /g);
    const limited = count(/HTTP\/1\.1 429 /g);
    expect(ok + limited).toBe(200);
    expect(ok).toBeGreaterThanOrEqual(16);
    expect(limited).toBeGreaterThan(0);
    expect(text()).toContain('{"error":"Rate limit exceeded"}');
  }, 30_000);
});

describe('slow and idle connections', () => {
  const limits = { headersTimeoutMs: 400, requestTimeoutMs: 800, keepAliveTimeoutMs: 300, checkIntervalMs: 100 };

  it('a body sent too slowly is answered 408 with {error} and its connection closed; nothing is stored', async () => {
    server = await startServer({ limits });
    const before = server.snapshot();
    const { socket, text, ended } = await tcp(server.url);
    socket.write(`POST /v1/api/accounts/Sim101/orders/place HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n{"instrument"`);
    // The body never completes (200 bytes at one a tenth of a second): only the request timeout ends it.
    const trickle = setInterval(() => socket.writable && socket.write(' '), 100);
    await ended;
    clearInterval(trickle);
    expect(text()).toMatch(/^HTTP\/1\.1 408/);
    expect(text()).toContain('{"error":"Request timeout: the request did not arrive in time"}');
    expect(server.snapshot()).toEqual(before);
    expect((await server.get('/v1/api/positions')).status).toBe(200);
  });

  it('a request without the token is answered 401 and closed at once, its slow body never waited for', async () => {
    server = await startServer({ limits: { requestTimeoutMs: 60_000, headersTimeoutMs: 30_000 } });
    const { socket, text, ended } = await tcp(server.url);
    socket.write(`POST /v1/api/accounts/Sim101/orders/place HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{"instr`);
    // The body is never sent whole, and the timeouts are longer than the test's: only the server's
    // answer without it ends the connection.
    const trickle = setInterval(() => socket.writable && socket.write(' '), 100);
    await ended;
    clearInterval(trickle);
    expect(text()).toMatch(/^HTTP\/1\.1 401/);
    expect(text()).toMatch(/connection: close/i);
  });

  it('any refused request closes its connection after the answer', async () => {
    // Kept alive longer than the test runs: only the server's own close ends the connection.
    server = await startServer({ limits: { keepAliveTimeoutMs: 60_000 } });
    const { socket, text, ended } = await tcp(server.url);
    socket.write(`POST /v1/api/accounts/Sim101/orders/place HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\nContent-Length: 2\r\n\r\n{}`);
    await ended;
    expect(text()).toMatch(/^HTTP\/1\.1 400/);
    expect(text()).toMatch(/connection: close/i);
  });

  it('idle connections (nothing sent, or kept alive after an answer) are closed after their timeouts', async () => {
    // A server on the default limits (10 s for headers, 5 s kept alive), its idle connection opened
    // first: the limited server's connections must all be closed while it is still open.
    const control = await startServer();
    const watch = await tcp(control.url);
    try {
      let controlClosed = false;
      void watch.ended.then(() => (controlClosed = true));
      server = await startServer({ limits });
      const idle = await Promise.all(Array.from({ length: 200 }, () => tcp(server!.url)));
      const kept = await tcp(server.url);
      kept.socket.write(`GET /v1/api/positions HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n\r\n`);
      await Promise.all(idle.map((c) => c.ended));
      await kept.ended;
      expect(controlClosed).toBe(false);
      expect(kept.text()).toMatch(/^HTTP\/1\.1 200/);
      expect((await server.get('/v1/api/positions')).status).toBe(200);
    } finally {
      watch.socket.destroy();
      await control.close();
    }
  });

  it('connections beyond --max-connections are closed as they arrive; those within are served', async () => {
    server = await startServer({ limits: { maxConnections: 20 } });
    const held = await Promise.all(Array.from({ length: 20 }, () => tcp(server!.url)));
    const extra = await tcp(server.url);
    await extra.ended;
    // Closed as it came, while the 20 within the cap are still open and nothing timed out.
    expect(held.map((c) => c.socket.destroyed)).toEqual(Array(20).fill(false));
    expect(extra.text()).toBe('');
    expect(server.logs.some((l) => l.includes('connection refused: 20 connections open (--max-connections)'))).toBe(true);
    for (const c of held.splice(0, 5)) c.socket.destroy();
    // The server sees the five closes in its own time: a new client is refused until then, served after.
    let status = 0;
    while (status === 0) {
      status = await server.get('/v1/api/positions').then((r) => r.status, () => 0);
      if (status === 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(200);
  });
});

describe('long lists', () => {
  it('GetOrders answers at most 1,000 orders a page with a nextCursor; the pages together are every order once', async () => {
    const dir = storeWithOrders(2300);
    const engine = createEngine(join(dir, 'trade.db'));
    server = await startServer({ engine } as never);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await server.get(`${ORDERS}${cursor ? `?cursor=${cursor}` : ''}`);
      const body = reply.body as { orders: Array<{ orderId: string }>; count: number; nextCursor?: string };
      expect(body.orders.length).toBeLessThanOrEqual(1000);
      expect(body.count).toBe(body.orders.length);
      expect(JSON.stringify(body).length).toBeLessThan(1024 * 1024);
      seen.push(...body.orders.map((o) => o.orderId));
      cursor = body.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(2300);
    expect(seen).toEqual(engine.listOrders({ account: 'Sim101' }).map((o) => o.orderId));
    const small = (await server.get(`${ORDERS}?limit=2`)).body as { orders: unknown[]; nextCursor: string };
    expect(small.orders).toHaveLength(2);
    expect(small.nextCursor).toMatch(/^\d+$/);
    expect(await server.get(`${ORDERS}?limit=1001`)).toMatchObject({ status: 400, body: { error: 'Invalid request: limit: must be a whole number from 1 to 1000, got \'1001\'' } });
    expect(await server.get(`${ORDERS}?cursor=x`)).toMatchObject({ status: 400, body: { error: "Invalid request: cursor: must be the nextCursor of the page before, got 'x'" } });
  }, 30_000);

  it('trade orders and trade executions list every page on embedded, http and ws, and print no cursor', async () => {
    const dir = storeWithOrders(0);
    const engine = createEngine(join(dir, 'trade.db'));
    engine.setPrice('ES 12-26', 5000);
    for (let i = 0; i < 1100; i++) engine.placeOrder({ account: 'Sim101', instrument: 'ES 12-26', action: i % 2 ? 'SELL' : 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });
    for (let i = 0; i < 1050; i++) engine.placeOrder({ account: 'Sim101', instrument: 'ES 12-26', action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' });
    const orderIds = engine.listOrders({ account: 'Sim101' }).map((o) => o.orderId);
    const executionIds = engine.listFills({ account: 'Sim101' }).map((f) => f.executionId);
    engine.close();
    const serve = await startServe({ TRADE_HOME: dir }, TOKEN);
    const home = tempHome();
    try {
      const envs = {
        embedded: { TRADE_HOME: dir },
        http: { ...home.env, TRADE_BACKEND: 'http', TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN },
        ws: { ...home.env, TRADE_BACKEND: 'ws', TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN },
      };
      for (const [backend, env] of Object.entries(envs)) {
        const orders = await runCli(['orders', '--account', 'Sim101', '--json'], env);
        expect(orders.code, `${backend}: ${orders.stderr}`).toBe(0);
        const body = JSON.parse(orders.stdout) as { orders: Array<{ orderId: string }>; count: number; nextCursor?: string };
        expect(body.orders.map((o) => o.orderId)).toEqual(orderIds);
        expect(body.count).toBe(2150);
        expect(body.nextCursor).toBeUndefined();
        const active = JSON.parse((await runCli(['orders', '--account', 'Sim101', '--active', '--json'], env)).stdout) as { count: number };
        expect(active.count).toBe(1050);
        const fills = await runCli(['executions', '--account', 'Sim101', '--lookback', '900', '--json'], env);
        expect(fills.code, `${backend}: ${fills.stderr}`).toBe(0);
        const listed = JSON.parse(fills.stdout) as { executions: Array<{ id: string }>; count: number };
        expect(listed.executions.map((e) => e.id)).toEqual(executionIds);
        expect(listed.count).toBe(1100);
      }
    } finally {
      home.cleanup();
    }
  }, 60_000);
});
