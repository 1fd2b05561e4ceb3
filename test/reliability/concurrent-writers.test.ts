/**
 * Concurrent writers on one store: 50 CLI processes and 2 `trade serve` processes (each taking
 * orders over HTTP and WebSocket) place orders and reverse positions at once, on the same
 * accounts and instruments. No writer sees an error, no order is lost or doubled, and every
 * position equals the signed sum of its fills.
 */
import { Agent, request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Env } from '../../src/config/paths.js';
import { createEngine } from '../../src/engine/engine.js';
import { BIN, orderArgs, tempHome } from '../helpers/cli.js';
import { checkStore, killServes, type ServeProcess, startServe, storeFile } from '../helpers/serve-process.js';
import { spawnRecorded } from '../helpers/spawn.js';

const TOKEN = 'concurrent-writers-token-0123';
const CLI_PROCESSES = 50;
const ACCOUNTS = ['Sim101', 'Sim102'];
const INSTRUMENTS = ['ES 09-25', 'NQ 12-25'];
/**
 * Every position starts at 1,000 contracts and every reverse leaves it at 1,000 on one side, while
 * places move it by 1 to 3: it is never flat, so every reverse has a position to reverse and any
 * failure is a real one.
 */
const REVERSE_QUANTITY = 1000;

let env: Env;
let cleanup: () => void;
beforeEach(() => ({ env, cleanup } = tempHome()));
afterEach(async () => {
  await killServes();
  cleanup();
});

interface Intent {
  api: 'PlaceOrder' | 'ReversePosition';
  order: { account: string; instrument: string; action: 'BUY' | 'SELL'; quantity: number; orderType: 'MARKET'; timeInForce: 'DAY' };
}

/** The n-th write of a writer: a reverse every fifth, places otherwise, over every account and instrument. */
function intent(n: number): Intent {
  const reverse = n % 5 === 0;
  return {
    api: reverse ? 'ReversePosition' : 'PlaceOrder',
    order: {
      account: ACCOUNTS[n % 2]!,
      instrument: INSTRUMENTS[Math.floor(n / 2) % 2]!,
      action: Math.floor(n / 4) % 2 ? 'BUY' : 'SELL',
      quantity: reverse ? REVERSE_QUANTITY : 1 + (n % 3),
      orderType: 'MARKET',
      timeInForce: 'DAY',
    },
  };
}

interface Tally {
  acked: Array<{ id: string; api: Intent['api'] }>;
  errors: string[];
}

/** A CLI process: place or reverse with --json. Resolves with when it ran, for the overlap. */
function cliWriter(n: number, tally: Tally): Promise<{ start: number; end: number }> {
  const { api, order: o } = intent(n);
  const args = [
    api === 'PlaceOrder' ? 'place' : 'reverse',
    ...orderArgs({ '--account': o.account, '--instrument': o.instrument, '--action': o.action, '--quantity': String(o.quantity) }),
    // The writers reverse to either side at random: the same side is meant too.
    ...(api === 'PlaceOrder' ? [] : ['--same-side']),
    '--json',
  ];
  const start = Date.now();
  const child = spawnRecorded(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      if (code === 0 && stderr === '') tally.acked.push({ id: (JSON.parse(stdout) as { orderId: string }).orderId, api });
      else tally.errors.push(`cli ${args.join(' ')}: exit ${code}: ${stderr}`);
      resolve({ start, end: Date.now() });
    }),
  );
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** HTTP writes to one server, one at a time with a short pause, until `stop()` says so. */
async function httpWriter(serve: ServeProcess, first: number, stop: () => boolean, tally: Tally): Promise<void> {
  const agent = new Agent({ keepAliveTimeout: 10_000 });
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  for (let n = first; !stop(); n += 7) {
    const { api, order: { account, ...body } } = intent(n);
    const tail = api === 'PlaceOrder' ? 'orders/place' : 'positions/reverseposition';
    const reply = await request(`${serve.url}/v1/api/accounts/${account}/${tail}`, { method: 'POST', headers, body: JSON.stringify(body), dispatcher: agent });
    const answer = (await reply.body.json()) as { orderId?: string };
    if (reply.statusCode === 200) tally.acked.push({ id: answer.orderId!, api });
    else tally.errors.push(`http ${api} ${JSON.stringify(body)}: ${reply.statusCode} ${JSON.stringify(answer)}`);
    await pause(5);
  }
  await agent.close();
}

