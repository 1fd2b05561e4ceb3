/**
 * The trading session's end: 16:00 America/Chicago (CME's daily close), Monday to Friday, with
 * daylight saving time taken from Intl. An order placed after Friday's close or at the weekend
 * belongs to the session that ends on Monday. Exchange holidays are not modelled.
 */

const ZONE = 'America/Chicago';
const CLOSE_HOUR = 16;
const DAY_MS = 86_400_000;

const parts = new Intl.DateTimeFormat('en-US', {
  timeZone: ZONE,
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

/** The wall clock in Chicago at an instant, as if it were UTC: year, month, day, time. */
function chicagoWallClock(instant: number): number {
  const p = Object.fromEntries(parts.formatToParts(new Date(instant)).map((x) => [x.type, Number(x.value)]));
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
}

/** The instant Chicago's wall clock reads `wall` (a UTC-encoded wall time). */
function fromChicagoWallClock(wall: number): number {
  let instant = wall;
  // Two rounds settle the offset; 16:00 is never inside a DST transition (those happen at 02:00).
  for (let i = 0; i < 2; i++) instant = wall - (chicagoWallClock(instant) - instant);
  return instant;
}

/** The end of the session an order placed at `time` belongs to: the first weekday 16:00 Chicago after it. */
export function sessionEnd(time: Date): Date {
  const wall = chicagoWallClock(time.getTime());
  let day = Math.floor(wall / DAY_MS) * DAY_MS;
  for (;;) {
    const weekday = new Date(day).getUTCDay();
    const close = day + CLOSE_HOUR * 3_600_000;
    if (weekday !== 0 && weekday !== 6 && close > wall) return new Date(fromChicagoWallClock(close));
    day += DAY_MS;
  }
}
