/**
 * The ws backend's streams (service-reference.md §5.2–§5.4): events arrive beside RPC replies,
 * which keep being matched by id; an event of a type the client does not know is passed over;
 * a quote with only the fields a client reads is enough; closing is not a loss, a server going
 * away is. Against `trade serve`, and against a bare WebSocket server that sends what a newer
 * service might.
 */
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { createWsBackend, type WsBackend, type WsEvent } from '../../src/backends/ws.js';
import { watchQuotes } from '../../src/cli/watch-feeds.js';
import type { QuoteRead } from '../../src/service/shapes.js';
import { startServer, TOKEN, type Harness } from '../server/harness.js';

const ES = 'ES 06-26';

let backend: WsBackend | undefined;
let server: Harness | undefined;
let bare: WebSocketServer | undefined;
afterEach(async () => {
  await backend?.close();
  await server?.close();
  await new Promise((resolve) => (bare ? bare.close(resolve) : resolve(undefined)));
  backend = server = bare = undefined;
});

async function until(what: string, check: () => boolean, ms = 3_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the ws backend against trade serve', () => {
  it('RPCs are answered while P&L and quotes stream; close() is not a loss', async () => {
    server = await startServer();
    server.engine.setPrice(ES, 5000);
    backend = createWsBackend({ wsUrl: server.wsUrl, token: TOKEN, timeoutMs: 5_000 });
    const events: WsEvent[] = [];
    const lost: Error[] = [];
    backend.streams.onEvent((event) => events.push(event));
    backend.streams.onLost((error) => lost.push(error));
    await backend.streams.streamPnl(true, 250);
    await backend.streams.subscribe([ES]);
    const replies = await Promise.all(Array.from({ length: 5 }, () => backend!.call('GetAllPositions', { includeFlat: false })));
    expect(replies.map((r) => r.value.count)).toEqual([0, 0, 0, 0, 0]);
    server.engine.setPrice(ES, 5001);
    await until('a P&L tick and the new quote', () => events.filter((e) => e.type === 'pnlUpdate').length >= 2 && events.some((e) => JSON.stringify(e).includes('"last":5001')));
    await backend.streams.unsubscribe([ES]);
    await backend.streams.streamPnl(false);
    await backend.close();
    backend = undefined;
    expect(lost).toEqual([]);
  });
});

describe('the ws backend against a service that sends more than the reference shows', () => {
  it('passes over unknown event types and reads quotes with only an instrument and a last price', async () => {
    bare = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    bare.on('connection', (socket) =>
      socket.on('message', (raw) => {
        const message = JSON.parse(raw.toString()) as { action: string; id?: string };
        socket.send(JSON.stringify({ type: 'heartbeat', sequence: 1 }));
        if (message.action === 'rpc') socket.send(JSON.stringify({ id: message.id, data: { positions: [], requestId: 'x' } }));
        if (message.action === 'subscribe') {
          socket.send(JSON.stringify({ type: 'marketData', quotes: [{ instrument: ES, last: 5000 }], sequence: 2 }));
          socket.send(JSON.stringify({ type: 'marketData', quotes: [{ instrument: 'NQ 06-26', last: 1 }, { last: 3 }, { instrument: ES, last: 5000.25 }] }));
        }
      }),
    );
    await new Promise((resolve) => bare!.once('listening', resolve));
    const wsUrl = `ws://127.0.0.1:${(bare.address() as AddressInfo).port}/ws/stream`;
    backend = createWsBackend({ wsUrl, token: 'any-token', timeoutMs: 2_000 });
    expect((await backend.call('GetAllPositions', { includeFlat: false })).value.positions).toEqual([]);

    const quotes: QuoteRead[] = [];
    const controller = new AbortController();
    const notes: string[] = [];
    const feed = watchQuotes({ backend, signal: controller.signal, note: (l) => notes.push(l), timeoutMs: 2_000 }, [ES], (q) => quotes.push(q));
    await until('two quotes', () => quotes.length === 2);
    controller.abort();
    await feed;
    expect(quotes).toEqual([
      { instrument: ES, last: 5000 },
      { instrument: ES, last: 5000.25 },
    ]);
    expect(notes).toEqual([]);
  });
});
