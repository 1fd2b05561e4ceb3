/**
 * The guard's ledger on SQLite (src/guard/ledger.ts has the interface): one small SQLite file beside the engine's store (`guard.db` in the data
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
import { releaseDb, retryBusy, useWal } from '../engine/sqlite.js';
import { diskFull } from '../engine/store-errors.js';
import { GuardError } from '../common/errors.js';
import { createAccountLocks, heldWhile } from './account-locks.js';
import { createSerial, type JournalLine, type Ledger, type LedgerOps } from './ledger.js';
import type { Halt, HaltMode } from './rules.js';
import { monotonicMs } from '../common/monotonic.js';
import { lazily } from '../common/lazily.js';

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

/** What each schema version adds to the one before (the ledger's `user_version`). */
const MIGRATIONS: Record<number, string> = {
  1: SCHEMA,
  // Desk mode (issue 35): the machine that sent each line.
  2: 'ALTER TABLE journal ADD COLUMN machine TEXT;',
};
export const SQLITE_SCHEMA_VERSION = 2;

/** How long a statement waits for another process's write lock on the ledger. */
const BUSY_TIMEOUT_MS = 15_000;

type Opened = { db: Db; from: number };

/** Opens the file, migrating it to the current schema; any failure is a GuardError (fail closed). */
function openFile(file: string): Opened {
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
    const from = db.pragma('user_version', { simple: true }) as number;
    if (from > SQLITE_SCHEMA_VERSION) throw new Error(`it was written by a newer trade (ledger schema ${from})`);
    if (from < SQLITE_SCHEMA_VERSION) {
      db.exec('BEGIN IMMEDIATE');
      try {
        // Read again under the write lock: another process may have migrated it meanwhile.
        const now = db.pragma('user_version', { simple: true }) as number;
        for (let v = now + 1; v <= SQLITE_SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
        db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
        db.exec('COMMIT');
      } catch (error) {
        db.exec('ROLLBACK');
        throw error;
      }
    }
    return { db, from };
  } catch (error) {
    db.close();
    throw failClosed(file, (error as Error).message, error);
  }
}

/** Opens (creating when missing) the ledger; any failure is a GuardError (fail closed). */
export function openSqliteLedger(file: string): Ledger {
  return wrap(file, openFile(file).db);
}

/** `trade guard init` on SQLite: the file created or migrated, as any open does. */
export function initSqliteLedger(file: string): { where: string; version: number; from: number } {
  const { db, from } = openFile(file);
  db.close();
  return { where: file, version: SQLITE_SCHEMA_VERSION, from };
}

type HaltRow = { scope: string; mode: HaltMode; reason: string | null; at: string };
/** The journal insert's values, in its columns' order. */
type JournalValues = [string, string, string, string, string, string | null, string | null, string, string | null, string, string | null, string | null, string | null, number, string | null];

