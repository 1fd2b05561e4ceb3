/**
 * The ws backend (src/backends/ws.ts) against a bare WebSocket server on 127.0.0.1 that plays each
 * part by hand: the stream actions as written on the wire, events and their listeners, a lost
 * connection and its words, what a timeout says the server sent instead, replies that carry their
 * body beside the id or a status of their own. The service-shaped paths are ws-faults and
 * ws-streams.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import { createWsBackend, type WsBackend } from '../../src/backends/ws.js';
import { NetworkError } from '../../src/common/errors.js';

const TOKEN = 'tok-0123456789-abcdefghij';
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Bench {
  host: string;
  /** Every message the server got, parsed. */
  got: Array<Record<string, unknown>>;
  /** The server's side of the one connection, once the client has connected. */
  peer: () => Promise<WebSocket>;
  backend: WsBackend;
  /** When each of the client's pings reached the server. */
  pings: number[];
}

interface BenchOptions {
  /** The client's reply timeout. */
  timeoutMs?: number;
  /** Whether the server answers pings (ws does by default). */
  autoPong?: boolean;
  /** The client's heartbeat period. */
  heartbeatMs?: number;
}

/** A server that answers nothing by itself: `onMessage` decides, per message. */
async function bench(
  onMessage: (message: Record<string, unknown>, socket: WebSocket) => void = () => undefined,
  { timeoutMs = 2000, autoPong = true, heartbeatMs }: BenchOptions = {},
): Promise<Bench> {
  const http: Server = createServer();
  const wss = new WebSocketServer({ server: http, autoPong });
  const got: Array<Record<string, unknown>> = [];
  const pings: number[] = [];
  let resolvePeer!: (socket: WebSocket) => void;
  const peer = new Promise<WebSocket>((resolve) => (resolvePeer = resolve));
  wss.on('connection', (socket) => {
    resolvePeer(socket);
    socket.on('ping', () => pings.push(Date.now()));
    socket.on('message', (raw) => {
      const message = JSON.parse(raw.toString()) as Record<string, unknown>;
      got.push(message);
      onMessage(message, socket);
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as AddressInfo).port;
  const backend = createWsBackend({ wsUrl: `ws://127.0.0.1:${port}/ws`, token: TOKEN, timeoutMs, heartbeatMs });
  cleanups.push(async () => {
    await backend.close();
    for (const client of wss.clients) client.terminate();
    await new Promise((resolve) => wss.close(resolve));
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  });
  return { host: `127.0.0.1:${port}`, got, peer: () => peer, backend, pings };
}

/** Resolves when `predicate` holds, checked every 5 ms (the test's own timeout bounds the wait). */
const until = async (predicate: () => boolean) => {
  while (!predicate()) await new Promise((resolve) => setTimeout(resolve, 5));
};

describe('stream actions on the wire', () => {
  it('subscribe, unsubscribe and streamPnl are written as §5.2 spells them; an interval only when given', async () => {
    const b = await bench();
    await b.backend.streams.subscribe(['ES 09-25', 'NQ 09-25']);
    await b.backend.streams.unsubscribe(['NQ 09-25']);
    await b.backend.streams.streamPnl(true, 500);
    await b.backend.streams.streamPnl(false);
    await until(() => b.got.length === 4);
    expect(b.got).toEqual([
      { action: 'subscribe', instruments: ['ES 09-25', 'NQ 09-25'] },
      { action: 'unsubscribe', instruments: ['NQ 09-25'] },
      { action: 'streamPnl', enabled: true, interval: 500 },
      { action: 'streamPnl', enabled: false },
    ]);
  });
});

describe('events and listeners', () => {
  it('an event (a type, no id) reaches every listener until it stops listening; a message with an id is no event', async () => {
    const b = await bench();
    const first: unknown[] = [];
    const second: unknown[] = [];
    const stopFirst = b.backend.streams.onEvent((event) => first.push(event));
    b.backend.streams.onEvent((event) => second.push(event));
    await b.backend.streams.subscribe(['ES 09-25']);
    const peer = await b.peer();
    peer.send(JSON.stringify({ type: 'quote', instrument: 'ES 09-25', last: 4500 }));
    peer.send(JSON.stringify({ type: 'quote', id: 7, instrument: 'ES 09-25', last: 4501 }));
    await until(() => second.length === 1);
    stopFirst();
    peer.send(JSON.stringify({ type: 'pnl', account: 'Sim101' }));
    await until(() => second.length === 2);
    expect(first).toEqual([{ type: 'quote', instrument: 'ES 09-25', last: 4500 }]);
    expect(second).toEqual([
      { type: 'quote', instrument: 'ES 09-25', last: 4500 },
      { type: 'pnl', account: 'Sim101' },
    ]);
  });
});

describe('a lost connection', () => {
  it('is reported to each listener with its code and reason; one that stopped listening hears nothing', async () => {
    const b = await bench();
    const heard: NetworkError[] = [];
    const stopped: NetworkError[] = [];
    b.backend.streams.onLost((error) => heard.push(error));
    const stop = b.backend.streams.onLost((error) => stopped.push(error));
    stop();
    await b.backend.streams.subscribe(['ES 09-25']);
    (await b.peer()).close(4001, 'going away\u200b');
    await until(() => heard.length === 1);
    expect(heard[0]).toBeInstanceOf(NetworkError);
    expect(heard[0]!.message).toBe(`The connection to ${b.host} was lost (code 4001: going away).`);
    expect(heard[0]!.hint).toBe('Subscriptions end with their connection; start again once the service answers (`trade doctor` checks it).');
    expect(stopped).toEqual([]);
  });

  it('without a reason, the code alone; a request waiting for its reply fails with the connection', async () => {
    const b = await bench();
    const heard: NetworkError[] = [];
    b.backend.streams.onLost((error) => heard.push(error));
    const waiting = b.backend.rpc('GetOrders', { account: 'Sim101' }).then(
      () => new Error('answered'),
      (error: unknown) => error as Error,
    );
    await until(() => b.got.length === 1);
    (await b.peer()).close(4002);
    const error = await waiting;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.message).toBe(`The connection to ${b.host} closed before the reply.`);
    await until(() => heard.length === 1);
    expect(heard[0]!.message).toBe(`The connection to ${b.host} was lost (code 4002).`);
  });

  it('close() is no loss', async () => {
    const b = await bench();
    const heard: NetworkError[] = [];
    b.backend.streams.onLost((error) => heard.push(error));
    await b.backend.streams.subscribe(['ES 09-25']);
    await b.backend.close();
    await b.backend.close();
    expect(heard).toEqual([]);
  });
});

describe('replies', () => {
  it('a body beside the id is read as the reply, and a status a server adds is used', async () => {
    const b = await bench((message, socket) => {
      if (message.api === 'GetOrders') socket.send(JSON.stringify({ id: message.id, orders: [] }));
      else socket.send(JSON.stringify({ id: Number(message.id), status: 404, data: { error: 'Account not found' } }));
    });
    expect(await b.backend.rpc('GetOrders', { account: 'Sim101' })).toEqual({ data: { orders: [] }, status: undefined });
    expect(await b.backend.rpc('GetAccount', { account: 'Nope' })).toEqual({ data: { error: 'Account not found' }, status: 404 });
  });

  it('a timeout says what the server sent instead: a reply to another id, or a message that is not a JSON object', async () => {
    const other = await bench((_message, socket) => socket.send(JSON.stringify({ id: 'x'.repeat(60), data: {} })), { timeoutMs: 300 });
    const error = (await other.backend.rpc('GetOrders', { account: 'Sim101' }).catch((e: unknown) => e)) as NetworkError;
    expect(error.message).toBe(`No reply from ${other.host} within 0.3 s; it sent a reply to id ${JSON.stringify('x'.repeat(60)).slice(0, 40)}, which no request here has.`);
    expect(error.outcomeUnknown).toBe(false);

    const junk = await bench((_message, socket) => socket.send('not json'), { timeoutMs: 300 });
    const order = (await junk.backend.rpc('PlaceOrder', {}, 'the order may have been placed').catch((e: unknown) => e)) as NetworkError;
    expect(order.outcomeUnknown).toBe(true);
    expect(order.message).toBe(
      `Outcome unknown — the order may have been placed (no reply from ${junk.host} within 0.3 s; it sent a message that is not a JSON object); check with \`trade orders\` before trying again.`,
    );

    const quiet = await bench(() => undefined, { timeoutMs: 300 });
    const nothing = (await quiet.backend.rpc('GetOrders', { account: 'Sim101' }).catch((e: unknown) => e)) as NetworkError;
    expect(nothing.message).toBe(`No reply from ${quiet.host} within 0.3 s.`);
  });

  it('a message with an id that is neither a string nor a number answers nothing', async () => {
    const b = await bench((message, socket) => {
      socket.send(JSON.stringify({ id: { n: message.id }, data: { wrong: true } }));
      socket.send(JSON.stringify({ id: message.id, data: { right: true } }));
    });
    expect(await b.backend.rpc('GetOrders', { account: 'Sim101' })).toEqual({ data: { right: true }, status: undefined });
  });

  it('the backend names itself', async () => {
    const b = await bench();
    expect([b.backend.name, b.backend.label]).toEqual(['ws', `ws (${b.host})`]);
  });
});

describe('the heartbeat of a connection with stream listeners', () => {
  /** A bench whose server answers pings or not, the client pinging every 40 ms. */
  const pinged = (autoPong: boolean) => bench(undefined, { autoPong, heartbeatMs: 40 });

  it('a server that answers no ping is dropped after the next period, and the loss says why', async () => {
    const b = await pinged(false);
    const heard: NetworkError[] = [];
    b.backend.streams.onLost((error) => heard.push(error));
    b.backend.streams.onEvent(() => undefined);
    await b.backend.streams.subscribe(['ES 09-25']);
    await until(() => heard.length === 1);
    expect(heard[0]!.message).toBe(`The connection to ${b.host} was lost (no answer to a ping within 0.04 s).`);
    expect(b.pings).toHaveLength(1);
  });

  it('a server that answers every ping keeps the connection; no listener left, no ping', async () => {
    const b = await pinged(true);
    const heard: NetworkError[] = [];
    b.backend.streams.onLost((error) => heard.push(error));
    const stop = b.backend.streams.onEvent(() => undefined);
    await b.backend.streams.subscribe(['ES 09-25']);
    await until(() => b.pings.length >= 4);
    expect(heard).toEqual([]);
    stop();
    const after = b.pings.length;
    // Four periods without a listener: at most the ping already on its way.
    await new Promise((resolve) => setTimeout(resolve, 160));
    expect(b.pings.length - after).toBeLessThanOrEqual(1);
    expect(heard).toEqual([]);
  });

  it('listening before the connection is made starts the heartbeat when it is', async () => {
    const b = await pinged(true);
    b.backend.streams.onEvent(() => undefined);
    // The RPC makes the connection (the server never answers it; close() ends it).
    void b.backend.rpc('GetOrders', { account: 'Sim101' }).catch(() => undefined);
    await until(() => b.pings.length >= 2);
    expect(b.pings.length).toBeGreaterThanOrEqual(2);
  });
});
