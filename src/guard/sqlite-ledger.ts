/**
 * The guard's ledger: one small SQLite file beside the engine's store (`guard.db` in the data
 * directory), shared by every trade process on the machine, whatever its backend. It holds the
 * halt states, the orders each account sent (for the pace and duplicate rules), the daily-loss
 * latches, and the journal: every money-moving request that passed the guard, with its outcome,
 * and every refusal.
 *
 * A request's check and its journal line are one IMMEDIATE transaction, so two processes cannot
 * both take the last order of a pace budget. An order that may add to a position is also checked,
 * sent and recorded under its account's lock (`lockAccount`), so that what another process is
 * sending meanwhile cannot be missed by the position it reads. A ledger that cannot be opened or
 * read fails closed: the guard refuses to send, with a message saying how to reset it. Tokens are
 * never written: requests are journaled as the operation's args, redacted by the guard.
 */
import { existsSync, mkdirSync, renameSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { retryBusy, useWal } from '../engine/sqlite.js';
import { diskFull } from '../engine/store-errors.js';
import { GuardError } from '../order/errors.js';
import { type AccountHold, createAccountLocks, DEFAULT_LOCK_WAIT_MS, lockTimeout } from './account-locks.js';
import type { Halt, HaltMode } from './rules.js';

export type Db = Database.Database;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS halts (
  scope TEXT PRIMARY KEY,
  mode TEXT NOT NULL CHECK (mode IN ('halted', 'reducing')),
  reason TEXT,
  at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sends (
  account TEXT NOT NULL,
  at INTEGER NOT NULL,
  fingerprint TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS sends_by_account ON sends(account, at);
CREATE INDEX IF NOT EXISTS sends_by_fingerprint ON sends(fingerprint, at);
CREATE TABLE IF NOT EXISTS loss_days (
  account TEXT NOT NULL,
  day TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('latched', 'resumed')),
  PRIMARY KEY (account, day)
);
CREATE TABLE IF NOT EXISTS journal (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  profile TEXT NOT NULL,
  backend TEXT NOT NULL,
  source TEXT NOT NULL,
  operation TEXT NOT NULL,
  account TEXT,
  instrument TEXT,
  request TEXT NOT NULL,
  client_order_id TEXT,
  outcome TEXT NOT NULL CHECK (outcome IN ('sent', 'accepted', 'rejected', 'refused', 'unknown')),
  order_id TEXT,
  message TEXT,
  rule TEXT,
  pid INTEGER NOT NULL,
  done_at TEXT
);
CREATE INDEX IF NOT EXISTS journal_by_time ON journal(at);
`;

const SCHEMA_VERSION = 1;

export interface JournalLine {
  id: number;
  at: string;
  profile: string;
  backend: string;
  source: string;
  operation: string;
  account: string | null;
  instrument: string | null;
  request: string;
  client_order_id: string | null;
  outcome: 'sent' | 'accepted' | 'rejected' | 'refused' | 'unknown';
  order_id: string | null;
  message: string | null;
  rule: string | null;
  pid: number;
  done_at: string | null;
}

export const ledgerPath = (storeFile: string): string => join(dirname(storeFile), 'guard.db');

export function failClosed(file: string, why: string, cause?: unknown): GuardError {
  const code = String((cause as { code?: unknown } | undefined)?.code ?? '');
  const full = code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || (/^SQLITE_(CANTOPEN|IOERR)/.test(code) && diskFull(dirname(file)));
  if (full)
    return new GuardError(`The guard's ledger ${file} cannot be used: the disk is full; nothing was sent.`, {
      code: 'guard_ledger',
      hint: `Free space on the disk that holds ${dirname(file)}, then try again.`,
      cause,
    });
  return new GuardError(`The guard's ledger ${file} cannot be used (${why}); nothing was sent.`, {
    code: 'guard_ledger',
    hint: `Move it aside to reset the guard (its pace counts, halts and journal start again empty): mv '${file}' '${file}.bad'`,
    cause,
  });
}

