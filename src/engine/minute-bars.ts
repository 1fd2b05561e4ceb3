/**
 * The engine's price history as one-minute bars (issue 30): every price the engine sets (a
 * `trade price set`, a replay, a feed, a demo price) updates the bar of its minute, so a report
 * can draw a replayed day or a session however fast the prices came. A bar starts at a whole UTC
 * minute; its close is the last price set in it. The table (minute_bars) comes with the migration of issue 30.
 */
import type { Queries } from './queries.js';

export const MINUTE_MS = 60_000;

export interface MinuteBar {
  /** The minute's start, epoch ms (UTC). */
  minute: number;
  open: number;
  high: number;
  low: number;
  close: number;
  /** How many prices were set in the minute. */
  ticks: number;
}

/** A new last price at `time` (ISO): the bar of its minute begins or moves. */
export function recordMinuteBar(q: Queries, instrument: string, price: number, time: string): void {
  const minute = Math.floor(Date.parse(time) / MINUTE_MS) * MINUTE_MS;
  q.upsertMinuteBar.run({ instrument, minute, price });
}

/** The bars of an instrument whose minute starts in [from, to] (epoch ms), oldest first. */
export function readMinuteBars(q: Queries, instrument: string, from: number, to: number): MinuteBar[] {
  return q.minuteBars.all(instrument, Math.floor(from / MINUTE_MS) * MINUTE_MS, to);
}
