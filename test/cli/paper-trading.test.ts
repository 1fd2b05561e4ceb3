/**
 * Paper trading on the embedded engine with a price source (README "Paper trading"): a day of
 * 1-minute ES bars made here, replayed through the CLI with ATM brackets entered at the open; the
 * final P&L is asserted in dollars. Also `price random` by seed, and replay refusals.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPriceFollow } from '../../src/cli/commands/price-feed.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Env } from '../../src/config/paths.js';
import { queryStore, runBin, runCli, tempHome } from '../helpers/cli.js';
import { killLongRuns, startBin } from '../helpers/long-run.js';
import { inProcess, until } from '../helpers/in-process.js';
import { startReferenceDouble, type ReferenceDouble } from '../helpers/reference-double.js';
import { killServes, startServe } from '../helpers/serve-process.js';

const ES = 'ES 03-27';
const homes: Array<{ cleanup(): void }> = [];
let double: ReferenceDouble | undefined;
afterEach(async () => {
  for (const home of homes.splice(0)) home.cleanup();
  await double?.close();
  double = undefined;
  await killServes();
  await killLongRuns();
});
function home() {
  const h = tempHome();
  homes.push(h);
  return h;
}

/**
 * 390 one-minute bars, 08:30–15:00 Chicago (13:30–20:00 UTC on 2026-03-18): the open climbs one
 * tick every 12 bars from 5000, each bar 2 ticks either side of its open, closing a tick higher on
 * every 12th bar. So the first high at 5002 is bar 72, and the first at 5004 is bar 168; no low
 * is ever below 4999.5.
 */
function dayOfBars(): string {
  const lines = ['time,open,high,low,close,volume'];
  for (let i = 0; i < 390; i++) {
    const open = 5000 + 0.25 * Math.floor(i / 12);
    const close = open + (i % 12 === 11 ? 0.25 : 0);
    const time = new Date(Date.parse('2026-03-18T13:30:00Z') + i * 60_000).toISOString();
    lines.push(`${time},${open},${open + 0.5},${open - 0.5},${close},${100 + i}`);
  }
  return `${lines.join('\n')}\n`;
}

const json = (text: string) => JSON.parse(text) as Record<string, unknown>;

/** A read of the store a running process writes: undefined until the store is there. */
function storeRead<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}
const ticksIn = (env: Env) => storeRead(() => (queryStore(env, 'SELECT COUNT(*) AS n FROM ticks')[0] as { n: number }).n) ?? 0;

