/**
 * `trade price replay` at the scale of real sessions (issue 29), through the CLI: gzip and plain
 * files (CSV and NDJSON) give the same fills; a bad line near the end of a large generated file
 * sets no price; instruments interleaved in one file, or in several files merged by time; the
 * --from/--to window; the progress line (a terminal only); and the session clock shared by every
 * process on the store: a paused replay stepped from another process, an order placed meanwhile
 * stamped with the replayed time, the guard's pace window and `trade history` following it, a DAY
 * order expiring at the replayed session's close.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { queryStore, runBin, runCli, tempHome } from '../helpers/cli.js';
import { until } from '../helpers/in-process.js';
import { killLongRuns, startBin } from '../helpers/long-run.js';
import { runInPty } from '../helpers/terminal.js';
import { sawTicks, type Tick, writeTickFile } from '../helpers/ticks.js';

const ES = 'ES 06-26';
const NQ = 'NQ 06-26';
const T0 = Date.parse('2026-03-18T14:00:00Z');

const homes: Array<{ cleanup(): void }> = [];
afterEach(async () => {
  await killLongRuns();
  for (const home of homes.splice(0)) home.cleanup();
});
function home() {
  const h = tempHome();
  homes.push(h);
  return h;
}

async function ok(argv: string[], env: Env) {
  const result = await runCli(argv, env);
  expect(result.code, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
  return result;
}
const json = (text: string) => JSON.parse(text) as Record<string, unknown>;
const limit = (instrument: string, action: string, price: number, tif = 'GTC') =>
  ['place', '--account', 'Sim101', '--instrument', instrument, '--action', action, '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', String(price), '--tif', tif];

/** Each fill, by the order it filled: its type and price, the fill's price and time. */
const fills = (env: Env) =>
  queryStore(env, 'SELECT o.instrument, o.order_type AS type, o.limit_price AS limitPrice, o.stop_price AS stopPrice, f.price, f.time FROM fills f JOIN orders o ON o.id = f.order_id ORDER BY f.seq');

