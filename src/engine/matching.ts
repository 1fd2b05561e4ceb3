/**
 * The fill rules, as pure functions. A price update is a move from the previous last price to
 * the new one, and the market is taken to have traded every price in between. A working order
 * fills at the first price on that move at which it can fill:
 *
 * - a resting LIMIT that the move crosses fills at its limit price;
 * - a STOPMARKET fills at its stop price (then moved by the root's slippage, if one is set:
 *   fills.ts);
 * - a STOPLIMIT triggers at its stop; if its limit is marketable there it fills at the stop
 *   price, otherwise it works as a limit order from then on;
 * - an order that is already fillable where the move starts fills at that starting price. That
 *   is how a marketable LIMIT fills when placed (at the last price, at or better than its
 *   limit), and how orders placed while no price was known fill on the first price.
 */
import type { Action, OrderType } from '../service/order.js';

export interface Matchable {
  action: Action;
  orderType: OrderType;
  limitPrice: number | null;
  stopPrice: number | null;
  /** A STOPLIMIT already triggered: it works as a limit order. */
  triggered: boolean;
}

export type Match = { kind: 'fill'; price: number } | { kind: 'trigger'; price: number } | null;

function firstOnMove(ok: (price: number) => boolean, level: number, from: number, to: number): number | null {
  if (ok(from)) return from;
  if (ok(to)) return level;
  return null;
}

/** Where a limit order fills on the move, or null. BUY fills at or below the limit, SELL at or above. */
export function limitFillPrice(action: Action, limit: number, from: number, to: number): number | null {
  return firstOnMove((p) => (action === 'BUY' ? p <= limit : p >= limit), limit, from, to);
}

/** Where a stop is touched on the move, or null. BUY stops at or above the stop, SELL at or below. */
export function stopTouchPrice(action: Action, stop: number, from: number, to: number): number | null {
  return firstOnMove((p) => (action === 'BUY' ? p >= stop : p <= stop), stop, from, to);
}

/** True when a stop would trigger at once at the last price: it is on the wrong side of the market. */
export function stopIsTouched(action: Action, stop: number, last: number): boolean {
  return stopTouchPrice(action, stop, last, last) !== null;
}

/** What a move from `from` to `to` does to a working order. */
export function matchOrder(order: Matchable, from: number, to: number): Match {
  const fill = (price: number | null): Match => (price === null ? null : { kind: 'fill', price });
  switch (order.orderType) {
    case 'MARKET':
      return { kind: 'fill', price: from };
    case 'LIMIT':
      return fill(limitFillPrice(order.action, order.limitPrice!, from, to));
    case 'STOPMARKET':
      return fill(stopTouchPrice(order.action, order.stopPrice!, from, to));
    case 'STOPLIMIT': {
      if (order.triggered) return fill(limitFillPrice(order.action, order.limitPrice!, from, to));
      const touched = stopTouchPrice(order.action, order.stopPrice!, from, to);
      if (touched === null) return null;
      const price = limitFillPrice(order.action, order.limitPrice!, touched, to);
      return price === null ? { kind: 'trigger', price: touched } : { kind: 'fill', price };
    }
  }
}
