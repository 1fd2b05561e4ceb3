/**
 * The guard's remote reads (GetPosition, GetOrders, GetAccount) and `trade reconcile`'s
 * GetOrderStatus, against the reference double (written from service-reference.md alone), on
 * http and ws, in each shape the reference says a client must accept. A guard that read a short
 * as a long would let a sell past max-position and refuse a buy that only reduces.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { BIN, orderArgs, runBin, runCli, tempHome } from '../helpers/cli.js';
import { type DoubleOptions, type ReferenceDouble, SHAPES, startReferenceDouble } from '../helpers/reference-double.js';
import { blackHole } from '../helpers/black-hole.js';
import { spawnRecorded } from '../helpers/spawn.js';

const ES = 'ES 06-26';
let double: ReferenceDouble | undefined;
let home: ReturnType<typeof tempHome> | undefined;
afterEach(async () => {
  await double?.close();
  home?.cleanup();
  double = undefined;
  home = undefined;
});

async function start(backend: 'http' | 'ws', options: DoubleOptions = {}, extra: Env = {}) {
  double = await startReferenceDouble({ prices: { [ES]: 5000 }, ...options });
  home = tempHome();
  const env: Env = { ...home.env, TRADE_BACKEND: backend, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token, ...extra };
  return { double, env, cli: (argv: string[]) => runCli(argv, env) };
}


describe.each(['http', 'ws'] as const)('the guard on %s against the reference double', (backend) => {
  describe.each(SHAPES)('answering with %s', (_, options) => {
    it('reads a short as short: max-position counts it, a buy that covers it reduces, a halt lets it through', async () => {
      const { cli, double } = await start(backend, options, { TRADE_GUARD_MAX_POSITION: '3' });
      expect((await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL', '--quantity': '2' })])).code).toBe(0);
      const over = await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL', '--quantity': '2' })]);
      expect(over.code).toBe(6);
      expect(over.stderr).toContain('refused by guard max-position: position -2 + this order -2 could reach 4, above the limit of 3');
      const placedBefore = double.requests.filter((r) => r.api === 'PlaceOrder').length;
      expect((await cli(['halt'])).code).toBe(0);
      const cover = await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'BUY', '--quantity': '2' })]);
      expect({ code: cover.code, stderr: cover.stderr }).toMatchObject({ code: 0 });
      expect(double.requests.filter((r) => r.api === 'PlaceOrder')).toHaveLength(placedBefore + 1);
      const opening = await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'BUY', '--quantity': '1' })]);
      expect(opening.code).toBe(6);
      expect(opening.stderr).toContain('refused by guard halt');
      // Every order the double received carried the guard's client order id (§1.6).
      for (const r of double.requests.filter((q) => q.api === 'PlaceOrder')) expect(r.args.orderId).toMatch(/^[0-9a-f]{32}$/);
    });
  });

  it("daily-loss reads GetAccount's realized and unrealized P&L", async () => {
    const { cli, double } = await start(backend, {}, { TRADE_GUARD_DAILY_LOSS: '1000' });
    expect((await cli(['place', ...orderArgs({ '--instrument': ES, '--quantity': '2' })])).code).toBe(0);
    double.setPrice(ES, 4990); // 2 × 10 points × 50 = -1,000
    const refused = await cli(['place', ...orderArgs({ '--instrument': ES })]);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain("refused by guard daily-loss: the day's P&L of Sim101 is -1000, at or below -1000");
    expect((await cli(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL', '--quantity': '2' })])).code).toBe(0);
  });
});


describe('trade reconcile against the reference double', () => {
  it('an order whose reply was lost is found by its client id (GetOrderStatus: {"status": ...})', async () => {
    const { env, double } = await start('http');
    const hole = await blackHole(double.url);
    try {
      const child = spawnRecorded(process.execPath, [BIN, 'place', ...orderArgs({ '--instrument': ES })], {
        env: { PATH: process.env.PATH, ...env, TRADE_BASE_URL: `${hole.url}/v1/api`, TRADE_TIMEOUT: '60' },
        stdio: 'ignore',
      });
      for (let i = 0; i < 100 && !double.requests.some((r) => r.api === 'PlaceOrder'); i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 100));
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
      const sent = double.requests.find((r) => r.api === 'PlaceOrder')!;
      const reconciled = await runBin(['reconcile'], env);
      expect(reconciled.code, reconciled.stderr).toBe(0);
      expect(reconciled.stdout).toBe(`#1 PlaceOrder: placed (order ${String(sent.args.orderId)}, Filled)\n`);
    } finally {
      hole.server.close();
    }
  }, 30_000);

  it('an order the service never executed: its generic refusal does not say absent, so it stays unknown, with what the service said', async () => {
    const { env, double } = await start('http', { stall: true }, { TRADE_TIMEOUT: '0.5' });
    const placed = await runBin(['place', ...orderArgs({ '--instrument': ES })], env);
    expect(placed.code).toBe(4);
    double.configure({ stall: false });
    const reconciled = await runBin(['reconcile'], env);
    expect(reconciled.code, reconciled.stderr).toBe(0);
    expect(reconciled.stdout).toMatch(/^#1 PlaceOrder: still unknown: the service answered "Invalid request" for its client id; check with trade orders\n$/);
    expect((await runBin(['history', '--unknown', '--json'], env)).stdout).toContain('"outcome":"unknown"');
  });
});
