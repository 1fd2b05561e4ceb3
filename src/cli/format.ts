/**
 * Human renderings of results, read from the service's shapes (src/service/shapes.ts) on every
 * backend. Data only; the caller chooses the stream. Text that came from a remote service goes
 * through `shown`: its control and invisible characters are removed, so a hostile reply can
 * neither drive the terminal nor hide a token from the redactor.
 */
import type { Colors } from './colors.js';
import type { CallResult } from '../backends/types.js';
import type { PriceOutcome } from '../engine/engine.js';
import { stripInvisible as shown } from '../config/redact.js';
import { describeOrder, type Order } from '../service/order.js';
import type { OrderObject, OrderRead, PositionRead } from '../service/shapes.js';
import { fitTable, type FittedTable } from './io.js';

/** A price as a person reads it; the service writes `0.0` for "none", which is never a price. */
export function formatPrice(price: number | null | undefined): string {
  return price === null || price === undefined || price === 0 ? '—' : String(Number(price.toFixed(8)));
}

/** Money: two decimals, a sign for losses. */
export function formatMoney(amount: number | undefined): string {
  return amount === undefined ? '—' : amount.toFixed(2);
}

const text = (value: unknown): string => (typeof value === 'string' ? shown(value) : value === undefined ? '—' : shown(String(value)));
/** `Buy` → `BUY`, `StopMarket` → `STOPMARKET`: the spelling the flags take. */
const upper = (value: string | undefined): string => (value === undefined ? '—' : shown(value.toUpperCase()));

/** How an order stands: "filled 1 @ 4500.25", "filled 1 at an unknown price …", "working". */
export function orderStatus(order: OrderRead): string {
  if (order.orderState === 'Filled') {
    return !order.averageFillPrice
      ? `filled ${order.filled ?? order.quantity} at an unknown price (no price is known for ${text(order.instrument)})`
      : `filled ${order.filled ?? order.quantity} @ ${formatPrice(order.averageFillPrice)}`;
  }
  // A trade serve scenario's late reject says why (issue 22); the service's own Rejected has no reason field.
  if (order.orderState === 'Rejected' && typeof order.rejectReason === 'string') return `rejected: ${shown(order.rejectReason)}`;
  if (order.orderState === 'PartFilled' && order.filled !== undefined)
    return `part-filled ${order.filled} of ${order.quantity ?? '?'}${order.averageFillPrice ? ` @ ${formatPrice(order.averageFillPrice)}` : ''}`;
  return order.orderState === undefined ? 'unknown' : shown(order.orderState.toLowerCase());
}

