/**
 * Filling orders: the fill record, the position, the OCO group and the ATM brackets, and the
 * sweep that runs working orders against a price move in time priority.
 */
import { placeBrackets } from './atm.js';
import { rootOf } from '../service/contracts.js';
import { tickSizeOf } from './price-feed.js';
import { type Core, positionOf, settingsOf } from './core.js';
import { addToMoney, positionKey } from './cache.js';
import { matchOrder } from './matching.js';
import { cancelSiblings } from './oco.js';
import { FLAT, nextPosition } from './position.js';
import { type OrderRow, toOrder } from './queries.js';
import type { Effects } from './types.js';

/**
 * Fills a working order in full at `price` (null: no price is known). Cancels its OCO siblings
 * and, for an ATM entry filled at a known price, places its brackets. Returns the brackets, which
 * the caller still has to run against the rest of the move.
 */
export function fillOrder(core: Core, row: OrderRow, at: number | null, time: string, effects: Effects): OrderRow[] {
  // What is left of an order a scenario rule part-filled (issue 22); else the whole order.
  const remaining = row.quantity - row.filled_quantity;
  const terms = fillTerms(core, { ...row, quantity: remaining }, at);
  const average =
    remaining === row.quantity || terms.price === null || row.avg_fill_price === null
      ? terms.price
      : (row.avg_fill_price * row.filled_quantity + terms.price * remaining) / row.quantity;
  if (core.q.markFilled.run(average, time, row.id).changes === 0) return [];
  return applyFill(
    core,
    { ...row, state: 'FILLED', quantity: remaining, filled_quantity: row.quantity, avg_fill_price: terms.price, updated_at: time },
    terms.commission,
    time,
    effects,
  );
}

/** The price an order fills at (its root's slippage applied) and the commission it pays. */
export function fillTerms(core: Core, row: Pick<OrderRow, 'instrument' | 'order_type' | 'action' | 'quantity'>, at: number | null): { price: number | null; commission: number } {
  const settings = settingsOf(core, rootOf(row.instrument));
  return {
    price: at === null ? null : slipped(row, at, settings?.slippage_ticks ?? 0),
    commission: settings ? Number((settings.commission * row.quantity).toFixed(10)) : 0,
  };
}

/**
 * What a fill does once its order is marked filled (`row` as it now stands, `avg_fill_price` the
 * fill's price, `commission` from fillTerms): the Execution, the position, the OCO siblings, the
 * ATM brackets. A market order is inserted already filled and comes straight here.
 */
export function applyFill(core: Core, row: OrderRow, commission: number, time: string, effects: Effects): OrderRow[] {
  const { q } = core;
  const price = row.avg_fill_price;
  const current = positionOf(core, row.account, row.instrument);
  const before = current
    ? { quantity: current.quantity, avgPrice: current.avg_price, realizedPnl: current.realized_pnl, pnlKnown: current.pnl_known === 1 }
    : FLAT;
  const next = nextPosition(before, row.action === 'BUY' ? row.quantity : -row.quantity, price);
  const realized = next.realizedPnl - before.realizedPnl;
  const executionId = core.makeExecutionId();
  q.insertFill.run(row.id, row.account, row.instrument, row.action, row.quantity, price, time, executionId, next.quantity, realized, commission);
  addToMoney(core.cache, row.account, row.instrument, realized, commission, time);
  effects.fills.push({
    executionId,
    orderId: row.order_id,
    account: row.account,
    instrument: row.instrument,
    action: row.action,
    quantity: row.quantity,
    price,
    time,
    orderType: row.order_type,
    origin: row.origin,
    positionAfter: next.quantity,
    realized,
    commission,
  });
  const position = {
    account: row.account,
    instrument: row.instrument,
    quantity: next.quantity,
    avgPrice: next.avgPrice,
    realizedPnl: next.realizedPnl,
    pnlKnown: next.pnlKnown ? 1 : 0,
    now: time,
  };
  q.upsertPosition.run(position);
  core.cache.positions.set(positionKey(row.account, row.instrument), {
    account: row.account,
    instrument: row.instrument,
    quantity: next.quantity,
    avg_price: next.avgPrice,
    realized_pnl: next.realizedPnl,
    pnl_known: position.pnlKnown,
  });
  if (row.oco_id !== null) cancelSiblings(core, row, time, effects);
  if (row.atm_stop_loss_ticks === null || price === null) return [];
  const brackets = placeBrackets(core, row, price, time);
  effects.bracketOrders.push(...brackets.map(toOrder));
  return brackets;
}

/**
 * The price a market or stop order fills at with the root's slippage: that many ticks against the
 * trader (a buy higher, a sell lower), never below one tick. Limit orders (and a stop-limit's
 * limit) fill at their price or better, so they never slip.
 */
function slipped(row: Pick<OrderRow, 'instrument' | 'order_type' | 'action'>, price: number, ticks: number): number {
  if (ticks === 0 || (row.order_type !== 'MARKET' && row.order_type !== 'STOPMARKET')) return price;
  const tick = tickSizeOf(row.instrument);
  if (tick === undefined) return price;
  const moved = row.action === 'BUY' ? price + ticks * tick : price - ticks * tick;
  return Math.max(tick, Number(moved.toFixed(10)));
}

/** A working order to run against a move that, for this order, starts at `from`. */
export interface Pending {
  id: string;
  from: number;
}

/**
 * Runs working orders, oldest first, against a move ending at `to`. Orders cancelled by an
 * earlier fill (OCO) are skipped; brackets of an entry that fills join the queue, their move
 * starting at the entry's fill price.
 */
export function work(core: Core, pending: Pending[], to: number, time: string, effects: Effects): void {
  const queue = [...pending];
  for (let next = queue.shift(); next; next = queue.shift()) {
    const row = core.q.orderById.get(next.id);
    // A held order (a scenario's late reject to come) never fills.
    if (!row || row.state !== 'WORKING' || row.reject_reason != null) continue;
    const match = matchOrder(
      {
        action: row.action,
        orderType: row.order_type,
        limitPrice: row.limit_price,
        stopPrice: row.stop_price,
        triggered: row.triggered === 1,
      },
      next.from,
      to,
    );
    if (match === null) continue;
    if (match.kind === 'trigger') {
      core.q.markTriggered.run(time, row.id);
      effects.triggeredOrderIds.push(row.order_id);
      continue;
    }
    for (const bracket of fillOrder(core, row, match.price, time, effects)) queue.push({ id: bracket.id, from: match.price });
  }
}
