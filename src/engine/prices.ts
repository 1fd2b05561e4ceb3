/**
 * Setting prices, in one place (`trade price set`, a MARKET order's demo price, the price sources
 * and a replay's groups all come here): the last price, the price history (the `ticks` table,
 * which quotes and bars read), and the sweep of the working orders a move crosses.
 *
 * The sweep asks first whether the move crosses any working order at all, from an index of the
 * instrument's working orders kept in the write cache: the highest level of the orders that fill
 * at or below a price (BUY limits, SELL stops) and the lowest of those that fill at or above one
 * (SELL limits, BUY stops). A move that crosses neither costs the same with 1 or 1,000 working
 * orders; one that crosses runs them all in time priority (fills.ts), exactly as before. Any write
 * but a price (a placement, a cancel, another process's commit) drops the index, and so does
 * every move that filled, triggered or cancelled something.
 */
import { type Core, lastPrice } from './core.js';
import { work } from './fills.js';
import { MINUTE_MS, recordMinuteBar } from './minute-bars.js';
import type { OrderRow } from './queries.js';
import type { Effects } from './types.js';

/** An instrument's working orders, by what moves reach them (`below`/`above`: ±Infinity when none). */
export interface Triggers {
  /** Fills or triggers when a move reaches this price or lower. */
  below: number;
  /** Fills or triggers when a move reaches this price or higher. */
  above: number;
  /** A working MARKET order (placed while no price was known): any move fills it. */
  any: boolean;
  /** Every working order that can fill, oldest first. */
  ids: string[];
}

/** Where a working order fires: at or below a level, at or above one, or on any move. */
function levelOf(row: OrderRow): { below?: number; above?: number; any?: true } | undefined {
  // A held order (a scenario's late reject to come) never fills.
  if (row.reject_reason != null) return undefined;
  const buy = row.action === 'BUY';
  const limit = (price: number) => (buy ? { below: price } : { above: price });
  const stop = (price: number) => (buy ? { above: price } : { below: price });
  switch (row.order_type) {
    case 'MARKET':
      return { any: true };
    case 'LIMIT':
      return limit(row.limit_price!);
    case 'STOPMARKET':
      return stop(row.stop_price!);
    case 'STOPLIMIT':
      return row.triggered === 1 ? limit(row.limit_price!) : stop(row.stop_price!);
  }
}

/** The index of an instrument's working orders, from the cache or built from the store. */
export function triggersOf(core: Core, instrument: string): Triggers {
  let known = core.cache.triggers.get(instrument);
  if (known) return known;
  known = { below: -Infinity, above: Infinity, any: false, ids: [] };
  for (const row of core.q.workingForInstrument.all(instrument)) {
    const level = levelOf(row);
    if (!level) continue;
    known.ids.push(row.id);
    if (level.any) known.any = true;
    if (level.below !== undefined) known.below = Math.max(known.below, level.below);
    if (level.above !== undefined) known.above = Math.min(known.above, level.above);
  }
  core.cache.triggers.set(instrument, known);
  return known;
}

/** Whether a move from `from` to `to` reaches any working order of the index. */
export const crosses = (t: Triggers, from: number, to: number): boolean =>
  t.any || Math.min(from, to) <= t.below || Math.max(from, to) >= t.above;

/**
 * Runs the instrument's working orders against a move from `from` (null: no price before) to
 * `to`, when it crosses any of them. Returns whether it ran them.
 */
export function sweepCrossed(core: Core, instrument: string, from: number | null, to: number, time: string, effects: Effects): boolean {
  const start = from ?? to;
  const triggers = triggersOf(core, instrument);
  if (!core.sweepAll && !crosses(triggers, start, to)) return false;
  work(core, triggers.ids.map((id) => ({ id, from: start })), to, time, effects);
  // Fills, triggers, OCO cancels and brackets change working orders, of this instrument or another.
  core.cache.triggers.clear();
  return true;
}

/** Records a new last price: the cache (what the write path reads), the history, its minute's bar and the `prices` row. */
export function recordPrice(core: Core, instrument: string, price: number, time: string): void {
  core.cache.prices.set(instrument, price);
  core.q.insertTick.run(instrument, price, time);
  recordMinuteBar(core.q, instrument, price, time);
  core.q.upsertPrice.run(instrument, price, time);
}

