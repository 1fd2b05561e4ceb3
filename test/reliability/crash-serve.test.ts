/**
 * Crash safety of `trade serve`: orders stream in over HTTP keep-alive and WebSocket while the
 * process is killed with SIGKILL, several times, each time restarted on the same store. The
 * store must pass integrity_check and hold every order whose id a client was given.
 */
import { fileURLToPath } from 'node:url';
import { Agent, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Env } from '../../src/config/paths.js';
import { tempHome } from '../helpers/cli.js';
import { checkStore, killServes, type ServeProcess, startServe, storeFile } from '../helpers/serve-process.js';

const TOKEN = 'crash-serve-token-0123456789';
/** Where each kill lands: after so many answers in that run, or inside a write transaction. */
const KILLS: Array<{ afterAnswers: number } | { inWriteAtFill: number }> = [
  { afterAnswers: 40 },
  { afterAnswers: 70 },
  { inWriteAtFill: 25 },
  { afterAnswers: 100 },
  { afterAnswers: 130 },
];
const PAUSE = fileURLToPath(new URL('../fixtures/pause-in-write.cjs', import.meta.url));
/** Requests in flight on each transport at any moment, so that a kill always lands mid-stream. */
const IN_FLIGHT = 8;

let env: Env;
let cleanup: () => void;
beforeEach(() => ({ env, cleanup } = tempHome()));
afterEach(async () => {
  await killServes();
  cleanup();
});

/** The n-th order of a stream: mostly MARKET orders on both sides, some resting LIMITs. */
function order(n: number) {
  const base = { instrument: n % 5 === 0 ? 'NQ 12-25' : 'ES 09-25', action: n % 2 ? 'BUY' : 'SELL', quantity: 1 + (n % 3) };
  return n % 7 === 0
    ? { ...base, orderType: 'LIMIT', limitPrice: 4000 + n, timeInForce: 'GTC' }
    : { ...base, orderType: 'MARKET', timeInForce: 'DAY' };
}

interface Tally {
  acked: string[];
  /** Requests started, answered or not: an upper bound on what the store may hold. */
  sent: number;
}

/** Keeps IN_FLIGHT HTTP requests going over a keep-alive pool until the server goes away. */
async function httpStream(serve: ServeProcess, tally: Tally): Promise<void> {
  const agent = new Agent({ connections: 4, keepAliveTimeout: 10_000 });
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  const loop = async () => {
    for (;;) {
      const body = JSON.stringify(order(tally.sent++));
      try {
        const reply = await request(`${serve.url}/v1/api/accounts/Sim101/orders/place`, { method: 'POST', headers, body, dispatcher: agent });
        const answer = (await reply.body.json()) as { orderId?: string };
        if (reply.statusCode !== 200) throw new Error(`HTTP ${reply.statusCode}: ${JSON.stringify(answer)}`);
        tally.acked.push(answer.orderId!);
      } catch (error) {
        if (!serve.child.killed) throw error;
        return; // the server is gone: this request's outcome is unknown, and it was never acknowledged
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
  } finally {
    await agent.destroy();
  }
}

/** Pipelines IN_FLIGHT RPCs on one WebSocket, sending the next as each reply comes, until it closes. */
function wsStream(serve: ServeProcess, tally: Tally): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(serve.wsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    const send = () => socket.send(JSON.stringify({ action: 'rpc', id: String(tally.sent), api: 'PlaceOrder', args: { account: 'Sim101', ...order(tally.sent++) } }));
    socket.on('open', () => {
      for (let i = 0; i < IN_FLIGHT; i++) send();
    });
    socket.on('message', (raw) => {
      const reply = JSON.parse(raw.toString()) as { data: { orderId?: string; success?: boolean } };
      if (reply.data.success !== true) return reject(new Error(`RPC refused: ${JSON.stringify(reply.data)}`));
      tally.acked.push(reply.data.orderId!);
      if (socket.readyState === socket.OPEN) send();
    });
    socket.on('error', () => undefined); // the close that follows ends the stream
    socket.on('close', () => resolve());
  });
}

async function until(condition: () => boolean): Promise<void> {
  while (!condition()) await new Promise((resolve) => setTimeout(resolve, 2));
}

describe('trade serve killed with SIGKILL mid-stream', () => {
  it(`loses no acknowledged order over ${KILLS.length} kills and restarts on one store`, async () => {
    const tally: Tally = { acked: [], sent: 0 };
    for (const kill of KILLS) {
      // The preload pauses the server inside its n-th write transaction and says so on stderr.
      const serve = await startServe(
        env,
        TOKEN,
        'inWriteAtFill' in kill ? { nodeArgs: ['--require', PAUSE], extraEnv: { TRADE_TEST_PAUSE_AT_FILL: String(kill.inWriteAtFill) } } : {},
      );
      let failed: unknown;
      const streams = Promise.all([httpStream(serve, tally), wsStream(serve, tally)]).catch((error: unknown) => (failed = error));
      const target = 'afterAnswers' in kill ? tally.acked.length + kill.afterAnswers : Infinity;
      const due = () => ('afterAnswers' in kill ? tally.acked.length >= target : serve.stderr().includes('paused in write\n'));
      await until(() => failed !== undefined || due());
      if (failed) throw failed;
      serve.child.kill('SIGKILL');
      expect(await serve.exited).toEqual({ code: null, signal: 'SIGKILL' });
      await streams;
      if (failed) throw failed;
    }
    // One more restart: it opens the store the last kill left, and serves.
    const serve = await startServe(env, TOKEN);
    const probe = await request(`${serve.url}/v1/api/accounts/Sim101/orders/place`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(order(1)),
    });
    expect(probe.statusCode).toBe(200);
    const { orderId: probeId } = (await probe.body.json()) as { orderId: string };
    serve.child.kill('SIGKILL');
    await serve.exited;

    const store = checkStore(storeFile(env));
    expect(store.integrity).toBe('ok');
    expect(store.foreignKeyProblems).toBe(0);
    expect(store.fillMismatches).toBe(0);
    for (const p of store.positions) expect(p.position).toBe(p.fills);
    const held = new Set(store.orderIds);
    expect(tally.acked.filter((id) => !held.has(id))).toEqual([]);
    expect(held.has(probeId)).toBe(true);
    expect(new Set(tally.acked).size).toBe(tally.acked.length);
    // Nothing appears that was not sent: at most the requests in flight at each kill are extra.
    expect(store.orderIds.length).toBeGreaterThanOrEqual(tally.acked.length + 1);
    expect(store.orderIds.length).toBeLessThanOrEqual(tally.sent + 1);
  });
});
