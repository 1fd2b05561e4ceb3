/**
 * A one-shot process (the bin) leaves its SQLite connections for the end of the process instead of
 * closing them (src/common/at-exit.ts, src/engine/sqlite.ts releaseDb): the log stays, synced, for
 * the next process to read, so no checkpoint, new log or header sync is paid at every `trade place`.
 * What must hold: every order is in the store for the next reader; a log past LEAVE_WAL_BYTES is
 * checkpointed as always (the log does not grow without bound); a connection in a transaction,
 * in memory or read-only is closed; in any other process (the library, run() in process) close
 * closes; and the process still writes everything before it ends.
 */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { endWithCommand, leftForExit } from '../../src/common/at-exit.js';
import { createEngine } from '../../src/engine/engine.js';
import { LEAVE_WAL_BYTES, releaseDb } from '../../src/engine/sqlite.js';
import { BIN, ES_BUY, runBin, tempHome } from '../helpers/cli.js';
import { spawnRecorded, spawnSyncRecorded } from '../helpers/spawn.js';

const homes: Array<() => void> = [];
afterEach(() => homes.splice(0).forEach((cleanup) => cleanup()));

function home() {
  const h = tempHome();
  homes.push(h.cleanup);
  return { env: h.env, store: join(h.env.TRADE_HOME!, 'trade.db'), ledger: join(h.env.TRADE_HOME!, 'guard.db') };
}

const count = (file: string, sql: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(sql).pluck().get() as number) ?? 0;
  } finally {
    db.close();
  }
};

describe('the bin leaves its store and ledger for the next process', () => {
  it('after a place, the order and its journal line are read back by the next process from the logs it left', async () => {
    const { env, store, ledger } = home();
    for (let i = 1; i <= 3; i++) {
      const result = await runBin(['place', ...ES_BUY], env);
      expect(result.code, result.stderr).toBe(0);
      expect(result.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n/);
      // Left, not checkpointed and deleted: both logs are there, holding what was committed.
      expect(statSync(`${store}-wal`).size).toBeGreaterThan(0);
      expect(statSync(`${ledger}-wal`).size).toBeGreaterThan(0);
      expect(count(store, 'SELECT count(*) FROM orders')).toBe(i);
      expect(count(ledger, "SELECT count(*) FROM journal WHERE outcome = 'accepted'")).toBe(i);
    }
    const positions = await runBin(['positions', '--json'], env);
    expect(positions.code, positions.stderr).toBe(0);
    expect(JSON.parse(positions.stdout).positions).toMatchObject([{ account: 'Sim101', instrument: 'ES 09-25', marketPosition: 'Long', quantity: 3 }]);
  });

  it('a log past the bound is checkpointed by the close, as always: the next one starts again', async () => {
    const { env, store } = home();
    expect((await runBin(['place', ...ES_BUY], env)).code).toBe(0);
    // Another process writes 1.5 MiB into the store's log and ends without closing (no checkpoint).
    const grow = spawnSyncRecorded(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(process.argv[1]); db.pragma('wal_autocheckpoint = 0');
         db.exec('CREATE TABLE IF NOT EXISTS scratch (b BLOB)'); db.prepare('INSERT INTO scratch VALUES (zeroblob(?))').run(${Math.round(1.5 * LEAVE_WAL_BYTES)});
         process.exit(0);`,
        store,
      ],
      { cwd: join(BIN, '..', '..'), encoding: 'utf8' },
    );
    expect(grow.status, grow.stderr).toBe(0);
    expect(statSync(`${store}-wal`).size).toBeGreaterThan(LEAVE_WAL_BYTES);
    const result = await runBin(['place', ...ES_BUY], env);
    expect(result.code, result.stderr).toBe(0);
    // The last connection's close checkpointed the log into the store and removed it.
    expect(existsSync(`${store}-wal`)).toBe(false);
    expect(count(store, 'SELECT count(*) FROM orders')).toBe(2);
  });

  it('a command that writes more than a pipe holds, to a reader that waits, still writes all of it before the process ends', async () => {
    const { env } = home();
    const lines = Array.from({ length: 900 }, (_, i) => JSON.stringify({ api: 'PlaceOrder', args: { account: 'Sim101', instrument: 'ES 09-25', action: i % 2 ? 'SELL' : 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' } })).join('\n');
    const batch = await runBin(['batch'], env, `${lines}\n`);
    expect(batch.code, batch.stderr).toBe(0);
    const child = spawnRecorded(process.execPath, [BIN, 'orders', '--account', 'Sim101', '--json'], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    // Nothing read for a while: ~500 KB is more than the pipe holds, so the process waits on it.
    child.stdout.pause();
    await new Promise((resolve) => setTimeout(resolve, 300));
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stdout.resume();
    expect(await closed).toBe(0);
    expect(stdout.length).toBeGreaterThan(450 * 1024);
    expect(JSON.parse(stdout).orders).toHaveLength(900);
  });
});

describe('releaseDb', () => {
  it('in any process that did not say it ends with its command, closes: the last close checkpoints and removes the log', () => {
    const { store } = home();
    const engine = createEngine(store);
    expect(existsSync(`${store}-wal`)).toBe(true);
    engine.close();
    expect(existsSync(`${store}-wal`)).toBe(false);
    expect(leftForExit()).toBe(0);
  });

  it('in a one-shot process, leaves a connection with a small log; closes one with a large log, in a transaction, in memory or read-only', () => {
    const { store } = home();
    createEngine(store).close();
    endWithCommand();
    const inTransaction = openOn(store);
    inTransaction.exec('BEGIN IMMEDIATE');
    releaseDb(inTransaction);
    expect(inTransaction.open).toBe(false);
    const memory = new Database(':memory:');
    releaseDb(memory);
    expect(memory.open).toBe(false);
    const readonly = new Database(store, { readonly: true });
    readonly.prepare('SELECT count(*) FROM orders').get();
    releaseDb(readonly);
    expect(readonly.open).toBe(false);
    expect(leftForExit()).toBe(0);
    const small = openOn(store);
    small.prepare("INSERT INTO prices (instrument, price, updated_at) VALUES ('NQ 09-25', 20001, 'x')").run();
    releaseDb(small);
    expect(small.open).toBe(true);
    expect(leftForExit()).toBe(1);
    expect(statSync(`${store}-wal`).size).toBeGreaterThan(0);
    const large = openOn(store);
    large.pragma('wal_autocheckpoint = 0');
    large.exec('CREATE TABLE scratch (b BLOB)');
    large.prepare('INSERT INTO scratch VALUES (zeroblob(?))').run(Math.round(1.5 * LEAVE_WAL_BYTES));
    releaseDb(large);
    expect(large.open).toBe(false);
    expect(leftForExit()).toBe(1);
    small.close();
  });
});

function openOn(file: string): Database.Database {
  const db = new Database(file);
  db.pragma('busy_timeout = 15000');
  return db;
}