export interface Ledger {
  readonly file: string;
  readonly db: Db;
  /** Runs `work` in one IMMEDIATE transaction (the write lock first: pace counts are exact across processes). */
  exclusive<T>(work: () => T): T;
  halts(account: string | undefined, profile: string): Halt | undefined;
  allHalts(): Halt[];
  setHalt(scope: string, mode: HaltMode, reason: string | undefined, at: string): void;
  clearHalt(scope: string): number;
  paceCounts(account: string, windowsMs: number[], nowMs: number): number[];
  lastSent(fingerprint: string, sinceMs: number): number | undefined;
  recordSend(account: string, nowMs: number, fingerprint: string): void;
  lossDay(account: string, day: string): 'latched' | 'resumed' | undefined;
  setLossDay(account: string, day: string, state: 'latched' | 'resumed'): void;
  journal(line: Omit<JournalLine, 'id' | 'done_at' | 'order_id' | 'message' | 'rule'> & Partial<Pick<JournalLine, 'order_id' | 'message' | 'rule'>>): number;
  settle(id: number, outcome: JournalLine['outcome'], fields: { orderId?: string; message?: string; at: string }): void;
  lines(filter: { since?: string; account?: string; outcomes?: JournalLine['outcome'][] }): JournalLine[];
  /**
   * The account's lock, held across the check, the send and the record of an order that may add
   * to a position. Another ledger (another process, or another ledger of this one) holding it is
   * waited for, at most `waitMs` (0: not at all): undefined when it was not let go in that time.
   * Calls through this ledger share one hold (the guard counts its own orders in flight), which
   * is let go when the last of them releases it. A process that exits or crashes lets go of its
   * holds with it: nothing is left to clean up.
   */
  lockAccount(account: string, waitMs: number): Promise<AccountHold | undefined>;
  /** Runs `work` holding the account's lock; a GuardError (`guard_lock`) when it is not free within `waitMs`. */
  withAccountLock<T>(account: string, work: () => Promise<T>, waitMs?: number): Promise<T>;
  close(): void;
}

/** How long a statement waits for another process's write lock on the ledger. */
const BUSY_TIMEOUT_MS = 15_000;

/** Opens (creating when missing) the ledger; any failure is a GuardError (fail closed). */
export function openLedger(file: string): Ledger {
  let db: Db;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    db = new Database(file);
  } catch (error) {
    throw failClosed(file, (error as Error).message, error);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // Processes opening a new ledger at once: switching to WAL runs no busy handler, so it is tried again.
    retryBusy(BUSY_TIMEOUT_MS, () => useWal(db));
    db.pragma('synchronous = NORMAL');
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > SCHEMA_VERSION) throw new Error(`it was written by a newer trade (ledger schema ${version})`);
    if (version < SCHEMA_VERSION) {
      db.exec('BEGIN IMMEDIATE');
      try {
        db.exec(SCHEMA);
        db.pragma(`user_version = ${SCHEMA_VERSION}`);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    }
  } catch (error) {
    db.close();
    throw failClosed(file, (error as Error).message, error);
  }
  return wrap(file, db);
}