describe('paper trading with a replayed day of bars', () => {
  it('fills ATM brackets entered at the open in the bars\' stated order; the P&L is in dollars', async () => {
    const { env, dir } = home();
    const file = join(dir, 'es-1min.csv');
    writeFileSync(file, dayOfBars());
    const ok = async (argv: string[]) => {
      const result = await runCli(argv, env);
      expect(result.code, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
      return result;
    };
    await ok(['accounts', 'add', 'Sim102']);
    await ok(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16']);
    await ok(['price', 'set', ES, '5000']);
    // Long 2 at 5000: stop 4998, target 5004. Short 1 at 5000: stop 5002, target 4996.
    await ok(['place', '--account', 'Sim101', '--instrument', ES, '--action', 'BUY', '--quantity', '2', '--order-type', 'MARKET', '--tif', 'DAY', '--strategy', 'Scalp']);
    await ok(['place', '--account', 'Sim102', '--instrument', ES, '--action', 'SELL', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY', '--strategy', 'Scalp']);

    const replay = await ok(['price', 'replay', file, '--instrument', ES, '--speed', 'max', '--json']);
    expect(json(replay.stdout)).toMatchObject({
      records: 390, fills: 2, cancelledOrders: 2, expiredOrders: 0, lastPrices: { [ES]: 5008 },
      firstTime: '2026-03-18T13:30:00.000Z', lastTime: '2026-03-18T19:59:00.000Z', success: true,
    });

    // The short's stop is touched at bar 72's high (5002) and fills there: −2 points × $50.
    // The long's target fills at its limit, 5004, at bar 168: +4 points × 2 × $50. Both are
    // stamped with their bar's replayed time (the replay's clock), so once the replay has ended
    // (the wall clock again) they are not today's: the cash holds them, today's P&L does not.
    const sim101 = json((await ok(['account', 'Sim101', '--json'])).stdout);
    const sim102 = json((await ok(['account', 'Sim102', '--json'])).stdout);
    expect(sim101).toMatchObject({ name: 'Sim101', item: { realizedProfitLoss: 0, cashValue: 100_400, unrealizedProfitLoss: 0 } });
    expect(sim102).toMatchObject({ name: 'Sim102', item: { realizedProfitLoss: 0, cashValue: 99_900, unrealizedProfitLoss: 0 } });
    const exits = queryStore(env, "SELECT f.account, o.origin, f.quantity, f.price, f.time FROM fills f JOIN orders o ON o.id = f.order_id WHERE o.origin != 'client' ORDER BY f.seq");
    expect(exits).toEqual([
      { account: 'Sim102', origin: 'atm-stop-loss', quantity: 1, price: 5002, time: '2026-03-18T14:42:00.000Z' },
      { account: 'Sim101', origin: 'atm-profit-target', quantity: 2, price: 5004, time: '2026-03-18T16:18:00.000Z' },
    ]);
    // GetOrders lists today's: these were finished on the replayed day, so the store says what became of them.
    const orders = (account: string) =>
      queryStore(env, `SELECT origin, state, avg_fill_price AS price FROM orders WHERE account = '${account}' ORDER BY seq`).map((o) => Object.values(o as Record<string, unknown>));
    expect(orders('Sim101')).toEqual([['client', 'FILLED', 5000], ['atm-stop-loss', 'CANCELLED', null], ['atm-profit-target', 'FILLED', 5004]]);
    expect(orders('Sim102')).toEqual([['client', 'FILLED', 5000], ['atm-stop-loss', 'FILLED', 5002], ['atm-profit-target', 'CANCELLED', null]]);
    const positions = json((await ok(['positions', '--json'])).stdout);
    expect(positions).toMatchObject({ positions: [], count: 0 });
  });

  it('refuses a file with a bad record before setting any price, naming the line and field (exit 2)', async () => {
    const { env, dir } = home();
    const file = join(dir, 'bad.csv');
    writeFileSync(file, 'time,price\n2026-03-18T13:30:00Z,5000\n2026-03-18T13:30:01Z,5000.3\n');
    const result = await runCli(['price', 'replay', file, '--instrument', ES], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${file}, line 3: 5000.3 is not a multiple of the tick size 0.25 of ES; the nearest valid prices are 5000.25 and 5000.5`);
    expect(result.stderr).toContain('Nothing was replayed');
    expect((await runCli(['price', 'list', '--json'], env)).stdout).toBe('{"prices":[],"success":true}\n');
    const missing = await runCli(['price', 'replay', join(dir, 'none.csv')], env);
    expect(missing).toMatchObject({ code: 2 });
    expect(missing.stderr).toContain('none.csv: no such file');
    writeFileSync(file, 'time,price\n2026-03-18T13:30:00Z,5000\n');
    const noInstrument = await runCli(['price', 'replay', file], env);
    expect(noInstrument.code).toBe(2);
    expect(noInstrument.stderr).toContain('line 2: instrument: is required (a column, or --instrument for the whole file)');
    const remote = await runCli(['--backend', 'http', 'price', 'replay', file, '--instrument', ES], env);
    expect(remote.code).toBe(2);
    expect(remote.stderr).toContain('trade price replay belongs to the simulator');
  });

  it('replays at --speed times the file\'s pace (a 2 s file at 10× takes about 0.2 s)', async () => {
    const { env, dir } = home();
    const file = join(dir, 'ticks.ndjson');
    writeFileSync(file, ['{"time":"2026-03-18T13:30:00Z","price":5000}', '{"time":"2026-03-18T13:30:01Z","price":5000.25}', '{"time":"2026-03-18T13:30:02Z","price":5000.5,"instrument":"NQ 03-27"}'].join('\n'));
    const started = Date.now();
    const result = await runCli(['price', 'replay', file, '--instrument', ES, '--speed', '10', '--json'], env);
    const elapsed = Date.now() - started;
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout)).toMatchObject({ records: 3, prices: 3, lastPrices: { [ES]: 5000.25, 'NQ 03-27': 5000.5 } });
    // Waited for the file's gaps (a lower bound only: how fast it runs is for bench/, not tests).
    expect(elapsed).toBeGreaterThanOrEqual(190);
  });
});

describe('trade price random', () => {
  it('is reproducible by seed on fresh stores (prices and fills alike), and stays on the tick grid', async () => {
    const runWalk = async (seed: string) => {
      const { env } = home();
      await runCli(['price', 'set', ES, '5000'], env);
      await runCli(['place', '--account', 'Sim101', '--instrument', ES, '--action', 'BUY', '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', '4990', '--tif', 'GTC'], env);
      const result = await runCli(['price', 'random', ES, '--seed', seed, '--steps', '400', '--interval', '0', '--json'], env);
      expect(result.code, result.stderr).toBe(0);
      const prices = (json((await runCli(['quote', ES, '--json'], env)).stdout) as { last: number }).last;
      return { summary: json(result.stdout), prices };
    };
    const a = await runWalk('7');
    const b = await runWalk('7');
    const c = await runWalk('8');
    expect(a).toEqual(b);
    expect(a.summary).toMatchObject({ instrument: ES, seed: 7, records: 400, success: true });
    expect(c.summary.lastPrices).not.toEqual(a.summary.lastPrices);
    const last = (a.summary.lastPrices as Record<string, number>)[ES]!;
    expect(Number.isInteger(last / 0.25)).toBe(true);
  });

  it('stops on SIGINT with exit 0 and a summary', async () => {
    const { env } = home();
    const run = startBin(['price', 'random', ES, '--start', '5000', '--seed', '1', '--interval', '20'], env);
    // Steps are being taken once the store has a tick past the start.
    await until('three steps', () => ticksIn(env) >= 3, 10_000);
    expect(await run.stop('SIGINT'), run.stderr()).toEqual({ code: 0, signal: null });
    expect(run.lines().join('\n')).toMatch(/^Stopped \(SIGINT\) after \d+ steps of a random walk of ES 03-27 \(seed 1, up to 4 ticks a step\)/);
  });
});

describe('trade price follow: live quotes from the service into the simulator', () => {
  for (const from of ['ws', 'http'] as const) {
    it(`--from ${from}, against the reference double: each new quote is the engine's last price and fills what it crosses; only quotes are read`, async () => {
      double = await startReferenceDouble();
      double.setPrice(ES, 5000);
      const { env } = home();
      const sell = await runCli(['place', '--account', 'Sim101', '--instrument', ES, '--action', 'SELL', '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', '5002', '--tif', 'GTC'], env);
      expect(sell.code, sell.stderr).toBe(0);
      const run = inProcess({ ...env, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token }, 'SIGINT');
      const done = runPriceFollow(run.ctx, [ES], { from, json: true }, run.deps);
      await until('the first price', () => run.lines().length === 1);
      double.setPrice(ES, 5002.5);
      await until('the second price', () => run.lines().length === 2, 4_000);
      run.stop();
      await done;
      const lines = run.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map(({ instrument, price, fills }) => ({ instrument, price, fills }))).toEqual([
        { instrument: ES, price: 5000, fills: 0 },
        { instrument: ES, price: 5002.5, fills: 1 },
      ]);
      expect(run.stderr.text).toMatch(/Stopped \(SIGINT\) after 2 prices from /);
      const engine = createEngine(join(env.TRADE_HOME!, 'trade.db'));
      try {
        expect(engine.lastPrice(ES)).toBe(5002.5);
        expect(engine.listOrders({ account: 'Sim101' }).map((o) => [o.state, o.avgFillPrice])).toEqual([['FILLED', 5002]]);
      } finally {
        engine.close();
      }
      // The service was asked for quotes and nothing else.
      expect(new Set(double.requests.map((r) => r.api))).toEqual(new Set(from === 'http' ? ['GetQuote'] : []));
    });
  }

  it('needs a remote to read from: --from embedded is refused, and a profile without a URL says so', async () => {
    const { env } = home();
    const embedded = await runCli(['price', 'follow', ES, '--from', 'embedded'], env);
    expect(embedded.code).toBe(2);
    expect(embedded.stderr).toContain("--from must be http or ws (the service the prices come from), got 'embedded'");
    const noUrl = await runCli(['price', 'follow', ES], env);
    expect(noUrl.code).toBe(3);
  });
});

describe('trade contract', () => {
  it('list shows the table with the settings; set changes commission and slippage; bad input names the flag', async () => {
    const { env } = home();
    const set = await runCli(['contract', 'set', 'es', '--commission', '2.25', '--slippage', '1', '--json'], env);
    expect(set.code, set.stderr).toBe(0);
    expect(JSON.parse(set.stdout)).toEqual({ root: 'ES', commission: 2.25, slippageTicks: 1, success: true });
    const list = JSON.parse((await runCli(['contract', 'list', '--json'], env)).stdout) as { contracts: Array<Record<string, unknown>> };
    expect(list.contracts).toHaveLength(19);
    expect(list.contracts[0]).toEqual({ root: 'ES', name: 'E-mini S&P 500', exchange: 'CME', tickSize: 0.25, pointValue: 50, tickValue: 12.5, currency: 'USD', months: 'HMUZ', dayEnd: '16:00', demoPrice: 6000, custom: false, commission: 2.25, slippageTicks: 1 });
    expect(list.contracts.find((c) => c.root === 'ZC')).toMatchObject({ dayEnd: '13:20', commission: 0, slippageTicks: 0 });
    const text = await runCli(['contract', 'list'], env);
    expect(text.stdout.split('\n')[1]).toMatch(/^ES +E-mini S&P 500 +0\.25 +50 +12\.50 +USD +HMUZ +16:00 +6000 +2\.25 +1$/);
    const cases: Array<[string[], number, string]> = [
      [['contract', 'set', 'XYZ', '--commission', '1'], 2, "Unknown root 'XYZ': the simulator knows ES, MES"],
      [['contract', 'set', 'ES'], 2, 'Give --commission, --slippage or both'],
      [['contract', 'set', 'ES', '--commission', '-1'], 2, "--commission must be a number from 0 to 1000, got '-1'"],
      [['contract', 'set', 'ES', '--slippage', '1.5'], 2, "--slippage must be a whole number from 0 to 100, got '1.5'"],
      [['--backend', 'http', 'contract', 'set', 'ES', '--commission', '1'], 2, 'trade contract set belongs to the simulator'],
    ];
    for (const [argv, code, message] of cases) {
      const result = await runCli(argv, env);
      expect(result.code, argv.join(' ')).toBe(code);
      expect(result.stderr).toContain(message);
    }
    // The refusals changed nothing.
    expect(JSON.parse((await runCli(['contract', 'list', '--json'], env)).stdout).contracts[0]).toMatchObject({ commission: 2.25, slippageTicks: 1 });
  });
});

describe('trade serve driving a price source', () => {
  const quoteOf = async (url: string, token: string) => {
    const res = await fetch(`${url}/v1/api/market/quote?instrument=${encodeURIComponent(ES)}`, { headers: { authorization: `Bearer ${token}` } });
    return (await res.json()) as { last?: number; error?: string };
  };

  it('--price-replay sets the file\'s prices while serving, fills what they cross, and says when it is done', async () => {
    const { env, dir } = home();
    const file = join(dir, 'es-1min.csv');
    writeFileSync(file, dayOfBars());
    await runCli(['price', 'set', ES, '5000'], env);
    await runCli(['place', '--account', 'Sim101', '--instrument', ES, '--action', 'SELL', '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', '5006', '--tif', 'GTC'], env);
    const serve = await startServe(env, 'serve-feed-token', { args: ['--price-replay', file, '--price-instrument', ES, '--speed', 'max'] });
    expect(serve.stderr()).toContain(`prices      replaying ${file} (390 records) at full speed`);
    await until('the replay to end', () => serve.stderr().includes('price replay done'), 10_000).catch(() => undefined);
    expect(serve.stderr()).toContain('trade serve: price replay done: replayed 390 of 390 records (390 bars, 0 ticks)');
    expect(await quoteOf(serve.url, 'serve-feed-token')).toMatchObject({ last: 5008 });
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    // Filled at the replayed time of bar 264, the first whose high reaches 5006 (GetOrders lists today's: the store is read).
    expect(queryStore(env, 'SELECT state, avg_fill_price AS price, updated_at AS time FROM orders')).toEqual([{ state: 'FILLED', price: 5006, time: '2026-03-18T17:54:00.000Z' }]);
  });

  it('--price-random walks while serving until SIGTERM, exit 0; a bad source is refused before listening', async () => {
    const { env, dir } = home();
    await runCli(['price', 'set', ES, '5000'], env);
    const serve = await startServe(env, 'serve-feed-token', { args: ['--price-random', ES, '--seed', '5', '--interval', '20'] });
    expect(serve.stderr()).toContain(`prices      a random walk of ${ES} (seed 5), a step every 20 ms`);
    await until('five steps', () => ticksIn(env) >= 5, 10_000);
    expect(ticksIn(env)).toBeGreaterThanOrEqual(5);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'time,price\n2026-03-18T13:30:00Z,5000.1\n');
    const refused = await runBin(['serve', '--port', '0', '--price-replay', bad, '--price-instrument', ES], env);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('line 2: 5000.1 is not a multiple of the tick size 0.25 of ES');
    expect(refused.stderr).not.toContain('listening');
    const both = await runBin(['serve', '--port', '0', '--price-random', ES, '--price-replay', bad], env);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('Give one of --price-replay, --price-random and --price-follow');
    const stray = await runBin(['serve', '--port', '0', '--from', 'ws'], env);
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('--from needs --price-replay, --price-random or --price-follow');
  });

  it('--price-follow sets the service\'s quotes while serving (against the reference double), until SIGTERM', async () => {
    double = await startReferenceDouble();
    double.setPrice(ES, 5000);
    const { env } = home();
    const remote = { ...env, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token };
    const serve = await startServe(remote, 'serve-feed-token', { args: ['--price-follow', ES, '--from', 'ws'] });
    expect(serve.stderr()).toMatch(new RegExp(`prices {6}following ${ES} from ws`));
    const priceNow = () => storeRead(() => (queryStore(env, 'SELECT price FROM prices')[0] as { price: number } | undefined)?.price);
    const wait = async (want: number) => {
      await until(`the price ${want}`, () => priceNow() === want, 8_000).catch(() => undefined);
      expect(priceNow()).toBe(want);
    };
    await wait(5000);
    double.setPrice(ES, 5001.25);
    await wait(5001.25);
    expect((await quoteOf(serve.url, 'serve-feed-token')).last).toBe(5001.25);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    // Only the stream was used: no RPC reached the service.
    expect(double.requests).toEqual([]);
  });
});

