/** Human renderings of results. Data only; the caller chooses the stream. */
import type { ChalkInstance } from 'chalk';
import type { CancelResult, CloseResult, OrderRecord, OrderResult, PositionRecord } from '../backends/types.js';
import type { PriceOutcome } from '../engine/engine.js';
import { describeOrder, type Order } from '../order/schema.js';
import { fitTable, type FittedTable } from './io.js';

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
  if (order.triggered) return 'working (stop touched, now a limit)';
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
  if (kind === 'place' && detail?.cancelledOrderIds?.length) {
    pairs.push(['cancelled', `${detail.cancelledOrderIds.join(', ')} (OCO)`]);
  }
  pairs.push(...bracketRows(detail?.bracketOrders));
  pairs.push(['backend', backendLabel]);
  return [...lines, ...rows(pairs)];
}

/** `width`: fit to a terminal this wide (see fitTable). */
export function formatPositions(positions: PositionRecord[], includeFlat = false, width?: number): FittedTable {
  if (positions.length === 0) return { lines: [includeFlat ? 'No positions.' : 'No open positions.'], hidden: [] };
  return fitTable(
    ['ACCOUNT', 'INSTRUMENT', 'QTY', 'AVG PRICE', 'REALIZED P&L'],
    positions.map((p) => [
      p.account,
      p.instrument,
      p.quantity > 0 ? `+${p.quantity}` : String(p.quantity),
      formatPrice(p.avgPrice),
      p.realizedPnl === null ? 'unknown' : formatPrice(p.realizedPnl),
    ]),
    { width, optional: ['REALIZED P&L', 'AVG PRICE'] },
  );
}

/** Left out first when the terminal is narrow; the id, instrument, side, size, type and state stay. */
const ORDER_COLUMNS_OPTIONAL = ['CREATED', 'TIF', 'FILLED', 'AVG FILL', 'STOP', 'LIMIT', 'ACCOUNT'];

export function formatOrders(orders: OrderRecord[], width?: number): FittedTable {
  if (orders.length === 0) return { lines: ['No orders.'], hidden: [] };
  return fitTable(
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
    { width, optional: ORDER_COLUMNS_OPTIONAL },
  );
}

const ORIGIN_LABEL: Record<OrderRecord['origin'], string> = {
  client: 'client',
  close: 'close',
  'reverse-close': 'reverse',
  'atm-stop-loss': 'ATM stop-loss',
  'atm-profit-target': 'ATM profit-target',
};

/** `SELL 1 ES 09-25 STOPMARKET stop 4498` — an order record in one line, without its id. */
export function describeRecord(order: OrderRecord): string {
  const parts = [order.action, String(order.quantity), order.instrument, order.orderType];
  if (order.stopPrice !== undefined) parts.push(`stop ${formatPrice(order.stopPrice)}`);
  if (order.limitPrice !== undefined) parts.push(`limit ${formatPrice(order.limitPrice)}`);
  return parts.join(' ');
}

/** The lines an ATM entry's brackets add to a result. */
export function bracketRows(brackets: OrderRecord[] | undefined): Array<[string, string]> {
  return (brackets ?? []).map((b) => [
    b.origin === 'atm-stop-loss' ? 'stop-loss' : 'target',
    `${describeRecord(b)} ${b.timeInForce}, ${b.state.toLowerCase()} (order ${b.id})`,
  ]);
}

export function formatPriceOutcome(outcome: PriceOutcome, c: ChalkInstance): string[] {
  const was = outcome.previousPrice === null ? 'first price' : `was ${formatPrice(outcome.previousPrice)}`;
  const lines = [c.green(`Price ${outcome.instrument} ${formatPrice(outcome.price)} (${was})`)];
  const pairs: Array<[string, string]> = [];
  for (const f of outcome.fills) {
    const origin = f.origin === 'client' ? '' : `${ORIGIN_LABEL[f.origin]}, `;
    pairs.push(['filled', `${f.action} ${f.quantity} ${f.orderType} @ ${formatPrice(f.price)} in ${f.account} (${origin}order ${f.orderId})`]);
  }
  for (const id of outcome.triggeredOrderIds) pairs.push(['triggered', `STOPLIMIT ${id}: stop touched, now working as a limit`]);
  for (const b of outcome.bracketOrders) {
    pairs.push(['placed', `${describeRecord(b)} in ${b.account} (${ORIGIN_LABEL[b.origin]}, order ${b.id})`]);
  }
  for (const id of outcome.cancelledOrderIds) pairs.push(['cancelled', `${id} (OCO)`]);
  if (pairs.length === 0) return [...lines, '  no working order crossed'];
  return [...lines, ...rows(pairs)];
}

export function formatCancelResult(result: CancelResult, account: string | undefined, backendLabel: string, c: ChalkInstance): string[] {
  const pairs: Array<[string, string]> = [];
  const others = result.detail?.cancelledOrderIds.filter((id) => id !== result.orderId) ?? [];
  for (const id of others) pairs.push(['also cancelled', `${id} (OCO)`]);
  const owner = result.detail?.order.account ?? account;
  if (owner !== undefined) pairs.push(['account', owner]);
  pairs.push(['backend', backendLabel]);
  return [c.green(`Cancelled order ${result.orderId}`), ...rows(pairs)];
}

export function formatCloseResult(result: CloseResult, backendLabel: string, c: ChalkInstance): string[] {
  const lines = result.closedPositions.map((p) =>
    c.green(`Closed ${p.instrument} in ${p.account}: was ${p.marketPosition.toLowerCase()} ${p.quantity} @ ${formatPrice(p.averagePrice)}`),
  );
  const pairs: Array<[string, string]> = [];
  const detail = result.detail;
  if (detail) {
    const closing = detail.closingOrder;
    pairs.push(['closed', `${closing.action} ${closing.quantity} MARKET, ${orderStatus(closing)} (order ${closing.id})`]);
    const n = detail.cancelledOrderIds.length;
    if (n > 0) pairs.push(['cancelled', `${n} working order${n === 1 ? '' : 's'}`]);
  }
  pairs.push(['backend', backendLabel]);
  return [...lines, ...rows(pairs)];
}