describe('files read as streams', () => {
  it('a gzip file and a plain one, CSV or NDJSON, give the same fills, stamped with the replayed times', async () => {
    const ticks = sawTicks(2000, { start: T0, stepMs: 1000 });
    const runs: unknown[] = [];
    for (const [name, options] of [
      ['ticks.csv', {}],
      ['ticks.csv.gz', { gzip: true }],
      ['ticks.ndjson.gz', { gzip: true, format: 'ndjson' as const }],
    ] as const) {
      const { env, dir } = home();
      const file = join(dir, name);
      await writeTickFile(file, ticks, options);
      await ok(['price', 'set', ES, '5001'], env);
      await ok(limit(ES, 'BUY', 5000.25), env);
      await ok(limit(ES, 'SELL', 5002), env);
      await ok(['place', '--account', 'Sim101', '--instrument', ES, '--action', 'BUY', '--quantity', '1', '--order-type', 'STOPMARKET', '--stop-price', '5001.75', '--tif', 'GTC'], env);
      const replay = json((await ok(['price', 'replay', file, '--instrument', ES, '--speed', 'max', '--json'], env)).stdout);
      expect(replay).toMatchObject({ file, records: 2000, fills: 3, expiredOrders: 0, firstTime: '2026-03-18T14:00:00.000Z', lastTime: '2026-03-18T14:33:19.000Z', success: true });
      runs.push(fills(env));
    }
    // The saw starts at 5000 (the buy at 5000.25 fills there, as the move from 5001 passes it),
    // reaches 5001.75 at its 7th tick (the stop) and 5002 at its 8th (the sell limit).
    expect(runs[0]).toEqual([
      { instrument: ES, type: 'LIMIT', limitPrice: 5000.25, stopPrice: null, price: 5000.25, time: '2026-03-18T14:00:00.000Z' },
      { instrument: ES, type: 'STOPMARKET', limitPrice: null, stopPrice: 5001.75, price: 5001.75, time: '2026-03-18T14:00:07.000Z' },
      { instrument: ES, type: 'LIMIT', limitPrice: 5002, stopPrice: null, price: 5002, time: '2026-03-18T14:00:08.000Z' },
    ]);
    expect(runs[1]).toEqual(runs[0]);
    expect(runs[2]).toEqual(runs[0]);
  });

  it('a bad line near the end of a large file sets no price: the whole file is checked first (exit 2)', async () => {
    const { env, dir } = home();
    const file = join(dir, 'large.csv');
    const count = 200_000;
    // Line 1 is the header: the tick at index i is on line i + 2.
    await writeTickFile(file, { count, make: (i) => (i === count - 10 ? `${new Date(T0 + i * 100).toISOString()},5000.1\n` : { time: T0 + i * 100, price: 5000 + 0.25 * (i % 8) }) });
    const result = await runCli(['price', 'replay', file, '--instrument', ES, '--speed', 'max'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}, line ${count - 10 + 2}: 5000.1 is not a multiple of the tick size 0.25 of ES; the nearest valid prices are 5000 and 5000.25`);
    expect(result.stderr).toContain('Nothing was replayed');
    // Refused before the store was even opened: nothing was written anywhere.
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
    // A gzip file cut short is refused the same way.
    const cut = join(dir, 'cut.csv.gz');
    await writeTickFile(cut, sawTicks(20_000, { start: T0, stepMs: 100 }), { gzip: true });
    const whole = readFileSync(cut);
    writeFileSync(cut, whole.subarray(0, whole.length - 200));
    const broken = await runCli(['price', 'replay', cut, '--instrument', ES], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain(`${cut}: not a whole gzip file`);
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
    expect((await ok(['price', 'list', '--json'], env)).stdout).toBe('{"prices":[],"success":true}\n');
  });
});

describe('several instruments', () => {
  const interleaved = (): Tick[] =>
    sawTicks(400, { start: T0, stepMs: 1000, instrument: ES }).flatMap((es, i) => [es, { time: es.time + 500, price: 20000 + 0.25 * (i % 12), instrument: NQ }]);

  async function book(env: Env) {
    await ok(['price', 'set', ES, '5001'], env);
    await ok(['price', 'set', NQ, '20001'], env);
    await ok(limit(ES, 'SELL', 5002), env);
    await ok(limit(NQ, 'SELL', 20002.5), env);
    await ok(limit(NQ, 'BUY', 20000), env);
  }

  it('interleaved by time in one file (the instrument column), or in one file each, merged by time: the same fills', async () => {
    const one = home();
    const mixed = join(one.dir, 'mixed.csv');
    await writeTickFile(mixed, interleaved(), { instrumentColumn: true });
    await book(one.env);
    const replay = json((await ok(['price', 'replay', mixed, '--speed', 'max', '--json'], one.env)).stdout);
    expect(replay).toMatchObject({ records: 800, fills: 3, lastPrices: { [ES]: 5000.25, [NQ]: 20000.75 }, success: true });
    expect(fills(one.env)).toEqual([
      { instrument: NQ, type: 'LIMIT', limitPrice: 20000, stopPrice: null, price: 20000, time: '2026-03-18T14:00:00.500Z' },
      { instrument: ES, type: 'LIMIT', limitPrice: 5002, stopPrice: null, price: 5002, time: '2026-03-18T14:00:08.000Z' },
      { instrument: NQ, type: 'LIMIT', limitPrice: 20002.5, stopPrice: null, price: 20002.5, time: '2026-03-18T14:00:10.500Z' },
    ]);

    const two = home();
    const es = join(two.dir, 'es.csv.gz');
    const nq = join(two.dir, 'nq.ndjson');
    await writeTickFile(es, interleaved().filter((t) => t.instrument === ES).map(({ time, price }) => ({ time, price })), { gzip: true });
    await writeTickFile(nq, interleaved().filter((t) => t.instrument === NQ), { format: 'ndjson' });
    await book(two.env);
    const merged = json((await ok(['price', 'replay', es, nq, '--instrument', ES, '--speed', 'max', '--json'], two.env)).stdout);
    expect(merged).toMatchObject({ files: [es, nq], records: 800, fills: 3, lastPrices: replay.lastPrices as object });
    expect(fills(two.env)).toEqual(fills(one.env));
  });
});

describe('the window', () => {
  it('--from and --to replay only the records at or after --from and before --to', async () => {
    const { env, dir } = home();
    const file = join(dir, 'ticks.csv');
    await writeTickFile(file, sawTicks(1000, { start: T0, stepMs: 1000 }));
    const replay = json((await ok(['price', 'replay', file, '--instrument', ES, '--speed', 'max', '--from', '2026-03-18T14:05:00Z', '--to', '2026-03-18 14:10', '--json'], env)).stdout);
    expect(replay).toMatchObject({ records: 300, firstTime: '2026-03-18T14:05:00.000Z', lastTime: '2026-03-18T14:09:59.000Z', success: true });
    expect(queryStore(env, 'SELECT MIN(time) AS first, MAX(time) AS last FROM ticks')).toEqual([{ first: '2026-03-18T14:05:00.000Z', last: '2026-03-18T14:09:59.000Z' }]);
    const cases: Array<[string[], string]> = [
      [['--from', '2026-03-18T14:10:00Z', '--to', '2026-03-18T14:05:00Z'], '--to (2026-03-18T14:05:00.000Z) must be after --from (2026-03-18T14:10:00.000Z)'],
      [['--from', 'noon'], "--from must be a time like 2026-03-18T14:30:00Z (no zone: UTC) or epoch seconds or milliseconds, got 'noon'"],
      [['--from', '2026-03-19T00:00:00Z'], `${file} has no record in the window (1000 records, from 2026-03-18T14:00:00.000Z to 2026-03-18T14:16:39.000Z)`],
    ];
    for (const [flags, message] of cases) {
      const result = await runCli(['price', 'replay', file, '--instrument', ES, ...flags], env);
      expect(result.code, flags.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });
});

describe('the progress line', () => {
  it('is drawn at a terminal, with the percent of the file, the rate, the replayed time and the time left; never in a pipe or with --json', async () => {
    const { env, dir } = home();
    const file = join(dir, 'ticks.csv');
    await writeTickFile(file, sawTicks(50_000, { start: T0, stepMs: 100 }));
    // What was drawn, the progress line included (the summary's own line erases it from the final screen).
    let drawn = '';
    const shown = await runInPty(['price', 'replay', file, '--instrument', ES, '--speed', 'max'], env, async (t) => {
      await t.waitFor('Done: replayed 50000 of 50000 records');
      drawn = t.screen();
    });
    expect(shown.code).toBe(0);
    expect(drawn).toMatch(/\d+%  [\d,]+ records\/s  2026-03-18T1[45]:\d\d:\d\dZ  \S+ left  fills 0  ES 06-26 500\d(\.\d+)?/);
    let quiet = '';
    await runInPty(['price', 'replay', file, '--instrument', ES, '--speed', 'max', '--json'], env, async (t) => {
      await t.waitFor('"success":true');
      quiet = t.screen();
    });
    expect(quiet).not.toContain('records/s');
    expect(quiet).not.toContain('checking');
    const piped = await runBin(['price', 'replay', file, '--instrument', ES, '--speed', 'max'], env);
    expect(piped.code).toBe(0);
    expect(piped.stderr).toBe('');
    expect(piped.stdout).toMatch(/^Done: replayed 50000 of 50000 records \(0 bars, 50000 ticks\) from 2026-03-18T14:00:00\.000Z to 2026-03-18T15:23:19\.900Z\n  last price  ES 06-26 5000\.25\n  fills       0\n  rate        [\d,]+ records\/s \([\d.]+ s\)\n$/);
  });
});

describe('the session clock, shared by every process on the store', () => {
  it('a paused replay is stepped from another process; orders, the guard\'s pace window and the journal follow the replayed time; DAY expires at its close', async () => {
    const { env, dir } = home();
    const file = join(dir, 'day.csv');
    // A record a minute, 14:00 to 21:30 UTC: the session closes at 16:00 Chicago, 21:00 UTC.
    await writeTickFile(file, sawTicks(451, { start: T0, stepMs: 60_000 }));
    await ok(['price', 'set', ES, '5000'], env);
    const guarded: Env = { ...env, TRADE_GUARD_MAX_ORDERS: '2/min' };
    const replay = startBin(['price', 'replay', file, '--instrument', ES, '--speed', 'max', '--paused', '--json'], env);
    // The replay holds the clock once it has checked the file: the store says so.
    await until('the replay to hold the clock', () => (queryStore(env, 'SELECT replay FROM session_clock')[0] as { replay: number }).replay === 1, 20_000);
    expect(json((await ok(['sandbox', 'clock', '--json'], env)).stdout).clock).toMatchObject({ time: '2026-03-18T14:00:00.000Z', replay: true, paused: true, speed: 'max', records: 0, total: 451, source: file });

    expect((await ok(['sandbox', 'clock', 'step', '1'], env)).stdout).toBe(`2026-03-18T14:00:00.000Z  replayed, paused (at full speed when resumed); 1 of 451 records of ${file}\n`);
    const day = json((await ok([...limit(ES, 'BUY', 4990, 'DAY'), '--json'], guarded)).stdout).orderId as string;
    await ok(limit(ES, 'BUY', 4989), guarded);
    const third = await runCli(limit(ES, 'BUY', 4988), guarded);
    expect(third.code).toBe(6);
    expect(third.stderr).toContain('refused by guard max-orders');
    // Two minutes of replayed time later the pace window has moved on, though the wall clock has not.
    expect((await ok(['sandbox', 'clock', 'step', '2m'], env)).stdout).toBe(`2026-03-18T14:02:00.000Z  replayed, paused (at full speed when resumed); 3 of 451 records of ${file}\n`);
    await ok(limit(ES, 'BUY', 4988), guarded);
    const journal = (json((await ok(['history', '--json'], guarded)).stdout).entries as Array<{ at: string; outcome: string }>).map((e) => [e.at, e.outcome]);
    expect(journal).toEqual([
      ['2026-03-18T14:00:00.000Z', 'accepted'],
      ['2026-03-18T14:00:00.000Z', 'accepted'],
      ['2026-03-18T14:00:00.000Z', 'refused'],
      ['2026-03-18T14:02:00.000Z', 'accepted'],
    ]);
    const orders = json((await ok(['orders', '--account', 'Sim101', '--json'], env)).stdout).orders as Array<{ orderId: string; time: string }>;
    // The service's time is Chicago's wall clock: 14:00 UTC is 09:00 CDT.
    expect(orders.map((o) => o.time)).toEqual(['2026-03-18T09:00:00.0000000', '2026-03-18T09:00:00.0000000', '2026-03-18T09:02:00.0000000']);

    await ok(['sandbox', 'clock', 'resume'], env);
    expect(await replay.exited).toEqual({ code: 0, signal: null });
    expect(json(replay.lines().at(-1)!)).toMatchObject({ records: 451, expiredOrders: 1, firstTime: '2026-03-18T14:00:00.000Z', lastTime: '2026-03-18T21:30:00.000Z', success: true });
    expect(queryStore(env, `SELECT time_in_force AS tif, state, created_at, updated_at FROM orders WHERE order_id = '${day}'`)).toEqual([
      { tif: 'DAY', state: 'EXPIRED', created_at: '2026-03-18T14:00:00.000Z', updated_at: '2026-03-18T21:00:00.000Z' },
    ]);
    expect((await ok(['sandbox', 'clock'], env)).stdout).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z  the wall clock \(no replay is running\)\n$/);
    const idle = await runCli(['sandbox', 'clock', 'pause'], env);
    expect(idle.code).toBe(1);
    expect(idle.stderr).toContain('No replay is running: the clock is the wall clock');
    for (const [argv, message] of [
      [['sandbox', 'clock', 'step', '0'], 'step must be a number of records from 1 to 100000000'],
      [['sandbox', 'clock', 'step', 'soon'], "step must be a number of records (10) or a replayed time (30s, 5m, 1h), got 'soon'"],
      [['sandbox', 'clock', 'speed'], 'speed needs a value'],
      [['sandbox', 'clock', 'rewind'], "ACTION must be show, pause, resume, speed or step, got 'rewind'"],
    ] as const) {
      const result = await runCli([...argv], env);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr).toContain(message);
    }
  });
});
