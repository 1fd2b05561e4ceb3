/**
 * Where prices come from (README "Paper trading"): `trade price source` per instrument, root or
 * all, kept in the store; the no-price refusal and the demo default; `trade price run` and
 * `trade serve` driving the chosen sources; and the user's own contracts (`trade contract add`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runPriceRun } from '../../src/cli/commands/price-source.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Env } from '../../src/config/paths.js';
import { queryStore, runCli, tempHome } from '../helpers/cli.js';
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
});
function home() {
  const h = tempHome();
  homes.push(h);
  return h;
}

const market = (instrument: string, action = 'BUY', quantity = '1') => [
  'place', '--account', 'Sim101', '--instrument', instrument, '--action', action, '--quantity', quantity, '--order-type', 'MARKET', '--tif', 'DAY',
];

async function ok(argv: string[], env: Env) {
  const result = await runCli(argv, env);
  expect(result.code, `${argv.join(' ')}: ${result.stderr}`).toBe(0);
  return result;
}

const storeCounts = (env: Env) => queryStore(env, 'SELECT (SELECT COUNT(*) FROM orders) AS orders, (SELECT COUNT(*) FROM fills) AS fills, (SELECT COUNT(*) FROM prices) AS prices')[0];

/** Sixty one-minute bars from 5000, a tick up each minute. */
function bars(): string {
  const lines = ['time,open,high,low,close'];
  for (let i = 0; i < 60; i++) {
    const open = 5000 + 0.25 * i;
    lines.push(`${new Date(Date.parse('2026-03-18T13:30:00Z') + i * 60_000).toISOString()},${open},${open + 0.25},${open},${open + 0.25}`);
  }
  return `${lines.join('\n')}\n`;
}

