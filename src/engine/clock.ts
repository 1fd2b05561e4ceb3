/**
 * The session clock in the store (issue 29; what its state means is src/service/session-clock.ts).
 * One row: the replay that drives the engine writes it (claim, each group, release), `trade
 * sandbox clock` asks it to pause, resume, change speed or step, and every process sharing the
 * store reads its time from it. A replay whose process has died (killed) drives nothing: its row
 * reads as the wall clock, and the next replay takes it over.
 */
import { hostname } from 'node:os';
import { RejectedError } from '../common/errors.js';
import { type ClockControl, type ClockState, replayTime, WALL_CLOCK } from '../service/session-clock.js';
import type { Db } from './store.js';

interface ClockRow {
  replay: number;
  owner_pid: number | null;
  owner_host: string | null;
  source: string | null;
  time_ms: number;
  wall_ms: number;
  until_ms: number | null;
  speed: number;
  paused: number;
  step_records: number | null;
  step_until_ms: number | null;
  control_seq: number;
  ack_seq: number;
  done: number;
  total: number;
}

const HOST = hostname();

/** Whether a process of this machine is alive (EPERM: alive, another user's). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function toState(row: ClockRow): ClockState {
  return {
    replay: row.replay === 1,
    timeMs: row.time_ms,
    wallMs: row.wall_ms,
    speed: row.speed,
    untilMs: row.until_ms,
    paused: row.paused === 1,
    stepRecords: row.step_records,
    stepUntilMs: row.step_until_ms,
    controlSeq: row.control_seq,
    ackSeq: row.ack_seq,
    done: row.done,
    total: row.total,
    source: row.source,
    ownerPid: row.owner_pid,
  };
}

/** What a replay that takes the clock starts with. */
export interface ClockClaim {
  source: string;
  /** The first record's time: the clock starts there. */
  startMs: number;
  speed: number;
  total: number;
  paused?: boolean;
}

/** What a replay's group writes back: where the clock now is, and the step it finished, if any. */
export interface ClockAdvance {
  timeMs: number;
  wallMs: number;
  untilMs: number | null;
  stepRecords: number | null;
  stepUntilMs: number | null;
  paused: boolean;
  ackSeq: number;
  done: number;
}

