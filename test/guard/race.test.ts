/**
 * max-position across processes (issue 31): eight `trade place --quantity 1` started at once with
 * guard.max-position 2 end with a position of exactly 2, on `embedded` and through a real `trade
 * serve` over `http` and `ws`: two are placed, six refused by max-position, every one journaled.
 * A few rounds here; `npm run bench:race` runs 50 on each backend (README "Guardrails"). And the
 * ledger's own limits, exact across processes by its write lock: eight identical orders at once
 * against duplicate-window place one.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderArgs, runBin, tempHomes } from '../helpers/cli.js';
import { killServes, type ServeProcess, startServe } from '../helpers/serve-process.js';

const TOKEN = 'race-test-token-9c2e4a61b7';
const PROCESSES = 8;
const ROUNDS = 2;

const { home, cleanup } = tempHomes();
afterAll(cleanup);
afterAll(() => killServes());

let serve: ServeProcess;
beforeAll(async () => {
  serve = await startServe(home(), TOKEN);
});

/** A dated ES contract per round: each round starts flat. */
const instrumentOf = (round: number) => `ES ${String(3 * (round % 4) + 3).padStart(2, '0')}-${30 + Math.floor(round / 4)}`;

describe.each(['embedded', 'http', 'ws'] as const)('eight processes at max-position 2 on %s', (backend) => {
  it(`end at a position of 2, ${ROUNDS} rounds`, async () => {
    const env = home({
      TRADE_GUARD_MAX_POSITION: '2',
      ...(backend === 'embedded' ? {} : { TRADE_BACKEND: backend, TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN }),
    });
    for (let round = 0; round < ROUNDS; round++) {
      const instrument = instrumentOf(round + (backend === 'embedded' ? 0 : backend === 'http' ? 10 : 20));
      const runs = await Promise.all(Array.from({ length: PROCESSES }, () => runBin(['place', ...orderArgs({ '--instrument': instrument })], env)));
      const codes = runs.map((r) => r.code).sort();
      expect(codes, runs.map((r) => r.stderr).join('')).toEqual([0, 0, 6, 6, 6, 6, 6, 6]);
      for (const refused of runs.filter((r) => r.code === 6))
        expect(refused.stderr).toMatch(/^Error: refused by guard max-position: position [12] (\+ working \d+ )?\+ this order 1 could reach 3, above the limit of 2 \(TRADE_GUARD_MAX_POSITION\); nothing was sent\n/);
      const position = await runBin(['position', instrument, '--account', 'Sim101', '--json'], env);
      expect(JSON.parse(position.stdout)).toMatchObject({ marketPosition: 'Long', quantity: 2 });
      const history = JSON.parse((await runBin(['history', '--json'], env)).stdout) as { entries: Array<{ instrument: string; outcome: string; rule: string | null }> };
      const lines = history.entries.filter((e) => e.instrument === instrument).map((e) => `${e.outcome} ${e.rule ?? ''}`.trim()).sort();
      expect(lines).toEqual(['accepted', 'accepted', ...Array(6).fill('refused max-position')]);
    }
  }, 120_000);
});

describe('the ledger\'s own limits across processes', () => {
  it('eight identical orders at once against duplicate-window 1m: one is placed, seven refused', async () => {
    const env = home({ TRADE_GUARD_DUPLICATE_WINDOW: '1m' });
    const runs = await Promise.all(Array.from({ length: PROCESSES }, () => runBin(['place', ...orderArgs({ '--instrument': 'ES 12-29' })], env)));
    expect(runs.map((r) => r.code).sort()).toEqual([0, 6, 6, 6, 6, 6, 6, 6]);
    for (const refused of runs.filter((r) => r.code === 6)) expect(refused.stderr).toMatch(/^Error: refused by guard duplicate-window: an identical order was sent [\d.]+s ago, within 1m/);
    const position = await runBin(['position', 'ES 12-29', '--account', 'Sim101', '--json'], env);
    expect(JSON.parse(position.stdout)).toMatchObject({ quantity: 1 });
  }, 60_000);
});
