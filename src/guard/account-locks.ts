/**
 * The per-account lock of the guard's ledger on SQLite (issue 31): held across the check, the send
 * and the record of an order that may add to a position, so that N processes placing at once
 * cannot together pass max-position. A PostgreSQL ledger gives the same interface (Ledger's
 * lockAccount and withAccountLock) with a row lock and a lock timeout.
 */
import { randomBytes, sha256Hex } from '../common/random.js';
import { existsSync, linkSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { GuardError } from '../common/errors.js';
import { monotonicMs } from '../common/monotonic.js';

type Db = Database.Database;

/** A hold of an account's lock: released once, by the last of the calls sharing it. */
export interface AccountHold {
  release(): void;
}

/** How long an order waits for another process's hold of its account's lock before it is refused. */
export const DEFAULT_LOCK_WAIT_MS = 15_000;

/** The refusal of an order whose account's lock another process held for the whole wait. */
export function lockTimeout(account: string, waitMs: number): GuardError {
  return new GuardError(
    `refused by guard account-lock: another trade process held the lock of account ${account} for ${waitMs / 1000} s (it is sending an order that may add to a position); nothing was sent`,
    {
      code: 'guard_account_lock',
      rule: 'account-lock',
      limit: waitMs,
      value: account,
      hint: 'Send it again when the other process is done (a long trade batch holds the lock while it has orders of that account in flight); trade history shows what each sent.',
    },
  );
}

/** Runs `work` holding the account's lock taken by `lock`; a GuardError (`guard_account_lock`) when it is not free within `waitMs`. */
export async function heldWhile<T>(
  lock: (account: string, waitMs: number) => Promise<AccountHold | undefined>,
  account: string,
  work: () => Promise<T>,
  waitMs = DEFAULT_LOCK_WAIT_MS,
): Promise<T> {
  const hold = await lock(account, waitMs);
  if (!hold) throw lockTimeout(account, waitMs);
  try {
    return await work();
  } finally {
    hold.release();
  }
}

/** ASCII case folded: the service's account names are matched that way, so one lock serves both spellings. */
const lockKey = (account: string) => account.replace(/[A-Z]+/g, (l) => l.toLowerCase());

/**
 * The per-account locks on SQLite: one small file per account (named by a hash of its name) in
 * `guard.db.locks/`, whose write lock (`BEGIN IMMEDIATE`, nothing ever written) is the account's.
 * In WAL mode that lock is a byte of the `-shm` file locked with fcntl: about 10 µs to take and let
 * go (a rollback journal's is several file locks and a read, ten times that). The operating system
 * lets go of a file lock when its process ends, however it ends. A busy lock is tried again every
 * few milliseconds until the wait is over: the event loop never blocks on it.
 */
/**
 * A lock file made whole before it has its name: WAL set on a file of its own, then linked to the
 * name (a link is refused when the name exists: of processes making it at once, one wins and the
 * others use its file). Setting WAL on a shared file would race with a process holding its lock.
 */
function createLockFile(file: string): void {
  const partial = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.new`;
  try {
    const db = new Database(partial);
    db.pragma('journal_mode = WAL');
    db.close();
    linkSync(partial, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    for (const suffix of ['', '-wal', '-shm']) rmSync(`${partial}${suffix}`, { force: true });
  }
}

export function createAccountLocks(ledgerFile: string, failClosed: (file: string, why: string, cause?: unknown) => GuardError) {
  const dir = `${ledgerFile}.locks`;
  type Entry = { db: Db; begin: Database.Statement; rollback: Database.Statement; holders: number; taking?: Promise<boolean> };
  const entries = new Map<string, Entry>();

  function entryOf(key: string) {
    let entry = entries.get(key);
    if (!entry) {
      const file = join(dir, `${sha256Hex(key).slice(0, 32)}.lock`);
      let db: Db | undefined;
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        if (!existsSync(file)) createLockFile(file);
        db = new Database(file);
        db.pragma('busy_timeout = 0');
        entry = { db, begin: db.prepare('BEGIN IMMEDIATE'), rollback: db.prepare('ROLLBACK'), holders: 0 };
      } catch (error) {
        db?.close();
        throw failClosed(file, (error as Error).message, error);
      }
      entries.set(key, entry);
    }
    return entry;
  }

  function tryTake(entry: Entry): boolean {
    try {
      entry.begin.run();
      return true;
    } catch (error) {
      if (/^SQLITE_(BUSY|LOCKED)/.test(String((error as { code?: unknown }).code))) return false;
      throw failClosed(entry.db.name, (error as Error).message, error);
    }
  }

  async function take(entry: Entry, waitMs: number): Promise<boolean> {
    const deadline = monotonicMs() + waitMs;
    for (let pause = 1; ; pause = Math.min(pause * 2, 20)) {
      if (tryTake(entry)) return true;
      const left = deadline - monotonicMs();
      if (left <= 0) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    }
  }

  const holdOf = (key: string): AccountHold => {
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        const entry = entries.get(key);
        if (!entry || --entry.holders > 0) return;
        if (entry.db.inTransaction) entry.rollback.run();
      },
    };
  };

  return {
    async lock(account: string, waitMs: number): Promise<AccountHold | undefined> {
      const key = lockKey(account);
      const entry = entryOf(key);
      // Held by this ledger (or just taken, its taker not yet back): shared.
      if (entry.holders > 0 || entry.db.inTransaction) {
        entry.holders++;
        return holdOf(key);
      }
      if (entry.taking === undefined) {
        if (tryTake(entry)) {
          entry.holders++;
          return holdOf(key);
        }
        if (waitMs <= 0) return undefined;
        entry.taking = take(entry, waitMs).finally(() => (entry.taking = undefined));
      } else if (waitMs <= 0) return undefined;
      // A call of this ledger already waiting: this one waits with it, and shares what it gets.
      if (!(await entry.taking)) return undefined;
      entry.holders++;
      return holdOf(key);
    },
    close() {
      for (const { db } of entries.values()) {
        if (db.inTransaction) db.exec('ROLLBACK');
        db.close();
      }
      entries.clear();
    },
  };
}