function wrap(file: string, db: Db): Ledger {
  const locks = createAccountLocks(file, failClosed);
  const q = {
    halt: db.prepare<[string], { scope: string; mode: HaltMode; reason: string | null; at: string }>('SELECT * FROM halts WHERE scope = ?'),
    allHalts: db.prepare<[], { scope: string; mode: HaltMode; reason: string | null; at: string }>('SELECT * FROM halts ORDER BY scope'),
    setHalt: db.prepare<[string, string, string | null, string]>('INSERT OR REPLACE INTO halts(scope, mode, reason, at) VALUES (?, ?, ?, ?)'),
    clearHalt: db.prepare<[string]>('DELETE FROM halts WHERE scope = ?'),
    count: db.prepare<[string, number], { n: number }>('SELECT count(*) AS n FROM sends WHERE account = ? AND at > ?'),
    last: db.prepare<[string, number], { at: number }>('SELECT max(at) AS at FROM sends WHERE fingerprint = ? AND at > ?'),
    send: db.prepare<[string, number, string]>('INSERT INTO sends(account, at, fingerprint) VALUES (?, ?, ?)'),
    prune: db.prepare<[number]>('DELETE FROM sends WHERE at < ?'),
    lossDay: db.prepare<[string, string], { state: 'latched' | 'resumed' }>('SELECT state FROM loss_days WHERE account = ? AND day = ?'),
    setLossDay: db.prepare<[string, string, string]>('INSERT OR REPLACE INTO loss_days(account, day, state) VALUES (?, ?, ?)'),
    journal: db.prepare(
      `INSERT INTO journal(at, profile, backend, source, operation, account, instrument, request, client_order_id, outcome, order_id, message, rule, pid)
       VALUES (@at, @profile, @backend, @source, @operation, @account, @instrument, @request, @client_order_id, @outcome, @order_id, @message, @rule, @pid)`,
    ),
    settle: db.prepare<[string, string | null, string | null, string, number]>(
      'UPDATE journal SET outcome = ?, order_id = coalesce(?, order_id), message = ?, done_at = ? WHERE id = ?',
    ),
  };
  const toHalt = (row: { scope: string; mode: HaltMode; reason: string | null; at: string }): Halt => ({
    scope: row.scope,
    mode: row.mode,
    reason: row.reason ?? undefined,
    at: row.at,
  });
  let sendsSincePrune = 0;
  const read = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      if (error instanceof GuardError) throw error;
      if (/^SQLITE_/.test(String((error as { code?: unknown }).code))) throw failClosed(file, (error as Error).message, error);
      throw error;
    }
  };
  return {
    file,
    db,
    exclusive: (work) =>
      read(() => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = work();
          db.exec('COMMIT');
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
    halts: (account, profile) =>
      read(() => {
        // The account's own state first, then the profile's.
        const row = (account !== undefined ? q.halt.get(`account:${account}`) : undefined) ?? q.halt.get(`profile:${profile}`);
        return row ? toHalt(row) : undefined;
      }),
    allHalts: () => read(() => q.allHalts.all().map(toHalt)),
    setHalt: (scope, mode, reason, at) => read(() => void q.setHalt.run(scope, mode, reason ?? null, at)),
    clearHalt: (scope) => read(() => q.clearHalt.run(scope).changes),
    paceCounts: (account, windowsMs, nowMs) => read(() => windowsMs.map((ms) => q.count.get(account, nowMs - ms)!.n)),
    lastSent: (fp, sinceMs) => read(() => q.last.get(fp, sinceMs)?.at ?? undefined),
    recordSend: (account, nowMs, fp) =>
      read(() => {
        q.send.run(account, nowMs, fp);
        // Sends older than the longest window any rule may have (7 days) are of no use.
        if (++sendsSincePrune >= 1000) {
          sendsSincePrune = 0;
          q.prune.run(nowMs - 8 * 86_400_000);
        }
      }),
    lossDay: (account, day) => read(() => q.lossDay.get(account, day)?.state),
    setLossDay: (account, day, state) => read(() => void q.setLossDay.run(account, day, state)),
    journal: (line) =>
      read(() => Number(q.journal.run({ order_id: null, message: null, rule: null, ...line }).lastInsertRowid)),
    settle: (id, outcome, fields) => read(() => void q.settle.run(outcome, fields.orderId ?? null, fields.message ?? null, fields.at, id)),
    lines: (filter) =>
      read(() => {
        const where: string[] = [];
        const params: unknown[] = [];
        if (filter.since) {
          where.push('at >= ?');
          params.push(filter.since);
        }
        if (filter.account) {
          where.push('account = ?');
          params.push(filter.account);
        }
        if (filter.outcomes) where.push(`outcome IN (${filter.outcomes.map(() => '?').join(', ')})`), params.push(...filter.outcomes);
        return db.prepare<unknown[], JournalLine>(`SELECT * FROM journal ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`).all(...params);
      }),
    lockAccount: (account, waitMs) => locks.lock(account, waitMs),
    async withAccountLock(account, work, waitMs = DEFAULT_LOCK_WAIT_MS) {
      const hold = await locks.lock(account, waitMs);
      if (!hold) throw lockTimeout(account, waitMs);
      try {
        return await work();
      } finally {
        hold.release();
      }
    },
    close: () => {
      locks.close();
      db.close();
    },
  };
}

/** A journal line still `sent` whose process is gone: its outcome is unknown. */
export function isOrphaned(line: JournalLine): boolean {
  if (line.outcome !== 'sent') return false;
  if (line.pid === process.pid) return false;
  try {
    process.kill(line.pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Moves a ledger aside (the reset its error message offers), for `trade guard reset`. */
export function moveAside(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  const aside = `${file}.${new Date().toISOString().replace(/[:.]/g, '-')}.bad`;
  renameSync(file, aside);
  for (const suffix of ['-wal', '-shm']) if (existsSync(file + suffix)) renameSync(file + suffix, aside + suffix);
  return aside;
}
