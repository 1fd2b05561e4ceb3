/**
 * The trading session's end: 16:00 America/Chicago (CME's daily close), Monday to Friday, with
 * daylight saving time taken from Intl. An order placed after Friday's close or at the weekend
 * belongs to the session that ends on Monday. Exchange holidays are not modelled.
 */

import { chicagoWallClock, DAY_MS, fromChicagoWallClock, HOUR_MS } from '../service/chicago.js';

const CLOSE_HOUR = 16;

/** The end of the session an order placed at `time` belongs to: the first weekday 16:00 Chicago after it. */
export function sessionEnd(time: Date): Date {
  const wall = chicagoWallClock(time.getTime());
  let day = Math.floor(wall / DAY_MS) * DAY_MS;
  for (;;) {
    const weekday = new Date(day).getUTCDay();
    const close = day + CLOSE_HOUR * HOUR_MS;
    if (weekday !== 0 && weekday !== 6 && close > wall) return new Date(fromChicagoWallClock(close));
    day += DAY_MS;
  }
}
