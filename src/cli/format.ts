/** Human renderings of results. Data only; the caller chooses the stream. */
import type { ChalkInstance } from 'chalk';
import type { OrderRecord, OrderResult, PositionRecord } from '../backends/types.js';
import { describeOrder, type Order } from '../order/schema.js';
import { table } from './io.js';

export function formatPrice(price: number | null | undefined): string {
  return price === null || price === undefined ? '—' : String(Number(price.toFixed(8)));
}

/** How an order stands: "filled 1 @ 4500.25", "filled 1 at an unknown price …", "working". */
export function orderStatus(order: OrderRecord): string {
  if (order.state === 'FILLED') {
    return order.avgFillPrice === null
      ? `filled ${order.filledQuantity} at an unknown price (no price is known for ${order.instrument})`
      : `filled ${order.filledQuantity} @ ${formatPrice(order.avgFillPrice)}`;
  }
  return order.state.toLowerCase();
}

function rows(pairs: Array<[string, string]>): string[] {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`);
}

export function formatOrderResult(
  kind: 'place' | 'reverse',
  order: Order,
  result: OrderResult,
  backendLabel: string,
  c: ChalkInstance,
): string[] {
  const lines: string[] = [];
  const detail = result.detail;
  const pairs: Array<[string, string]> = [];
  if (kind === 'reverse') {
    lines.push(c.green(`Reversed ${order.instrument} in ${detail?.order.account ?? order.account}`));
    if (detail?.closingOrder) {
      const closing = detail.closingOrder;
      pairs.push(['closed', `${closing.action} ${closing.quantity} MARKET, ${orderStatus(closing)} (order ${closing.id})`]);
    }
    const cancelled = detail?.cancelledOrderIds?.length ?? 0;
    if (cancelled > 0) pairs.push(['cancelled', `${cancelled} working order${cancelled === 1 ? '' : 's'}`]);
    pairs.push(['placed', describeOrder(order)]);
  } else {
    lines.push(c.green(`Placed ${describeOrder(order)}`));
  }
  pairs.push(['order id', result.orderId]);
  pairs.push(['account', detail?.order.account ?? order.account]);
  if (detail) pairs.push(['status', orderStatus(detail.order)]);
  pairs.push(['backend', backendLabel]);
  return [...lines, ...rows(pairs)];
}

export function formatPositions(positions: PositionRecord[]): string[] {
  if (positions.length === 0) return ['No open positions.'];
  return table(
    ['ACCOUNT', 'INSTRUMENT', 'QTY', 'AVG PRICE', 'REALIZED P&L'],
    positions.map((p) => [
      p.account,
      p.instrument,
      p.quantity > 0 ? `+${p.quantity}` : String(p.quantity),
      formatPrice(p.avgPrice),
      p.realizedPnl === null ? 'unknown' : formatPrice(p.realizedPnl),
    ]),
  );
}

export function formatOrders(orders: OrderRecord[]): string[] {
  if (orders.length === 0) return ['No orders.'];
  return table(
    ['ORDER ID', 'ACCOUNT', 'INSTRUMENT', 'ACTION', 'QTY', 'TYPE', 'LIMIT', 'STOP', 'TIF', 'STATE', 'FILLED', 'AVG FILL', 'CREATED'],
    orders.map((o) => [
      o.id,
      o.account,
      o.instrument,
      o.action,
      String(o.quantity),
      o.orderType,
      formatPrice(o.limitPrice),
      formatPrice(o.stopPrice),
      o.timeInForce,
      o.state,
      String(o.filledQuantity),
      o.state === 'FILLED' && o.avgFillPrice === null ? 'unknown' : formatPrice(o.avgFillPrice),
      o.createdAt,
    ]),
  );
}
