/**
 * Keeping the report current through a session: `trade watch executions` prints each fill once as
 * it comes and, on a remote backend, keeps each in the execution history; `trade report --follow`
 * prints the report again at each new execution. Run in-process with a stop the test controls,
 * the fills made by another engine on the same store (embedded) or by `trade serve`'s (ws, http).
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runReport } from '../../src/cli/commands/report.js';
import { runWatchExecutions } from '../../src/cli/commands/watch.js';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { openHistory } from '../../src/report/history.js';
import { tempHome } from '../helpers/cli.js';
import { order } from '../helpers/engine.js';
import { inProcess, until } from '../helpers/in-process.js';
import { storeFile } from '../helpers/serve-process.js';
import { startServer, TOKEN, type Harness } from '../server/harness.js';

const ES = 'ES 09-25';
let home: ReturnType<typeof tempHome>;
let engine: Engine | undefined;
let server: Harness | undefined;
afterEach(async () => {
  engine?.close();
  await server?.close();
  engine = server = undefined;
  home?.cleanup();
});

function embedded() {
  home = tempHome();
  engine = createEngine(storeFile(home.env));
  engine.setPrice(ES, 6000);
  return { env: home.env, engine };
}

describe('trade watch executions', () => {
  it('on embedded: the recent fills, then each new one, once, as the service shapes it', async () => {
    const { env, engine } = embedded();
    engine.placeOrder(order({ instrument: ES, quantity: 2 }));
    const w = inProcess(env);
    const running = runWatchExecutions(w.ctx, { account: 'Sim101', json: true }, w.deps);
    await until('the fill made before', () => w.lines().length === 1);
    engine.setPrice(ES, 6004);
    engine.placeOrder(order({ instrument: ES, action: 'SELL' }));
    await until('the new fill', () => w.lines().length === 2);
    w.stop();
    await running;
    const lines = w.lines().map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((e) => [e.type, e.account, e.instrument, e.marketPosition, e.quantity, e.price, e.position])).toEqual([
      ['NinjaTrader.Cbi.Execution', 'Sim101', ES, 'Long', 2, 6000, 2],
      ['NinjaTrader.Cbi.Execution', 'Sim101', ES, 'Short', 1, 6004, 1],
    ]);
    expect(w.stderr.text).toMatch(/^Watching executions of Sim101 on embedded \(.*\)\. Ctrl-C stops\.\nStopped \(the test\)\.\n$/);
  });

  it.each(['ws', 'http'] as const)('on %s: polls GetExecutions and keeps every fill in the execution history', async (backend) => {
    home = tempHome();
    server = await startServer();
    server.engine.setPrice(ES, 6000);
    server.engine.placeOrder(order({ instrument: ES }));
    const env = { ...home.env, TRADE_BACKEND: backend, TRADE_BASE_URL: server.url, TRADE_TOKEN: TOKEN };
    const w = inProcess(env);
    const running = runWatchExecutions(w.ctx, { account: 'Sim101' }, w.deps);
    await until('the fill made before', () => w.lines().length === 1);
    server.engine.setPrice(ES, 6001);
    server.engine.placeOrder(order({ instrument: ES, action: 'SELL' }));
    await until('the new fill', () => w.lines().length === 2, 10_000);
    w.stop();
    await running;
    expect(w.lines()[0]).toMatch(/^\d\d:\d\d:\d\d {2}Sim101 {2}ES 09-25 {2}BUY 1 @ 6000 {2}position 1 {2}order [0-9a-f]{32} {2}execution [0-9a-f]{32}$/);
    expect(w.lines()[1]).toMatch(/ {2}SELL 1 @ 6001 {2}position 0 {2}/);
    const history = openHistory(join(home.env.TRADE_HOME!, 'executions.db'));
    try {
      const kept = history.fills(new URL(server.url).host, ['Sim101'], Date.now() + 60_000);
      expect(kept.map((f) => [f.action, f.price])).toEqual([['BUY', 6000], ['SELL', 6001]]);
    } finally {
      history.close();
    }
  }, 20_000);
});

describe('trade report --follow', () => {
  it('prints the report, then again at each new execution (--json: one object a line)', async () => {
    const { env, engine } = embedded();
    engine.placeOrder(order({ instrument: ES, quantity: 2 }));
    const w = inProcess(env);
    const running = runReport(w.ctx, { account: 'Sim101', json: true, follow: true }, w.deps);
    await until('the first report', () => w.lines().length === 1);
    engine.setPrice(ES, 6010);
    engine.placeOrder(order({ instrument: ES, action: 'SELL' }));
    await until('the report again', () => w.lines().length === 2);
    w.stop();
    await running;
    const [first, second] = w.lines().map((l) => JSON.parse(l) as { trades: unknown[]; summary: { netProfit: number }; openPositions: Array<{ quantity: number }> });
    expect([first!.trades.length, first!.openPositions[0]!.quantity]).toEqual([0, 2]);
    // (6010 − 6000) × 1 × 50 = 500; one contract still open.
    expect([second!.trades.length, second!.summary.netProfit, second!.openPositions[0]!.quantity]).toEqual([1, 500, 1]);
  });
});