describe('no fill without a price', () => {
  it('the default source is demo: the first MARKET order starts the instrument at its root\'s demo price', async () => {
    const { env } = home();
    const list = await ok(['price', 'source'], env);
    expect(list.stdout).toMatch(/^FOR +SOURCE +SETTINGS\nevery instrument +demo \(default\) +as manual, but an instrument with no price starts at its root's demo price\n$/);
    const placed = JSON.parse((await ok([...market('NQ 06-27'), '--json'], env)).stdout) as Record<string, unknown>;
    expect(placed).toMatchObject({ orderId: expect.any(String), success: true });
    expect(queryStore(env, 'SELECT instrument, price FROM prices')).toEqual([{ instrument: 'NQ 06-27', price: 21000 }]);
    expect(queryStore(env, 'SELECT price FROM fills')).toEqual([{ price: 21000 }]);
  });

  it('manual refuses a MARKET order with no last price, naming the instrument and the way out, and writes nothing', async () => {
    const { env } = home();
    expect((await ok(['price', 'source', 'manual'], env)).stdout).toBe('every instrument: manual: trade price set only; a MARKET order with no price is refused\n');
    const refused = await runCli(market(ES), env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`Invalid request: instrument: no last price for ${ES} in the simulator`);
    expect(refused.stderr).toContain(`Set one: trade price set "${ES}" PRICE (its price source is manual). Nothing was placed.`);
    expect(storeCounts(env)).toEqual({ orders: 0, fills: 0, prices: 0 });
    // A reverse or flatten-first place that would open at no price is refused whole, too.
    await ok(['price', 'set', ES, '5000'], env);
    await ok(market(ES), env);
    expect((await runCli(['place', ...market('NQ 06-27').slice(1), '--flatten-first'], env)).code).toBe(1);
    // A LIMIT order waits for a price; a MARKET one fills once there is one.
    await ok(['place', '--account', 'Sim101', '--instrument', 'NQ 06-27', '--action', 'BUY', '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', '21000', '--tif', 'GTC'], env);
    await ok(['price', 'set', 'NQ 06-27', '20999'], env);
    expect(queryStore(env, "SELECT state, avg_fill_price FROM orders WHERE instrument = 'NQ 06-27'")).toEqual([{ state: 'FILLED', avg_fill_price: 20999 }]);
  });

  it('the most specific choice wins: a contract over its root over every instrument', async () => {
    const { env } = home();
    await ok(['price', 'source', 'manual'], env);
    await ok(['price', 'source', 'demo', '--instrument', 'es'], env);
    await ok(['price', 'source', 'manual', '--instrument', 'ESM27'], env);
    const sources = JSON.parse((await ok(['price', 'source', '--json'], env)).stdout) as { sources: Array<{ target: string; source: string }> };
    expect(sources.sources.map((s) => [s.target, s.source])).toEqual([['*', 'manual'], ['ES', 'demo'], ['ES 06-27', 'manual']]);
    expect((await runCli(market('ES 06-27'), env)).code).toBe(1);
    expect((await runCli(market('NQ 06-27'), env)).code).toBe(1);
    expect((await runCli(market(ES), env)).code).toBe(0);
    expect(queryStore(env, 'SELECT instrument, price FROM prices')).toEqual([{ instrument: ES, price: 6000 }]);
    // --reset forgets a choice: ES 06-27 follows its root's demo again.
    expect((await ok(['price', 'source', '--reset', '--instrument', 'ES 06-27'], env)).stdout).toBe("ES 06-27: back to every instrument's source\n");
    expect((await runCli(market('ES 06-27'), env)).code).toBe(0);
  });

  it('refuses a bad choice before changing anything, naming the flag or the line', async () => {
    const { env, dir } = home();
    const bad = join(dir, 'bad.csv');
    writeFileSync(bad, 'time,price\n2026-03-18T13:30:00Z,5000.1\n');
    const cases: Array<[string[], number, string]> = [
      [['price', 'source', 'live'], 2, "SOURCE must be one of manual, demo, random, remote, replay, got 'live'"],
      [['price', 'source', 'manual', '--seed', '3'], 2, '--seed is not a setting of the manual source'],
      [['price', 'source', 'random'], 2, 'A random walk is of one instrument or root: give --instrument'],
      [['price', 'source', 'random', '--instrument', 'ES', '--interval', '-1'], 2, "--interval must be a whole number from 0 to 3600000, got '-1'"],
      [['price', 'source', 'replay', '--instrument', 'ES'], 2, 'The replay source needs a FILE'],
      [['price', 'source', 'replay', bad, '--instrument', ES], 2, 'line 2: 5000.1 is not a multiple of the tick size 0.25 of ES'],
      [['price', 'source', 'demo', bad], 2, 'A FILE goes with the replay source only, not demo'],
      [['price', 'source', '--instrument', 'ES'], 2, 'Give a SOURCE for --instrument, or --reset'],
      [['price', 'source', 'remote', '--instrument', 'ES', '--from', 'embedded'], 2, "--from must be http or ws"],
      [['price', 'source', 'manual', '--instrument', 'ES 13-27'], 2, 'Invalid request: instrument'],
      [['--backend', 'http', 'price', 'source', 'manual'], 2, 'trade price source belongs to the simulator'],
    ];
    for (const [argv, code, message] of cases) {
      const result = await runCli(argv, env);
      expect(result.code, argv.join(' ')).toBe(code);
      expect(result.stderr, argv.join(' ')).toContain(message);
    }
    expect(JSON.parse((await ok(['price', 'source', '--json'], env)).stdout)).toEqual({
      sources: [{ target: '*', source: 'demo', params: {}, default: true }],
      success: true,
    });
  });
});

describe('trade price run: the chosen sources in the foreground', () => {
  it('runs a chosen replay to its end, filling what it crosses; with nothing chosen it says what to do', async () => {
    const { env, dir } = home();
    const none = await runCli(['price', 'run'], env);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('No price source to run: every instrument takes its prices by hand (manual or demo)');
    const file = join(dir, 'es.csv');
    writeFileSync(file, bars());
    const chosen = JSON.parse((await ok(['price', 'source', 'replay', file, '--instrument', ES, '--speed', 'max', '--json'], env)).stdout) as Record<string, unknown>;
    expect(chosen).toMatchObject({ target: ES, source: 'replay', params: { file, speed: 0 }, success: true });
    await ok(['price', 'set', ES, '5000'], env);
    await ok(['place', '--account', 'Sim101', '--instrument', ES, '--action', 'SELL', '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', '5010', '--tif', 'GTC'], env);
    const run = await ok(['price', 'run', '--json'], env);
    const report = JSON.parse(run.stdout) as { feeds: Array<Record<string, unknown>>; success: boolean };
    expect(report).toEqual({
      // Each bar opens at the last one's close and closes a tick up: 60 moves (the first open is the price already set).
      feeds: [{ source: 'replay', describe: `replaying ${file} (60 records) at full speed`, prices: 60, fills: 1, lastPrices: { [ES]: 5015 } }],
      success: true,
    });
    expect(queryStore(env, 'SELECT state, avg_fill_price FROM orders')).toEqual([{ state: 'FILLED', avg_fill_price: 5010 }]);
    // Naming an instrument whose source is not one to run is refused.
    const named = await runCli(['price', 'run', 'NQ 06-27'], env);
    expect(named.code).toBe(2);
    expect(named.stderr).toContain("NQ 06-27's price source is demo: there is nothing to run");
  });

  it('runs a random walk by its kept seed and the service\'s quotes (remote, against the reference double) together until stopped', async () => {
    double = await startReferenceDouble();
    double.setPrice('NQ 06-27', 21000);
    const { env } = home();
    const remote = { ...env, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token };
    await ok(['price', 'source', 'random', '--instrument', ES, '--seed', '11', '--interval', '5'], env);
    await ok(['price', 'source', 'remote', '--instrument', 'NQ 06-27', '--from', 'http'], remote);
    const run = inProcess(remote, 'SIGINT');
    const done = runPriceRun(run.ctx, [], { json: true }, run.deps);
    const priceOf = (instrument: string) => (queryStore(env, `SELECT price FROM prices WHERE instrument = '${instrument}'`)[0] as { price: number } | undefined)?.price;
    await until('the walk and the quote', () => {
      try {
        return (queryStore(env, `SELECT COUNT(*) AS n FROM ticks WHERE instrument = '${ES}'`)[0] as { n: number }).n >= 5 && priceOf('NQ 06-27') === 21000;
      } catch {
        return false;
      }
    }, 8_000);
    double.setPrice('NQ 06-27', 21002.5);
    await until('the second quote', () => priceOf('NQ 06-27') === 21002.5, 6_000);
    run.stop();
    await done;
    const report = JSON.parse(run.stdout.text) as { feeds: Array<{ source: string; stopped?: string; lastPrices: Record<string, number> }> };
    expect(report.feeds.map((f) => [f.source, f.stopped])).toEqual([['random', 'SIGINT'], ['follow', 'SIGINT']]);
    // The walk started at ES's demo price (no price was set) and stayed on the tick.
    const walked = queryStore(env, `SELECT price FROM ticks WHERE instrument = '${ES}' ORDER BY seq`) as Array<{ price: number }>;
    expect(Math.abs(walked[0]!.price - 6000)).toBeLessThanOrEqual(4 * 0.25);
    expect(walked.every(({ price }) => Number.isInteger(price / 0.25))).toBe(true);
    expect(new Set(double.requests.map((r) => r.api))).toEqual(new Set(['GetQuote']));
  });
});

describe('trade serve runs the chosen sources', () => {
  it('without a --price-* flag, serves the chosen replay and says so in its banner', async () => {
    const { env, dir } = home();
    const file = join(dir, 'es.csv');
    writeFileSync(file, bars());
    await ok(['price', 'source', 'replay', file, '--instrument', ES, '--speed', 'max'], env);
    const serve = await startServe(env, 'serve-source-token');
    expect(serve.stderr()).toContain(`prices      replaying ${file} (60 records) at full speed`);
    await until('the replay to end', () => serve.stderr().includes('price replay done'), 10_000).catch(() => undefined);
    expect(serve.stderr()).toContain('trade serve: price replay done: replayed 60 of 60 records');
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toEqual({ code: 0, signal: null });
    expect(queryStore(env, 'SELECT price FROM prices')).toEqual([{ price: 5015 }]);
  });
});

describe('trade contract add and remove: your own contracts', () => {
  it('adds a root the table lacks: its tick is enforced, its P&L is in money by its point value, its demo price starts it', async () => {
    const { env } = home();
    const added = await ok(['contract', 'add', 'fdax', '--tick-size', '0.5', '--point-value', '25', '--months', 'HMUZ', '--demo-price', '19000', '--name', 'DAX Futures', '--exchange', 'EUREX', '--close', '10:30'], env);
    expect(added.stdout).toBe('Added FDAX: tick 0.5, point value 25 (12.50 a tick), months HMUZ, close 10:30, demo price 19000\n');
    const list = JSON.parse((await ok(['contract', 'list', '--json'], env)).stdout) as { contracts: Array<Record<string, unknown>> };
    expect(list.contracts).toHaveLength(20);
    expect(list.contracts.at(-1)).toEqual({
      root: 'FDAX', name: 'DAX Futures', exchange: 'EUREX', tickSize: 0.5, pointValue: 25, tickValue: 12.5, currency: 'USD', months: 'HMUZ', dayEnd: '10:30',
      demoPrice: 19000, custom: true, commission: 0, slippageTicks: 0,
    });
    expect((await ok(['contract', 'list'], env)).stdout).toContain('* added or overridden with trade contract add');
    await ok(market('FDAX 12-26', 'BUY', '2'), env);
    const off = await runCli(['price', 'set', 'FDAX 12-26', '19000.25'], env);
    expect(off.code).toBe(1);
    expect(off.stderr).toContain('price: 19000.25 is not a multiple of the tick size 0.5 of FDAX; the nearest valid prices are 19000 and 19000.5');
    await ok(['price', 'set', 'FDAX 12-26', '19010'], env);
    const positions = JSON.parse((await ok(['positions', '--json'], env)).stdout) as { positions: Array<Record<string, unknown>> };
    expect(positions.positions).toEqual([expect.objectContaining({ instrument: 'FDAX 12-26', quantity: 2, averagePrice: 19000, marketPrice: 19010, unrealizedProfitLoss: 500 })]);
    // A price source can be chosen for its root, as for the table's roots.
    expect((await ok(['price', 'source', 'manual', '--instrument', 'fdax'], env)).stdout).toMatch(/^FDAX: manual:/);
    // A commission can be set on it like on the table's roots.
    expect((await ok(['contract', 'set', 'FDAX', '--commission', '1.5'], env)).stdout).toContain('FDAX: commission 1.50 per contract');
    expect((await ok(['contract', 'remove', 'FDAX'], env)).stdout).toBe('Removed FDAX\n');
    expect(JSON.parse((await ok(['contract', 'list', '--json'], env)).stdout).contracts).toHaveLength(19);
  });

  it('overrides a root of the table until removed', async () => {
    const { env } = home();
    expect((await ok(['contract', 'add', 'ES', '--tick-size', '1', '--point-value', '50', '--months', '3,6,9,12', '--demo-price', '5000'], env)).stdout).toMatch(/^Overrode ES: tick 1,/);
    expect((await runCli(['price', 'set', ES, '5000.25'], env)).stderr).toContain('is not a multiple of the tick size 1 of ES');
    expect((await ok(['contract', 'remove', 'es'], env)).stdout).toBe("Removed your ES: the table's ES applies again\n");
    await ok(['price', 'set', ES, '5000.25'], env);
    const missing = await runCli(['contract', 'remove', 'ES'], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('ES was not added with trade contract add: there is nothing to remove');
  });

  it('refuses bad input naming the flag, changing nothing', async () => {
    const { env } = home();
    const cases: Array<[string[], string]> = [
      [['contract', 'add', 'BAD ROOT', '--tick-size', '1', '--point-value', '1'], "The root must be 1 to 12 letters and digits, got 'BAD ROOT'"],
      [['contract', 'add', 'X', '--tick-size', '0', '--point-value', '1'], "--tick-size must be a number above 0 and at most 1000000, got '0'"],
      [['contract', 'add', 'X', '--tick-size', '1', '--point-value', 'ten'], "--point-value must be a number above 0 and at most 100000000, got 'ten'"],
      [['contract', 'add', 'X', '--tick-size', '1', '--point-value', '1', '--months', 'HA'], "--months must be month codes"],
      [['contract', 'add', 'X', '--tick-size', '1', '--point-value', '1', '--months', '13'], "--months must be month codes"],
      [['contract', 'add', 'X', '--tick-size', '1', '--point-value', '1', '--close', '25:00'], "--close must be a time HH:MM (America/Chicago), got '25:00'"],
      [['contract', 'add', 'X', '--tick-size', '0.5', '--point-value', '1', '--demo-price', '100.25'], '--demo-price 100.25 is not a multiple of the tick size 0.5'],
      [['contract', 'add', 'X', '--point-value', '1'], "required option '--tick-size <size>' not specified"],
    ];
    for (const [argv, message] of cases) {
      const result = await runCli(argv, env);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr, argv.join(' ')).toContain(message);
    }
    expect(JSON.parse((await ok(['contract', 'list', '--json'], env)).stdout).contracts).toHaveLength(19);
  });
});

describe('a user contract with its own daily close', () => {
  it('expires its DAY orders at that close, not at 16:00', () => {
    const { env } = home();
    let now = new Date('2026-03-18T14:00:00Z'); // 09:00 in Chicago (CDT)
    const engine = createEngine(join(env.TRADE_HOME!, 'trade.db'), { now: () => now });
    try {
      engine.addContract({ root: 'FDAX', name: 'DAX', exchange: 'EUREX', tickSize: 0.5, pointValue: 25, currency: 'USD', months: [3, 6, 9, 12], family: 'equity', tradingHours: 'User defined', dayEnd: '10:30' });
      const limit = { account: 'Sim101', action: 'BUY', quantity: 1, orderType: 'LIMIT', timeInForce: 'DAY', limitPrice: 100 } as const;
      const fdax = engine.placeOrder({ ...limit, instrument: 'FDAX 06-26' }).orderId;
      const es = engine.placeOrder({ ...limit, instrument: 'ES 06-26' }).orderId;
      now = new Date('2026-03-18T15:31:00Z'); // 10:31 in Chicago
      engine.expireDayOrders();
      expect(engine.getOrder(fdax)?.state).toBe('EXPIRED');
      expect(engine.getOrder(es)?.state).toBe('WORKING');
    } finally {
      engine.close();
    }
  });
});
