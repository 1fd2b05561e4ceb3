/**
 * OCO groups: working orders in one account that share an ocoId. When one of them fills, is
 * cancelled or expires, the others are cancelled. Once no order of a group works any more the
 * group is finished, and its id cannot be used again in that account.
 */
import { RejectedError } from '../common/errors.js';
import type { Core } from './core.js';
import type { OrderRow } from './queries.js';
import type { Effects } from './types.js';

/** Refuses an ocoId whose group in the account exists and has finished. */
export function assertOcoIdUsable(core: Core, account: string, ocoId: string): void {
  const group = core.q.ocoGroup.all(account, ocoId);
  if (group.length > 0 && !group.some((o) => o.state === 'WORKING')) {
    throw new RejectedError(
      `Invalid request: ocoId: group '${ocoId}' has no active order; use a new id`,
      { code: 'oco_finished' },
    );
  }
}

/** Cancels the other working orders of the row's OCO group, if it has one. */
export function cancelSiblings(core: Core, row: OrderRow, time: string, effects: Effects): void {
  if (row.oco_id === null) return;
  for (const sibling of core.q.ocoGroup.all(row.account, row.oco_id)) {
    if (sibling.id === row.id || sibling.state !== 'WORKING') continue;
    core.q.finish.run('CANCELLED', time, sibling.id);
    effects.cancelledOrderIds.push(sibling.order_id);
  }
}

/** Cancels a working order and, through its OCO group, its siblings. */
export function cancelWithGroup(core: Core, row: OrderRow, time: string, effects: Effects): void {
  if (core.q.finish.run('CANCELLED', time, row.id).changes === 0) return;
  effects.cancelledOrderIds.push(row.order_id);
  cancelSiblings(core, row, time, effects);
}
