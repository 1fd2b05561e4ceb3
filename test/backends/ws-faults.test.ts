/**
 * The ws backend against a real local WebSocket server that answers as service-reference.md §5.3
 * shows (`{id, data}`, no status), and then made to misbehave.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createWsBackend } from '../../src/backends/ws.js';
import { ConfigError, NetworkError, RateLimitedError, RejectedError } from '../../src/common/errors.js';
import { parseOrder } from '../../src/service/order.js';

const TOKEN = 'tok-0123456789-abcdefghij';
let server: Server;
let wss: WebSocketServer;
let url: string;
const received: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  server = createServer();
  wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (req, socket, head) => {
    if (req.url === '/notfound') {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-type: text/html\r\nconnection: close\r\n\r\n<html>Not here</html>');
      return;
    }
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":"Unauthorized"}');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (raw) => {
        const msg = JSON.parse(raw.toString()) as { id: string; args: { account: string } };
        received.push(msg);
        const reply = (o: unknown) => ws.send(JSON.stringify(o));
        switch (msg.args.account) {
          case 'ok':
            // Replies out of order: a later request answered first must still match by id.
            setTimeout(() => reply({ id: msg.id, data: { orderId: `${msg.id}`.padStart(32, '0'), success: true } }), Number(msg.id) % 2 ? 20 : 0);
            break;
          case 'rejected':
            reply({ id: msg.id, data: { error: 'Invalid request' } });
            break;
          case 'noposition':
            reply({ id: msg.id, data: { error: "No position found for instrument 'ES 09-25' in account 'noposition'" } });
            break;
          case 'ratelimited':
            reply({ id: msg.id, data: { error: 'Rate limit exceeded' } });
            break;
          case 'ghost':
            reply({ id: msg.id, data: { success: false, error: 'invalid_account', detail: 'Account ghost not found' } });
            break;
          case 'enveloped':
            reply({ id: msg.id, data: { success: true, data: { orderId: 'e'.repeat(32) } } });
            break;
          case 'withstatus':
            // A server that adds a status: used when there, never required.
            reply({ id: msg.id, status: 408, data: { success: false, error: 'NinjaTrader is not connected' } });
            break;
          case 'event':
            // An event (it has a type and no id) answers nothing; the reply follows it.
            reply({ type: 'marketData', quotes: [] });
            reply({ id: msg.id, data: { orderId: 'f'.repeat(32), success: true } });
            break;
          case 'garbage':
            ws.send('<<not json>>');
            break;
          case 'wrongid':
            reply({ id: 'someone-else', data: { orderId: 'x', success: true } });
            break;
          case 'nodata':
            reply({ id: msg.id, result: { orderId: 'x' } });
            break;
          case 'wrongshape':
            reply({ id: msg.id, data: { id: 1 } });
            break;
          case 'closeframe':
            // A close frame, then the connection left open: the client stays 'closing' for a while.
            reply({ id: msg.id, data: { orderId: 'c'.repeat(32), success: true } });
            {
              const socket = (ws as unknown as { _socket: Socket })._socket;
              socket.write(Buffer.from([0x88, 0x00]));
              socket.pause(); // never reads the client's close frame, so never finishes the close
            }
            break;
          case 'close':
            ws.close(1011);
            break;
          case 'kill':
            ws.terminate();
            break;
        }
      });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/stream`;
});
afterAll(async () => {
  for (const c of wss.clients) c.terminate();
  wss.close();
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  received.length = 0;
});

const order = (account: string, action = 'Buy') =>
  parseOrder({ account, instrument: 'ES 09-25', action, quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });

type Ws = ReturnType<typeof createWsBackend>;
const place = (backend: Ws, account: string) => backend.call('PlaceOrder', order(account));

describe('ws backend', () => {
  it('sends {action:"rpc", id, api, args} in NinjaTrader spelling and matches pipelined {id, data} replies by id', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    const results = await Promise.all([1, 2, 3, 4].map(() => place(backend, 'ok')));
    const reversed = await backend.call('ReversePosition', order('ok'));
    await backend.close();
    expect(results.map((r) => r.value.orderId)).toEqual(['1', '2', '3', '4'].map((id) => id.padStart(32, '0')));
    expect(results[0]!.body).toEqual({ orderId: '1'.padStart(32, '0'), success: true });
    expect(reversed.value.orderId).toBe('5'.padStart(32, '0'));
    expect(received[0]).toEqual({
      action: 'rpc',
      id: '1',
      api: 'PlaceOrder',
      args: { account: 'ok', instrument: 'ES 09-25', action: 'Buy', quantity: 1, orderType: 'Market', timeInForce: 'Day' },
    });
    expect(received[4]).toMatchObject({ api: 'ReversePosition' });
  });

  it.each([
    ['rejected', RejectedError, 1, 'Invalid request'],
    ['noposition', RejectedError, 1, "No position found for instrument 'ES 09-25' in account 'noposition'"],
    ['ghost', RejectedError, 1, 'Account ghost not found'],
    ['ratelimited', RateLimitedError, 5, 'Nothing was executed'],
  ])('a documented failure in data (%s) is read as such, never as outcome unknown', async (account, type, exitCode, message) => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    const error = await place(backend, account).catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(type);
    expect(error.exitCode).toBe(exitCode);
    expect(error.message).toContain(message);
    expect(received).toHaveLength(1);
  });

  it('keeps a failure body whole for --json', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    const error = await place(backend, 'ghost').catch((e) => e);
    await backend.close();
    expect(error.body).toEqual({ success: false, error: 'invalid_account', detail: 'Account ghost not found' });
  });

  it('reads a reply inside a {success, data} envelope, and skips an event before its reply', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    expect((await place(backend, 'enveloped')).value.orderId).toBe('e'.repeat(32));
    expect((await place(backend, 'event')).value.orderId).toBe('f'.repeat(32));
    await backend.close();
  });

  it('uses a status a server adds: 408 is "not connected", outcome unknown for an order', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    const error = await place(backend, 'withstatus').catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toBe(
      'The trading platform is not connected (408: NinjaTrader is not connected); nothing is known to have been placed — check with `trade orders`.',
    );
  });

  it('refuses a bad token at the upgrade with an auth error (exit 3)', async () => {
    const backend = createWsBackend({ wsUrl: url, token: 'wrong-token-xxxxxxxx', timeoutMs: 2000 });
    const error = await place(backend, 'ok').catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe('The service refused the token (401: Unauthorized).');
    expect(received).toHaveLength(0);
  });

  it.each([
    ['garbage', 'no reply from 127.0.0.1'],
    ['wrongid', 'within 0.3 s; it sent a reply to id "someone-else", which no request here has'],
    ['nodata', "answered 200 with a body that is not PlaceOrder's reply"],
    ['wrongshape', "answered 200 with a body that is not PlaceOrder's reply"],
    ['close', 'closed before the reply'],
    ['kill', 'closed before the reply'],
  ])('%s: the request is outcome unknown and was sent exactly once', async (account, why) => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 300 });
    const error = await place(backend, account).catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.exitCode).toBe(4);
    expect(error.message).toContain(why);
    expect(error.message).toContain('check with `trade orders`');
    expect(received).toHaveLength(1);
  });

  it('rejects every pending request when the socket closes', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 5000 });
    const slow = place(backend, 'wrongid').catch((e) => e);
    await new Promise((r) => setTimeout(r, 50));
    const closing = place(backend, 'kill').catch((e) => e);
    const [a, b] = await Promise.all([slow, closing]);
    await backend.close();
    for (const e of [a, b]) expect(e).toMatchObject({ outcomeUnknown: true });
  });

  it('an upgrade answered with a 404 page is "nothing was sent", with what to check', async () => {
    const backend = createWsBackend({ wsUrl: url.replace('/ws/stream', '/notfound'), token: TOKEN, timeoutMs: 2000 });
    const error = await place(backend, 'ok').catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe(`ws (${new URL(url).host}) did not accept the WebSocket upgrade (HTTP 404). Nothing was sent.`);
    expect(error.hint).toContain('Check ws-url');
    expect(received).toHaveLength(0);
  });

  it('a request after the server\'s close frame is "nothing was sent", not outcome unknown', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    expect((await place(backend, 'closeframe')).body).toEqual({ orderId: 'c'.repeat(32), success: true });
    await new Promise((r) => setTimeout(r, 50));
    const error = await place(backend, 'ok').catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe(`The connection to ${new URL(url).host} is closing. Nothing was sent.`);
    expect(received.map((m) => (m.args as { account: string }).account)).toEqual(['closeframe']);
  });

  it('a refused connection is "nothing was sent"', async () => {
    const backend = createWsBackend({ wsUrl: 'ws://127.0.0.1:1/ws/stream', token: TOKEN, timeoutMs: 1000 });
    const error = await place(backend, 'ok').catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe('Could not connect to 127.0.0.1:1 (ECONNREFUSED). Nothing was sent.');
  });

  it('refuses ws:// to another host without --insecure', () => {
    expect(() => createWsBackend({ wsUrl: 'ws://example.com/ws/stream', token: TOKEN, timeoutMs: 1000 })).toThrow(
      'Refusing to send the token in clear text to example.com over ws://.',
    );
  });
});
