/**
 * `trade serve`'s checkpointer (issue 34, sixth round): the store's log (SQLite's WAL) copied back
 * into the database by a worker thread, so that the copy — and the fsyncs it waits on, ~29 ms
 * every ~1,000 pages under load — no longer stops the event loop inside a COMMIT.
 *
 * - The serving connection's automatic checkpoint is off (`wal_autocheckpoint = 0`) while the
 *   checkpointer runs; every CLI process keeps SQLite's own.
 * - The worker has its own connection to the same file. It reads how many frames the log holds from
 *   the wal-index header (the `-shm` file, https://www.sqlite.org/walformat.html), every POLL_MS
 *   while the log grows, and runs a PASSIVE checkpoint each time PAGES more frames than the last
 *   checkpoint covered have been written: SQLite's own cadence (1,000 pages); and once more when
 *   a log of 1,000 pages or more stops growing, so that it restarts after a load. With
 *   `synchronous = NORMAL` a checkpoint is when the log is fsynced, so what an OS crash or a power
 *   loss may roll back stays what it was: about the last 1,000 pages (plus what was committed
 *   during the checkpoint itself, which the next one syncs).
 * - A passive checkpoint never waits for a writer, so under a steady load (a commit every few
 *   milliseconds) it seldom ends with every frame copied, and the log restarts only from a
 *   checkpoint that did. So once the log holds twice PAGES the worker checkpoints at every look
 *   (1 ms apart) until one ends between two commits; and past BOUND frames it stops, and the
 *   serving connection checkpoints itself, on the event loop as before, with most of the frames
 *   copied already; the log then restarts.
 * - A failure of the worker (its open, a checkpoint, the thread) is reported through `warn` and
 *   hands the checkpoint back to the serving connection (SQLite's automatic one, as before): no
 *   order ever waits on or fails by the checkpointer.
 * - The sandbox's save, restore and reset (src/server/sandbox/) never replace the store's file: a
 *   restore swaps rows inside one transaction of the serving connection, and SQLite's locks order
 *   it with a checkpoint of the same file like any other write.
 */
import { dirname } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Engine } from '../engine/engine.js';
import { monotonicMs } from '../common/monotonic.js';

/** Frames written since the last checkpoint that start the next one: SQLite's default autocheckpoint. */
export const PAGES = 1000;
/** Frames past which the serving connection checkpoints itself (a 16 MiB log at 4 KiB pages). */
export const BOUND = 4 * PAGES;
/** How often the worker reads the log's size while it grows; up to IDLE_MS while it does not. */
export const POLL_MS = 10;
export const IDLE_MS = 250;

export type CheckpointEvent =
  /** The worker has its connection open, and watches the log. */
  | { kind: 'open' }
  /** The worker's passive checkpoint: the log's frames, and how many are in the database now. */
  | { kind: 'checkpoint'; busy: boolean; log: number; checkpointed: number; ms: number }
  /** The log passed the bound; the serving connection checkpointed it. */
  | { kind: 'bound'; frames: number; busy: boolean; log: number; checkpointed: number; ms: number }
  | { kind: 'error'; message: string };

export interface CheckpointerOptions {
  engine: Engine;
  /** Told of a failure (the checkpoint is then the serving connection's again). */
  warn: (line: string) => void;
  pages?: number;
  bound?: number;
  pollMs?: number;
  /** Every checkpoint and failure, for tests. */
  onEvent?: (event: CheckpointEvent) => void;
}

export interface Checkpointer {
  /** Stops the worker (after a checkpoint it is running), and gives the serving connection its automatic checkpoint back. */
  close(): Promise<void>;
}

