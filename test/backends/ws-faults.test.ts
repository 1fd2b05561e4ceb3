/** The ws backend against a real local WebSocket server made to misbehave. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createWsBackend } from '../../src/backends/ws.js';
import { ConfigError, NetworkError, RejectedError } from '../../src/order/errors.js';
import { parseOrder } from '../../src/order/schema.js';

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
            setTimeout(() => reply({ id: msg.id, status: 200, data: { orderId: `${msg.id}`.padStart(32, '0'), success: true } }), Number(msg.id) % 2 ? 20 : 0);
            break;
          case 'rejected':
            reply({ id: msg.id, status: 400, data: { error: 'Invalid request: action: bad' } });
            break;
          case 'garbage':
            ws.send('<<not json>>');
            break;
          case 'wrongid':
            reply({ id: 'someone-else', status: 200, data: { orderId: 'x', success: true } });
            break;
          case 'nostatus':
            reply({ id: msg.id, result: { orderId: 'x' } });
            break;
          case 'wrongshape':
            reply({ id: msg.id, status: 200, data: { id: 1 } });
            break;
          case 'closeframe':
            // A close frame, then the connection left open: the client stays 'closing' for a while.
            reply({ id: msg.id, status: 200, data: { orderId: 'c'.repeat(32), success: true } });
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

describe('ws backend', () => {
  it('sends {action:"rpc", id, api, args} and matches pipelined replies by id', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    const results = await Promise.all([1, 2, 3, 4].map(() => backend.placeOrder(order('ok'))));
    const reversed = await backend.reversePosition(order('ok'));
    await backend.close();
    expect(results.map((r) => r.orderId)).toEqual(['1', '2', '3', '4'].map((id) => id.padStart(32, '0')));
    expect(reversed.orderId).toBe('5'.padStart(32, '0'));
    expect(received[0]).toEqual({
      action: 'rpc',
      id: '1',
      api: 'PlaceOrder',
      args: { account: 'ok', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' },
    });
    expect(received[4]).toMatchObject({ api: 'ReversePosition' });
  });

  it('maps a 400 reply to a rejection with the service message', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    const error = await backend.placeOrder(order('rejected')).catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(RejectedError);
    expect(error.message).toBe('Invalid request: action: bad');
  });

  it('refuses a bad token at the upgrade with an auth error (exit 3)', async () => {
    const backend = createWsBackend({ wsUrl: url, token: 'wrong-token-xxxxxxxx', timeoutMs: 2000 });
    const error = await backend.placeOrder(order('ok')).catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.exitCode).toBe(3);
    expect(error.message).toBe('The service refused the token (401: Unauthorized).');
    expect(received).toHaveLength(0);
  });

  it.each([
    ['garbage', 'no reply from 127.0.0.1'],
    ['wrongid', 'within 0.3 s; it sent a reply to id "someone-else", which no request here has'],
    ['nostatus', 'answered with a message that is not {id, status, data}'],
    ['wrongshape', 'answered 200 with a body that is not {orderId, success:true}'],
    ['close', 'closed before the reply'],
    ['kill', 'closed before the reply'],
  ])('%s: the request is outcome unknown and was sent exactly once', async (account, why) => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 300 });
    const error = await backend.placeOrder(order(account)).catch((e) => e);
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
    const slow = backend.placeOrder(order('wrongid')).catch((e) => e);
    await new Promise((r) => setTimeout(r, 50));
    const closing = backend.placeOrder(order('kill')).catch((e) => e);
    const [a, b] = await Promise.all([slow, closing]);
    await backend.close();
    for (const e of [a, b]) expect(e).toMatchObject({ outcomeUnknown: true });
  });

  it('an upgrade answered with a 404 page is "nothing was sent", with what to check', async () => {
    const backend = createWsBackend({ wsUrl: url.replace('/ws/stream', '/notfound'), token: TOKEN, timeoutMs: 2000 });
    const error = await backend.placeOrder(order('ok')).catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe(`ws (${new URL(url).host}) did not accept the WebSocket upgrade (HTTP 404). Nothing was sent.`);
    expect(error.hint).toContain('Check ws-url');
    expect(received).toHaveLength(0);
  });

  it('a request after the server\'s close frame is "nothing was sent", not outcome unknown', async () => {
    const backend = createWsBackend({ wsUrl: url, token: TOKEN, timeoutMs: 2000 });
    expect(await backend.placeOrder(order('closeframe'))).toEqual({ orderId: 'c'.repeat(32), success: true });
    await new Promise((r) => setTimeout(r, 50));
    const error = await backend.placeOrder(order('ok')).catch((e) => e);
    await backend.close();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe(`The connection to ${new URL(url).host} is closing. Nothing was sent.`);
    expect(received.map((m) => (m.args as { account: string }).account)).toEqual(['closeframe']);
  });

  it('a refused connection is "nothing was sent"', async () => {
    const backend = createWsBackend({ wsUrl: 'ws://127.0.0.1:1/ws/stream', token: TOKEN, timeoutMs: 1000 });
    const error = await backend.placeOrder(order('ok')).catch((e) => e);
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
