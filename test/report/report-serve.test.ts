/**
 * The same trades through `trade serve` on http and ws give the same report as the engine's own
 * store, trades older than the service's 900 s included: the fixture (fixture.ts) is placed with
 * `trade place` through a real server whose clock is the fixture's, and after each placement
 * `trade executions` reads the fill (as a trader's `trade watch executions` would), so the
 * client's execution history keeps it; by the time of the report GetExecutions has forgotten
 * every one of them, as the service does.
 */
import { dirname } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';
import { startServer, TOKEN, type Harness } from '../server/harness.js';
import { COMMISSION, expectHandComputed, LAST_PRICE, NOW, STEPS } from './fixture.js';

const BOTH_DAYS = ['--account', 'Sim101', '--from', '2025-09-02', '--to', '2025-09-03', '--json'];

describe.each(['http', 'ws'] as const)('trade report on %s, against trade serve', (backend) => {
  let now = new Date(STEPS[0]!.at);
  const clock = { engine: { now: () => now } };
  let server: Harness;
  let home: ReturnType<typeof tempHome>;
  let env: Env;

  beforeAll(async () => {
    server = await startServer({}, { now: () => now });
    server.engine.setContractSettings('ES', { commission: COMMISSION.ES });
    server.engine.setContractSettings('NQ', { commission: COMMISSION.NQ });
    home = tempHome();
    env = { ...home.env, TRADE_BACKEND: backend, TRADE_TOKEN: TOKEN, ...(backend === 'http' ? { TRADE_BASE_URL: server.url } : { TRADE_WS_URL: server.wsUrl }) };
    for (const step of STEPS) {
      now = new Date(step.at);
      server.engine.setPrice(step.instrument, step.price);
      const placed = await runCli(['place', ...orderArgs({ '--instrument': step.instrument, '--action': step.action, '--quantity': String(step.quantity) })], env, clock);
      expect({ code: placed.code, stderr: placed.stderr }).toEqual({ code: 0, stderr: '' });
      expect((await runCli(['executions', '--account', 'Sim101', '--lookback', '900', '--json'], env, clock)).code).toBe(0);
    }
    now = new Date(LAST_PRICE.at);
    server.engine.setPrice(LAST_PRICE.instrument, LAST_PRICE.price);
    now = new Date(NOW);
  });
  afterAll(async () => {
    await server?.close();
    home?.cleanup();
  });

  it('the service no longer has them: GetExecutions of the last 900 s is empty', async () => {
    const { code, stdout } = await runCli(['executions', '--account', 'Sim101', '--lookback', '900', '--json'], env, clock);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ executions: [], count: 0 });
  });

  it('the report has them all from the execution history: every hand-computed figure', async () => {
    const { code, stdout, stderr } = await runCli(['report', ...BOTH_DAYS], env, clock);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(stdout) as Record<string, any>;
    expectHandComputed(report);
    // The open position is marked at the quote (GetQuote): 6060.
    expect(report.source).toMatchObject({ backend, service: new URL(server.url).host, history: `${home.env.TRADE_HOME}/executions.db`, refreshed: true });
    // Each read after a placement covered its last 900 s, the report's own read the 900 s before it.
    expect(report.source.seen).toContainEqual({ account: 'Sim101', from: '2025-09-02T13:45:00.000Z', to: '2025-09-02T14:00:00.000Z' });
    expect(report.source.seen).toContainEqual({ account: 'Sim101', from: '2025-09-03T13:45:00.000Z', to: '2025-09-03T14:10:00.000Z' });
    expect(report.source.seen.at(-1)).toEqual({ account: 'Sim101', from: '2025-09-03T16:15:00.000Z', to: '2025-09-03T16:30:00.000Z' });
  });

  it('is the report the engine makes of its own store, but for where it came from', async () => {
    const remote = JSON.parse((await runCli(['report', ...BOTH_DAYS], env, clock)).stdout) as Record<string, unknown>;
    const local = await runCli(['--backend', 'embedded', 'report', ...BOTH_DAYS], { ...home.env, TRADE_HOME: dirname(server.engine.file) }, clock);
    expect(local.code).toBe(0);
    const embedded = JSON.parse(local.stdout) as Record<string, unknown>;
    expect(embedded.source).toEqual({ backend: 'embedded', store: server.engine.file });
    expect({ ...remote, source: null }).toEqual({ ...embedded, source: null });
  });

  it('says at a terminal which stretches of time the history has seen whole', async () => {
    const { stdout } = await runCli(['report', '--account', 'Sim101', '--days', '1'], env, clock);
    expect(stdout).toMatch(/^Report of Sim101, 2025-09-02 17:00 to 2025-09-03 11:30 Chicago time \((http|ws) 127\.0\.0\.1:\d+, execution history .*executions\.db\)\n/);
    expect(stdout).toContain('\nNotes\n- Seen whole: Sim101 from 2025-09-02 17:45 to 2025-09-02 18:00 (every execution of that stretch is in the history).\n');
    expect(stdout).toContain('- Seen whole: Sim101 from 2025-09-03 11:15 to 2025-09-03 11:30 (every execution of that stretch is in the history).\n');
  });
});
