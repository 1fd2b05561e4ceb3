/**
 * The SQLite ledger's own edges (src/guard/sqlite-ledger.ts), in this process on real files: how it
 * fails closed (the words and the hint of each failure), how it opens and migrates a file (a fresh
 * one, one of schema 1 from before desk mode, one written by a newer trade, one whose migration
 * fails half-way), how `trade guard reset` moves it aside, and when a `sent` line reads unknown.
 * The behaviour both ledgers share is test/guard/ledger-conformance.test.ts.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { GuardError } from '../../src/common/errors.js';
import { hidePassword, initLedger, isLedgerFailure, type JournalLine, ledgerPath, ledgerWhere, openLedger, specOf } from '../../src/guard/ledger.js';
import { spawnSyncRecorded } from '../helpers/spawn.js';
import { failClosed, initSqliteLedger, isOrphaned, moveAside, openSqliteLedger, SQLITE_SCHEMA_VERSION } from '../../src/guard/sqlite-ledger.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function fresh(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trade-sqlite-ledger-'));
  dirs.push(dir);
  return join(dir, 'guard.db');
}

/** The error a call throws (it must throw). */
function thrown(work: () => unknown): GuardError {
  try {
    work();
  } catch (error) {
    expect(error).toBeInstanceOf(GuardError);
    return error as GuardError;
  }
  throw new Error('expected it to throw');
}

/** Runs `work` on its own connection to the file, closed after. */
function withDb<T>(file: string, work: (db: Database.Database) => T, readonly = true): T {
  const db = new Database(file, { readonly });
  try {
    return work(db);
  } finally {
    db.close();
  }
}

const columns = (file: string): string[] =>
  withDb(file, (db) => (db.prepare('SELECT name FROM pragma_table_info(?)').all('journal') as Array<{ name: string }>).map((c) => c.name));
const userVersion = (file: string): number => withDb(file, (db) => db.pragma('user_version', { simple: true }) as number);
const setUserVersion = (file: string, version: number): void => withDb(file, (db) => void db.pragma(`user_version = ${version}`), false);

/** A ledger of schema 1 (before desk mode): today's file without its `machine` column. */
function schemaOne(file: string): void {
  initSqliteLedger(file);
  withDb(file, (db) => db.exec('ALTER TABLE journal DROP COLUMN machine'), false);
  setUserVersion(file, 1);
}

describe('failClosed: the words of a ledger that cannot be used', () => {
  const file = '/data/trade/guard.db';
  it.each(['SQLITE_FULL', 'ENOSPC', 'EDQUOT'])('%s is a full disk, with where to free space', (code) => {
    const error = failClosed(file, 'whatever it said', Object.assign(new Error('x'), { code }));
    expect(error.message).toBe("The guard's ledger /data/trade/guard.db cannot be used: the disk is full; nothing was sent.");
    expect(error.code).toBe('guard_ledger');
    expect(error.hint).toBe('Free space on the disk that holds /data/trade, then try again.');
  });

  it('anything else (a damaged file, an I/O error on a disk with room) says why and how to reset it', () => {
    for (const code of ['SQLITE_CORRUPT', 'SQLITE_IOERR_WRITE', 'SQLITE_CANTOPEN', undefined]) {
      const error = failClosed(file, 'database disk image is malformed', code === undefined ? undefined : Object.assign(new Error('x'), { code }));
      expect(error.message).toBe("The guard's ledger /data/trade/guard.db cannot be used (database disk image is malformed); nothing was sent.");
      expect(error.code).toBe('guard_ledger');
      expect(error.hint).toBe(
        "Move it aside to reset the guard (its pace counts, halts and journal start again empty): mv '/data/trade/guard.db' '/data/trade/guard.db.bad'",
      );
    }
  });
});

