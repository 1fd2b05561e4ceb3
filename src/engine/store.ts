/**
 * The engine's SQLite store: opening, pragmas and migrating (the migrations are in
 * migrations.ts), and a read-only summary for `trade doctor`. Many processes (CLI runs and
 * `trade serve`) may share one file, so every write goes through an IMMEDIATE transaction and
 * waits on a busy timeout instead of failing.
 */
import { closeSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION, TABLES_VERSION } from './migrations.js';
import { retryBusy, useWal } from './sqlite.js';
import { dataDirError, isBusy, newerStore, notADatabase, toStoreError } from './store-errors.js';

export { isBusy, MIGRATIONS, SCHEMA_VERSION, TABLES_VERSION };

export type Db = Database.Database;

/** The WAL's size after a checkpoint (bytes): 4 MiB, about what SQLite's autocheckpoint lets it reach. */
export const JOURNAL_SIZE_LIMIT = 4 * 1024 * 1024;

export const BUSY_TIMEOUT_MS = 15_000;

/**
 * Opens (creating when missing) and migrates the store. Every failure is a typed error naming the
 * file (src/engine/store-errors.ts); a store this build cannot use is refused before anything is
 * written to it.
 */
export function openStore(file: string, busyTimeoutMs = BUSY_TIMEOUT_MS): Db {
  if (file !== ':memory:') {
    try {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw dataDirError(error, dirname(file));
    }
  }
  try {
    if (file !== ':memory:') retryBusy(busyTimeoutMs, () => checkBeforeWriting(file, busyTimeoutMs));
    return openChecked(file, busyTimeoutMs);
  } catch (error) {
    throw toStoreError(error, file);
  }
}

function openChecked(file: string, busyTimeoutMs: number): Db {
  const db = new Database(file);
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    // An in-memory database has no file to share and cannot be WAL (it answers 'memory').
    if (file !== ':memory:') retryBusy(busyTimeoutMs, () => useWal(db));
    // Every write commits before the engine returns, so before any reply is sent or id printed.
    // A commit hands its WAL frames to the OS with write(2); NORMAL leaves out the fsync, so a
    // process killed any way (SIGKILL included) loses no acknowledged order, and a transaction
    // cut short leaves only frames without a commit record, which the next open ignores. Only an
    // OS crash or power loss can roll back the last commits before a checkpoint: a simulation
    // trades that for not waiting on the disk at every order. test/reliability/crash-*.test.ts.
    db.pragma('synchronous = NORMAL');
    // The WAL is checkpointed every ~1,000 pages (SQLite's default); after a checkpoint it is cut
    // back to this size, so a reader that held checkpoints off for a while leaves no large file.
    db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT}`);
    db.pragma('foreign_keys = ON');
    retryBusy(busyTimeoutMs, () => migrate(db));
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Every SQLite database starts with these 16 bytes. */
const SQLITE_HEADER = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * Looks at an existing file before anything may write to it, read-only: switching to WAL
 * rewrites the header, and SQLite takes a short non-database file for an empty database and
 * overwrites it. So a file that is not a SQLite database, a store from a newer trade, and a
 * store whose schema cannot be read (most truncations) are refused here, unchanged.
 */
function checkBeforeWriting(file: string, busyTimeoutMs: number): void {
  const header = sqliteHeader(file);
  if (!header) return;
  // Already in WAL mode (file format versions 2 at bytes 18 and 19): opening it writes nothing
  // before the migration step, which refuses a newer store itself without writing. So the
  // read-only look is needed only for a store not yet switched to WAL — and every later open of
  // a store (each `trade place`) opens it once, not twice.
  if (header[18] === 2 && header[19] === 2) return;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw newerStore(file, version, SCHEMA_VERSION);
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } finally {
    db.close();
  }
}

/**
 * The first 100 bytes of a file that begins as a SQLite database; undefined when there is none or
 * it is empty (what SQLite makes of a new store before its first write: one to fill in). Throws
 * for anything else, which SQLite would otherwise overwrite as if it were empty.
 */
function sqliteHeader(file: string): Buffer | undefined {
  try {
    const stat = statSync(file);
    if (stat.isDirectory()) throw notADatabase(file, 'it is a directory');
    if (stat.size === 0) return undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  const header = Buffer.alloc(100);
  const fd = openSync(file, 'r');
  let read: number;
  try {
    read = readSync(fd, header, 0, header.length, 0);
  } finally {
    closeSync(fd);
  }
  if (read < SQLITE_HEADER.length || !header.subarray(0, SQLITE_HEADER.length).equals(SQLITE_HEADER)) throw notADatabase(file);
  return header;
}

function migrate(db: Db): void {
  const current = () => db.pragma('user_version', { simple: true }) as number;
  if (current() === SCHEMA_VERSION) return;
  // IMMEDIATE takes the write lock first, so two processes opening a new store at once
  // cannot both run the same migration. A table rebuilt (SQLite's way to change one) would
  // break its references midway, so foreign keys are off while migrating (the pragma cannot
  // change inside a transaction) and every reference is checked before the commit.
  db.pragma('foreign_keys = OFF');
  try {
    db.transaction(() => {
      const from = current();
      // checkBeforeWriting refused it already, unless a newer trade upgraded it since.
      if (from > SCHEMA_VERSION) throw newerStore(db.name, from, SCHEMA_VERSION);
      for (let v = from; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
      const broken = db.pragma('foreign_key_check') as unknown[];
      if (broken.length > 0) throw new Error(`migration left ${broken.length} broken references: ${JSON.stringify(broken.slice(0, 3))}`);
      db.pragma(`user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  } finally {
    db.pragma('foreign_keys = ON');
  }
}

export interface StoreSummary {
  /** The store's schema version (SQLite user_version); SCHEMA_VERSION is the one this build writes. */
  schemaVersion: number;
  accounts: number;
  orders: number;
  workingOrders: number;
  openPositions: number;
  prices: number;
  atmTemplates: number;
}

/**
 * What a store holds, read without changing it: opened read-only, never created or migrated
 * (`trade doctor` must not alter what it inspects), and checked page by page (quick_check), since
 * a damaged page shows only when something reads it. Throws a StoreError when it is not a
 * usable store.
 */
export function summarizeStore(file: string): StoreSummary {
  try {
    sqliteHeader(file);
    return summarize(file);
  } catch (error) {
    throw toStoreError(error, file);
  }
}

function summarize(file: string): StoreSummary {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const check = db.pragma('quick_check(1)', { simple: true });
    if (check !== 'ok') throw Object.assign(new Error(`quick_check found ${String(check)}`), { code: 'SQLITE_CORRUPT' });
    const schemaVersion = db.pragma('user_version', { simple: true }) as number;
    const tables = new Set(
      (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map((t) => t.name),
    );
    const count = (table: string, where = '') =>
      tables.has(table) ? (db.prepare(`SELECT count(*) AS n FROM ${table} ${where}`).get() as { n: number }).n : 0;
    return {
      schemaVersion,
      accounts: count('accounts'),
      orders: count('orders'),
      workingOrders: count('orders', "WHERE state = 'WORKING'"),
      openPositions: count('positions', 'WHERE quantity <> 0'),
      prices: count('prices'),
      atmTemplates: count('atm_templates'),
    };
  } finally {
    db.close();
  }
}
