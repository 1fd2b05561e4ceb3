/**
 * The session clock (issue 29): while a replay drives the engine, the engine's time is the
 * replay's; with none running it is the wall clock. The clock lives in the store (the engine
 * writes it, src/engine/clock.ts), so every process sharing the store reads the same time. This
 * module is what a clock's state means, with nothing to import: what time it says, and the
 * control words `trade sandbox clock` and `/_sandbox/clock` take.
 */

/** What the store says of the clock. */
export interface ClockState {
  /** A replay drives the clock; false: it is the wall clock. */
  replay: boolean;
  /** The replayed time (epoch ms) at `wallMs`: where the clock was last set. */
  timeMs: number;
  /** The wall time (epoch ms) at which `timeMs` was set. */
  wallMs: number;
  /** Times real time from `wallMs` on; 0: `--speed max` (the clock is the last record's time). */
  speed: number;
  /** The clock never passes the time of the next record not yet set (null: no cap). */
  untilMs: number | null;
  paused: boolean;
  /** Records still to set before a `step N` pauses again (null: no step running). */
  stepRecords: number | null;
  /** The replayed time a `step 5m` runs to before it pauses again (null: no step running). */
  stepUntilMs: number | null;
  /** Counts control requests; `ackSeq` is the last one the replay has carried out. */
  controlSeq: number;
  ackSeq: number;
  /** Records set so far, and in the replay's window (for `show`). */
  done: number;
  total: number;
  /** What drives it: the files, for people. */
  source: string | null;
  ownerPid: number | null;
}

/**
 * The replayed time a state says it is at `wallNow` (epoch ms): the anchor moved on at the
 * speed while running, never past the next record not yet set, so it never goes back when that
 * record is set a little late.
 */
export function replayTime(state: ClockState, wallNow: number): number {
  if (state.paused || state.speed === 0 || state.stepRecords !== null || state.stepUntilMs !== null) return state.timeMs;
  const moved = state.timeMs + Math.max(0, wallNow - state.wallMs) * state.speed;
  return state.untilMs === null ? moved : Math.max(state.timeMs, Math.min(state.untilMs, moved));
}

/** A clock that no replay drives: the wall clock. */
export const WALL_CLOCK: ClockState = {
  replay: false,
  timeMs: 0,
  wallMs: 0,
  speed: 1,
  untilMs: null,
  paused: false,
  stepRecords: null,
  stepUntilMs: null,
  controlSeq: 0,
  ackSeq: 0,
  done: 0,
  total: 0,
  source: null,
  ownerPid: null,
};

/** What a person or a client can ask of a running replay's clock. */
export type ClockControl =
  | { action: 'pause' }
  | { action: 'resume' }
  | { action: 'speed'; speed: number }
  | { action: 'step'; records: number }
  | { action: 'step'; ms: number };

/** The most records or the longest time one step may take. */
export const MAX_STEP_RECORDS = 100_000_000;
export const MAX_STEP_MS = 366 * 24 * 3_600_000;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * `step N` (records of the file: a tick, or a bar) or `step 5m` (replayed time: ms, s, m, h or
 * d). Returns a reason when the text is neither.
 */
export function parseStep(text: string): { records: number } | { ms: number } | { error: string } {
  const trimmed = text.trim().toLowerCase();
  const whole = /^\d+$/.test(trimmed) ? Number(trimmed) : NaN;
  if (Number.isSafeInteger(whole)) {
    if (whole < 1 || whole > MAX_STEP_RECORDS) return { error: `a number of records from 1 to ${MAX_STEP_RECORDS}, got '${text}'` };
    return { records: whole };
  }
  const timed = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(trimmed);
  if (timed) {
    const ms = Math.round(Number(timed[1]) * UNITS[timed[2]!]!);
    if (ms < 1 || ms > MAX_STEP_MS) return { error: `a time from 1ms to 366d, got '${text}'` };
    return { ms };
  }
  return { error: `a number of records (10) or a replayed time (30s, 5m, 1h), got '${text}'` };
}

/** `--speed`/`speed N`: times real time, or 0 (`max`) for as fast as the store writes. */
export function parseClockSpeed(text: string): number | { error: string } {
  if (text.trim().toLowerCase() === 'max') return 0;
  const speed = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(speed) || speed < 0 || speed > 1_000_000) return { error: `a number from 0 to 1000000 (times real time; 0 or max: as fast as possible), got '${text}'` };
  return speed;
}

/** A clock as a client reads it (`GET /_sandbox/clock`, `trade sandbox clock --json`). */
export function clockView(state: ClockState, wallNow: number) {
  const time = state.replay ? replayTime(state, wallNow) : wallNow;
  return {
    time: new Date(time).toISOString(),
    epoch: time,
    replay: state.replay,
    ...(state.replay
      ? {
          paused: state.paused,
          speed: state.speed === 0 ? 'max' : state.speed,
          stepping: state.stepRecords !== null || state.stepUntilMs !== null,
          records: state.done,
          total: state.total,
          source: state.source,
          pid: state.ownerPid,
        }
      : {}),
  };
}

export type ClockView = ReturnType<typeof clockView>;
