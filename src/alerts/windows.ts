/**
 * Alert-level trading windows (webhook-reference.md §4.8): `start_time`, `end_time` and
 * `closing_only_after`, times of day in US/Eastern, 12- or 24-hour clock. Pure: the time is given.
 */

export const WINDOW_ZONE = 'America/New_York';

/** Minutes after midnight, from `9:30`, `09:30`, `9:30 AM`, `9:30AM`, `13:30`, `1:30 pm`; a string says what is wrong. */
export function parseTimeOfDay(text: string): number | string {
  const match = /^(\d{1,2}):(\d{2})\s*(am|pm)?$/i.exec(text.trim());
  const wrong = `must be a time of day like 9:30 AM or 13:30 (US/Eastern), got '${text}'`;
  if (!match) return wrong;
  let hour = Number(match[1]);
  const minute = Number(match[2]);
  const half = match[3]?.toLowerCase();
  if (minute > 59) return wrong;
  if (half) {
    if (hour < 1 || hour > 12) return wrong;
    hour = (hour % 12) + (half === 'pm' ? 12 : 0);
  } else if (hour > 23) {
    return wrong;
  }
  return hour * 60 + minute;
}

/** `09:30` */
export const showMinute = (minute: number): string => `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;

const clockFormat = new Intl.DateTimeFormat('en-US', { timeZone: WINDOW_ZONE, hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** The minute of the day in US/Eastern at `now`. */
export function easternMinute(now: Date): number {
  const parts = clockFormat.formatToParts(now);
  const hour = Number(parts.find((p) => p.type === 'hour')!.value);
  const minute = Number(parts.find((p) => p.type === 'minute')!.value);
  return (hour % 24) * 60 + minute;
}

export interface AlertWindow {
  start?: number;
  end?: number;
  closingOnlyAfter?: number;
}

/** Is `minute` inside [start, end)? Start after end wraps past midnight (§4.8 [decision]). */
function inside(minute: number, start: number | undefined, end: number | undefined): boolean {
  if (start !== undefined && end !== undefined) return start <= end ? minute >= start && minute < end : minute >= start || minute < end;
  if (start !== undefined) return minute >= start;
  if (end !== undefined) return minute < end;
  return true;
}

export type WindowVerdict = { open: true } | { open: false; detail: string } | { open: 'closing-only'; detail: string };

/**
 * What the window allows at `minute`: everything, nothing (outside it), or closing orders only
 * (after `closing_only_after`, inside the window).
 */
export function windowAt(window: AlertWindow, minute: number): WindowVerdict {
  if (!inside(minute, window.start, window.end)) {
    const range =
      window.start !== undefined && window.end !== undefined
        ? `${showMinute(window.start)}–${showMinute(window.end)}`
        : window.start !== undefined
          ? `from ${showMinute(window.start)}`
          : `until ${showMinute(window.end!)}`;
    return { open: false, detail: `Outside trading window ${range} ET` };
  }
  if (window.closingOnlyAfter !== undefined && inside(minute, window.closingOnlyAfter, window.end))
    return { open: 'closing-only', detail: `Closing only after ${showMinute(window.closingOnlyAfter)} ET: opening orders blocked` };
  return { open: true };
}