/** A price set on its own: recorded, then the orders it crosses run. */
export function setPriceIn(core: Core, instrument: string, price: number, time: string, effects: Effects): number | null {
  const previous = lastPrice(core, instrument) ?? null;
  recordPrice(core, instrument, price, time);
  sweepCrossed(core, instrument, previous, price, time, effects);
  return previous;
}

/**
 * The prices a replay's group sets (replay-group.ts): each is held in the cache at once (the
 * sweep reads it), and written at the group's end: each instrument's `prices` row once, each
 * minute's bar (minute-bars.ts) once, and of the history, per instrument and minute, the
 * minute's first, highest, lowest and last price at the times they were set (up to four rows,
 * none twice). So a day of a million ticks leaves about 5,000 rows of history, and every bar of a
 * minute or more, and the day's quote, read from them exactly what the ticks would give.
 */
export function createPriceGroup(core: Core) {
  /** An instrument's minute so far: its first, highest, lowest and last price, each with its time and rank. Changed in place, tick after tick. */
  interface Minute {
    minute: number;
    /** The four points as [price, time, rank] × open, high, low, close. */
    points: Float64Array;
    /** Whether the minute has points not yet written; how many prices it has had in this group. */
    open: boolean;
    ticks: number;
  }
  const OPEN = 0;
  const HIGH = 3;
  const LOW = 6;
  const CLOSE = 9;
  const minutes = new Map<string, Minute>();
  let n = 0;
  const iso = (ms: number) => new Date(ms).toISOString();

  function write(instrument: string, m: Minute): void {
    const p = m.points;
    const order = [OPEN, HIGH, LOW, CLOSE].sort((a, b) => p[a + 2]! - p[b + 2]!);
    for (let i = 0; i < order.length; i++) {
      if (i > 0 && p[order[i]! + 2] === p[order[i - 1]! + 2]) continue;
      core.q.insertTick.run(instrument, p[order[i]!]!, iso(p[order[i]! + 1]!));
    }
    core.q.mergeMinuteBar.run({ instrument, minute: m.minute * MINUTE_MS, open: p[OPEN]!, high: p[HIGH]!, low: p[LOW]!, close: p[CLOSE]!, ticks: m.ticks });
    m.open = false;
    m.ticks = 0;
  }

  const put = (p: Float64Array, at: number, price: number, timeMs: number, rank: number) => {
    p[at] = price;
    p[at + 1] = timeMs;
    p[at + 2] = rank;
  };

  return {
    /** A new last price at `timeMs`. */
    set(instrument: string, price: number, timeMs: number): void {
      core.cache.prices.set(instrument, price);
      const minute = Math.floor(timeMs / MINUTE_MS);
      const rank = n++;
      let m = minutes.get(instrument);
      if (!m) minutes.set(instrument, (m = { minute, points: new Float64Array(12), open: false, ticks: 0 }));
      const p = m.points;
      if (!m.open || m.minute !== minute) {
        if (m.open) write(instrument, m);
        m.minute = minute;
        m.open = true;
        m.ticks = 1;
        for (const at of [OPEN, HIGH, LOW, CLOSE]) put(p, at, price, timeMs, rank);
        return;
      }
      m.ticks++;
      if (price > p[HIGH]!) put(p, HIGH, price, timeMs, rank);
      if (price < p[LOW]!) put(p, LOW, price, timeMs, rank);
      put(p, CLOSE, price, timeMs, rank);
    },
    /** The group's end: the history kept so far and the last prices (the rest of a minute starts again). */
    flush(): Map<string, number> {
      const last = new Map<string, number>();
      for (const [instrument, m] of minutes) {
        if (m.open) write(instrument, m);
        core.q.upsertPrice.run(instrument, m.points[CLOSE]!, iso(m.points[CLOSE + 1]!));
        last.set(instrument, m.points[CLOSE]!);
      }
      minutes.clear();
      return last;
    },
  };
}