function wrap(file: string, db: Db): Ledger {
  const locks = createAccountLocks(file, failClosed);
  // Each prepared on first use: a place journals and settles, and reads the halts (the rest is the other rules' and commands').
  const q = lazily({
    halt: () => db.prepare<[string], HaltRow>('SELECT * FROM halts WHERE scope = ?'),
    allHalts: () => db.prepare<[], HaltRow>('SELECT * FROM halts ORDER BY scope'),
    setHalt: () => db.prepare<[string, string, string | null, string]>('INSERT OR REPLACE INTO halts(scope, mode, reason, at) VALUES (?, ?, ?, ?)'),
    clearHalt: () => db.prepare<[string]>('DELETE FROM halts WHERE scope = ?'),
    count: () => db.prepare<[string, number], { n: number }>('SELECT count(*) AS n FROM sends WHERE account = ? AND at > ?'),
    byAccount: () => db.prepare<[number], { account: string; n: number }>('SELECT account, count(*) AS n FROM sends WHERE at > ? GROUP BY account ORDER BY account'),
    last: () => db.prepare<[string, number], { at: number }>('SELECT max(at) AS at FROM sends WHERE fingerprint = ? AND at > ?'),
    send: () => db.prepare<[string, number, string]>('INSERT INTO sends(account, at, fingerprint) VALUES (?, ?, ?)'),
    prune: () => db.prepare<[number]>('DELETE FROM sends WHERE at < ?'),
    lossDay: () => db.prepare<[string, string], { state: 'latched' | 'resumed' }>('SELECT state FROM loss_days WHERE account = ? AND day = ?'),
    setLossDay: () => db.prepare<[string, string, string]>('INSERT OR REPLACE INTO loss_days(account, day, state) VALUES (?, ?, ?)'),
    // Bound by position: binding fifteen named parameters from an object cost ~5 µs a line more.
    journal: () => db.prepare<JournalValues>(
      `INSERT INTO journal(at, profile, backend, source, operation, account, instrument, request, client_order_id, outcome, order_id, message, rule, pid, machine)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    settle: () => db.prepare<[string, string | null, string | null, string, number]>(
      'UPDATE journal SET outcome = ?, order_id = coalesce(?, order_id), message = ?, done_at = ? WHERE id = ?',
    ),
    // begin()'s two settings of the busy timeout, prepared once (db.pragma() prepares at every call).
    noBusyWait: () => db.prepare(`PRAGMA busy_timeout = 0`),
    busyWait: () => db.prepare(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`),
  });
  const toHalt = (row: HaltRow): Halt => ({ scope: row.scope, mode: row.mode, reason: row.reason ?? undefined, at: row.at });
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
  const ops: LedgerOps = {
    halts: async (account, profile) =>
      read(() => {
        // The account's own state first, then the profile's.
        const row = (account !== undefined ? q.halt.get(`account:${account}`) : undefined) ?? q.halt.get(`profile:${profile}`);
        return row ? toHalt(row) : undefined;
      }),
    allHalts: async () => read(() => q.allHalts.all().map(toHalt)),
    setHalt: async (scope, mode, reason, at) => read(() => void q.setHalt.run(scope, mode, reason ?? null, at)),
    clearHalt: async (scope) => read(() => q.clearHalt.run(scope).changes),
    paceCounts: async (account, windowsMs, nowMs) => read(() => windowsMs.map((ms) => q.count.get(account, nowMs - ms)!.n)),
    sentByAccount: async (sinceMs) => read(() => Object.fromEntries(q.byAccount.all(sinceMs).map((row) => [row.account, row.n]))),
    lastSent: async (fp, sinceMs) => read(() => q.last.get(fp, sinceMs)?.at ?? undefined),
    recordSend: async (account, nowMs, fp) =>
      read(() => {
        q.send.run(account, nowMs, fp);
        // Sends older than the longest window any rule may have (7 days) are of no use.
        if (++sendsSincePrune >= 1000) {
          sendsSincePrune = 0;
          q.prune.run(nowMs - 8 * 86_400_000);
        }
      }),
    lossDay: async (account, day) => read(() => q.lossDay.get(account, day)?.state),
    setLossDay: async (account, day, state) => read(() => void q.setLossDay.run(account, day, state)),
    journal: async (line) =>
      read(() =>
        Number(
          q.journal.run(
            line.at,
            line.profile,
            line.backend,
            line.source,
            line.operation,
            line.account,
            line.instrument,
            line.request,
            line.client_order_id,
            line.outcome,
            line.order_id ?? null,
            line.message ?? null,
            line.rule ?? null,
            line.pid,
            line.machine ?? null,
          ).lastInsertRowid,
        ),
      ),
    settle: async (id, outcome, fields) => read(() => void q.settle.run(outcome, fields.orderId ?? null, fields.message ?? null, fields.at, id)),
  };
  /**
   * The write lock, taken without blocking the event loop: a transaction awaits its work, so
   * another connection of this process (another ledger on the file) waiting in SQLite's own busy
   * handler would stop the very loop that ends the transaction it waits for. Tried again every
   * few milliseconds instead, as long as the busy timeout.
   */
  async function begin(): Promise<void> {
    const deadline = monotonicMs() + BUSY_TIMEOUT_MS;
    for (let pause = 1; ; pause = Math.min(pause * 2, 20)) {
      try {
        q.noBusyWait.get();
        db.exec('BEGIN IMMEDIATE');
        return;
      } catch (error) {
        if (!/^SQLITE_BUSY/.test(String((error as { code?: unknown }).code)) || monotonicMs() >= deadline) throw failClosed(file, (error as Error).message, error);
      } finally {
        q.busyWait.get();
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
  const serial = createSerial();
  const outside = Object.fromEntries(
    Object.entries(ops).map(([name, op]) => [name, (...args: unknown[]) => serial(() => (op as (...a: unknown[]) => Promise<unknown>)(...args))]),
  ) as unknown as LedgerOps;
  return {
    kind: 'sqlite',
    where: file,
    ...outside,
    exclusive: (work) =>
      serial(async () => {
        await begin();
        try {
          const result = await work(ops);
          read(() => db.exec('COMMIT'));
          return result;
        } catch (error) {
          if (db.inTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
    lines: (filter) =>
      serial(() =>
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
          // An orphaned `sent` line reads `unknown`: a filter on `unknown` looks at `sent` ones too.
          const wanted = filter.outcomes;
          if (wanted) {
            const stored = [...new Set(wanted.flatMap((o) => (o === 'unknown' ? ['unknown', 'sent'] : [o])))];
            where.push(`outcome IN (${stored.map(() => '?').join(', ')})`);
            params.push(...stored);
          }
          return db
            .prepare<unknown[], JournalLine>(`SELECT * FROM journal ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`)
            .all(...params)
            .map((line) => (isOrphaned(line) ? { ...line, outcome: 'unknown' as const } : line))
            .filter((line) => !wanted || wanted.includes(line.outcome));
        }),
      ),
    lockAccount: (account, waitMs) => locks.lock(account, waitMs),
    withAccountLock: (account, work, waitMs) => heldWhile(locks.lock, account, work, waitMs),
    close: () =>
      serial(() => {
        locks.close();
        releaseDb(db);
      }),
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
