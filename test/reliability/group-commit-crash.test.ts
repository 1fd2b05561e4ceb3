/**
 * Group commit under SIGKILL (issue 16): `trade serve` is stopped dead between the COMMIT of a
 * group of orders and the replies to them (a preloaded fixture sleeps right after such a
 * COMMIT). Every order a client was told is placed must be in the store; the orders of that
 * group are in the store and none of them was told to anyone — their outcome is unknown to their
 * clients, never "placed" for an order that is not there.
 */
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import type { Env } from '../../src/config/paths.js';
import { tempHome } from '../helpers/cli.js';
import { checkStore, killServes, startServe, storeFile } from '../helpers/serve-process.js';
import { until } from '../helpers/in-process.js';

const TOKEN = 'group-commit-crash-token-01234';
const PAUSE = fileURLToPath(new URL('../fixtures/pause-after-commit.cjs', import.meta.url));
const ORDER = { instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

let env: Env;
let cleanup: () => void;
beforeEach(() => ({ env, cleanup } = tempHome()));
afterEach(async () => {
  await killServes();
  cleanup();
});

describe('a group commit killed between its COMMIT and its replies', () => {
  it('over HTTP and WebSocket at once: every acknowledged order is stored, none of the paused group was acknowledged', async () => {
    const serve = await startServe(env, TOKEN, { nodeArgs: ['--require', PAUSE] });
    const acked: string[] = [];
    const agent = new Agent({ connections: 16 });
    const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const http = Array.from({ length: 16 }, async () => {
      try {
        const reply = await request(`${serve.url}/v1/api/accounts/Sim101/orders/place`, { method: 'POST', headers, body: JSON.stringify(ORDER), dispatcher: agent });
        const body = (await reply.body.json()) as { orderId?: string };
        if (reply.statusCode === 200 && body.orderId) acked.push(body.orderId);
      } catch {
        // The server was killed before answering: the outcome of this one is unknown to its client.
      }
    });
    const socket = new WebSocket(serve.wsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    socket.on('message', (data) => {
      const reply = JSON.parse(String(data)) as { data?: { orderId?: string } };
      if (reply.data?.orderId) acked.push(reply.data.orderId);
    });
    socket.on('error', () => undefined);
    socket.on('open', () => {
      for (let i = 0; i < 16; i++) socket.send(JSON.stringify({ action: 'rpc', id: i, api: 'PlaceOrder', args: { account: 'Sim101', ...ORDER } }));
    });
    await until('a group to commit', () => serve.stderr().includes('paused after commit'), 15_000);
    serve.child.kill('SIGKILL');
    await serve.exited;
    await Promise.allSettled(http);
    socket.terminate();
    await agent.close().catch(() => undefined);

    const paused = JSON.parse(/paused after commit (\[.*\])/.exec(serve.stderr())![1]!) as string[];
    expect(paused.length).toBeGreaterThanOrEqual(2);
    expect(checkStore(storeFile(env)).integrity).toBe('ok');
    const engine = createEngine(storeFile(env));
    try {
      const stored = new Set(engine.listOrders().map((o) => o.orderId));
      // No acknowledged order is missing; every order of the paused group committed.
      expect(acked.filter((id) => !stored.has(id))).toEqual([]);
      expect(paused.filter((id) => !stored.has(id))).toEqual([]);
      // And none of the paused group was acknowledged: the replies come after the commit.
      expect(paused.filter((id) => acked.includes(id))).toEqual([]);
    } finally {
      engine.close();
    }
  });
});
