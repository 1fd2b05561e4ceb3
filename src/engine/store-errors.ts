/**
 * What SQLite and the file system say when the store cannot be used, as a StoreError that names
 * the file and what to do. Only failures of the store itself are turned: an error with another
 * code (a constraint, SQL the engine got wrong, anything not from SQLite) is a bug and stays as
 * it is, so that `main` reports it as one ("Unexpected error").
 */
import { accessSync, constants, existsSync, statfsSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { describeErrno, RejectedError, StoreError, type StoreProblem, TradeError } from '../common/errors.js';

export const isBusy = (error: unknown) => /^SQLITE_BUSY/.test(String((error as { code?: unknown } | null)?.code));

/** Another process held the write lock past the busy timeout: nothing of ours was written. */
export function storeBusy(): RejectedError {
  return new RejectedError('The store is busy: another trade process held its write lock too long. Nothing was written; try again.', {
    status: 503,
    code: 'store_busy',
  });
}

/** What `trade serve` tells a client, without the path: the operator gets the whole message. */
const CLIENT_WORDS: Record<StoreProblem, string> = {
  store_not_a_database: 'it is not a SQLite database',
  store_corrupt: 'it is damaged',
  store_read_only: 'it cannot be written',
  store_full: 'the disk is full',
  store_newer: 'it was written by a newer trade',
  store_data_dir: 'its directory cannot be created',
  store_unavailable: 'it cannot be read or written',
  store_driver: 'its SQLite driver cannot be loaded',
};

const STATUS: Record<StoreProblem, number> = {
  store_not_a_database: 500,
  store_corrupt: 500,
  store_read_only: 503,
  store_full: 503,
  store_newer: 500,
  store_data_dir: 500,
  store_unavailable: 500,
  store_driver: 500,
};

function storeError(code: StoreProblem, message: string, hint: string, cause?: unknown): StoreError {
  return new StoreError(code, message, {
    hint,
    cause,
    status: STATUS[code],
    detail: `trade serve cannot use its store: ${CLIENT_WORDS[code]}. Nothing was written; its operator is told on its stderr.`,
  });
}

const MOVE_ASIDE = 'Move it aside (trade then starts a new, empty store there) or point TRADE_HOME at another directory.';

export function notADatabase(file: string, why = 'it is not a SQLite database', cause?: unknown): StoreError {
  return storeError('store_not_a_database', `${file} is not a trade store: ${why}. Nothing was written.`, MOVE_ASIDE, cause);
}

export function newerStore(file: string, version: number, known: number): StoreError {
  return storeError(
    'store_newer',
    `The store ${file} was written by a newer trade (schema ${version}; this one knows ${known}). Nothing was written.`,
    'Update trade (npm install -g trade), or point TRADE_HOME at another directory.',
  );
}

function writable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** True when the file system under `dir` has no space left; false when that cannot be told. */
export function diskFull(dir: string): boolean {
  try {
    return statfsSync(dir).bavail === 0;
  } catch {
    return false;
  }
}

function full(file: string, cause: unknown): StoreError {
  return storeError(
    'store_full',
    `The store ${file} cannot grow: the disk is full. Nothing was written.`,
    `Free space on the disk that holds ${dirname(file)}, then try again.`,
    cause,
  );
}

/** Read-only, and why, from the file system; `otherwise` when it shows nothing (undefined: not read-only). */
function readOnly(file: string, cause: unknown, otherwise: string): StoreError;
function readOnly(file: string, cause: unknown): StoreError | undefined;
function readOnly(file: string, cause: unknown, otherwise?: string): StoreError | undefined {
  const dir = dirname(file);
  const name = basename(file);
  let why: string;
  if (existsSync(dir) && !writable(dir)) why = `its directory ${dir} is not writable, and SQLite keeps ${name}-wal and ${name}-shm beside it`;
  else if (existsSync(file) && !writable(file)) why = 'the file is read-only';
  else if (otherwise !== undefined) why = otherwise;
  else return undefined;
  return storeError(
    'store_read_only',
    `The store ${file} cannot be written: ${why}. Nothing was written.`,
    `Make ${dir} and the store's files writable by this user, or point TRADE_HOME at a writable directory.`,
    cause,
  );
}

function unavailable(file: string, what: string, cause: unknown): StoreError {
  return storeError(
    'store_unavailable',
    `The store ${file} cannot be read or written: ${what}. Nothing was written.`,
    `Check the disk and the permissions of ${dirname(file)} and the files in it, then try again.`,
    cause,
  );
}

/** Why the store at `file` (existing or to be created) could not be written, or undefined. */
export function writeProblem(file: string): StoreError | undefined {
  return readOnly(file, undefined);
}

/** A failure of the store at `file` as a typed error; any other error unchanged. */
/**
 * better-sqlite3 loads its native binary at the first open: missing when its install script did
 * not run (npm blocking install scripts, --ignore-scripts), or built for another Node.
 */
function driverError(error: unknown): StoreError | undefined {
  const message = error instanceof Error ? error.message : '';
  const missing = message.startsWith('Could not locate the bindings file');
  const otherNode = (error as { code?: unknown }).code === 'ERR_DLOPEN_FAILED' && message.includes('better_sqlite3.node');
  if (!missing && !otherNode) return undefined;
  return storeError(
    'store_driver',
    `The SQLite driver (better-sqlite3) cannot be loaded: ${missing ? 'its native binary is missing (its install script did not run)' : `its native binary does not load in Node ${process.versions.node} (${message.split('\n')[0]})`}. Nothing was written.`,
    'Run its install script where trade is installed: `npm rebuild better-sqlite3` in a clone, `npm rebuild -g --allow-scripts=better-sqlite3 better-sqlite3` for a global install.',
    error,
  );
}

export function toStoreError(error: unknown, file: string): unknown {
  if (error instanceof TradeError) return error;
  const driver = driverError(error);
  if (driver) return driver;
  if (isBusy(error)) return storeBusy();
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return error;
  const sqlite = (error as Error).message;
  if (code.startsWith('SQLITE_NOTADB')) return notADatabase(file, undefined, error);
  if (code.startsWith('SQLITE_CORRUPT'))
    return storeError(
      'store_corrupt',
      `The store ${file} is damaged (SQLite: ${sqlite}). Nothing was written.`,
      `Restore it from a backup, or move it aside (trade then starts a new, empty store); \`sqlite3 ${file} .recover\` may save what it holds.`,
      error,
    );
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT') return full(file, error);
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_PERM' || code === 'EROFS')
    return readOnly(file, error, code === 'EROFS' ? 'the file system is read-only' : `SQLite: ${sqlite}`);
  // SQLite reports a failed open or I/O without the errno; the state of the disk tells which.
  if (code.startsWith('SQLITE_CANTOPEN') || code.startsWith('SQLITE_IOERR')) {
    if (diskFull(dirname(file))) return full(file, error);
    return readOnly(file, error) ?? unavailable(file, `SQLite: ${sqlite} (${code})`, error);
  }
  if (/^E[A-Z]+$/.test(code)) return unavailable(file, describeErrno(code), error);
  return error;
}

/** The nearest path at or above `path` that exists. */
function nearestExisting(path: string): string {
  let at = path;
  while (!existsSync(at) && dirname(at) !== at) at = dirname(at);
  return at;
}

/**
 * Why the data directory cannot be made or used, or undefined when it can. Looks without
 * creating anything, so `trade doctor` can ask too.
 */
export function dataDirProblem(dir: string, cause?: unknown): StoreError | undefined {
  const at = nearestExisting(dir);
  const isDirectory = (() => {
    try {
      return statSync(at).isDirectory();
    } catch {
      return false;
    }
  })();
  if (!isDirectory)
    return storeError(
      'store_data_dir',
      at === dir ? `The data directory ${dir} is a file, not a directory.` : `The data directory ${dir} cannot be created: ${at} is a file, not a directory.`,
      `Point TRADE_HOME at a directory, or move ${at} aside.`,
      cause,
    );
  if (at !== dir && !writable(at))
    return storeError(
      'store_data_dir',
      `The data directory ${dir} cannot be created: ${at} is not writable.`,
      `Create ${dir} yourself, or point TRADE_HOME at a directory this user can write.`,
      cause,
    );
  return undefined;
}

/** An error of mkdir on the data directory, typed. */
export function dataDirError(error: unknown, dir: string): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return storeError('store_full', `The data directory ${dir} cannot be created: the disk is full.`, 'Free space on that disk, then try again.', error);
  return dataDirProblem(dir, error) ?? toStoreError(error, dir);
}

/** The engine with each method's store failures typed. `this` stays the guarded object. */
export function guardEngine<T extends object>(engine: T, file: string): T {
  const guarded: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(engine)) {
    guarded[name] =
      typeof member === 'function'
        ? function (this: unknown, ...args: unknown[]) {
            try {
              return (member as (...a: unknown[]) => unknown).apply(this, args);
            } catch (error) {
              throw toStoreError(error, file);
            }
          }
        : member;
  }
  return guarded as T;
}
