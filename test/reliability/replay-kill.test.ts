/**
 * A replay killed midway (SIGKILL, issue 29): every fill another process saw reported (`trade
 * watch orders`, reading the store as it commits) is in the store, the last price is the one the
 * committed fills were made on (every order it crossed filled, none beyond it), the store is
 * whole, the dead replay's clock reads as the wall clock, and the replay runs again on it.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { queryStore, runCli, tempHome } from '../helpers/cli.js';
import { killLongRuns, startBin } from '../helpers/long-run.js';
import { checkStore, storeFile } from '../helpers/serve-process.js';
import { writeTickFile } from '../helpers/ticks.js';

const ES = 'ES 06-26';
const T0 = Date.parse('2026-03-18T14:00:00Z');

const homes: Array<{ cleanup(): void }> = [];
afterEach(async () => {
  await killLongRuns();
  for (const home of homes.splice(0)) home.cleanup();
});

describe('a replay killed midway', () => {
  it('leaves a store whose every reported fill is there, its last price consistent with them, and its clock free', async () => {
    const h = tempHome();
    homes.push(h);
    const { env } = h;
    const file = join(h.dir, 'trend.csv');
    // 20,000 ticks 100 ms apart, a tick up every 40: 5000 to 5124.75 over 2,000 s of replayed time.
    await writeTickFile(file, { count: 20_000, make: (i) => ({ time: T0 + i * 100, price: 5000 + 0.25 * Math.floor(i / 40) }) });
    expect((await runCli(['price', 'set', ES, '5000'], env)).code).toBe(0);
    // Twenty-four sells, five ticks apart from 5001.25: the trend fills one every 20 s of replayed time.
    const limits = Array.from({ length: 24 }, (_, k) => 5001.25 + 1.25 * k);
    for (const price of limits) {
      const placed = await runCli(['place', '--account', 'Sim101', '--instrument', ES, '--action', 'SELL', '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', String(price), '--tif', 'GTC'], env);
      expect(placed.code).toBe(0);
    }
    const watch = startBin(['watch', 'orders', '--account', 'Sim101', '--json'], env);
    await watch.line(/"orderState":"Working"/);
    // 100 times real time: the file would take 20 s; it is killed once five fills were reported (about 1 s).
    const replay = startBin(['price', 'replay', file, '--instrument', ES, '--speed', '100', '--json'], env);
    const reported = new Set<string>();
    for (let from = 0; reported.size < 5; ) {
      const line = await watch.line(/"orderState":"Filled"/, { from, ms: 20_000 });
      from = watch.lines().indexOf(line, from) + 1;
      reported.add((JSON.parse(line) as { orderId: string }).orderId);
    }
    replay.child.kill('SIGKILL');
    expect(await replay.exited).toEqual({ code: null, signal: 'SIGKILL' });
    await watch.stop();
    for (const line of watch.lines()) if (line.includes('"orderState":"Filled"')) reported.add((JSON.parse(line) as { orderId: string }).orderId);

    const check = checkStore(storeFile(env));
    expect(check).toMatchObject({ integrity: 'ok', foreignKeyProblems: 0, fillMismatches: 0 });
    for (const p of check.positions) expect(p.position, `${p.account} ${p.instrument}`).toBe(p.fills);
    const orders = queryStore(env, 'SELECT order_id AS orderId, state, limit_price AS limitPrice, avg_fill_price AS fill FROM orders ORDER BY seq') as Array<{ orderId: string; state: string; limitPrice: number; fill: number | null }>;
    for (const orderId of reported) expect(orders.find((o) => o.orderId === orderId), orderId).toMatchObject({ state: 'FILLED' });
    // The last price committed is the one the fills were made on: every sell at or below it filled at its limit, none above it.
    const [{ price: last }] = queryStore(env, `SELECT price FROM prices WHERE instrument = '${ES}'`) as Array<{ price: number }>;
    expect(last).toBeGreaterThan(5000);
    expect(last).toBeLessThan(limits.at(-1)!);
    for (const o of orders) {
      if (o.limitPrice <= last) expect(o, `${o.limitPrice} at ${last}`).toMatchObject({ state: 'FILLED', fill: o.limitPrice });
      else expect(o, `${o.limitPrice} at ${last}`).toMatchObject({ state: 'WORKING', fill: null });
    }
    // The killed replay holds the clock no more: the wall clock, and the next replay takes it.
    const clock = JSON.parse((await runCli(['sandbox', 'clock', '--json'], env)).stdout) as { clock: { replay: boolean } };
    expect(clock.clock.replay).toBe(false);
    const again = await runCli(['price', 'replay', file, '--instrument', ES, '--speed', 'max', '--json'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(queryStore(env, "SELECT COUNT(*) AS n FROM orders WHERE state = 'FILLED'")).toEqual([{ n: 24 }]);
    expect(checkStore(storeFile(env))).toMatchObject({ integrity: 'ok', fillMismatches: 0 });
  });
});
