/**
 * Opening a SQLite file that several processes may open at once (the engine's store, the guard's
 * ledger): the steps SQLite runs no busy handler for, tried again until the busy timeout.
 */
import { closeSync, fsyncSync, openSync, statSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { endsWithCommand, leaveForExit } from '../common/at-exit.js';
import { isBusy } from './store-errors.js';

type Db = Database.Database;

/**
 * Runs `step` again, with short pauses, while it fails with SQLITE_BUSY, until the busy timeout
 * has passed. For the steps of an open where SQLite does not run the busy handler itself:
 * setting WAL needs the file to itself (two processes opening a new store at once once made one
 * of them fail with "database is locked"). Each step changes nothing when it fails.
 */
export function retryBusy<T>(busyTimeoutMs: number, step: () => T): T {
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
export function useWal(db: Db): void {
  if (db.pragma('journal_mode', { simple: true }) === 'wal') return;
  // A conversion that could not get the file answers with the old mode instead of failing.
  if (db.pragma('journal_mode = WAL', { simple: true }) !== 'wal')
    throw Object.assign(new Error('database is locked: the store could not be switched to WAL'), { code: 'SQLITE_BUSY' });
}

/**
 * A log up to this size is left for the next process when a one-shot process ends (releaseDb); a
 * larger one is checkpointed by the close, as always. Bounds what the next open reads back (about
 * a millisecond a megabyte), well below SQLite's own checkpoint at ~1,000 pages (4 MiB).
 */
export const LEAVE_WAL_BYTES = 1024 * 1024;

/**
 * Closes a connection (the engine's store, the guard's ledger) when its owner is done with it. In
 * a one-shot process (src/common/at-exit.ts) a connection outside any transaction whose log is
 * small is left open for the end of the process instead: its log is synced here (what the
 * checkpoint of a close would have made durable is durable now), and no checkpoint, no new log and
 * no header and directory syncs are paid. Everything else is closed, and so is a connection whose
 * log cannot be synced (SQLite makes the log of a read-only store read-only): the close then does
 * what it always did. Throws only what a close throws.
 */
export function releaseDb(db: Db): void {
  if (!db.open) return;
  // Only a one-shot process leaves one: any other close needs no sync of its own first.
  if (!endsWithCommand() || db.memory || db.readonly || db.inTransaction) return void db.close();
  const wal = `${db.name}-wal`;
  let size: number;
  try {
    size = statSync(wal).size;
  } catch {
    return void db.close();
  }
  if (size > LEAVE_WAL_BYTES || !syncFile(wal)) return void db.close();
  leaveForExit();
}

/** fsync(2) of a file; false, having changed nothing, when it cannot be opened or synced. */
function syncFile(file: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'r+');
  } catch {
    // A log SQLite made read-only (beside a read-only store, it takes the store's mode).
    return false;
  }
  try {
    fsyncSync(fd);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
