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

let memo: { createdAt: string; end: number } | undefined;

/**
 * Whether any DAY order is due, in one index probe: a session's end never comes before that of an
 * order placed earlier, so only the oldest working DAY order needs its session end computed.
 * Every write asks this first, so it must cost next to nothing when nothing is due.
 */
export function hasExpiredDayOrders(core: Core, now: Date): boolean {
  const oldest = core.q.oldestWorkingDay.get()?.oldest;
  if (!oldest) return false;
  if (memo?.createdAt !== oldest) memo = { createdAt: oldest, end: sessionEnd(new Date(oldest)).getTime() };
  return memo.end <= now.getTime();
}

/** Expires the DAY orders whose session ended by `now`; returns their ids. */
export function expireDayOrders(core: Core, now: Date, effects: Effects): string[] {
  if (!hasExpiredDayOrders(core, now)) return [];
  const expired = due(core, now).filter(({ row, end }) => core.q.finish.run('EXPIRED', end.toISOString(), row.id).changes > 0);
  // Siblings whose own session also ended were expired above; only the others are cancelled.
  for (const { row, end } of expired) cancelSiblings(core, row, end.toISOString(), effects);
  return expired.map(({ row }) => row.order_id);
}