describe('opening and migrating the file', () => {
  it('a fresh file is created with the current schema, in WAL mode; opening it again migrates nothing', () => {
    const file = fresh();
    expect(initSqliteLedger(file)).toEqual({ where: file, version: SQLITE_SCHEMA_VERSION, from: 0 });
    expect(SQLITE_SCHEMA_VERSION).toBe(2);
    expect(userVersion(file)).toBe(2);
    expect(columns(file)).toContain('machine');
    const db = new Database(file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect((db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'index') AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string }>).map((r) => r.name)).toEqual([
      'halts',
      'journal',
      'journal_by_time',
      'loss_days',
      'sends',
      'sends_by_account',
      'sends_by_fingerprint',
    ]);
    db.close();
    expect(initSqliteLedger(file)).toEqual({ where: file, version: 2, from: 2 });
  });

  it('a ledger of schema 1 gains the machine column, keeps its lines, and journals machines from then on', async () => {
    const file = fresh();
    schemaOne(file);
    const old = new Database(file);
    old.prepare("INSERT INTO journal(at, profile, backend, source, operation, request, outcome, pid) VALUES ('2025-09-02T14:00:00.000Z', 'default', 'embedded', 'cli', 'PlaceOrder', '{}', 'accepted', 1)").run();
    old.close();
    expect(columns(file)).not.toContain('machine');
    const ledger = openSqliteLedger(file);
    try {
      expect(userVersion(file)).toBe(2);
      const id = await ledger.exclusive((tx) =>
        tx.journal({
          at: '2025-09-02T14:01:00.000Z',
          profile: 'default',
          backend: 'embedded',
          source: 'cli',
          operation: 'PlaceOrder',
          account: 'Sim101',
          instrument: 'ES 09-25',
          request: '{}',
          client_order_id: null,
          outcome: 'refused',
          pid: process.pid,
          machine: 'desk-b',
        }),
      );
      expect((await ledger.lines({})).map((l) => [l.id, l.machine, l.outcome])).toEqual([
        [1, null, 'accepted'],
        [id, 'desk-b', 'refused'],
      ]);
    } finally {
      await ledger.close();
    }
  });

  it('init reports the version it migrated from', () => {
    const file = fresh();
    schemaOne(file);
    expect(initSqliteLedger(file)).toEqual({ where: file, version: 2, from: 1 });
  });

  it('a migration that fails is rolled back whole and the ledger fails closed', () => {
    const file = fresh();
    initSqliteLedger(file);
    // Says schema 1, but already has what schema 2 adds: adding the column again fails.
    setUserVersion(file, 1);
    const error = thrown(() => openSqliteLedger(file));
    expect(error.message).toBe(`The guard's ledger ${file} cannot be used (duplicate column name: machine); nothing was sent.`);
    expect(error.code).toBe('guard_ledger');
    expect(userVersion(file)).toBe(1);
  });

  it('a ledger written by a newer trade is refused, not migrated down', () => {
    const file = fresh();
    initSqliteLedger(file);
    setUserVersion(file, 3);
    const error = thrown(() => openSqliteLedger(file));
    expect(error.message).toBe(`The guard's ledger ${file} cannot be used (it was written by a newer trade (ledger schema 3)); nothing was sent.`);
    expect(error.hint).toBe(`Move it aside to reset the guard (its pace counts, halts and journal start again empty): mv '${file}' '${file}.bad'`);
    expect(userVersion(file)).toBe(3);
  });

  it('a file that is not a database fails closed, naming it', () => {
    const file = fresh();
    writeFileSync(file, 'this is not a database, it is a text file that is long enough to have a header page'.repeat(20));
    const error = thrown(() => openSqliteLedger(file));
    expect(error.message).toBe(`The guard's ledger ${file} cannot be used (file is not a database); nothing was sent.`);
    expect(error.code).toBe('guard_ledger');
  });

  it('a directory that cannot be made fails closed with the system error', () => {
    const file = fresh();
    writeFileSync(file, '');
    const inside = join(file, 'sub', 'guard.db');
    const error = thrown(() => openSqliteLedger(inside));
    expect(error.message).toMatch(new RegExp(`^The guard's ledger ${inside.replace(/[.]/g, '\\.')} cannot be used \\(ENOTDIR: not a directory, mkdir '[^']+'\\); nothing was sent\\.$`));
    expect(error.code).toBe('guard_ledger');
  });
});