/**
 * The worker, as the source of a CommonJS script (`eval`): one file of the CLI's bundle cannot be
 * started as a thread of its own. It opens a connection, watches the log and checkpoints; the
 * main thread acts only when it is told the log passed the bound.
 */
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { openSync, readSync, closeSync } = require('node:fs');
const { file, sqlite, pages, bound, pollMs, idleMs } = workerData;
let db, shm, timer, stopped = false;
let salt, last = -1, synced = 0, posted = 0, wait = pollMs, copied = -1, stuck = false;
const header = new Uint32Array(34);
function stop() {
  stopped = true;
  clearTimeout(timer);
  try { if (db) db.close(); } finally { if (shm !== undefined) closeSync(shm); }
}
function fail(error) {
  parentPort.postMessage({ kind: 'error', message: error && error.message ? error.message : String(error) });
  try { stop(); } catch {}
}
function tick() {
  try {
    // The wal-index header, twice (bytes 0-47 and 48-95; native byte order); copies that differ
    // are being rewritten: read again next time. mxFrame at byte 16, the first salt at 32; after
    // them the checkpoint's own header, nBackfill (the frames copied) at byte 96.
    if (readSync(shm, header, 0, 136, 0) === 136 && header[3] !== 0 && header[2] === header[14] && header[4] === header[16] && header[8] === header[20]) {
      const frames = header[4];
      // A new salt: the log restarted from its first frame.
      if (header[8] !== salt) { salt = header[8]; synced = 0; posted = 0; copied = -1; stuck = false; }
      const idle = frames === last;
      last = frames;
      if (frames >= bound) {
        // Past the bound the serving connection checkpoints, told once and again each PAGES
        // frames more should the log not restart (a reader elsewhere holding it); the worker
        // checkpoints nothing meanwhile, so that the connection's checkpoint never finds it busy.
        if (posted === 0 || frames >= posted + pages) { posted = frames; parentPort.postMessage({ kind: 'bound', frames }); }
        wait = pollMs;
      } else {
        // Frames not yet copied (nBackfill behind mxFrame) in a log of twice PAGES or more: the
        // worker checkpoints at every look, a few milliseconds' frames each, until one ends with
        // every frame copied between two commits, and the next write restarts the log.
        // One that copies nothing (a reader elsewhere holds the frames) backs off as when idle.
        const catchingUp = frames >= 2 * pages && header[24] < frames;
        wait = catchingUp && !stuck ? 1 : idle || catchingUp ? Math.min(wait * 2, idleMs) : pollMs;
        // PAGES more frames than the last checkpoint covered; or catching up, as above; or a log
        // that has stopped growing with PAGES frames or more, not all of them copied.
        if (frames - synced >= pages || catchingUp || (idle && frames >= pages && header[24] < frames)) {
          const start = performance.now();
          const row = db.pragma('wal_checkpoint(PASSIVE)')[0];
          if (!row.busy) synced = row.log;
          stuck = row.checkpointed === copied;
          copied = row.checkpointed;
          parentPort.postMessage({ kind: 'checkpoint', busy: row.busy !== 0, log: row.log, checkpointed: row.checkpointed, ms: performance.now() - start });
        }
      }
    }
  } catch (error) {
    return fail(error);
  }
  if (!stopped) timer = setTimeout(tick, wait);
}
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  try { stop(); } catch (error) { return fail(error); }
  parentPort.close();
});
try {
  const Database = require(sqlite);
  db = new Database(file, { fileMustExist: true });
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');
  if (db.pragma('journal_mode', { simple: true }) !== 'wal') throw new Error('the store is not in WAL mode');
  shm = openSync(file + '-shm', 'r');
  parentPort.postMessage({ kind: 'open' });
  tick();
} catch (error) {
  fail(error);
}
`;

/** Starts checkpointing the engine's store from a worker thread; undefined for an in-memory store, which has no log. */
export function startCheckpointer(options: CheckpointerOptions): Checkpointer | undefined {
  const { engine } = options;
  if (engine.file === ':memory:') return undefined;
  const pages = options.pages ?? PAGES;
  const bound = options.bound ?? BOUND;
  const emit = options.onEvent ?? (() => {});
  engine.autoCheckpoint(0);
  let handedBack = false;
  /** The serving connection checkpoints the log itself again, as every CLI process does. */
  const handBack = () => {
    if (handedBack) return;
    handedBack = true;
    try {
      engine.autoCheckpoint(PAGES);
    } catch {
      // The engine was closed already: its close checkpointed the log.
    }
  };
  // better-sqlite3 where it is installed (the CLI's bundle holds its JavaScript, not its path).
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { file: engine.file, sqlite: dirname(require.resolve('better-sqlite3/package.json')), pages, bound, pollMs: options.pollMs ?? POLL_MS, idleMs: IDLE_MS },
  });
  // Never keeps the process alive: the server's close stops it, and an exit without one ends it.
  worker.unref();
  let failed = false;
  const failure = (message: string) => {
    if (failed) return;
    failed = true;
    handBack();
    void worker.terminate();
    emit({ kind: 'error', message });
    options.warn(`trade serve: the log's checkpointer stopped (${message}); the store's own connection checkpoints it from now on`);
  };
  let closing = false;
  worker.on('message', (message: CheckpointEvent | { kind: 'bound'; frames: number }) => {
    if (message.kind === 'error') return failure(message.message);
    if (message.kind === 'checkpoint' || message.kind === 'open') return emit(message);
    if (closing || failed) return;
    // Between two operations (this runs from the event loop, never inside a transaction).
    try {
      const start = monotonicMs();
      const done = engine.checkpoint();
      emit({ kind: 'bound', frames: message.frames, ...done, ms: monotonicMs() - start });
    } catch (error) {
      failure(error instanceof Error ? error.message : String(error));
    }
  });
  worker.on('error', (error) => failure(error.message));
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', (code) => {
      if (!closing && !failed) failure(`its thread ended with code ${code}`);
      resolve();
    }),
  );
  return {
    async close() {
      closing = true;
      // Held until it has ended: an unreferenced worker would let the process exit meanwhile.
      worker.ref();
      worker.postMessage('stop');
      await exited;
      handBack();
    },
  };
}
