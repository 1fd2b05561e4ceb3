/**
 * DAY orders expire when their trading session ends (see session.ts). The engine has no timer:
 * it expires them the next time it runs, before anything else, so an expired order can never
 * fill on a later price. An expiring order's OCO siblings are cancelled with it.
 */
import type { Core } from './core.js';
import { cancelSiblings } from './oco.js';
import type { OrderRow } from './queries.js';
import { sessionEnd } from './session.js';
import type { Effects } from './types.js';

function due(core: Core, now: Date): Array<{ row: OrderRow; end: Date }> {
  return core.q.workingDay
    .all()
    .map((row) => ({ row, end: sessionEnd(new Date(row.created_at)) }))
    .filter(({ end }) => end.getTime() <= now.getTime());
}

export function hasExpiredDayOrders(core: Core, now: Date): boolean {
  return due(core, now).length > 0;
}

/** Expires the DAY orders whose session ended by `now`; returns their ids. */
export function expireDayOrders(core: Core, now: Date, effects: Effects): string[] {
  const expired = due(core, now).filter(({ row, end }) => core.q.finish.run('EXPIRED', end.toISOString(), row.id).changes > 0);
  // Siblings whose own session also ended were expired above; only the others are cancelled.
  for (const { row, end } of expired) cancelSiblings(core, row, end.toISOString(), effects);
  return expired.map(({ row }) => row.id);
}