describe('moveAside: trade guard reset', () => {
  it('moves the file and its WAL and shared-memory files to one dated name, and the next open starts empty', async () => {
    const file = fresh();
    const ledger = openSqliteLedger(file);
    await ledger.setHalt('profile:default', 'halted', 'test', '2025-09-02T14:00:00.000Z');
    // Left open: its -wal and -shm files are there to be moved with it.
    expect(existsSync(`${file}-wal`)).toBe(true);
    expect(existsSync(`${file}-shm`)).toBe(true);
    const before = Date.now();
    const aside = moveAside(file)!;
    await ledger.close();
    expect(aside).toMatch(/\/guard\.db\.\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z\.bad$/);
    const stamp = aside.slice(file.length + 1, -'.bad'.length).replace(/T(\d\d)-(\d\d)-(\d\d)-(\d{3})Z$/, 'T$1:$2:$3.$4Z');
    expect(Math.abs(Date.parse(stamp) - before)).toBeLessThan(60_000);
    const names = readdirSync(join(file, '..')).sort();
    const base = aside.slice(file.length - 'guard.db'.length);
    expect(names.filter((n) => n.startsWith('guard.db'))).toEqual([base, `${base}-shm`, `${base}-wal`].sort());
    const reopened = openSqliteLedger(file);
    expect(await reopened.allHalts()).toEqual([]);
    await reopened.close();
    const kept = new Database(aside, { readonly: true });
    expect(kept.prepare('SELECT scope, mode FROM halts').all()).toEqual([{ scope: 'profile:default', mode: 'halted' }]);
    kept.close();
  });

  it('a file without WAL files moves alone; no file is nothing to move', () => {
    const file = fresh();
    writeFileSync(file, 'x');
    const aside = moveAside(file)!;
    expect(readdirSync(join(file, '..'))).toEqual([aside.slice(file.length - 'guard.db'.length)]);
    expect(moveAside(file)).toBeUndefined();
  });
});

describe('isOrphaned: a sent line whose process is gone', () => {
  const line = (over: Partial<JournalLine>): JournalLine => ({
    id: 1,
    at: '2025-09-02T14:00:00.000Z',
    profile: 'default',
    backend: 'http',
    source: 'cli',
    operation: 'PlaceOrder',
    account: 'Sim101',
    instrument: 'ES 09-25',
    request: '{}',
    client_order_id: null,
    outcome: 'sent',
    order_id: null,
    message: null,
    rule: null,
    pid: process.pid,
    machine: null,
    done_at: null,
    ...over,
  });
  // A process that has exited: its pid is free (reused only after the system wraps around).
  const gone = spawnSyncRecorded(process.execPath, ['-e', '0'], { encoding: 'utf8' }).pid!;

  it('only a sent line of a process that no longer runs', () => {
    expect(isOrphaned(line({ pid: gone }))).toBe(true);
    expect(isOrphaned(line({}))).toBe(false);
    expect(isOrphaned(line({ pid: process.ppid }))).toBe(false);
    for (const outcome of ['accepted', 'rejected', 'refused', 'unknown'] as const) expect(isOrphaned(line({ pid: gone, outcome }))).toBe(false);
  });

  it('pid 1, which runs as long as the system does, is alive', () => {
    expect(isOrphaned(line({ pid: 1 }))).toBe(false);
  });
});

