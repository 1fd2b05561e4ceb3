/**
 * Resource limits: `trade serve` (the built bin, as a subprocess) holds 1,000 idle WebSocket
 * connections while 200 HTTP clients, each on its own connection, place orders and read at once.
 * It keeps answering every one of them, in bounded time, idle sockets included; every
 * acknowledged order is in the store; and at SIGTERM it closes all 1,000 sockets with 1001 and
 * exits 0. Everything runs on 127.0.0.1 and is closed at the end.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Client } from 'undici';
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, tempHome } from '../helpers/cli.js';
import { ES_MARKET } from './harness.js';
import { spawnRecorded } from '../helpers/spawn.js';

const TOKEN = 'load-test-token-5a1c9e';
const AUTH = { authorization: `Bearer ${TOKEN}` };
const IDLE_SOCKETS = 1000;
const HTTP_CLIENTS = 200;
const LISTENING = /^trade serve listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

let child: ChildProcess;
let url: string;
let exited: Promise<number | null>;
let cleanup: () => void;

beforeAll(async () => {
  const home = tempHome();
  cleanup = home.cleanup;
  const env = { ...home.env, TRADE_SERVE_TOKEN: TOKEN };
  const argv = ['serve', '--port', '0'];
  child = spawnRecorded(process.execPath, [BIN, ...argv], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'], record: { kind: 'serve' } });
  let stderr = '';
  exited = new Promise((resolve) => child.on('close', resolve));
  url = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const match = LISTENING.exec(stderr);
      if (match && stderr.includes('stops it.\n')) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`trade serve exited ${code}:\n${stderr}`)));
  });
});

afterAll(() => {
  if (child.exitCode === null) child.kill('SIGKILL');
  cleanup();
});

/** The server process's resident memory, in MiB. */
function rssMiB(pid: number): number {
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round(kib / 1024);
}

interface Idle {
  socket: WebSocket;
  messages: unknown[];
  closed: Promise<number>;
}

function openIdle(wsUrl: string): Promise<Idle> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl, { headers: AUTH, perMessageDeflate: false });
    const messages: unknown[] = [];
    const closed = new Promise<number>((done) => socket.on('close', (code) => done(code)));
    socket.on('message', (data) => messages.push(JSON.parse(data.toString())));
    socket.once('open', () => resolve({ socket, messages, closed }));
    socket.once('error', reject);
  });
}

function ping(idle: Idle): Promise<unknown> {
  const seen = idle.messages.length;
  idle.socket.send('{"action":"ping"}');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no pong within 10 s')), 10_000);
    const check = () => {
      if (idle.messages.length > seen) {
        clearTimeout(timer);
        resolve(idle.messages[seen]);
      } else setTimeout(check, 5);
    };
    check();
  });
}

describe('trade serve under load', () => {
  it(`holds ${IDLE_SOCKETS} idle WebSocket connections and answers ${HTTP_CLIENTS} concurrent HTTP clients, then closes them all cleanly`, async () => {
    const wsUrl = `${url.replace('http', 'ws')}/ws/stream`;
    const started = performance.now();
    const idle: Idle[] = [];
    for (let i = 0; i < IDLE_SOCKETS; i += 100) {
      idle.push(...(await Promise.all(Array.from({ length: 100 }, () => openIdle(wsUrl)))));
    }
    expect(idle).toHaveLength(IDLE_SOCKETS);
    const opened = performance.now();
    const rssIdle = rssMiB(child.pid!);

    // 200 clients, one connection each, all at once: an order, a read and a refusal per client.
    const clients = Array.from({ length: HTTP_CLIENTS }, () => new Client(url, { pipelining: 1 }));
    const answers = await Promise.all(
      clients.map(async (client, i) => {
        const place = await client.request({
          method: 'POST',
          path: '/v1/api/accounts/Sim101/orders/place',
          headers: { ...AUTH, 'content-type': 'application/json' },
          body: JSON.stringify({ ...ES_MARKET, action: i % 2 ? 'SELL' : 'BUY' }),
        });
        const placed = (await place.body.json()) as { orderId: string };
        const read = await client.request({ method: 'GET', path: '/v1/api/accounts/Sim101/position?instrument=ES%2009-25', headers: AUTH });
        await read.body.dump();
        const refused = await client.request({
          method: 'POST',
          path: '/v1/api/accounts/Sim101/orders/place',
          headers: { ...AUTH, 'content-type': 'application/json' },
          body: JSON.stringify({ ...ES_MARKET, quantity: 0 }),
        });
        await refused.body.dump();
        return { statuses: [place.statusCode, read.statusCode, refused.statusCode], orderId: placed.orderId };
      }),
    );
    const answered = performance.now();
    expect(answers.map((a) => a.statuses)).toEqual(Array(HTTP_CLIENTS).fill([200, 200, 400]));

    // The idle sockets are still served, and every acknowledged order is in the store.
    const sample = [0, 1, 250, 500, 998, 999].map((i) => idle[i]!);
    expect(await Promise.all(sample.map(ping))).toEqual(sample.map(() => ({ type: 'pong' })));
    const list = await clients[0]!.request({ method: 'GET', path: '/v1/api/accounts/Sim101/orders', headers: AUTH });
    const { orders } = (await list.body.json()) as { orders: Array<{ id: string }> };
    expect(new Set(orders.map((o) => o.id))).toEqual(new Set(answers.map((a) => a.orderId)));
    const rssLoaded = rssMiB(child.pid!);
    await Promise.all(clients.map((client) => client.close()));

    // Shutdown closes every idle socket with 1001 ("going away") and the process exits 0.
    child.kill('SIGTERM');
    const codes = await Promise.all(idle.map((i) => i.closed));
    expect(new Set(codes)).toEqual(new Set([1001]));
    expect(await exited).toBe(0);
    const stopped = performance.now();

    // Bounded: generous enough for a busy 2-core machine, far below any client's timeout.
    const seconds = (from: number, to: number) => Math.round((to - from) / 100) / 10;
    expect(seconds(started, opened), 'seconds to open the idle sockets').toBeLessThan(20);
    expect(seconds(opened, answered), 'seconds to answer the HTTP clients').toBeLessThan(20);
    expect(seconds(answered, stopped), 'seconds to shut down').toBeLessThan(10);
    expect(rssLoaded, 'MiB resident in the server').toBeLessThan(400);
    console.log(
      `load: ${IDLE_SOCKETS} sockets open in ${seconds(started, opened)} s (server RSS ${rssIdle} MiB); ` +
        `${HTTP_CLIENTS} clients × 3 requests in ${seconds(opened, answered)} s (RSS ${rssLoaded} MiB); shutdown ${seconds(answered, stopped)} s`,
    );
  });
});
