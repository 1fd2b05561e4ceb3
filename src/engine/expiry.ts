/**
 * DAY orders expire when their trading session ends, at their contract's daily close (see session.ts). The engine has no timer:
 * it expires them the next time it runs, before anything else, so an expired order can never
 * fill on a later price. An expiring order's OCO siblings are cancelled with it.
 */
import type { Core } from './core.js';
import { cancelSiblings } from './oco.js';
import type { NewOrderRow, OrderRow } from './queries.js';
import { closeOf, DEFAULT_CLOSE, otherCloses, sessionEnd } from '../service/session.js';
import type { Effects } from './types.js';

/** When a working DAY order's session ends: at its contract's daily close. */
const endOf = (row: OrderRow) => sessionEnd(new Date(row.created_at), closeOf(row.instrument));

function due(core: Core, now: Date): Array<{ row: OrderRow; end: Date }> {
  return core.q.workingDay
    .all()
    .map((row) => ({ row, end: endOf(row) }))
    .filter(({ end }) => end.getTime() <= now.getTime());
}

/** The session end of each group's oldest working DAY order, computed once per oldest order. */
const memo = new Map<string, { createdAt: string; end: number }>();

function groupEnd(group: string, oldest: string | null | undefined, close: string): number {
  if (!oldest) return Infinity;
  let known = memo.get(group);
  if (known?.createdAt !== oldest) {
    known = { createdAt: oldest, end: sessionEnd(new Date(oldest), close).getTime() };
    memo.set(group, known);
  }
  return known.end;
}

/**
 * When the first working DAY order expires (ms; Infinity with none), in a few index probes:
 * within one daily close a session's end never comes before that of an order placed earlier, so
 * only the oldest working DAY order of each close needs its session end computed — the default
 * close's (16:00), and each root with another (the grains' 13:20), found by the instrument index.
 */
function firstDayExpiry(core: Core): number {
  if (!core.q.oldestWorkingDay.get()?.oldest) return Infinity;
  let first = groupEnd(DEFAULT_CLOSE, core.q.oldestWorkingDayDefault.get()?.oldest, DEFAULT_CLOSE);
  for (const [close, roots] of Object.entries(otherCloses())) {
    for (const root of roots) first = Math.min(first, groupEnd(root, core.q.oldestWorkingDayOfRoot.get(`${root} `, `${root}!`)?.oldest, close));
  }
  return first;
}

/**
 * Whether any DAY order is due. Every write asks this first, so it costs nothing when nothing is
 * due: the first expiry is kept in the write cache (cache.ts), lowered as DAY orders start working
 * (noteWorkingDay) and found again from the store when the cache was dropped.
 */
export function hasExpiredDayOrders(core: Core, now: Date | (() => Date)): boolean {
  core.cache.dayExpiry ??= firstDayExpiry(core);
  // With no working DAY order nothing can be due: a read does not need the clock (issue 34).
  if (core.cache.dayExpiry === Infinity) return false;
  return core.cache.dayExpiry <= (typeof now === 'function' ? now() : now).getTime();
}

/** Keeps the cached first expiry right when a DAY order starts working (every insert of one calls it). */
export function noteWorkingDay(core: Core, row: Pick<NewOrderRow, 'timeInForce' | 'instrument' | 'now'>): void {
  if (row.timeInForce !== 'DAY' || core.cache.dayExpiry === undefined) return;
  core.cache.dayExpiry = Math.min(core.cache.dayExpiry, sessionEnd(new Date(row.now), closeOf(row.instrument)).getTime());
}

/** Expires the DAY orders whose session ended by `now`; returns their ids. */
export function expireDayOrders(core: Core, now: Date, effects: Effects): string[] {
  if (!hasExpiredDayOrders(core, now)) return [];
  core.cache.dayExpiry = undefined;
  const expired = due(core, now).filter(({ row, end }) => core.q.finish.run('EXPIRED', end.toISOString(), row.id).changes > 0);
  // Siblings whose own session also ended were expired above; only the others are cancelled.
  for (const { row, end } of expired) cancelSiblings(core, row, end.toISOString(), effects);
  return expired.map(({ row }) => row.order_id);
}