describe('where a ledger is, and what counts as its failure (src/guard/ledger.ts)', () => {
  it('the machine ledger sits beside the store; a string is a SQLite file', () => {
    expect(ledgerPath('/data/trade/store.db')).toBe('/data/trade/guard.db');
    expect(specOf('/data/trade/guard.db')).toEqual({ kind: 'sqlite', file: '/data/trade/guard.db' });
    const desk = { kind: 'postgres' as const, url: 'postgres://trade:s3cret@db:5432/desk', machine: 'm1', dataDir: '/d', timeoutMs: 5000 };
    expect(specOf(desk)).toBe(desk);
    expect(ledgerWhere('/data/trade/guard.db')).toBe('/data/trade/guard.db');
    expect(ledgerWhere(desk)).toBe('postgres://trade@db:5432/desk');
  });

  it('a URL is shown without its password, however it is written', () => {
    expect(hidePassword('postgres://trade:s3cret@db/desk')).toBe('postgres://trade@db/desk');
    expect(hidePassword('postgres://trade@db/desk')).toBe('postgres://trade@db/desk');
    expect(hidePassword('postgres://db/desk?sslmode=require')).toBe('postgres://db/desk?sslmode=require');
    // Not a URL the parser takes (a space in the host): the password is cut from the text.
    expect(hidePassword('postgres://trade:s3cret@my db/desk')).toBe('postgres://trade@my db/desk');
    expect(hidePassword('postgres://:p@ss@db/desk')).not.toContain('p@ss');
  });

  it('only a GuardError guard_ledger is the ledger failing', () => {
    expect(isLedgerFailure(failClosed('/x/guard.db', 'gone'))).toBe(true);
    expect(isLedgerFailure(new GuardError('refused', { code: 'guard_max_order_qty' }))).toBe(false);
    expect(isLedgerFailure(Object.assign(new Error('x'), { code: 'guard_ledger' }))).toBe(false);
  });

  it('initLedger creates a SQLite ledger and says so; openLedger opens it', async () => {
    const file = fresh();
    expect(await initLedger(file)).toEqual({ where: file, version: 2, from: 0 });
    const ledger = await openLedger({ kind: 'sqlite', file });
    expect([ledger.kind, ledger.where]).toEqual(['sqlite', file]);
    await ledger.close();
  });
});

describe('the SQLite ledger at work', () => {
  it('a disk with no room left (an I/O error where no block is free) is a full disk; a code that only contains the word is not', () => {
    // /proc reports no free blocks: the disk the ledger is on looks full.
    expect(failClosed('/proc/guard.db', 'x', Object.assign(new Error('x'), { code: 'SQLITE_CANTOPEN' })).message).toBe(
      "The guard's ledger /proc/guard.db cannot be used: the disk is full; nothing was sent.",
    );
    expect(failClosed('/proc/guard.db', 'x', Object.assign(new Error('x'), { code: 'SQLITE_IOERR_WRITE' })).hint).toBe('Free space on the disk that holds /proc, then try again.');
    expect(failClosed('/proc/guard.db', 'x', Object.assign(new Error('x'), { code: 'NOT_SQLITE_IOERR' })).message).toBe(
      "The guard's ledger /proc/guard.db cannot be used (x); nothing was sent.",
    );
  });

  it('lines: by account alone, and a line settled unknown is found by outcome unknown', async () => {
    const ledger = openSqliteLedger(fresh());
    try {
      const line = { at: '2025-09-02T14:00:00.000Z', profile: 'default', backend: 'http', source: 'cli', operation: 'PlaceOrder', instrument: 'ES 09-25', request: '{}', client_order_id: null, outcome: 'sent' as const, pid: process.pid };
      const a = await ledger.exclusive((tx) => tx.journal({ ...line, account: 'Sim101' }));
      const b = await ledger.exclusive((tx) => tx.journal({ ...line, account: 'Sim102' }));
      await ledger.exclusive((tx) => tx.settle(b, 'unknown', { at: '2025-09-02T14:00:05.000Z', message: 'no reply' }));
      expect((await ledger.lines({ account: 'Sim101' })).map((l) => l.id)).toEqual([a]);
      expect((await ledger.lines({ outcomes: ['unknown'] })).map((l) => [l.id, l.outcome, l.message])).toEqual([[b, 'unknown', 'no reply']]);
      expect((await ledger.lines({ outcomes: ['sent'] })).map((l) => l.id)).toEqual([a]);
    } finally {
      await ledger.close();
    }
  });

  it('once closed, it answers nothing and lets go of its account locks', async () => {
    const file = fresh();
    const ledger = openSqliteLedger(file);
    const hold = await ledger.lockAccount('Sim101', 0);
    expect(hold).toBeDefined();
    await ledger.close();
    await expect(ledger.halts('Sim101', 'default')).rejects.toThrow('The database connection is not open');
    const other = openSqliteLedger(file);
    try {
      expect(await other.lockAccount('Sim101', 0)).toBeDefined();
    } finally {
      await other.close();
    }
  });
});
