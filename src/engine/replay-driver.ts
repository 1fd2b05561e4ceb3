/**
 * Drives a replay (issue 29): the records of one or more checked files (merged by time) set in
 * groups (replay-group.ts) while this process holds the store's session clock. At `--speed max`
 * the groups follow each other as fast as the store commits, yielding to the event loop between
 * two, so `trade serve` answers its clients meanwhile; at a pace, each record is set when the
 * clock reaches its time. A paused clock sets nothing; a step sets exactly its records or time.
 * The clock is given back when the replay ends, is stopped, or fails.
 */
import { EventEmitter } from 'node:events';
import type { ClockControl, ClockState } from '../service/session-clock.js';
import type { OpenReplayFile, ReadProgress, ReplayFile, ReplayWindow } from './replay-file.js';
import { dueTime } from './replay-group.js';
import { appendFrom, createBatch, pushRecord } from './replay-batch.js';
import type { Engine, ReplayBatch, ReplayCounts } from './types.js';
import { monotonicMs } from '../common/monotonic.js';

/** One file of a replay: checked, still open for its second pass. */
export interface ReplaySource {
  file: ReplayFile;
  reader: OpenReplayFile;
  /** --instrument: the instrument of records that name none. */
  fallback?: string;
  progress: ReadProgress;
}

export interface ReplayPlan {
  sources: ReplaySource[];
  window: ReplayWindow;
  /** Records in the window of every file, and the first and last one's time. */
  total: number;
  bars: number;
  firstMs: number;
  lastMs: number;
  /** The files, for people (the clock's `source`). */
  describe: string;
}

/** What a replay did. */
export interface ReplayTally extends ReplayCounts {
  /** The replayed time of the first and last record set. */
  firstMs?: number;
  lastMs?: number;
  /** Wall time from the first record set. */
  seconds: number;
  stopped?: string;
}

export const newReplayTally = (): ReplayTally => ({ records: 0, prices: 0, fills: 0, cancelled: 0, expired: 0, brackets: 0, last: new Map(), seconds: 0 });

/** A group at full speed takes at most this many records, and stops taking them after this long. */
const GROUP_RECORDS = 8192;
const GROUP_BUDGET_MS = 25;
/** How often a paused or waiting replay looks at the clock again (a control request, a step). */
export const CLOCK_POLL_MS = 20;

/** Every file's batches merged by time (the files are each in order); one file passes through. */
async function* merged(plan: ReplayPlan): AsyncGenerator<ReplayBatch> {
  const streams = plan.sources.map((s) => s.reader.records(s.file, s.fallback, plan.window, s.progress));
  if (streams.length === 1) {
    yield* streams[0]!;
    return;
  }
  try {
    const heads: Array<{ batch: ReplayBatch; at: number } | undefined> = await Promise.all(
      streams.map(async (s) => {
        const next = await s.next();
        return next.done ? undefined : { batch: next.value, at: 0 };
      }),
    );
    let out = createBatch(GROUP_RECORDS);
    for (;;) {
      let pick = -1;
      for (let i = 0; i < heads.length; i++) {
        const head = heads[i];
        if (head && (pick < 0 || head.batch.times[head.at]! < heads[pick]!.batch.times[heads[pick]!.at]!)) pick = i;
      }
      if (pick < 0) break;
      const head = heads[pick]!;
      const at = head.at++;
      pushRecord(out, head.batch.instruments[at]!, head.batch.times[at]!, head.batch.prices[at]!, head.batch.paths.get(at));
      if (head.at === head.batch.length) {
        const next = await streams[pick]!.next();
        heads[pick] = next.done ? undefined : { batch: next.value, at: 0 };
      }
      if (out.length >= GROUP_RECORDS) {
        yield out;
        out = createBatch(GROUP_RECORDS);
      }
    }
    if (out.length > 0) yield out;
  } finally {
    await Promise.all(streams.map((s) => s.return(undefined)));
  }
}

/**
 * In one process (a `trade serve` driving its own replay) a control request wakes the replay at
 * once, and a group wakes whoever waits for a step; across processes both look at the store's
 * clock every CLOCK_POLL_MS.
 */
const nearby = new EventEmitter().setMaxListeners(0);

/** Waits `ms`, or less when the replay is stopped or a control request comes meanwhile. */
function sleep(ms: number, stopped: Promise<string>): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      nearby.off('control', done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    nearby.on('control', done);
    void stopped.then(done);
  });
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Bytes read of every file and their sizes, for a progress line. */
export function planProgress(plan: ReplayPlan): { bytes: number; size: number } {
  return plan.sources.reduce((sum, s) => ({ bytes: sum.bytes + s.progress.bytes, size: sum.size + s.progress.size }), { bytes: 0, size: 0 });
}

