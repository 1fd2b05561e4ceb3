/**
 * One conformance suite for the guard's ledger interface (src/guard/ledger.ts), run against both
 * implementations: SQLite (a file in a temporary directory) and PostgreSQL (a real server: one
 * database of this file on the run's throwaway cluster, test/helpers/postgres.ts). Two ledgers
 * opened on the same store stand for two processes or machines; a child process (the built
 * library) stands for one that goes away.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnRecorded } from '../helpers/spawn.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initLedger, type Ledger, type LedgerSpec, type NewJournalLine, openLedger } from '../../src/guard/ledger.js';
import { GuardError } from '../../src/common/errors.js';
import { holderProcess, LIB } from '../helpers/ledger-hold.js';
import { stopOwnCluster, type TestDatabase, testDatabase } from '../helpers/postgres.js';


const dir = mkdtempSync(join(tmpdir(), 'trade-ledger-conformance-'));
let db: TestDatabase;
/**
 * The implementations run: both in the suite. `npm run mutate` (vitest.mutate.config.ts) sets
 * TRADE_TEST_LEDGERS=sqlite: it mutates the SQLite ledger only, and a PostgreSQL cluster started and
 * stopped for every mutant would make its run hours long.
 */
const LEDGERS = (process.env.TRADE_TEST_LEDGERS ?? 'sqlite,postgres').split(',');
beforeAll(async () => {
  if (LEDGERS.includes('postgres')) db = await testDatabase('conformance');
});
afterAll(async () => {
  await db?.drop();
  await stopOwnCluster();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh ledger store per test: a new file, or a new schema-initialized database. */
type Maker = { name: string; fresh(): Promise<LedgerSpec> };
let n = 0;
const ALL_MAKERS: Maker[] = [
  { name: 'sqlite', fresh: async () => ({ kind: 'sqlite', file: join(dir, `ledger-${++n}`, 'guard.db') }) },
  {
    name: 'postgres',
    // This file's database, its ledger emptied for each test.
    async fresh() {
      const spec: LedgerSpec = { kind: 'postgres', url: db.url, machine: 'desk-a', dataDir: join(dir, `pg-${++n}`), timeoutMs: 5000 };
      await initLedger(spec);
      await db.query('TRUNCATE trade_guard.halts, trade_guard.sends, trade_guard.loss_days, trade_guard.journal');
      return spec;
    },
  },
];
const MAKERS = ALL_MAKERS.filter((maker) => LEDGERS.includes(maker.name));
if (MAKERS.length !== LEDGERS.length) throw new Error(`TRADE_TEST_LEDGERS names a ledger that does not exist: ${LEDGERS.join(',')}`);
const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const line = (over: Partial<NewJournalLine> = {}): NewJournalLine => ({
  at: '2025-09-02T14:00:00.000Z',
  profile: 'default',
  backend: 'embedded',
  source: 'cli',
  operation: 'PlaceOrder',
  account: 'Sim101',
  instrument: 'ES 09-25',
  request: '{"action":"BUY"}',
  client_order_id: null,
  outcome: 'sent',
  pid: process.pid,
  machine: 'desk-a',
  ...over,
});

/** A process that opens the ledger, journals a `sent` line, says its id, and waits (or exits at once). */
async function otherProcess(spec: LedgerSpec, stay: boolean): Promise<{ id: number; child: ChildProcess }> {
  const script = `
    const { openLedger } = await import(${JSON.stringify(LIB)});
    const ledger = await openLedger(${JSON.stringify(spec)});
    const id = await ledger.exclusive((tx) => tx.journal({ ...${JSON.stringify(line())}, pid: process.pid }));
    process.stdout.write(id + '\\n');
    if (${stay}) setInterval(() => undefined, 1000); else { await ledger.close(); }
  `;
  const child = spawnRecorded(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => child.kill('SIGKILL'));
  const said = await new Promise<string>((resolve) => child.stdout!.setEncoding('utf8').once('data', resolve));
  if (!stay) await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('exit', resolve)));
  return { id: Number(said.trim()), child };
}


