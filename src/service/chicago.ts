/**
 * America/Chicago wall-clock time, where the service's sessions, DAY expiry, trading days and
 * the times it writes live (§4.1, §8.1, §10).
 *
 * Since 2007 Chicago keeps US Central time: UTC-6, and UTC-5 from the second Sunday of March at
 * 02:00 local (08:00 UTC) to the first Sunday of November at 02:00 local (07:00 UTC). That rule is
 * computed here, because the first Intl formatter a process builds costs ~25 ms (ICU loads its
 * data), more than a whole embedded `trade place` may spend. Instants before 2007 take the rules
 * from Intl instead, built on first such use. test/service/chicago.test.ts holds the rule to Intl
 * over every transition it covers.
 */

const ZONE = 'America/Chicago';
export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
/** The first year of the current US daylight-saving rule (Energy Policy Act of 2005). */
const RULE_FROM = Date.UTC(2007, 0, 1);

let parts: Intl.DateTimeFormat | undefined;
const daylight = new Map<number, readonly [number, number]>();

/** The n-th Sunday (1-based) of a month, as a UTC day start. */
function nthSunday(year: number, month: number, n: number): number {
  const first = Date.UTC(year, month, 1);
  const weekday = new Date(first).getUTCDay();
  return first + (((7 - weekday) % 7) + 7 * (n - 1)) * DAY_MS;
}

/** [start, end) of daylight time in a year, as UTC instants. */
function daylightOf(year: number): readonly [number, number] {
  let bounds = daylight.get(year);
  if (!bounds) {
    bounds = [nthSunday(year, 2, 2) + 8 * HOUR_MS, nthSunday(year, 10, 1) + 7 * HOUR_MS];
    daylight.set(year, bounds);
  }
  return bounds;
}

/** The wall clock by Intl's rules (the years before RULE_FROM). */
function intlWallClock(instant: number): number {
  parts ??= new Intl.DateTimeFormat('en-US', {
    timeZone: ZONE,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
    hour: 'numeric',
    minute: 'numeric',
    second: 'numeric',
  });
  const p = Object.fromEntries(parts.formatToParts(new Date(instant)).map((x) => [x.type, Number(x.value)]));
  const ms = ((instant % 1000) + 1000) % 1000;
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) + ms;
}

/** The wall clock in Chicago at an instant, as if it were UTC (milliseconds kept). */
export function chicagoWallClock(instant: number): number {
  if (!(instant >= RULE_FROM)) return intlWallClock(instant);
  const [start, end] = daylightOf(new Date(instant).getUTCFullYear());
  return instant + (instant >= start && instant < end ? -5 : -6) * HOUR_MS;
}

/** The instant Chicago's wall clock reads `wall` (a UTC-encoded wall time). */
export function fromChicagoWallClock(wall: number): number {
  let instant = wall;
  // Two rounds settle the offset; the times asked for (16:00, 17:00) are never inside a DST change (02:00).
  for (let i = 0; i < 2; i++) instant = wall - (chicagoWallClock(instant) - instant);
  return instant;
}

let lastIso: string | undefined;
let lastServiceTime = '';

/** `2026-03-18T09:30:00.0000000`: a time as the service writes it, Chicago wall clock, no offset. */
export function serviceTime(iso: string): string {
  // An order's times are mostly one instant (created, updated, its fill), and so are a group's
  // orders': the last answer is kept (~3 µs a call otherwise; issue 34).
  if (iso === lastIso) return lastServiceTime;
  const wall = new Date(chicagoWallClock(Date.parse(iso))).toISOString();
  lastServiceTime = `${wall.slice(0, 23)}0000`;
  lastIso = iso;
  return lastServiceTime;
}

/**
 * The start of the current trading day: the last 17:00 Chicago at or before `now` (§3.9). During
 * the day that is 17:00 of the calendar day before; from 17:00 on, the next trading day has begun,
 * so its start is 17:00 of the same day (a trading day is never longer than 24 hours).
 */
export function tradingDayStart(now: Date): Date {
  const wall = chicagoWallClock(now.getTime());
  const open = Math.floor(wall / DAY_MS) * DAY_MS + 17 * HOUR_MS;
  return new Date(fromChicagoWallClock(wall >= open ? open : open - DAY_MS));
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The offset of Chicago from UTC at an instant, as `-06:00` or `-05:00`. */
export function chicagoOffset(instant: number): string {
  const minutes = Math.round((chicagoWallClock(instant) - instant) / 60_000);
  return `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}:${pad(Math.abs(minutes) % 60)}`;
}

/** `2025-03-10T07:53:13.0908000-05:00`: Chicago time with its offset (the snapshot's `timestamp`). */
export function chicagoTimestamp(instant: number): string {
  return `${new Date(chicagoWallClock(instant)).toISOString().slice(0, 23)}0000${chicagoOffset(instant)}`;
}

/** `03/18/2026 01:51:54 PM`: a quote's `quoteTime`, Chicago time (§4.4). */
export function quoteTime(instant: number): string {
  const wall = new Date(chicagoWallClock(instant));
  const hour = wall.getUTCHours();
  const h12 = hour % 12 === 0 ? 12 : hour % 12;
  return `${pad(wall.getUTCMonth() + 1)}/${pad(wall.getUTCDate())}/${wall.getUTCFullYear()} ${pad(h12)}:${pad(wall.getUTCMinutes())}:${pad(wall.getUTCSeconds())} ${hour < 12 ? 'AM' : 'PM'}`;
}
