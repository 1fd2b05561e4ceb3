/**
 * The streams of `trade serve` (service-reference.md §5.4) over real sockets: `subscribe` →
 * `marketData` at once and on every change (throttled to one message per 100 ms), `unsubscribe`,
 * `streamPnl` → `pnlUpdate` at its interval, the subscription budget of §7.3, and what a closed
 * connection leaves behind (nothing). A price set by `trade price set` in another process reaches
 * a subscriber of a spawned `trade serve`.
 */
import { createHook } from 'node:async_hooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import { runBin, tempHome } from '../helpers/cli.js';
import { createStreamHub, type StreamEvent } from '../../src/server/streams.js';
import { killServes, startServe, storeFile } from '../helpers/serve-process.js';
import { connect, startServer, type Harness, type RpcClient } from './harness.js';

const ES = 'ES 06-26';
const NQ = 'NQ 06-26';

type Message = { type?: string; quotes?: Array<{ instrument: string; last: number }>; [key: string]: unknown };

/** Collects a client's messages with their arrival times. */
function timed(client: RpcClient): Array<{ at: number; message: Message }> {
  const seen: Array<{ at: number; message: Message }> = [];
  client.socket.on('message', (data) => seen.push({ at: performance.now(), message: JSON.parse(data.toString()) as Message }));
  return seen;
}