describe.each(MAKERS)('the $name ledger', (maker) => {
  /** Two ledgers on one fresh store: two processes, or two machines. */
  async function two(): Promise<[Ledger, Ledger, LedgerSpec]> {
    const spec = await maker.fresh();
    const a = await openLedger(spec);
    const b = await openLedger(spec);
    cleanups.push(() => a.close(), () => b.close());
    return [a, b, spec];
  }

  it('halts: an account\'s own state first, then its profile\'s; what one sets the other reads', async () => {
    const [a, b] = await two();
    expect(await b.halts('Sim101', 'default')).toBeUndefined();
    await a.setHalt('profile:default', 'reducing', 'end of day', '2025-09-02T20:00:00.000Z');
    expect(await b.halts('Sim101', 'default')).toEqual({ scope: 'profile:default', mode: 'reducing', reason: 'end of day', at: '2025-09-02T20:00:00.000Z' });
    await a.setHalt('account:Sim101', 'halted', undefined, '2025-09-02T20:01:00.000Z');
    expect(await b.halts('Sim101', 'default')).toEqual({ scope: 'account:Sim101', mode: 'halted', reason: undefined, at: '2025-09-02T20:01:00.000Z' });
    expect(await b.halts('Sim102', 'default')).toMatchObject({ scope: 'profile:default' });
    expect(await b.halts(undefined, 'other')).toBeUndefined();
    // Set again: replaced, not doubled.
    await b.setHalt('account:Sim101', 'reducing', 'again', '2025-09-02T20:02:00.000Z');
    expect((await a.allHalts()).map((h) => `${h.scope} ${h.mode}`)).toEqual(['account:Sim101 reducing', 'profile:default reducing']);
    expect(await b.clearHalt('account:Sim101')).toBe(1);
    expect(await b.clearHalt('account:Sim101')).toBe(0);
    expect((await a.allHalts()).map((h) => h.scope)).toEqual(['profile:default']);
  });

  it('pace counts: the orders of every ledger in each window, per account', async () => {
    const [a, b] = await two();
    const now = 1_756_821_600_000;
    await a.recordSend('Sim101', now - 90_000, 'f1');
    await b.recordSend('Sim101', now - 30_000, 'f2');
    await a.recordSend('Sim101', now - 500, 'f3');
    await b.recordSend('Sim102', now - 500, 'f4');
    expect(await a.paceCounts('Sim101', [1000, 60_000, 3_600_000], now)).toEqual([1, 2, 3]);
    expect(await b.paceCounts('Sim102', [1000], now)).toEqual([1]);
    expect(await b.paceCounts('Sim103', [1000, 60_000], now)).toEqual([0, 0]);
    expect(await a.sentByAccount(now - 60_000)).toEqual({ Sim101: 2, Sim102: 1 });
  });

  it('the duplicate window: when an identical order was last sent, by any ledger', async () => {
    const [a, b] = await two();
    const now = 1_756_821_600_000;
    await a.recordSend('Sim101', now - 8000, 'same');
    await b.recordSend('Sim101', now - 3000, 'same');
    await b.recordSend('Sim101', now - 1000, 'other');
    expect(await a.lastSent('same', now - 10_000)).toBe(now - 3000);
    expect(await a.lastSent('same', now - 2000)).toBeUndefined();
    expect(await b.lastSent('never', now - 10_000)).toBeUndefined();
  });

  it('the daily-loss latch: latched by one, resumed by another, per account and day', async () => {
    const [a, b] = await two();
    expect(await a.lossDay('Sim101', '2025-09-02')).toBeUndefined();
    await a.setLossDay('Sim101', '2025-09-02', 'latched');
    expect(await b.lossDay('Sim101', '2025-09-02')).toBe('latched');
    expect(await b.lossDay('Sim101', '2025-09-03')).toBeUndefined();
    expect(await b.lossDay('Sim102', '2025-09-02')).toBeUndefined();
    await b.setLossDay('Sim101', '2025-09-02', 'resumed');
    expect(await a.lossDay('Sim101', '2025-09-02')).toBe('resumed');
  });

  it('exclusive: all of the work is stored, or none; the last order of a budget is taken once across ledgers', async () => {
    const [a, b] = await two();
    const failed = await a
      .exclusive(async (tx) => {
        await tx.setHalt('profile:default', 'halted', undefined, 'x');
        await tx.recordSend('Sim101', 1, 'f');
        throw new Error('the work failed');
      })
      .catch((e: unknown) => e);
    expect((failed as Error).message).toBe('the work failed');
    expect(await b.allHalts()).toEqual([]);
    expect(await b.paceCounts('Sim101', [10], 5)).toEqual([0]);
    // Twenty attempts at once, ten through each ledger, on a budget of five.
    const take = (led: Ledger) =>
      led.exclusive(async (tx) => {
        if ((await tx.paceCounts('Sim101', [60_000], 1000))[0]! >= 5) return false;
        await tx.recordSend('Sim101', 1000, 'f');
        return true;
      });
    const taken = await Promise.all(Array.from({ length: 20 }, (_, i) => take(i % 2 === 0 ? a : b)));
    expect(taken.filter(Boolean)).toHaveLength(5);
    expect(await a.paceCounts('Sim101', [60_000], 1000)).toEqual([5]);
  });

  it('the journal: lines in order, their outcomes settled by any ledger, filtered by time, account and outcome', async () => {
    const [a, b] = await two();
    const first = await a.journal(line({ at: '2025-09-02T14:00:00.000Z', client_order_id: 'c1' }));
    const second = await b.journal(line({ at: '2025-09-02T14:01:00.000Z', account: 'Sim102', machine: 'desk-b' }));
    const third = await a.journal(line({ at: '2025-09-02T14:02:00.000Z', outcome: 'refused', rule: 'max-position', message: 'position 2 + 1' }));
    expect(second).toBeGreaterThan(first);
    expect(third).toBeGreaterThan(second);
    await b.settle(first, 'accepted', { orderId: 'o-1', at: '2025-09-02T14:00:01.000Z' });
    await a.settle(second, 'rejected', { message: 'Invalid request: quantity', at: '2025-09-02T14:01:01.000Z' });
    const lines = await b.lines({});
    expect(lines.map((l) => [l.id, l.operation, l.account, l.outcome, l.order_id, l.message, l.rule, l.machine, l.client_order_id, l.done_at])).toEqual([
      [first, 'PlaceOrder', 'Sim101', 'accepted', 'o-1', null, null, 'desk-a', 'c1', '2025-09-02T14:00:01.000Z'],
      [second, 'PlaceOrder', 'Sim102', 'rejected', null, 'Invalid request: quantity', null, 'desk-b', null, '2025-09-02T14:01:01.000Z'],
      [third, 'PlaceOrder', 'Sim101', 'refused', null, 'position 2 + 1', 'max-position', 'desk-a', null, null],
    ]);
    expect(lines[0]).toMatchObject({ at: '2025-09-02T14:00:00.000Z', profile: 'default', backend: 'embedded', source: 'cli', instrument: 'ES 09-25', request: '{"action":"BUY"}', pid: process.pid });
    // A settle keeps an order id it does not replace.
    await a.settle(first, 'accepted', { message: 'reconciled: Filled', at: '2025-09-02T15:00:00.000Z' });
    expect((await a.lines({ account: 'Sim101', outcomes: ['accepted'] })).map((l) => [l.id, l.order_id, l.message])).toEqual([[first, 'o-1', 'reconciled: Filled']]);
    expect((await a.lines({ since: '2025-09-02T14:01:00.000Z' })).map((l) => l.id)).toEqual([second, third]);
    expect((await a.lines({ outcomes: ['refused', 'rejected'] })).map((l) => l.id)).toEqual([second, third]);
  });

  it('a sent line reads unknown once the process that sent it is gone, and reconcile settles it from anywhere', async () => {
    const [a, , spec] = await two();
    const alive = await otherProcess(spec, true);
    const gone = await otherProcess(spec, false);
    const mine = await a.journal(line());
    const outcomes = async () => Object.fromEntries((await a.lines({})).map((l) => [l.id, l.outcome]));
    expect(await outcomes()).toEqual({ [alive.id]: 'sent', [gone.id]: 'unknown', [mine]: 'sent' });
    expect((await a.lines({ outcomes: ['unknown'] })).map((l) => l.id)).toEqual([gone.id]);
    const killed = new Promise((resolve) => alive.child.once('exit', resolve));
    alive.child.kill('SIGKILL');
    await killed;
    await expect.poll(outcomes, { timeout: 10_000 }).toEqual({ [alive.id]: 'unknown', [gone.id]: 'unknown', [mine]: 'sent' });
    // trade reconcile on any machine: the lines are settled with what the service said.
    await a.exclusive(async (tx) => {
      await tx.settle(alive.id, 'accepted', { orderId: 'found', message: 'reconciled: Filled', at: '2025-09-02T15:00:00.000Z' });
      await tx.settle(gone.id, 'rejected', { message: 'not placed', at: '2025-09-02T15:00:00.000Z' });
    });
    expect(await outcomes()).toEqual({ [alive.id]: 'accepted', [gone.id]: 'rejected', [mine]: 'sent' });
  });

  it('the account lock: excludes another ledger, is shared within one, let go by the last release; waits are bounded', async () => {
    const [a, b] = await two();
    const first = await a.lockAccount('Sim101', 0);
    const second = await a.lockAccount('SIM101', 0);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(await b.lockAccount('Sim101', 0)).toBeUndefined();
    const other = await b.lockAccount('Sim102', 0);
    expect(other).toBeDefined();
    other!.release();
    first!.release();
    first!.release(); // a second release of one hold changes nothing
    expect(await b.lockAccount('Sim101', 50)).toBeUndefined();
    const waiting = b.lockAccount('Sim101', 10_000);
    second!.release();
    const got = await waiting;
    expect(got).toBeDefined();
    const error = await a.withAccountLock('Sim101', async () => 'ran', 100).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuardError);
    expect((error as GuardError).code).toBe('guard_account_lock');
    got!.release();
    await expect.poll(() => a.withAccountLock('Sim101', async () => 'ran', 1000)).toBe('ran');
  });

  it('the account lock of a process that is killed is let go with it', async () => {
    const [a, , spec] = await two();
    const child = await holderProcess(spec, 'Sim101', cleanups);
    expect(await a.lockAccount('Sim101', 0)).toBeUndefined();
    const closed = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await closed;
    const hold = await a.lockAccount('Sim101', 10_000);
    expect(hold).toBeDefined();
    hold!.release();
  });

  it('a ledger that cannot be used fails closed: a GuardError guard_ledger naming it', async () => {
    const spec: LedgerSpec =
      maker.name === 'sqlite'
        ? { kind: 'sqlite', file: join(dir, 'not-a-dir', 'x', 'guard.db') }
        : { kind: 'postgres', url: 'postgres://trade:s3cret-pass@127.0.0.1:1/desk', machine: 'desk-a', dataDir: dir, timeoutMs: 2000 };
    if (spec.kind === 'sqlite') {
      // A file where its directory should be.
      const { writeFileSync, mkdirSync } = await import('node:fs');
      mkdirSync(join(dir, 'not-a-dir'), { recursive: true });
      writeFileSync(join(dir, 'not-a-dir', 'x'), 'a file');
    }
    const error = await openLedger(spec).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GuardError);
    expect((error as GuardError).code).toBe('guard_ledger');
    expect((error as GuardError).message).toMatch(
      spec.kind === 'sqlite'
        ? /^The guard's ledger .*not-a-dir\/x\/guard\.db cannot be used \(.*\); nothing was sent\.$/
        : /^The guard's ledger postgres:\/\/trade@127\.0\.0\.1:1\/desk cannot be used \(connection refused\); nothing was sent\.$/,
    );
    expect(String((error as GuardError).message) + String((error as GuardError).hint)).not.toContain('s3cret');
  });
});
