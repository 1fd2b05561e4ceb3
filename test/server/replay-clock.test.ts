/**
 * `trade serve` driving a replay (issue 29), as its clients see it: every reply carries the
 * replayed time (an order's time, an execution's time and epoch, a quote), over HTTP and the
 * WebSocket alike; `/_sandbox/clock` pauses the market while a bot thinks, steps it by records or
 * by replayed time, and changes its speed; bad control requests are refused naming the field.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../helpers/cli.js';
import { until } from '../helpers/in-process.js';
import { killServes, startServe } from '../helpers/serve-process.js';
import { sawTicks, writeTickFile } from '../helpers/ticks.js';
import { connect } from './harness.js';

const ES = 'ES 06-26';
const T0 = Date.parse('2026-03-18T14:00:00Z');
const TOKEN = 'replay-clock-token';
const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };

const homes: Array<{ cleanup(): void }> = [];
afterEach(async () => {
  await killServes();
  for (const home of homes.splice(0)) home.cleanup();
});

describe('trade serve driving a replay', () => {
  it('answers in replayed time; pause holds the market, step and speed move it', async () => {
    const h = tempHome();
    homes.push(h);
    const file = join(h.dir, 'es.csv');
    // An hour of ticks a second, a saw from 5000 up to 5002 and back.
    await writeTickFile(file, sawTicks(3600, { start: T0, stepMs: 1000 }));
    expect((await runCli(['price', 'set', ES, '5001'], h.env)).code).toBe(0);
    const serve = await startServe(h.env, TOKEN, { args: ['--price-replay', file, '--price-instrument', ES, '--speed', '1', '--price-paused'] });
    expect(serve.stderr()).toContain(`prices      replaying ${file} (3600 records) at 1× its pace, paused at its first record (trade sandbox clock resume)`);
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${serve.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as any };
    };
    const clock = async () => (await api('GET', '/_sandbox/clock')).body.clock;

    expect(await clock()).toMatchObject({ time: '2026-03-18T14:00:00.000Z', epoch: T0, replay: true, paused: true, speed: 1, records: 0, total: 3600, source: file });
    const placed = await api('POST', '/v1/api/accounts/Sim101/orders/place', { instrument: ES, action: 'Buy', quantity: 1, orderType: 'Limit', limitPrice: 5000.5, timeInForce: 'Gtc' });
    expect(placed).toMatchObject({ status: 200, body: { success: true } });
    const orderId = placed.body.orderId as string;
    // The service's times are Chicago's wall clock: 14:00 UTC is 09:00 CDT.
    const orders = await api('GET', '/v1/api/accounts/Sim101/orders');
    expect(orders.body.orders).toEqual([expect.objectContaining({ orderId, orderState: 'Working', time: '2026-03-18T09:00:00.0000000' })]);

    // Paused: a bot thinking sees the same market, however long it takes.
    const quote = async () => (await api('GET', `/v1/api/market/quote?instrument=${encodeURIComponent(ES)}`)).body;
    const still = await quote();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await quote()).toEqual(still);
    expect(await clock()).toMatchObject({ time: '2026-03-18T14:00:00.000Z', records: 0 });

    // Three records: 5000 (the buy at 5000.5 fills as the move from 5001 passes it), 5000.25, 5000.5.
    expect(await api('POST', '/_sandbox/clock/step', { records: 3 })).toMatchObject({ status: 200, body: { clock: { time: '2026-03-18T14:00:02.000Z', paused: true, records: 3 }, success: true } });
    const execution = { orderId, price: 5000.5, time: '2026-03-18T09:00:00.0000000', epoch: T0 };
    expect((await api('GET', '/v1/api/accounts/Sim101/executions')).body.executions).toEqual([expect.objectContaining(execution)]);
    const ws = await connect(serve.wsUrl, { authorization: `Bearer ${TOKEN}` });
    try {
      const reply = await ws.call('x1', 'GetExecutions', { account: 'Sim101' });
      expect((reply.data as { executions: unknown[] }).executions).toEqual([expect.objectContaining(execution)]);
      expect((await ws.call('x2', 'GetOrders', { account: 'Sim101' })).data).toMatchObject({ orders: [{ orderId, orderState: 'Filled', time: '2026-03-18T09:00:00.0000000' }] });
    } finally {
      await ws.close();
    }
    expect(await quote()).toMatchObject({ last: 5000.5, high: 5001, low: 5000 });

    // Five minutes of replayed time: every record up to 14:05:02, and the clock exactly there.
    expect((await api('POST', '/_sandbox/clock/step', { time: '5m' })).body.clock).toMatchObject({ time: '2026-03-18T14:05:02.000Z', records: 303, paused: true });

    // 600 times real time: the replayed clock runs, never back, until it has passed 14:10.
    expect((await api('POST', '/_sandbox/clock/speed', { speed: 600 })).body.clock).toMatchObject({ speed: 600, paused: true });
    expect((await api('POST', '/_sandbox/clock/resume', {})).body.clock).toMatchObject({ paused: false });
    const seen: number[] = [];
    for (let polls = 0; polls < 2000; polls++) {
      const now = (await clock()).epoch as number;
      seen.push(now);
      if (now >= Date.parse('2026-03-18T14:10:00Z')) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen).toEqual([...seen].sort((a, b) => a - b));
    const paused = (await api('POST', '/_sandbox/clock/pause', {})).body.clock;
    expect(paused).toMatchObject({ paused: true, speed: 600 });
    expect(paused.epoch).toBeGreaterThanOrEqual(Date.parse('2026-03-18T14:10:00Z'));

    // Bad requests name the field; nothing changes.
    for (const [path, body, error] of [
      ['step', {}, 'Invalid request: body: give one of records (a number of records) and time (a replayed time like "5m")'],
      ['step', { records: 0 }, 'Invalid request: records: must be a number of records from 1 to 100000000, got \'0\''],
      ['step', { time: 'soon' }, "Invalid request: time: must be a number of records (10) or a replayed time (30s, 5m, 1h), got 'soon'"],
      ['speed', { speed: -1 }, "Invalid request: speed: must be a number from 0 to 1000000 (times real time; 0 or max: as fast as possible), got '-1'"],
      ['speed', {}, 'Invalid request: speed: is required: a number of times real time, or "max"'],
    ] as const) {
      expect(await api('POST', `/_sandbox/clock/${path}`, body), path).toEqual({ status: 400, body: { error } });
    }
    expect((await clock()).epoch).toBe(paused.epoch);

    // Full speed to the end: the replay gives the clock back, and then there is nothing to control.
    await api('POST', '/_sandbox/clock/speed', { speed: 'max' });
    await api('POST', '/_sandbox/clock/resume', {});
    await until('the replay to end', () => serve.stderr().includes('trade serve: price replay done: replayed 3600 of 3600 records'), 20_000);
    expect((await clock()).replay).toBe(false);
    expect(await api('POST', '/_sandbox/clock/pause', {})).toEqual({ status: 409, body: { error: 'No replay is running: the clock is the wall clock' } });
    const wall = (await clock()).epoch as number;
    expect(Math.abs(wall - Date.now())).toBeLessThan(60_000);
  });
});
