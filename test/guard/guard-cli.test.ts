/**
 * The guard through the built CLI: the same refusal on embedded, http and ws (against a real
 * `trade serve`), a pace shared by two processes, the halt switch, the daily loss driven by
 * prices, and a placing process killed after sending, reconciled afterwards.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { BIN, orderArgs, runBin, tempHome } from '../helpers/cli.js';
import { killServes, type ServeProcess, startServe } from '../helpers/serve-process.js';
import { blackHole } from '../helpers/black-hole.js';
import { spawnRecorded, spawnSyncRecorded } from '../helpers/spawn.js';

const TOKEN = 'guard-test-token-5f1c9a7e';
const homes: Array<() => void> = [];
function home(extra: Env = {}): Env {
  const h = tempHome();
  homes.push(h.cleanup);
  return { ...h.env, ...extra };
}
afterAll(() => homes.forEach((cleanup) => cleanup()));
afterAll(() => killServes());

let serve: ServeProcess;
let serverEnv: Env;
beforeAll(async () => {
  serverEnv = home();
  serve = await startServe(serverEnv, TOKEN);
});

function client(backend: 'embedded' | 'http' | 'ws', extra: Env = {}): Env {
  if (backend === 'embedded') return home(extra);
  return home({ TRADE_BACKEND: backend, TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN, ...extra });
}

async function orderCount(env: Env): Promise<number> {
  const listed = await runBin(['orders', '--account', 'Sim101', '--json'], env);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { orders: unknown[] }).orders.length;
}

describe.each(['embedded', 'http', 'ws'] as const)('on %s', (backend) => {
  it('an order over max-order-qty is refused with exit 6, one line naming the rule, and nothing is sent', async () => {
    const env = client(backend, { TRADE_GUARD_MAX_ORDER_QTY: '2' });
    const before = await orderCount(env);
    const refused = await runBin(['place', ...orderArgs({ '--quantity': '3' })], env);
    expect(refused.code).toBe(6);
    expect(refused.stdout).toBe('');
    expect(refused.stderr.split('\n')[0]).toBe(
      'Error: refused by guard max-order-qty: quantity 3 is above the limit of 2 (TRADE_GUARD_MAX_ORDER_QTY); nothing was sent',
    );
    const json = await runBin(['place', ...orderArgs({ '--quantity': '3' }), '--json'], env);
    expect(json.code).toBe(6);
    expect(JSON.parse(json.stdout)).toMatchObject({ success: false, error: 'guard_max_order_qty', rule: 'max-order-qty', limit: 2, value: 3 });
    expect(await orderCount(env)).toBe(before);
    const placed = await runBin(['place', ...orderArgs({ '--quantity': '2' })], env);
    expect(placed.code, placed.stderr).toBe(0);
    expect(await orderCount(env)).toBe(before + 1);
    const history = JSON.parse((await runBin(['history', '--json'], env)).stdout) as { entries: Array<{ outcome: string; rule: string | null; backend: string }> };
    expect(history.entries.map((e) => [e.outcome, e.rule, e.backend])).toEqual([
      ['refused', 'max-order-qty', backend],
      ['refused', 'max-order-qty', backend],
      ['accepted', null, backend],
    ]);
  });
});

describe('max-orders across processes', () => {
  it('two processes placing at once against 5/min place exactly five between them', async () => {
    const env = client('embedded', { TRADE_GUARD_MAX_ORDERS: '5/min' });
    await runBin(['accounts', 'add', 'Sim101'], env);
    const placeMany = (n: number) => Promise.all(Array.from({ length: n }, () => runBin(['place', ...orderArgs()], env)));
    const [a, b] = await Promise.all([placeMany(4), placeMany(4)]);
    const all = [...a, ...b];
    expect(all.filter((r) => r.code === 0)).toHaveLength(5);
    const refused = all.filter((r) => r.code === 6);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r.stderr).toMatch(/refused by guard max-orders: this would be order 6 of Sim101 within min, above 5\/min/);
    expect(await orderCount(env)).toBe(5);
  }, 60_000);
});

describe('halt and resume', () => {
  it('a halted profile refuses new risk, lets a reducing order and a flatten through, and resume lifts it', async () => {
    const env = client('embedded');
    expect((await runBin(['place', ...orderArgs({ '--quantity': '2' })], env)).code).toBe(0);
    const halt = await runBin(['halt', '--reason', 'runaway script'], env);
    expect(halt.stdout).toContain('profile default is HALTED');
    const refused = await runBin(['place', ...orderArgs()], env);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('refused by guard halt: profile default is HALTED since');
    expect(refused.stderr).toContain('(runaway script)');
    const reduce = await runBin(['place', ...orderArgs({ '--action': 'SELL' })], env);
    expect(reduce.code, reduce.stderr).toBe(0);
    const show = await runBin(['guard', 'show', '--json'], env);
    expect(JSON.parse(show.stdout).halts).toEqual([expect.objectContaining({ scope: 'profile:default', mode: 'halted', reason: 'runaway script' })]);
    const flatten = await runBin(['flatten', '--account', 'Sim101', '--yes'], env);
    expect(flatten.code, flatten.stderr).toBe(0);
    expect((await runBin(['resume'], env)).stdout).toBe('profile default resumed.\n');
    expect((await runBin(['place', ...orderArgs()], env)).code).toBe(0);
  }, 30_000);

  it('a halt of one account leaves the others trading; a bad rule is refused before anything is sent', async () => {
    const env = client('embedded');
    await runBin(['accounts', 'add', 'Sim102'], env);
    await runBin(['halt', '--account', 'Sim101'], env);
    expect((await runBin(['place', ...orderArgs()], env)).code).toBe(6);
    expect((await runBin(['place', ...orderArgs({ '--account': 'Sim102' })], env)).code).toBe(0);
    const bad = await runBin(['place', ...orderArgs({ '--account': 'Sim102' })], { ...env, TRADE_GUARD_WINDOW: 'weekdays 9-5' });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('TRADE_GUARD_WINDOW: guard.window each window must be DAYS HH:MM-HH:MM ZONE');
  });

  it('guard test answers without sending', async () => {
    const env = client('embedded', { TRADE_GUARD_MAX_ORDER_QTY: '4', TRADE_GUARD_INSTRUMENTS: 'NQ' });
    const test = await runBin(['guard', 'test', ...orderArgs(), '--json'], env);
    expect(JSON.parse(test.stdout)).toMatchObject({ pass: false, rule: 'instruments', sent: false });
    const human = await runBin(['guard', 'test', ...orderArgs({ '--instrument': 'NQ 12-25', '--quantity': '3' })], env);
    expect(human.stdout).toBe('BUY 3 NQ 12-25 MARKET in Sim101: would pass the guard. Nothing was sent.\n');
    expect(await orderCount(env)).toBe(0);
  });
});

describe('daily-loss', () => {
  it("against trade serve: the account's P&L driven below the limit by prices stops new risk, not the exit", async () => {
    const env = client('http', { TRADE_GUARD_DAILY_LOSS: '500' });
    const price = (p: string) => runBin(['price', 'set', 'NQ 12-25', p], serverEnv);
    expect((await price('21000')).code).toBe(0);
    expect((await runBin(['place', ...orderArgs({ '--instrument': 'NQ 12-25' })], env)).code).toBe(0);
    expect((await price('20980')).code).toBe(0); // 20 points of NQ: -400
    expect((await runBin(['place', ...orderArgs({ '--instrument': 'NQ 12-25' })], env)).code).toBe(0); // long 2
    expect((await price('20860')).code).toBe(0); // (20860 - 21000) × $20 + (20860 - 20980) × $20 = -2,800 - 2,400
    const refused = await runBin(['place', ...orderArgs({ '--instrument': 'NQ 12-25' })], env);
    expect(refused.code).toBe(6);
    expect(refused.stderr.split('\n')[0]).toBe(
      "Error: refused by guard daily-loss: the day's P&L of Sim101 is -5200, at or below -500; new risk waits for the next trading day or trade resume (TRADE_GUARD_DAILY_LOSS); nothing was sent",
    );
    // Latched: a price back up does not lift it by itself.
    expect((await price('21100')).code).toBe(0);
    expect((await runBin(['place', ...orderArgs({ '--instrument': 'NQ 12-25' })], env)).stderr).toContain('reached the daily loss of -500 earlier today');
    // Getting out is never blocked.
    const close = await runBin(['place', ...orderArgs({ '--instrument': 'NQ 12-25', '--action': 'SELL', '--quantity': '2' })], env);
    expect(close.code, close.stderr).toBe(0);
    expect((await runBin(['resume', '--account', 'Sim101'], env)).stdout).toContain('daily-loss halt is lifted');
    expect((await runBin(['place', ...orderArgs({ '--instrument': 'NQ 12-25' })], env)).code).toBe(0);
  }, 60_000);
});


describe('a placing process killed after sending', () => {
  it('leaves the ledger readable and its line unknown; trade reconcile finds the order by its client id', async () => {
    const hole = await blackHole(serve.url);
    try {
      const env = client('http', { TRADE_BASE_URL: hole.url, TRADE_TIMEOUT: '60' });
      const child = spawnRecorded(process.execPath, [BIN, 'place', ...orderArgs({ '--instrument': 'CL 01-26' })], { env: { PATH: process.env.PATH, ...env }, stdio: 'ignore' });
      // Wait until the order is in the server's store, then kill the client that waits for the lost reply.
      const direct = { ...env, TRADE_BASE_URL: serve.url };
      for (let i = 0; i < 100; i++) {
        const listed = JSON.parse((await runBin(['orders', '--account', 'Sim101', '--json'], direct)).stdout) as { orders: Array<{ instrument: string }> };
        if (listed.orders.some((o) => o.instrument === 'CL 01-26')) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      child.kill('SIGKILL');
      await new Promise((r) => child.once('close', r));
      const unknown = await runBin(['history', '--unknown', '--json'], direct);
      expect(unknown.code, unknown.stderr).toBe(0);
      const lines = (JSON.parse(unknown.stdout) as { entries: Array<{ outcome: string; clientOrderId: string; instrument: string }> }).entries;
      expect(lines).toEqual([expect.objectContaining({ outcome: 'unknown', instrument: 'CL 01-26', clientOrderId: expect.stringMatching(/^[0-9a-f]{32}$/) })]);
      const reconciled = await runBin(['reconcile'], direct);
      expect(reconciled.code, reconciled.stderr).toBe(0);
      expect(reconciled.stdout).toBe(`#1 PlaceOrder: placed (order ${lines[0]!.clientOrderId}, Filled)\n`);
      expect((await runBin(['history', '--unknown'], direct)).stdout).toBe('No request has an unknown outcome.\n');
      const all = JSON.parse((await runBin(['history', '--json'], direct)).stdout) as { entries: Array<{ outcome: string; orderId: string }> };
      expect(all.entries).toEqual([expect.objectContaining({ outcome: 'accepted', orderId: lines[0]!.clientOrderId })]);
    } finally {
      hole.server.close();
    }
  }, 60_000);
});

describe('the ledger fails closed', () => {
  it('a damaged ledger refuses orders (exit 6, with how to reset it) but never a flatten', async () => {
    const env = client('embedded');
    expect((await runBin(['place', ...orderArgs()], env)).code).toBe(0);
    const { writeFileSync, rmSync } = await import('node:fs');
    const ledger = join(env.TRADE_HOME!, 'guard.db');
    rmSync(`${ledger}-wal`, { force: true });
    rmSync(`${ledger}-shm`, { force: true });
    writeFileSync(ledger, 'not a database, not at all, nothing like one, no SQLite header here');
    const refused = await runBin(['place', ...orderArgs()], env);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain(`The guard's ledger ${ledger} cannot be used`);
    expect(refused.stderr).toContain('mv ');
    const flatten = await runBin(['flatten', '--account', 'Sim101', '--yes'], env);
    expect(flatten.code, flatten.stderr).toBe(0);
    expect(flatten.stderr).toContain('sent without being journaled');
    expect((await runBin(['guard', 'reset'], env)).stdout).toContain("The guard's ledger was moved to");
    expect((await runBin(['place', ...orderArgs()], env)).code).toBe(0);
  });
});

describe("the guard page's worked example", () => {
  it('runs as written, and guard test says what its comment says', async () => {
    const { readFileSync } = await import('node:fs');
    const readme = readFileSync(new URL('../../docs/guard.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## A worked example: an alert relay'));
    const block = /```sh\n([\s\S]*?)```/.exec(section)![1]!;
    const commands = block.split('\n').filter((l) => l.startsWith('trade '));
    const said = block.split('\n').find((l) => l.startsWith('# ... '))!.slice('# ... '.length);
    expect(commands.length).toBeGreaterThanOrEqual(8);
    const env = client('embedded');
    for (const command of commands) {
      // bash reads the quotes; `trade` is the built bin.
      const ran = spawnSyncRecorded('bash', ['--norc', '-c', `trade() { "${process.execPath}" "${BIN}" "$@"; }; ${command}`], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
      expect({ command, code: ran.status, stderr: ran.stderr }).toEqual({ command, code: 0, stderr: expect.any(String) });
      if (command.startsWith('trade guard test')) expect(ran.stdout).toContain(said);
      if (command.startsWith('trade guard show')) expect(ran.stdout).toContain('max-orders        10/min,100/day  (profile relay)');
    }
  }, 60_000);
});

describe('batch, flags and the ledger', () => {
  it('in a batch a refused line is reported like any failed line and the rest go on', async () => {
    const env = client('embedded', { TRADE_GUARD_MAX_ORDER_QTY: '2' });
    const line = (id: string, quantity: number) =>
      JSON.stringify({ id, api: 'PlaceOrder', args: { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity, orderType: 'MARKET', timeInForce: 'DAY' } });
    const ran = await runBin(['batch', '-'], env, [line('a', 1), line('b', 5), line('c', 2)].join('\n'));
    const results = ran.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; status: number; data: Record<string, unknown> });
    expect(results.map((r) => [r.id, r.status])).toEqual([['a', 200], ['b', 403], ['c', 200]]);
    expect(results[1]!.data).toMatchObject({ success: false, error: 'guard_max_order_qty', rule: 'max-order-qty', limit: 2, value: 5 });
    expect(ran.code).toBe(6);
    expect(ran.stderr).toContain('Batch of 3 lines: 2 succeeded, 1 rejected (1 of them by the guard: trade history lists them).');
    expect(await orderCount(env)).toBe(2);
    const history = JSON.parse((await runBin(['history', '--json'], env)).stdout) as { entries: Array<{ source: string; outcome: string }> };
    expect(history.entries.map((e) => `${e.source} ${e.outcome}`).sort()).toEqual(['batch accepted', 'batch accepted', 'batch refused']);
  });

  it('--guard RULE=VALUE sets a rule for one run, over the environment; a bad one is a usage error', async () => {
    const env = client('embedded', { TRADE_GUARD_MAX_ORDER_QTY: '10' });
    const refused = await runBin(['place', ...orderArgs({ '--quantity': '3' }), '--guard', 'max-order-qty=2'], env);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('quantity 3 is above the limit of 2 (--guard)');
    const unknown = await runBin(['place', ...orderArgs(), '--guard', 'max-qty=2'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('it takes RULE=VALUE with a rule among max-order-qty');
    const bad = await runBin(['place', ...orderArgs(), '--guard', 'max-order-qty=lots'], env);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain("--guard max-order-qty=: guard.max-order-qty must be a whole number of contracts of at least 1, got 'lots'");
    expect(await orderCount(env)).toBe(0);
  });

  it('confirm-live: an account that is not a simulation account needs --confirm-live in a script', async () => {
    const env = client('embedded', { TRADE_GUARD_CONFIRM_LIVE: 'on' });
    expect((await runBin(['accounts', 'add', 'U1234'], env)).code).toBe(0);
    const refused = await runBin(['place', ...orderArgs({ '--account': 'U1234' })], env);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toContain('refused by guard confirm-live: account U1234 is not a simulation account and was not confirmed');
    expect((await runBin(['place', ...orderArgs({ '--account': 'U1234' }), '--confirm-live'], env)).code).toBe(0);
    expect((await runBin(['place', ...orderArgs()], env)).code).toBe(0); // Sim101 needs nothing
  });

  it('the ledger holds no token, in any form', async () => {
    const env = client('http');
    expect((await runBin(['place', ...orderArgs()], env)).code).toBe(0);
    const { readFileSync, readdirSync } = await import('node:fs');
    const files = readdirSync(env.TRADE_HOME!).filter((f) => f.startsWith('guard.db'));
    expect(files.length).toBeGreaterThan(0);
    for (const f of files) {
      const bytes = readFileSync(join(env.TRADE_HOME!, f));
      expect(bytes.includes(Buffer.from(TOKEN))).toBe(false);
      expect(bytes.includes(Buffer.from(Buffer.from(TOKEN).toString('base64')))).toBe(false);
    }
  });
});
