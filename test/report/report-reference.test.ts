/**
 * The execution history and `trade report` on http and ws against the reference double (written
 * from service-reference.md alone), answering each way a client must accept (§1.7): the fills a
 * `trade watch executions` saw through a session are kept after the service forgets them
 * (GetExecutions looks back 900 s at most, §3.19) and reported; `trade place` still sends its one
 * request; the page's price charts come from GetBars.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { runWatchExecutions } from '../../src/cli/commands/watch.js';
import { openHistory } from '../../src/report/history.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';
import { inProcess, until } from '../helpers/in-process.js';
import { type DoubleOptions, type ReferenceDouble, SHAPES, startReferenceDouble } from '../helpers/reference-double.js';

const ES = 'ES 06-26';
let double: ReferenceDouble | undefined;
let home: ReturnType<typeof tempHome> | undefined;
afterEach(async () => {
  await double?.close();
  home?.cleanup();
  double = undefined;
  home = undefined;
});

async function start(backend: 'http' | 'ws', options: DoubleOptions) {
  double = await startReferenceDouble({ prices: { [ES]: 5000 }, ...options });
  home = tempHome();
  const env: Env = { ...home.env, TRADE_BACKEND: backend, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token, TRADE_ACCOUNT: 'Sim101' };
  return { double, home, env, cli: (argv: string[]) => runCli(argv, env) };
}

describe.each(['http', 'ws'] as const)('trade report on %s against the reference double', (backend) => {
  describe.each(SHAPES)('answering with %s', (_, options) => {
    it('keeps the fills a watch saw through the session after the service forgets them, and reports them', async () => {
      const { double, home, env, cli } = await start(backend, options);
      const from = new Date(Date.now() - 3_600_000).toISOString();
      // The session: `trade watch executions` running while the orders are sent.
      const w = inProcess(env);
      const watching = runWatchExecutions(w.ctx, {}, w.deps);
      await until('the watch to read once', () => double.requests.some((r) => r.api === 'GetExecutions'));
      expect((await cli(['place', ...orderArgs({ '--instrument': ES, '--quantity': '2' })])).code).toBe(0);
      double.setPrice(ES, 5010);
      expect((await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL' })])).code).toBe(0);
      double.setPrice(ES, 5004);
      expect((await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL' })])).code).toBe(0);
      await until('the watch to see the three fills', () => w.lines().length === 3, 10_000);
      w.stop();
      await watching;
      // Each placement sent its one request, and nothing else.
      expect(double.requests.filter((r) => r.api !== 'GetExecutions' && r.api !== 'ListAccounts').map((r) => r.api)).toEqual(['PlaceOrder', 'PlaceOrder', 'PlaceOrder']);

      double.elapse(20 * 60_000);
      const forgotten = await cli(['executions', '--lookback', '900', '--json']);
      expect(forgotten.code).toBe(0);
      expect(JSON.stringify(JSON.parse(forgotten.stdout))).not.toContain('"id"');

      const file = join(home.dir, 'report.html');
      const { code, stdout, stderr } = await cli(['report', '--from', from, '--json', '--html', file]);
      expect(code).toBe(0);
      expect(stderr).toMatch(/^account Sim101 \(from TRADE_ACCOUNT\); --all-accounts for every account\nWrote .*report\.html \(\d+ KiB\): opens offline, nothing is fetched\.\n$/);
      const report = JSON.parse(stdout) as Record<string, any>;
      // BUY 2 @ 5000; SELL 1 @ 5010: +10 × 50 = 500; SELL 1 @ 5004: +4 × 50 = 200. The double charges no commission.
      expect(report.trades.map((t: Record<string, unknown>) => [t.side, t.quantity, t.entryPrice, t.exitPrice, t.netProfit])).toEqual([
        ['Long', 1, 5000, 5010, 500],
        ['Long', 1, 5000, 5004, 200],
      ]);
      expect(report.summary).toMatchObject({ netProfit: 700, grossProfit: 700, grossLoss: 0, trades: 2, winners: 2, winRate: 100, profitFactor: null, commission: 0 });
      expect(report.openPositions).toEqual([]);
      expect(report.notes).toEqual([]);
      expect(report.source).toMatchObject({ backend, service: new URL(double.url).host, refreshed: true });
      // The price chart is GetBars' bars, asked for the window.
      const bars = double.requests.filter((r) => r.api === 'GetBars');
      expect(bars.map((r) => [r.args.instrument, r.args.periodType, r.args.from])).toEqual([[ES, 'minute', from]]);
      const page = readFileSync(file, 'utf8');
      const data = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(page)![1]!) as { charts: Array<{ kind: string; bars: unknown[] }> };
      expect(data.charts.map((c) => c.kind)).toEqual(['bars']);
      expect(data.charts[0]!.bars.length).toBeGreaterThan(0);
    });
  });

  it('trade watch executions polls GetExecutions, prints each fill once and keeps it in the history', async () => {
    const { double, home, env, cli } = await start(backend, { minimal: true });
    await cli(['place', ...orderArgs({ '--instrument': ES })]);
    const w = inProcess(env);
    const running = runWatchExecutions(w.ctx, { json: true }, w.deps);
    await until('the fill made before', () => w.lines().length === 1);
    double.setPrice(ES, 5003);
    await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL' })]);
    await until('the new fill', () => w.lines().length === 2, 10_000);
    w.stop();
    await running;
    // --json: each Execution object exactly as the double sent it (documented fields only).
    const sent = w.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(sent.map((e) => [e.marketPosition, e.price, e.position])).toEqual([['Long', 5000, 1], ['Short', 5003, 0]]);
    expect(Object.keys(sent[0]!)).not.toContain('commission');
    const polls = double.requests.filter((r) => r.api === 'GetExecutions' && r.args.lookbackTime !== (backend === 'http' ? '900' : 900));
    expect(polls.length).toBeGreaterThan(0);
    const history = openHistory(join(home.env.TRADE_HOME!, 'executions.db'));
    try {
      expect(history.fills(new URL(double.url).host, ['Sim101'], Date.now() + 60_000).map((f) => f.id)).toEqual(sent.map((e) => e.id));
    } finally {
      history.close();
    }
  }, 20_000);

  it('an account the service does not have is its refusal (exit 1), not a report of nothing', async () => {
    const { cli } = await start(backend, {});
    const { code, stdout, stderr } = await cli(['report', '--account', 'Sim999']);
    expect({ code, stdout, stderr }).toEqual({ code: 1, stdout: '', stderr: 'Error: Account Sim999 not found\n' });
  });

  it('a platform that is not connected: the report says the history could not be brought up to date and reports what it has', async () => {
    const { double, cli } = await start(backend, {});
    const from = new Date(Date.now() - 3_600_000).toISOString();
    await cli(['place', ...orderArgs({ '--instrument': ES })]);
    double.setPrice(ES, 5002);
    await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL' })]);
    // A read while the platform is there puts both fills in the history.
    expect((await cli(['executions', '--lookback', '900'])).code).toBe(0);
    double.configure({ disconnected: true });
    const { code, stdout } = await cli(['report', '--from', from, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as Record<string, any>;
    expect(report.summary.netProfit).toBe(100);
    expect(report.source.refreshed).toBe(false);
    expect(report.notes).toEqual([
      `The history could not be brought up to date for Sim101 (${backend === 'http' ? 'The trading platform is not connected (408: NinjaTrader is not connected).' : 'NinjaTrader is not connected'}): the report has what it had seen before.`,
    ]);
  });
});
