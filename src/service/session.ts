/**
 * The trading session's end: its contract's daily close in America/Chicago (§10: 16:00 for most
 * roots, 13:20 for the grains; 16:00 for a root the table does not have), Monday to Friday, with
 * daylight saving time taken from Intl. An order placed after Friday's close or at the weekend
 * belongs to the session that ends on Monday. Exchange holidays are not modelled.
 */

import { chicagoWallClock, DAY_MS, fromChicagoWallClock } from './chicago.js';
import { allContracts, contractsGeneration, contractSpec, rootOf } from './contracts.js';

/** The daily close most roots share, and that of a root the table does not have. */
export const DEFAULT_CLOSE = '16:00';

const minutesOf = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));

/** The daily close (`HH:MM` Chicago) of an instrument's root. */
export function closeOf(instrument: string): string {
  return contractSpec(rootOf(instrument))?.dayEnd ?? DEFAULT_CLOSE;
}

/**
 * The roots whose close is not the default, by close: the groups DAY expiry probes apart
 * (`{'13:20': ['ZC', 'ZS']}`), the user's contracts (`trade contract add`) included.
 */
export function otherCloses(): Readonly<Record<string, readonly string[]>> {
  if (closes.generation !== contractsGeneration()) {
    const groups: Record<string, string[]> = {};
    for (const spec of allContracts()) if (spec.dayEnd !== DEFAULT_CLOSE) (groups[spec.dayEnd] ??= []).push(spec.root);
    closes = { generation: contractsGeneration(), groups };
  }
  return closes.groups;
}
let closes: { generation: number; groups: Record<string, string[]> } = { generation: -1, groups: {} };

/**
 * The end of the session an order placed at `time` belongs to: the first weekday close (default
 * 16:00 Chicago) after it.
 */
export function sessionEnd(time: Date, close: string = DEFAULT_CLOSE): Date {
  const wall = chicagoWallClock(time.getTime());
  const closeMs = minutesOf(close) * 60_000;
  let day = Math.floor(wall / DAY_MS) * DAY_MS;
  for (;;) {
    const weekday = new Date(day).getUTCDay();
    const end = day + closeMs;
    if (weekday !== 0 && weekday !== 6 && end > wall) return new Date(fromChicagoWallClock(end));
    day += DAY_MS;
  }
}
