/**
 * The engine's SQLite store: opening, pragmas and migrations. Many processes (CLI runs and
 * `trade serve`) may share one file, so every write goes through an IMMEDIATE transaction and
 * waits on a busy timeout instead of failing.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

export const BUSY_TIMEOUT_MS = 15_000;

/** Each entry moves the schema one version up. Never edit a shipped entry; add a new one. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE accounts (
    name TEXT PRIMARY KEY COLLATE NOCASE,
    created_at TEXT NOT NULL
  );
  CREATE TABLE orders (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    account TEXT NOT NULL REFERENCES accounts(name),
    instrument TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('BUY','SELL')),
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    order_type TEXT NOT NULL CHECK (order_type IN ('MARKET','LIMIT','STOPMARKET','STOPLIMIT')),
    time_in_force TEXT NOT NULL CHECK (time_in_force IN ('DAY','GTC')),
    limit_price REAL,
    stop_price REAL,
    oco_id TEXT,
    strategy TEXT,
    state TEXT NOT NULL CHECK (state IN ('WORKING','FILLED','CANCELLED','EXPIRED')),
    filled_quantity INTEGER NOT NULL DEFAULT 0,
    avg_fill_price REAL,
    origin TEXT NOT NULL DEFAULT 'client',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX orders_by_account ON orders(account, instrument, state);
  CREATE TABLE fills (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    order_id TEXT NOT NULL REFERENCES orders(id),
    account TEXT NOT NULL,
    instrument TEXT NOT NULL,
    action TEXT NOT NULL,
    quantity INTEGER NOT NULL CHECK (quantity > 0),
    price REAL,
    time TEXT NOT NULL
  );
  CREATE INDEX fills_by_order ON fills(order_id);
  CREATE TABLE positions (
    account TEXT NOT NULL,
    instrument TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    avg_price REAL,
    realized_pnl REAL NOT NULL DEFAULT 0,
    pnl_known INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (account, instrument)
  );
  CREATE TABLE prices (
    instrument TEXT PRIMARY KEY,
    price REAL NOT NULL,
    updated_at TEXT NOT NULL
  );
  INSERT INTO accounts(name, created_at) VALUES ('Sim101', strftime('%Y-%m-%dT%H:%M:%fZ','now'));
  `,
  // 2: prices that fill working orders, OCO groups, ATM templates and brackets, DAY expiry.
  // An ATM entry keeps the distances it was placed with, so removing a template later does not
  // change the brackets of an entry that is still working.
  `
  ALTER TABLE orders ADD COLUMN parent_id TEXT;
  ALTER TABLE orders ADD COLUMN triggered INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE orders ADD COLUMN atm_stop_loss_ticks INTEGER;
  ALTER TABLE orders ADD COLUMN atm_profit_target_ticks INTEGER;
  ALTER TABLE orders ADD COLUMN atm_tick_size REAL;
  CREATE INDEX orders_by_oco ON orders(account, oco_id) WHERE oco_id IS NOT NULL;
  CREATE INDEX orders_working ON orders(state, instrument);
  CREATE TABLE atm_templates (
    name TEXT PRIMARY KEY COLLATE NOCASE,
    stop_loss_ticks INTEGER NOT NULL CHECK (stop_loss_ticks > 0),
    profit_target_ticks INTEGER NOT NULL CHECK (profit_target_ticks > 0),
    tick_size REAL NOT NULL CHECK (tick_size > 0),
    created_at TEXT NOT NULL
  );
  `,
  // 3: fewer pages written per order. Working-order indexes cover only working orders, so a
  // market order that fills at once stays out of them; positions are keyed by their primary
  // key alone (no rowid b-tree beside it); the oldest working DAY order is one index probe away.
  `
  DROP INDEX orders_working;
  CREATE INDEX orders_working ON orders(instrument, seq) WHERE state = 'WORKING';
  CREATE INDEX orders_day_working ON orders(created_at) WHERE state = 'WORKING' AND time_in_force = 'DAY';
  CREATE TABLE positions_v3 (
    account TEXT NOT NULL,
    instrument TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    avg_price REAL,
    realized_pnl REAL NOT NULL DEFAULT 0,
    pnl_known INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (account, instrument)
  ) WITHOUT ROWID;
  INSERT INTO positions_v3 SELECT account, instrument, quantity, avg_price, realized_pnl, pnl_known, updated_at FROM positions;
  DROP TABLE positions;
  ALTER TABLE positions_v3 RENAME TO positions;
  `,
  // 4: the service's order id, which a client may choose (service-reference.md §1.6): unique per
  // account, so two accounts may each have an 'ex-1'. The row's own id stays the key that fills,
  // brackets and OCO links use.
  `
  ALTER TABLE orders ADD COLUMN order_id TEXT;
  UPDATE orders SET order_id = id;
  CREATE UNIQUE INDEX orders_by_order_id ON orders(account, order_id);
  `,
  // 5: what the service reports beyond orders and positions. Each fill becomes an Execution (its
  // id, the position after it, the P&L it realized); a Change is remembered on the order; every
  // price set is a tick, for quotes and bars (fills are the ticks with volume).
  `
  ALTER TABLE orders ADD COLUMN limit_price_changed REAL;
  ALTER TABLE orders ADD COLUMN stop_price_changed REAL;
  ALTER TABLE fills ADD COLUMN execution_id TEXT;
  UPDATE fills SET execution_id = lower(hex(randomblob(16)));
  ALTER TABLE fills ADD COLUMN position_after INTEGER;
  ALTER TABLE fills ADD COLUMN realized REAL NOT NULL DEFAULT 0;
  CREATE TABLE ticks (
    seq INTEGER PRIMARY KEY,
    instrument TEXT NOT NULL,
    price REAL NOT NULL,
    time TEXT NOT NULL
  );
  CREATE INDEX ticks_by_instrument ON ticks(instrument, time);
  INSERT INTO ticks (instrument, price, time) SELECT instrument, price, updated_at FROM prices;
  `,
];

export const SCHEMA_VERSION = MIGRATIONS.length;

export function openStore(file: string, busyTimeoutMs = BUSY_TIMEOUT_MS): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
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
    db.pragma('foreign_keys = ON');
    retryBusy(busyTimeoutMs, () => migrate(db));
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

export const isBusy = (error: unknown) => /^SQLITE_BUSY/.test(String((error as { code?: unknown }).code));

/**
 * Runs `step` again, with short pauses, while it fails with SQLITE_BUSY, until the busy timeout
 * has passed. For the steps of an open where SQLite does not run the busy handler itself:
 * setting WAL needs the file to itself (two processes opening a new store at once once made one
 * of them fail with "database is locked"). Each step changes nothing when it fails.
 */
function retryBusy<T>(busyTimeoutMs: number, step: () => T): T {
  const deadline = Date.now() + busyTimeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      return step();
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error;
    }
    Atomics.wait(pause, 0, 0, wait);
  }
}

/** WAL is a property of the file: once set, every later open finds it so and takes no lock. */
function useWal(db: Db): void {
  if (db.pragma('journal_mode', { simple: true }) === 'wal') return;
  // A conversion that could not get the file answers with the old mode instead of failing.
  if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal')
    throw Object.assign(new Error('database is locked: the store could not be switched to WAL'), { code: 'SQLITE_BUSY' });
}

function migrate(db: Db): void {
  const current = () => db.pragma('user_version', { simple: true }) as number;
  if (current() === SCHEMA_VERSION) return;
  // IMMEDIATE takes the write lock first, so two processes opening a new store at once
  // cannot both run the same migration.
  db.transaction(() => {
    const from = current();
    if (from > SCHEMA_VERSION)
      throw new Error(`This store was written by a newer trade (schema ${from}, this one knows ${SCHEMA_VERSION}).`);
    for (let v = from; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
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
 * (`trade doctor` must not alter what it inspects). Throws when the file is not a store.
 */
export function summarizeStore(file: string): StoreSummary {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
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