/** WebSocket RPCs to one server, the next sent as each reply comes, until `stop()` says so. */
function wsWriter(serve: ServeProcess, first: number, stop: () => boolean, tally: Tally): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(serve.wsUrl, { headers: { authorization: `Bearer ${TOKEN}` } });
    let n = first;
    const sent = new Map<string, Intent>();
    const send = () => {
      const w = intent(n);
      sent.set(String(n), w);
      socket.send(JSON.stringify({ action: 'rpc', id: String(n), api: w.api, args: w.order }));
      n += 7;
    };
    socket.on('open', send);
    socket.on('message', async (raw) => {
      const reply = JSON.parse(raw.toString()) as { id: string; data: { orderId?: string; success?: boolean } };
      const w = sent.get(reply.id)!;
      // The reply is {id, data}: success is read from data (§5.3).
      if (reply.data.success === true) tally.acked.push({ id: reply.data.orderId!, api: w.api });
      else tally.errors.push(`ws ${JSON.stringify(w)}: ${JSON.stringify(reply.data)}`);
      await pause(5);
      if (stop()) socket.close();
      else send();
    });
    socket.on('error', reject);
    socket.on('close', () => resolve());
  });
}

/** The most CLI processes that were running at one moment. */
function peakOverlap(spans: Array<{ start: number; end: number }>): number {
  const events = spans.flatMap((s) => [[s.start, 1] as const, [s.end, -1] as const]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let running = 0;
  let peak = 0;
  for (const [, delta] of events) peak = Math.max(peak, (running += delta));
  return peak;
}

describe('concurrent writers on one store', () => {
  it(`${CLI_PROCESSES} CLI processes and 2 trade serve processes: no error, no lost or doubled order, positions equal their fills`, async () => {
    // The second account, prices and the opening positions, written before any writer starts.
    const engine = createEngine(storeFile(env));
    engine.addAccount('Sim102');
    engine.setPrice('ES 09-25', 4500);
    engine.setPrice('NQ 12-25', 21000);
    for (const account of ACCOUNTS)
      for (const instrument of INSTRUMENTS)
        engine.placeOrder({ account, instrument, action: 'BUY', quantity: REVERSE_QUANTITY, orderType: 'MARKET', timeInForce: 'DAY' });
    engine.close();

    const serves = await Promise.all([startServe(env, TOKEN), startServe(env, TOKEN)]);
    const tally: Tally = { acked: [], errors: [] };
    let cliDone = false;
    const stop = () => cliDone;
    const servers = Promise.all(
      serves.flatMap((serve, s) => [httpWriter(serve, 1 + s, stop, tally), httpWriter(serve, 3 + s, stop, tally), wsWriter(serve, 5 + s, stop, tally)]),
    );
    // Started 10 at a time, 150 ms apart: each wave overlaps itself and the ones still running,
    // and the start-up of 50 processes does not all land on one instant.
    const spans: Array<Promise<{ start: number; end: number }>> = [];
    for (let i = 0; i < CLI_PROCESSES; i += 10) {
      for (let j = i; j < Math.min(i + 10, CLI_PROCESSES); j++) spans.push(cliWriter(j, tally));
      await pause(150);
    }
    const ran = await Promise.all(spans);
    const served = tally.acked.length;
    cliDone = true;
    await servers;
    for (const serve of serves) serve.child.kill('SIGTERM');
    expect((await Promise.all(serves.map((s) => s.exited))).map((e) => e.code)).toEqual([0, 0]);

    expect(tally.errors).toEqual([]);
    expect(peakOverlap(ran)).toBeGreaterThanOrEqual(10);
    expect(served).toBeGreaterThan(CLI_PROCESSES);
    const store = checkStore(storeFile(env));
    expect(store.integrity).toBe('ok');
    const ids = tally.acked.map((a) => a.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(store.orderIds).size).toBe(store.orderIds.length);
    const held = new Set(store.orderIds);
    expect(ids.filter((id) => !held.has(id))).toEqual([]);
    // Exactly what was acknowledged: the 4 seeds, every order, and one closing order per reverse.
    const reverses = tally.acked.filter((a) => a.api === 'ReversePosition').length;
    expect(store.orderIds.length).toBe(4 + ids.length + reverses);
    expect(store.fillMismatches).toBe(0);
    expect(store.positions).toHaveLength(4);
    for (const p of store.positions) {
      expect(p.position).toBe(p.fills);
      expect(Math.abs(p.position)).toBeGreaterThan(REVERSE_QUANTITY / 2);
    }
  });
});
