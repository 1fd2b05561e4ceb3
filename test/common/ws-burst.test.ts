import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { burstWriter } from '../../src/common/ws-burst.js';

/** A real ws server on 127.0.0.1 and a client connected to it; the client's socket counts its writes. */
async function pair() {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await once(server, 'listening');
  const accepted = once(server, 'connection') as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  await once(client, 'open');
  const [peer] = await accepted;
  const raw = (client as unknown as { _socket: import('node:net').Socket })._socket;
  let writes = 0;
  // Every write that reaches the kernel: one frame alone (_write) or several at once (_writev).
  for (const method of ['_write', '_writev'] as const) {
    const original = raw[method]!.bind(raw) as (...args: unknown[]) => void;
    (raw as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      writes++;
      original(...args);
    };
  }
  const received: string[] = [];
  peer.on('message', (data) => received.push(String(data)));
  return {
    client,
    received,
    writes: () => writes,
    close: async () => {
      client.close();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

let close: (() => Promise<void>) | undefined;
afterEach(async () => {
  await close?.();
  close = undefined;
});

describe('burstWriter', () => {
  it('sends the frames of one turn in one write, all of them, in order', async () => {
    const p = await pair();
    close = p.close;
    const burst = burstWriter(p.client);
    const sent = Array.from({ length: 50 }, (_, i) => JSON.stringify({ id: i }));
    // As a batch sends them: from promise callbacks of one turn.
    await Promise.all(
      sent.map(async (text) => {
        await null;
        burst();
        p.client.send(text);
      }),
    );
    while (p.received.length < sent.length) await new Promise((resolve) => setImmediate(resolve));
    expect(p.received).toEqual(sent);
    expect(p.writes()).toBe(1);
  });

  it('without it, ws writes each frame on its own (what the burst saves)', async () => {
    const p = await pair();
    close = p.close;
    for (let i = 0; i < 5; i++) p.client.send(String(i));
    while (p.received.length < 5) await new Promise((resolve) => setImmediate(resolve));
    expect(p.received).toEqual(['0', '1', '2', '3', '4']);
    expect(p.writes()).toBe(5);
  });

  it('writes a later turn again (the socket is not left corked)', async () => {
    const p = await pair();
    close = p.close;
    const burst = burstWriter(p.client);
    burst();
    p.client.send('a');
    await new Promise((resolve) => setImmediate(resolve));
    burst();
    p.client.send('b');
    while (p.received.length < 2) await new Promise((resolve) => setImmediate(resolve));
    expect(p.received).toEqual(['a', 'b']);
    expect(p.writes()).toBe(2);
  });
});