async function until(what: string, check: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Nothing more is on its way once a pong is back: messages are answered in order. */
async function settled(client: RpcClient): Promise<void> {
  const count = client.messages.length;
  client.send({ action: 'ping' });
  await client.waitFor(count + 1);
  expect(client.messages.at(-1)).toEqual({ type: 'pong' });
}

let server: Harness;
let client: RpcClient;
beforeEach(async () => {
  server = await startServer();
  server.engine.setPrice(ES, 5000);
  server.engine.setPrice(NQ, 20000);
  client = await connect(server.wsUrl);
});
afterEach(async () => {
  await client.close();
  await server.close();
  await killServes();
});

describe('subscribe', () => {
  it('answers at once with the GetQuote objects (no success) of the priced instruments, any form resolved, the unresolvable skipped', async () => {
    server.engine.placeOrder({ account: 'Sim101', instrument: ES, action: 'BUY', quantity: 2, orderType: 'MARKET', timeInForce: 'DAY' });
    client.send({ action: 'subscribe', instruments: ['ESM26', 'XYZ1!', 'es 06-26', 'YM 06-26'] });
    const { success, ...quote } = (await server.get(`/v1/api/market/quote?instrument=${encodeURIComponent(ES)}`)).body as Record<string, unknown>;
    expect(success).toBe(true);
    expect(await client.next()).toEqual({ type: 'marketData', quotes: [quote] });
    expect(quote).toMatchObject({ instrument: ES, last: 5000, volume: 2 });
  });

  it('refuses with an error event naming what is wrong when nothing resolves', async () => {
    client.send({ action: 'subscribe', instruments: ['XYZ1!', 'ES2!'] });
    client.send({ action: 'subscribe', instruments: 'ES' });
    client.send({ action: 'unsubscribe', instruments: [] });
    expect(await client.waitFor(3)).toEqual([
      {
        type: 'error',
        action: 'subscribe',
        error: expect.stringMatching(/^Invalid request: instruments: unknown root 'XYZ' in 'XYZ1!'; known roots: ES, .*; 'ES2!' is not supported; only the front month \(ES1!\) is$/),
      },
      { type: 'error', action: 'subscribe', error: `Invalid request: instruments: must be a non-empty list of instruments like ["ES 06-26"], got 'ES'` },
      { type: 'error', action: 'unsubscribe', error: 'Invalid request: instruments: must be a non-empty list of instruments like ["ES 06-26"], got an array' },
    ]);
  });

  it('sends the latest quote of each changed instrument, one message per 100 ms at most', async () => {
    const seen = timed(client);
    client.send({ action: 'subscribe', instruments: [ES, NQ] });
    await client.waitFor(1);
    for (let i = 1; i <= 12; i++) {
      server.engine.setPrice(ES, 5000 + i * 0.25);
      if (i === 6) server.engine.setPrice(NQ, 20001);
      await new Promise((resolve) => setTimeout(resolve, 15));
    }
    await until('the last ES price', () => seen.some(({ message }) => message.quotes?.some((q) => q.instrument === ES && q.last === 5003)));
    const updates = seen.slice(1).filter(({ message }) => message.type === 'marketData');
    expect(updates.length).toBeLessThan(12);
    for (let i = 1; i < updates.length; i++) expect(updates[i]!.at - updates[i - 1]!.at).toBeGreaterThan(80);
    for (const { message } of updates) expect(new Set(message.quotes!.map((q) => q.instrument)).size).toBe(message.quotes!.length);
    expect(updates.flatMap(({ message }) => message.quotes!).filter((q) => q.instrument === NQ).map((q) => q.last)).toEqual([20001]);
  });

  it('unsubscribe stops the updates of those instruments and keeps the others', async () => {
    client.send({ action: 'subscribe', instruments: [ES, NQ] });
    await client.waitFor(1);
    client.send({ action: 'unsubscribe', instruments: ['ESM6'] });
    server.engine.setPrice(ES, 5001);
    server.engine.setPrice(NQ, 20002);
    await client.waitFor(2);
    await new Promise((resolve) => setTimeout(resolve, 250));
    await settled(client);
    const quotes = client.messages.slice(1, -1).flatMap((m) => (m as Message).quotes ?? []);
    expect(quotes.map((q) => [q.instrument, q.last])).toEqual([[NQ, 20002]]);
  });
});

describe('streamPnl', () => {
  it('sends the first update at once and then one per interval, with GetAccount figures; enabled:false stops it', async () => {
    server.engine.placeOrder({ account: 'Sim101', instrument: ES, action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });
    server.engine.setPrice(ES, 5002);
    // A second stream at 1.2 s, asked for first, is the clock: both run on the server's one event
    // loop, so a busy machine slows both alike.
    const slow = await connect(server.wsUrl);
    const beside = timed(slow);
    const seen = timed(client);
    slow.send({ action: 'streamPnl', enabled: true, interval: 1200 });
    await until('the 1.2 s stream', () => beside.length >= 1);
    const started = performance.now();
    client.send({ action: 'streamPnl', enabled: true, interval: 300 });
    await until('three P&L updates', () => seen.length >= 3);
    // The third update is two intervals after the first: not before 600 ms (500 allows the timer's
    // rounding), and before the 1.2 s stream's second.
    expect(seen[2]!.at - started).toBeGreaterThan(500);
    expect(beside.filter((u) => u.at < seen[2]!.at)).toHaveLength(1);
    const account = (await server.get('/v1/api/accounts/Sim101')).body as { item: Record<string, number> };
    const position = (await server.get(`/v1/api/accounts/Sim101/position?instrument=${encodeURIComponent(ES)}`)).body as Record<string, unknown>;
    delete position.success;
    expect(seen[0]!.message).toEqual({
      type: 'pnlUpdate',
      epoch: expect.any(Number),
      accounts: [
        {
          account: 'Sim101',
          realizedProfitLoss: account.item.realizedProfitLoss,
          unrealizedProfitLoss: 100,
          cashValue: account.item.cashValue,
          netLiquidation: account.item.netLiquidation,
          positions: [position],
        },
      ],
    });
    client.send({ action: 'streamPnl', enabled: false });
    await settled(client);
    const count = seen.length;
    // Two more updates of the 1.2 s stream: eight intervals of the stopped one, none sent.
    const after = beside.length;
    await until('two more updates of the 1.2 s stream', () => beside.length >= after + 2, 10_000);
    expect(seen.length).toBe(count);
    await slow.close();
  });

  it('refuses a streamPnl whose enabled or interval is not what it must be', async () => {
    client.send({ action: 'streamPnl', enabled: 'yes' });
    client.send({ action: 'streamPnl', enabled: true, interval: '1s' });
    expect(await client.waitFor(2)).toEqual([
      { type: 'error', action: 'streamPnl', error: "Invalid request: enabled: must be true or false, got 'yes'" },
      { type: 'error', action: 'streamPnl', error: "Invalid request: interval: must be a number of milliseconds, got '1s'" },
    ]);
  });
});

describe('with --rate-limit (§7.3)', () => {
  it('subscribe and unsubscribe draw on a bucket of 20 a minute; ping, streamPnl and RPCs do not', async () => {
    const limited = await startServer({ rateLimit: { count: 3, periodMs: 1_000, burst: 20 }, now: () => 0 });
    const ws = await connect(limited.wsUrl);
    try {
      for (let i = 0; i < 20; i++) ws.send({ action: i % 2 ? 'unsubscribe' : 'subscribe', instruments: [ES] });
      ws.send({ action: 'subscribe', instruments: [ES] });
      ws.send({ action: 'unsubscribe', instruments: [ES] });
      ws.send({ action: 'ping' });
      ws.send({ action: 'streamPnl', enabled: true, interval: 60_000 });
      const messages = (await ws.waitFor(14)) as Message[];
      expect(messages.slice(0, 10).map((m) => m.type)).toEqual(Array(10).fill('marketData'));
      expect(messages.slice(10, 14)).toEqual([
        { type: 'error', action: 'subscribe', error: 'Rate limit exceeded' },
        { type: 'error', action: 'unsubscribe', error: 'Rate limit exceeded' },
        { type: 'pong' },
        expect.objectContaining({ type: 'pnlUpdate' }),
      ]);
      expect((await ws.call('r', 'GetAllPositions', {})).data).toMatchObject({ success: true });
    } finally {
      await ws.close();
      await limited.close();
    }
  });
});

describe('a closed connection', () => {
  it('leaves no timer behind, and the server still closes at once', async () => {
    const own = await startServer();
    own.engine.setPrice(ES, 5000);
    const live = new Set<number>();
    const hook = createHook({
      init: (id, type) => void (type === 'Timeout' && live.add(id)),
      destroy: (id) => void live.delete(id),
    });
    const other = await connect(own.wsUrl);
    hook.enable();
    try {
      other.send({ action: 'subscribe', instruments: [ES] });
      other.send({ action: 'streamPnl', enabled: true, interval: 250 });
      own.engine.setPrice(ES, 5001);
      await other.waitFor(4);
      expect(live.size).toBeGreaterThan(0);
      await other.close();
      await until('the server to see the close', () => own.logs.some((line) => / WS closed 1005$/.test(line)));
      await new Promise((resolve) => setImmediate(resolve));
      expect(live.size).toBe(0);
    } finally {
      hook.disable();
    }
    const started = performance.now();
    await own.close();
    expect(performance.now() - started).toBeLessThan(1_000);
  });
});

describe('a congested socket', () => {
  it('is sent no marketData or pnlUpdate until it drains, and then only the latest quote', async () => {
    const sent: StreamEvent[] = [];
    let congested = false;
    const hub = createStreamHub({
      engine: server.engine,
      takeSubscription: () => ({ ok: true }),
      onInternalError: (what, error) => sent.push({ type: 'internal', what, error: String(error) }),
    });
    const connection = hub.open({ send: (event) => sent.push(event), congested: () => congested });
    try {
      connection.handle('subscribe', { instruments: [ES] });
      connection.handle('streamPnl', { enabled: true, interval: 250 });
      expect(sent.map((e) => e.type)).toEqual(['marketData', 'pnlUpdate']);
      congested = true;
      for (const price of [5001, 5002, 5003]) {
        server.engine.setPrice(ES, price);
        await new Promise((resolve) => setTimeout(resolve, 120));
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(sent).toHaveLength(2);
      congested = false;
      await until('the drained socket to get the latest quote', () => sent.some((e, i) => i > 1 && e.type === 'marketData'));
      const after = sent.slice(2).filter((e) => e.type === 'marketData') as Message[];
      expect(after.map((m) => m.quotes!.map((q) => q.last))).toEqual([[5003]]);
    } finally {
      hub.close();
    }
    expect(sent.filter((e) => e.type === 'internal')).toEqual([]);
  });
});

describe('another process', () => {
  it('a price set by `trade price set` in another process reaches a subscriber of a spawned trade serve', async () => {
    const home = tempHome();
    try {
      const engine = createEngine(storeFile(home.env));
      engine.setPrice(ES, 5000);
      engine.close();
      const serve = await startServe(home.env, 'stream-token-0123456789');
      const subscriber = await connect(serve.wsUrl, { authorization: 'Bearer stream-token-0123456789' });
      const seen = timed(subscriber);
      subscriber.send({ action: 'subscribe', instruments: [ES] });
      expect(await subscriber.next()).toMatchObject({ type: 'marketData', quotes: [{ instrument: ES, last: 5000 }] });
      const set = await runBin(['price', 'set', ES, '5001.25'], home.env);
      expect(set.code).toBe(0);
      await until('the new price', () => seen.some(({ message }) => message.quotes?.[0]?.last === 5001.25), 10_000);
      await subscriber.close();
      serve.child.kill('SIGINT');
      expect(await serve.exited).toEqual({ code: 0, signal: null });
    } finally {
      home.cleanup();
    }
  });
});