export function createClockStore(db: Db) {
  let read: ReturnType<typeof prepareRead> | undefined;
  const prepareRead = () => db.prepare<[], ClockRow>('SELECT * FROM session_clock WHERE id = 1');
  const row = (): ClockRow | undefined => (read ??= prepareRead()).get();
  // Whether a replay drives the clock, alone: asked at every operation (an order asks for the
  // time), and a store mostly has none. One column and no row object, ~0.3 µs inside a
  // transaction against 5–8 µs for the whole row's sixteen (issue 34).
  let replaying: ReturnType<typeof prepareReplaying> | undefined;
  const prepareReplaying = () => db.prepare<[], { replay: number }>('SELECT replay FROM session_clock WHERE id = 1').pluck();

  /** The row, if a live replay drives it. */
  function live(): ClockRow | undefined {
    if (((replaying ??= prepareReplaying()).get() as unknown as number | undefined) !== 1) return undefined;
    // Read again whole: outside a transaction another process may have ended it in between.
    const r = row();
    if (!r || r.replay !== 1) return undefined;
    if (r.owner_pid !== null && r.owner_host === HOST && r.owner_pid !== process.pid && !alive(r.owner_pid)) return undefined;
    return r;
  }

  // Each statement is prepared once: a replay writes the clock at every group.
  const prepared = new Map<string, ReturnType<typeof db.prepare<unknown[]>>>();
  const write = (sql: string, ...params: unknown[]) => {
    let statement = prepared.get(sql);
    if (!statement) prepared.set(sql, (statement = db.prepare<unknown[]>(sql)));
    return statement.run(...params);
  };

  return {
    /** The clock's state: the wall clock's when no live replay drives it. */
    state(): ClockState {
      const r = live();
      return r ? toState(r) : WALL_CLOCK;
    },

    /** The time: the replay's while one drives the clock, else `wall()`. */
    now(wall: () => Date): Date {
      const r = live();
      return r ? new Date(replayTime(toState(r), Date.now())) : wall();
    },

    /** Whether this process drives the clock. */
    ownedHere(): boolean {
      const r = live();
      return r !== undefined && r.owner_pid === process.pid && r.owner_host === HOST;
    },

    /** Takes the clock for a replay (inside a write); refused while another live one has it. */
    claim(claim: ClockClaim): void {
      const other = live();
      if (other)
        throw new RejectedError(`A replay already drives this store's clock (${other.source ?? 'a replay'}, process ${other.owner_pid})`, {
          code: 'replay_running',
          hint: 'One replay at a time drives a store: stop that one (Ctrl-C), or wait for it to end. Nothing was replayed.',
        });
      const now = Date.now();
      write(
        `UPDATE session_clock SET replay = 1, owner_pid = ?, owner_host = ?, source = ?, time_ms = ?, wall_ms = ?, until_ms = ?, speed = ?,
           paused = ?, step_records = NULL, step_until_ms = NULL, ack_seq = control_seq, done = 0, total = ? WHERE id = 1`,
        process.pid, HOST, claim.source, claim.startMs, now, claim.startMs, claim.speed, claim.paused ? 1 : 0, claim.total,
      );
    },

    /** This process's replay, as the row has it (inside a write); throws when it lost the clock. */
    mine(): ClockState {
      const r = row();
      if (!r || r.replay !== 1 || r.owner_pid !== process.pid || r.owner_host !== HOST)
        throw new RejectedError("The replay lost the store's clock: the store was restored or reset under it", { code: 'replay_lost' });
      return toState(r);
    },

    /** Where a group left the clock (inside the group's write). */
    advance(a: ClockAdvance): void {
      write(
        `UPDATE session_clock SET time_ms = ?, wall_ms = ?, until_ms = ?, step_records = ?, step_until_ms = ?, paused = ?, ack_seq = ?, done = ? WHERE id = 1`,
        a.timeMs, a.wallMs, a.untilMs, a.stepRecords, a.stepUntilMs, a.paused ? 1 : 0, a.ackSeq, a.done,
      );
    },

    /** Gives the clock back (the wall clock's again), if this process still has it. */
    release(): void {
      write(
        `UPDATE session_clock SET replay = 0, owner_pid = NULL, owner_host = NULL, step_records = NULL, step_until_ms = NULL, ack_seq = control_seq
         WHERE id = 1 AND owner_pid = ? AND owner_host = ?`,
        process.pid, HOST,
      );
    },

    /**
     * A control request (inside a write): the anchor moves to the time it is now, so the clock
     * never jumps; a step pauses first. Returns the request's number (a step is done when the
     * replay's ackSeq reaches it) and the state after it.
     */
    control(request: ClockControl): { seq: number; state: ClockState } {
      const r = live();
      if (!r)
        throw new RejectedError('No replay is running: the clock is the wall clock', {
          status: 409,
          code: 'no_replay',
          hint: 'Start one: trade price replay FILE, or trade serve --price-replay FILE.',
        });
      const wall = Date.now();
      const at = replayTime(toState(r), wall);
      const seq = r.control_seq + 1;
      const anchor = { time: at, wall, paused: r.paused, speed: r.speed, records: null as number | null, until: null as number | null };
      if (request.action === 'pause') anchor.paused = 1;
      else if (request.action === 'resume') anchor.paused = 0;
      else if (request.action === 'speed') anchor.speed = request.speed;
      else {
        anchor.paused = 1;
        if ('records' in request) anchor.records = request.records;
        else anchor.until = at + request.ms;
      }
      const stepping = anchor.records !== null || anchor.until !== null;
      write(
        `UPDATE session_clock SET time_ms = ?, wall_ms = ?, paused = ?, speed = ?, step_records = ?, step_until_ms = ?, control_seq = ?,
           ack_seq = CASE WHEN ? THEN ack_seq ELSE ? END WHERE id = 1`,
        anchor.time, anchor.wall, anchor.paused, anchor.speed, anchor.records, anchor.until, seq, stepping ? 1 : 0, seq,
      );
      return { seq, state: toState(row()!) };
    },
  };
}

export type ClockStore = ReturnType<typeof createClockStore>;

/**
 * The time of the store at `file` for a process that does not open the engine (`trade history`,
 * `trade guard show`): a replay's while one drives it, else the wall clock's; the wall clock's
 * too when there is no store yet or it predates the clock. Opens it read-only and writes nothing.
 */
export async function readSessionTime(file: string): Promise<Date> {
  const { default: Database } = await import('better-sqlite3');
  let db: Db | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    return createClockStore(db).now(() => new Date());
  } catch {
    return new Date();
  } finally {
    db?.close();
  }
}
