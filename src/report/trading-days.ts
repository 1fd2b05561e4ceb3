/**
 * Trading days as the service counts them (§3.9): a day begins at 17:00 America/Chicago and is
 * named by the date it ends on, so a fill at 18:00 Chicago on a Tuesday is Wednesday's. The
 * report's window (`--from`, `--to`, `--days`) is read here.
 */
import { UsageError } from '../common/errors.js';
import { chicagoWallClock, DAY_MS, fromChicagoWallClock, HOUR_MS, tradingDayStart } from '../service/chicago.js';

/** `2025-09-03`: the trading day an instant belongs to. */
export function tradingDayOf(instant: number): string {
  return new Date(chicagoWallClock(tradingDayStart(new Date(instant)).getTime() + DAY_MS)).toISOString().slice(0, 10);
}

/** The start of a named trading day: 17:00 Chicago on the calendar day before. */
export function dayStart(day: string): number {
  return fromChicagoWallClock(Date.parse(`${day}T00:00:00Z`) - DAY_MS + 17 * HOUR_MS);
}

/** The end of a named trading day: 17:00 Chicago on that day. */
export function dayEnd(day: string): number {
  return fromChicagoWallClock(Date.parse(`${day}T00:00:00Z`) + 17 * HOUR_MS);
}

export interface Window {
  /** Epoch ms, inclusive. */
  from: number;
  /** Epoch ms, inclusive. */
  to: number;
}

export interface WindowFlags {
  from?: string;
  to?: string;
  days?: string;
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const LOCAL_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
const ZONED_TIME = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;

function usage(message: string): UsageError {
  return new UsageError(message, { hint: "Nothing was read. Run 'trade report --help' for examples." });
}

/**
 * A `--from` or `--to` value: a trading day (`2025-09-03`: from its start, or to its end), a time
 * with a zone (`2025-09-03T14:30:00Z`), or a time without one, read as Chicago's (the service's).
 */
function instantOf(flag: '--from' | '--to', text: string): number {
  const value = text.trim();
  if (DATE.test(value) && !Number.isNaN(Date.parse(`${value}T00:00:00Z`))) return flag === '--from' ? dayStart(value) : dayEnd(value);
  if (ZONED_TIME.test(value) && !Number.isNaN(Date.parse(value.replace(' ', 'T')))) return Date.parse(value.replace(' ', 'T'));
  if (LOCAL_TIME.test(value) && !Number.isNaN(Date.parse(`${value.replace(' ', 'T')}Z`))) return fromChicagoWallClock(Date.parse(`${value.replace(' ', 'T')}Z`));
  throw usage(`${flag} takes a trading day (2025-09-03) or a time (2025-09-03T09:30, Chicago; or with Z or an offset), got '${text}'`);
}

/** The trading day `n` weekdays before the one named (Saturday and Sunday have no session of their own). */
function weekdaysBefore(day: string, n: number): string {
  let instant = Date.parse(`${day}T00:00:00Z`);
  for (let left = n; left > 0; ) {
    instant -= DAY_MS;
    const weekday = new Date(instant).getUTCDay();
    if (weekday !== 0 && weekday !== 6) left -= 1;
  }
  return new Date(instant).toISOString().slice(0, 10);
}

/** The window the flags name; by default the current trading day up to now. */
export function reportWindow(flags: WindowFlags, now: number): Window {
  if (flags.days !== undefined) {
    if (flags.from !== undefined || flags.to !== undefined) throw usage('Give --days or --from/--to, not both');
    const n = /^\s*\d+\s*$/.test(flags.days) ? Number(flags.days) : NaN;
    if (!(n >= 1 && n <= 3660)) throw usage(`--days takes a whole number of trading days from 1 to 3660, got '${flags.days}'`);
    return { from: dayStart(weekdaysBefore(tradingDayOf(now), n - 1)), to: now };
  }
  const from = flags.from === undefined ? tradingDayStart(new Date(now)).getTime() : instantOf('--from', flags.from);
  const to = flags.to === undefined ? Math.max(now, from) : instantOf('--to', flags.to);
  if (to <= from) throw usage(`--to (${new Date(to).toISOString()}) must be after --from (${new Date(from).toISOString()})`);
  return { from, to };
}
