/**
 * A replay's group (issue 29): records set in one transaction, as many as the session clock
 * allows (all that are due at its speed, none while paused, exactly those of a step), with DAY
 * expiry at each record's time. Prices are held in the write cache while the group runs; each
 * instrument's `prices` row, its minute history (prices.ts) and the clock are written once, at the
 * group's end, in the same commit as the fills: a fill is never reported before it is committed,
 * and the last prices in the store are those of the last record committed.
 */
import { replayTime, type ClockState } from '../service/session-clock.js';
import type { ClockAdvance, ClockStore } from './clock.js';
import { type Core, lastPrice, newEffects } from './core.js';
import { expireDayOrders, hasExpiredDayOrders } from './expiry.js';
import { assertOnTick } from './orders.js';
import { createPriceGroup, crosses, sweepCrossed, triggersOf } from './prices.js';
import { onGrid, tickSizeOf } from './price-feed.js';
import type { ReplayBatch, ReplayGroup } from './types.js';
import { monotonicMs } from '../common/monotonic.js';

export interface ReplayGroupOptions {
  /** The batch's first record not yet set. */
  from: number;
  /** The batch ends the replay: its last record may be set at any pace. */
  eof: boolean;
  /** Stop taking records once this long has passed (at least 256 are taken when due). */
  budgetMs: number;
}

/** Whether a move reaches any working order of the instrument (the index, no read once built). */
const crossesAny = (core: Core, instrument: string, from: number | null, to: number) => core.sweepAll === true || crosses(triggersOf(core, instrument), from ?? to, to);

/** The time a running clock has reached, without the reader's cap (the driver's own schedule). */
export const dueTime = (state: ClockState, wallNow: number): number => replayTime({ ...state, untilMs: null }, wallNow);

/** How many of the `left` records the clock lets this group set, and up to what time. */
function allowance(state: ClockState, left: number, eof: boolean, wallNow: number): { limit: number; dueMs: number } {
  if (state.stepRecords !== null) return { limit: Math.min(left, state.stepRecords), dueMs: Infinity };
  if (state.stepUntilMs !== null) return { limit: left, dueMs: state.stepUntilMs };
  if (state.paused) return { limit: 0, dueMs: -Infinity };
  if (state.speed === 0) return { limit: left, dueMs: Infinity };
  // At a pace, the batch's last record is the clock's cap until more is read (or the file ends).
  return { limit: eof ? left : left - 1, dueMs: dueTime(state, wallNow) };
}

/** Runs inside the group's IMMEDIATE transaction. */
export function runReplayGroup(core: Core, clocks: ClockStore, batch: ReplayBatch, options: ReplayGroupOptions): ReplayGroup {
  core.cache.sync();
  const state = clocks.mine();
  const wallNow = Date.now();
  const { from } = options;
  const { limit, dueMs } = allowance(state, batch.length - from, options.eof, wallNow);
  const { instruments, times, prices: tickPrices, paths } = batch;
  const deadline = monotonicMs() + options.budgetMs;
  const effects = newEffects();
  const group = createPriceGroup(core);
  const ticks = new Map<string, number | undefined>();
  let prices = 0;
  let expired = 0;
  let lastTime = state.timeMs;
  let i = 0;
  for (; i < limit; i++) {
    const at = from + i;
    const instrument = instruments[at]!;
    const timeMs = times[at]!;
    if (timeMs > dueMs) break;
    if ((i & 255) === 255 && monotonicMs() > deadline) break;
    // DAY orders whose session ended by this record's time expire first (the cached first expiry: no read).
    if (!(core.cache.dayExpiry! > timeMs) && hasExpiredDayOrders(core, new Date(timeMs))) {
      expired += expireDayOrders(core, new Date(timeMs), effects).length;
      core.cache.triggers.clear();
    }
    // The time as text only when something is written with it: most records cross nothing.
    let time: string | undefined;
    const path = paths.size > 0 ? paths.get(at) : undefined;
    for (let k = 0, n = path ? path.length : 1; k < n; k++) {
      const price = path ? path[k]! : tickPrices[at]!;
      const previous = lastPrice(core, instrument) ?? null;
      // A repeat moves nothing and sweeps nothing; its minute's bar counts it, as a price set by hand is.
      if (previous === price) {
        group.set(instrument, price, timeMs);
        continue;
      }
      if (!ticks.has(instrument)) ticks.set(instrument, tickSizeOf(instrument));
      const tick = ticks.get(instrument);
      if (tick !== undefined && !onGrid(price, tick)) assertOnTick('price', instrument, price);
      group.set(instrument, price, timeMs);
      prices++;
      if (crossesAny(core, instrument, previous, price)) sweepCrossed(core, instrument, previous, price, (time ??= new Date(timeMs).toISOString()), effects);
    }
    lastTime = timeMs;
  }
  const last = group.flush();

  const advance = advanceOf(state, i < batch.length - from ? times[from + i]! : null, i, batch.length - from, lastTime, options.eof, wallNow);
  const changed = Object.entries(advance).some(([key, value]) => value !== (state as unknown as Record<string, unknown>)[key]);
  if (changed) clocks.advance(advance);
  return {
    records: i,
    prices,
    fills: effects.fills.length,
    cancelled: effects.cancelledOrderIds.length,
    expired,
    brackets: effects.bracketOrders.length,
    last,
    clock: { ...state, ...advance },
  };
}

/**
 * Where the clock is after a group that set `taken` of the `left` records, the last at
 * `lastTime`; `next` is the time of the first one not set (null: none left in the batch).
 */
function advanceOf(state: ClockState, next: number | null, taken: number, left: number, lastTime: number, eof: boolean, wallNow: number): ClockAdvance {
  const base: ClockAdvance = {
    timeMs: state.timeMs,
    wallMs: state.wallMs,
    untilMs: state.untilMs,
    stepRecords: state.stepRecords,
    stepUntilMs: state.stepUntilMs,
    paused: state.paused,
    ackSeq: state.ackSeq,
    done: state.done + taken,
  };
  const ends = eof && taken === left;
  if (state.stepRecords !== null) {
    const left = state.stepRecords - taken;
    const finished = left <= 0 || ends;
    return { ...base, timeMs: taken > 0 ? lastTime : state.timeMs, wallMs: wallNow, untilMs: next, stepRecords: finished ? null : left, ackSeq: finished ? state.controlSeq : state.ackSeq };
  }
  if (state.stepUntilMs !== null) {
    const finished = (next !== null && next > state.stepUntilMs) || ends;
    return {
      ...base,
      timeMs: finished ? Math.max(state.stepUntilMs, lastTime) : lastTime,
      wallMs: wallNow,
      untilMs: next,
      stepUntilMs: finished ? null : state.stepUntilMs,
      ackSeq: finished ? state.controlSeq : state.ackSeq,
    };
  }
  if (state.paused) return base;
  if (state.speed === 0) return taken > 0 ? { ...base, timeMs: lastTime, wallMs: wallNow, untilMs: next } : base;
  // At a pace the anchor stays where it was set: the clock moves on by itself, up to the next record.
  return { ...base, untilMs: next };
}