/**
 * Replays the plan into the engine at `speed` (0: as fast as possible) until it ends or `stopped`
 * resolves; `onGroup` after each group that set something. Takes the store's clock first (refused
 * while another replay has it; `paused`: held at the first record until resumed or stepped) and
 * always gives it back.
 */
export async function driveReplay(
  engine: Engine,
  plan: ReplayPlan,
  speed: number,
  stopped: Promise<string>,
  onGroup: (tally: ReplayTally, clock: ClockState) => void = () => undefined,
  options: { paused?: boolean } = {},
): Promise<ReplayTally> {
  const tally = newReplayTally();
  let stop: string | undefined;
  void stopped.then((reason) => (stop = reason));
  engine.claimClock({ source: plan.describe, startMs: plan.firstMs, speed, total: plan.total, paused: options.paused });
  const started = monotonicMs();
  const batches = merged(plan);
  try {
    // The records read and not yet set: `buffer` from `at` on.
    let buffer = createBatch(0);
    let at = 0;
    let eof = false;
    let seenControl = -1;
    for (;;) {
      await Promise.resolve();
      if (stop) break;
      // At least a group's worth ahead (at a pace the record after the last due one caps the clock).
      while (!eof && buffer.length - at < GROUP_RECORDS) {
        const next = await batches.next();
        if (next.done) eof = true;
        else if (at === buffer.length) (buffer = next.value), (at = 0);
        else (buffer = appendFrom(appendFrom(createBatch(buffer.length - at + next.value.length), buffer, at), next.value)), (at = 0);
      }
      if (at === buffer.length) break;
      // Nothing to do while paused or until the next record is due, unless a control request came.
      const clock = engine.clockState();
      const control = clock.controlSeq !== seenControl;
      seenControl = clock.controlSeq;
      const stepping = clock.stepRecords !== null || clock.stepUntilMs !== null;
      if (!control && !stepping) {
        if (clock.paused) {
          await sleep(CLOCK_POLL_MS, stopped);
          continue;
        }
        if (clock.speed > 0) {
          const wait = (buffer.times[at]! - dueTime(clock, Date.now())) / clock.speed;
          if (wait > 0) {
            await sleep(Math.min(wait, CLOCK_POLL_MS), stopped);
            continue;
          }
        }
      }
      const group = engine.replayGroup(buffer, { from: at, eof, budgetMs: GROUP_BUDGET_MS });
      if (group.records > 0) {
        tally.firstMs ??= buffer.times[at]!;
        tally.lastMs = buffer.times[at + group.records - 1]!;
        at += group.records;
        tally.records += group.records;
        tally.prices += group.prices;
        tally.fills += group.fills;
        tally.cancelled += group.cancelled;
        tally.expired += group.expired;
        tally.brackets += group.brackets;
        for (const [instrument, price] of group.last) tally.last.set(instrument, price);
        tally.seconds = (monotonicMs() - started) / 1000;
        onGroup(tally, group.clock);
        nearby.emit('advanced');
        // Between two groups the event loop runs: a server's requests, a signal.
        await turn();
      } else if (!control) {
        await sleep(CLOCK_POLL_MS, stopped);
      }
    }
  } finally {
    await batches.return(undefined);
    tally.seconds = (monotonicMs() - started) / 1000;
    engine.releaseClock();
  }
  tally.stopped = stop;
  return tally;
}

/** How long a step may take before its caller is answered anyway (the replay carries it on). */
export const STEP_WAIT_MS = 30_000;

/**
 * A control request to the clock of the engine's store, carried out by whichever process drives
 * the replay: pause, resume and speed at once; a step once the replay has set it (or ended, or
 * another request took its place), or `waitMs` has passed (`done: false`). Throws no_replay (409)
 * when no replay runs.
 */
export async function controlClock(engine: Engine, request: ClockControl, waitMs = STEP_WAIT_MS): Promise<{ done: boolean; state: ClockState }> {
  const { seq } = engine.controlClock(request);
  nearby.emit('control');
  const deadline = Date.now() + waitMs;
  for (;;) {
    const state = engine.clockState();
    if (!state.replay || state.ackSeq >= seq) return { done: true, state };
    if (Date.now() > deadline) return { done: false, state };
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        nearby.off('advanced', done);
        resolve();
      };
      const timer = setTimeout(done, 10);
      nearby.on('advanced', done);
    });
  }
}