/** `key  value` rows, aligned. */
export function rows(pairs: Array<[string, string]>): string[] {
  const width = Math.max(...pairs.map(([k]) => k.length));
  return pairs.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`);
}

/** `SELL 1 ES 09-25 STOPMARKET stop 4498`: an order in one line, without its id. */
export function describeObject(order: OrderRead): string {
  const parts = [upper(order.orderAction), String(order.quantity ?? '—'), text(order.instrument), upper(order.orderType)];
  if (order.stopPrice) parts.push(`stop ${formatPrice(order.stopPrice)}`);
  if (order.limitPrice) parts.push(`limit ${formatPrice(order.limitPrice)}`);
  return parts.join(' ');
}

/** The lines an ATM entry's brackets add to a result. */
function bracketRows(brackets: OrderObject[] | undefined): Array<[string, string]> {
  return (brackets ?? []).map((b) => [
    b.name === 'Stop1' ? 'stop-loss' : 'target',
    `${describeObject(b)} ${upper(b.timeInForce)}, ${orderStatus(b)} (order ${shown(b.orderId)})`,
  ]);
}

export function formatOrderResult(
  kind: 'place' | 'reverse' | 'replace',
  order: Order,
  result: CallResult<'PlaceOrder'>,
  backendLabel: string,
  c: Colors,
): string[] {
  const lines: string[] = [];
  const detail = result.detail;
  const pairs: Array<[string, string]> = [];
  const account = detail?.order?.account ?? order.account;
  if (kind === 'reverse') {
    lines.push(c.green(`Reversed ${order.instrument} in ${account}`));
    const closing = detail?.closingOrder;
    if (closing) pairs.push(['closed', `${upper(closing.orderAction)} ${closing.quantity} MARKET, ${orderStatus(closing)} (order ${shown(closing.orderId)})`]);
    const cancelled = detail?.cancelledOrderIds?.length ?? 0;
    if (cancelled > 0) pairs.push(['cancelled', `${cancelled} working order${cancelled === 1 ? '' : 's'}`]);
    pairs.push(['placed', describeOrder(order)]);
  } else {
    lines.push(c.green(`${kind === 'replace' ? 'Replaced with' : 'Placed'} ${describeOrder(order)}`));
    const cancelled = detail?.cancelledOrderIds ?? [];
    if (kind === 'replace' && cancelled.length > 0) pairs.push(['cancelled', cancelled.join(', ')]);
    if (detail?.closingOrder) pairs.push(['closed', `${upper(detail.closingOrder.orderAction)} ${detail.closingOrder.quantity} MARKET, ${orderStatus(detail.closingOrder)} (order ${shown(detail.closingOrder.orderId)})`]);
  }
  pairs.push(['order id', shown(result.value.orderId)]);
  pairs.push(['account', account]);
  if (detail?.order) pairs.push(['status', orderStatus(detail.order)]);
  for (const demo of detail?.demoPrices ?? [])
    pairs.push(['price', `${formatPrice(demo.price)}: the demo price of ${shown(demo.instrument.split(' ')[0]!)}, as ${shown(demo.instrument)} had no price (trade price source chooses where prices come from)`]);
  if (kind === 'place' && detail?.cancelledOrderIds?.length) pairs.push(['cancelled', `${detail.cancelledOrderIds.join(', ')}`]);
  pairs.push(...bracketRows(detail?.bracketOrders));
  pairs.push(['backend', backendLabel]);
  return [...lines, ...rows(pairs)];
}

/**
 * Columns a narrow terminal leaves out, the least needed first: the account when the list is one
 * account's (every row says the same), then the prices a person can do without before the size
 * and side; the account of a list of every account goes last.
 */
function positionColumnsOptional(oneAccount: boolean): string[] {
  return oneAccount ? ['ACCOUNT', 'MARKET', 'AVG PRICE', 'UNREALIZED P&L'] : ['MARKET', 'AVG PRICE', 'UNREALIZED P&L', 'ACCOUNT'];
}

/** `width`: fit to a terminal this wide (see fitTable); `oneAccount`: the list is one account's. */
export function formatPositions(positions: PositionRead[], includeFlat = false, width?: number, oneAccount = false): FittedTable {
  if (positions.length === 0) return { lines: [includeFlat ? 'No positions.' : 'No open positions.'], hidden: [] };
  return fitTable(
    ['ACCOUNT', 'INSTRUMENT', 'POSITION', 'QTY', 'AVG PRICE', 'MARKET', 'UNREALIZED P&L'],
    positions.map((p) => [
      text(p.account),
      text(p.instrument),
      p.marketPosition,
      String(p.quantity),
      formatPrice(p.averagePrice),
      formatPrice(p.marketPrice),
      // Without both prices the service's 0.0 means "not known", not "no profit".
      p.marketPosition === 'Flat' || !p.averagePrice || !p.marketPrice ? '—' : formatMoney(p.unrealizedProfitLoss),
    ]),
    { width, optional: positionColumnsOptional(oneAccount) },
  );
}

/**
 * The orders table's columns a narrow terminal leaves out, the least needed first: the time, the
 * account (of a one-account list), the time in force, the type (its prices say it: a limit, a
 * stop, both or neither), then the id (shortened already) before any price or quantity. The
 * instrument, side, size and state always stay.
 */
function orderColumnsOptional(everyAccount: boolean): string[] {
  return [
    'TIME',
    ...(everyAccount ? [] : ['ACCOUNT']),
    'TIF',
    'TYPE',
    'ORDER ID',
    'FILLED',
    'AVG FILL',
    'STOP',
    'LIMIT',
    ...(everyAccount ? ['ACCOUNT'] : []),
  ];
}

/**
 * `short`: how to show an id (a unique prefix at a terminal, order-ids.ts); `everyAccount`: the
 * list is of every account, so the account matters more.
 */
export function formatOrders(orders: OrderRead[], width?: number, short: (id: string) => string = (id) => id, everyAccount = false): FittedTable {
  if (orders.length === 0) return { lines: ['No orders.'], hidden: [] };
  return fitTable(
    ['ORDER ID', 'ACCOUNT', 'INSTRUMENT', 'ACTION', 'QTY', 'TYPE', 'LIMIT', 'STOP', 'TIF', 'STATE', 'FILLED', 'AVG FILL', 'TIME'],
    orders.map((o) => [
      shown(short(o.orderId)),
      text(o.account),
      text(o.instrument),
      upper(o.orderAction),
      String(o.quantity ?? '—'),
      upper(o.orderType),
      formatPrice(o.limitPrice),
      formatPrice(o.stopPrice),
      upper(o.timeInForce),
      text(o.orderState),
      String(o.filled ?? '—'),
      o.orderState === 'Filled' && !o.averageFillPrice ? 'unknown' : formatPrice(o.averageFillPrice),
      text(o.time),
    ]),
    { width, optional: orderColumnsOptional(everyAccount) },
  );
}

const ORIGIN_LABEL: Record<string, string> = {
  client: 'client',
  close: 'close',
  'reverse-close': 'reverse',
  'atm-stop-loss': 'ATM stop-loss',
  'atm-profit-target': 'ATM profit-target',
};

export function formatPriceOutcome(outcome: PriceOutcome, brackets: OrderObject[], c: Colors): string[] {
  const was = outcome.previousPrice === null ? 'first price' : `was ${formatPrice(outcome.previousPrice)}`;
  const lines = [c.green(`Price ${outcome.instrument} ${formatPrice(outcome.price)} (${was})`)];
  const pairs: Array<[string, string]> = [];
  for (const f of outcome.fills) {
    const origin = f.origin === 'client' ? '' : `${ORIGIN_LABEL[f.origin]}, `;
    pairs.push(['filled', `${f.action} ${f.quantity} ${f.orderType} @ ${formatPrice(f.price)} in ${f.account} (${origin}order ${f.orderId})`]);
  }
  for (const id of outcome.triggeredOrderIds) pairs.push(['triggered', `STOPLIMIT ${id}: stop touched, now working as a limit`]);
  for (const b of brackets) {
    pairs.push(['placed', `${describeObject(b)} in ${b.account} (ATM ${b.name === 'Stop1' ? 'stop-loss' : 'profit-target'}, order ${b.orderId})`]);
  }
  for (const id of outcome.cancelledOrderIds) pairs.push(['cancelled', `${id} (OCO)`]);
  if (pairs.length === 0) return [...lines, '  no working order crossed'];
  return [...lines, ...rows(pairs)];
}

export function formatCancelResult(result: CallResult<'Cancel'>, account: string, backendLabel: string, c: Colors): string[] {
  const pairs: Array<[string, string]> = [];
  const id = shown(result.value.orderId);
  const others = result.detail?.cancelledOrderIds?.filter((other) => other !== result.value.orderId) ?? [];
  for (const other of others) pairs.push(['also cancelled', `${other} (OCO)`]);
  pairs.push(['account', result.detail?.order?.account ?? account]);
  pairs.push(['backend', backendLabel]);
  return [c.green(`Cancelled order ${id}`), ...rows(pairs)];
}

/** `long 3 ES 09-25 (average price 4500)`: a closed position as ClosePosition and Flatten report it. */
export function closedPosition(p: PositionRead): string {
  return `${p.marketPosition.toLowerCase()} ${p.quantity} ${text(p.instrument)} (average price ${formatPrice(p.averagePrice)})`;
}

export function formatCloseResult(result: CallResult<'ClosePosition'>, backendLabel: string, c: Colors): string[] {
  // `quantity` is what was closed (§3.10), a part of the position or all of it.
  const lines = result.value.closedPositions.map((p) => c.green(`Closed ${closedPosition(p)} in ${text(p.account)}`));
  const pairs: Array<[string, string]> = [];
  const detail = result.detail;
  if (detail?.closingOrder) {
    const closing = detail.closingOrder;
    pairs.push(['closed', `${upper(closing.orderAction)} ${closing.quantity} MARKET, ${orderStatus(closing)} (order ${shown(closing.orderId)})`]);
  }
  const n = detail?.cancelledOrderIds?.length ?? 0;
  if (n > 0) pairs.push(['cancelled', `${n} working order${n === 1 ? '' : 's'}`]);
  pairs.push(['backend', backendLabel]);
  return [...lines, ...rows(pairs)];
}
