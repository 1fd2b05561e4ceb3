/**
 * The simulator speaking the service: one handler per row of the operation table, answering
 * with exactly the body the service would (service-reference.md §3), plus, for the CLI's human
 * output, details the service's body does not carry. The embedded backend and `trade serve` both
 * answer through here, so they cannot disagree; the shapes come from service-shapes.ts.
 */
import { RejectedError } from '../common/errors.js';
import { tradingDayStart, chicagoTimestamp, chicagoWallClock, DAY_MS } from '../service/chicago.js';
import { LIST_PAGE_MAX, OPERATIONS, type ArgsOf, type OperationName, type OperationSpec } from '../service/operations.js';
import type { OrderObject, PositionObject } from '../service/shapes.js';
import {
  ordersOf,
  positionObject,
  STATE,
  stateOf,
  toAccountObject,
  toExecutionObject,
  toPositionObject,
  toQuoteObject,
} from './service-shapes.js';
import { answeredAgain } from '../common/json-once.js';
import type { Engine, OrderRecord, Page, PricedPosition } from './types.js';
import { extended } from '../common/extended.js';

export { ordersOf, toOrderObject, toPositionObject } from './service-shapes.js';

/** What the CLI can tell beyond the service's body (the embedded backend only). */
export interface Detail {
  /** The order as it stands after the operation. */
  order?: OrderObject;
  /** The market order that closed the position (close, reverse). */
  closingOrder?: OrderObject;
  /** Orders cancelled along the way: the instrument's on a close, OCO siblings of a fill. */
  cancelledOrderIds?: string[];
  /** ATM brackets placed because an entry filled: stop-loss first, then profit-target. */
  bracketOrders?: OrderObject[];
  /** Instruments that had no price and took their root's demo price (the `demo` price source). */
  demoPrices?: Array<{ instrument: string; price: number }>;
}

export interface Answer<B extends object = object> {
  /** The success body, `success: true` included (§1.7). */
  body: B & { success: true };
  detail?: Detail;
}

function orderObject(engine: Engine, record: OrderRecord): OrderObject {
  return ordersOf(engine, [record])[0]!;
}

const ok = <B extends object>(body: B, detail?: Detail): Answer<B> => {
  const answered = extended(body, { success: true as const });
  return detail ? { body: answered, detail } : { body: answered };
};

function orderNotFound(orderId: string, account: string): RejectedError {
  return new RejectedError(`Invalid request: orderId: order '${orderId}' not found in account '${account}'`, { code: 'order_not_found' });
}

function findOrder(engine: Engine, args: { account: string; orderId: string }): OrderRecord {
  const account = engine.resolveAccount(args.account);
  const order = engine.getOrder(args.orderId, account);
  if (!order) throw orderNotFound(args.orderId, account);
  return order;
}

type Handler<K extends OperationName> = (engine: Engine, args: ArgsOf<K>) => Answer;

interface Placed {
  orderId: string;
  order: OrderRecord;
  cancelledOrderIds: string[];
  bracketOrders: OrderRecord[];
  closingOrder?: OrderRecord;
  demoPrices?: Array<{ instrument: string; price: number }>;
}

function placed(engine: Engine, outcome: Placed): Answer<{ orderId: string }> {
  return ok(
    { orderId: outcome.orderId },
    {
      order: orderObject(engine, outcome.order),
      ...(outcome.closingOrder ? { closingOrder: orderObject(engine, outcome.closingOrder) } : {}),
      cancelledOrderIds: outcome.cancelledOrderIds,
      bracketOrders: ordersOf(engine, outcome.bracketOrders),
      ...(outcome.demoPrices ? { demoPrices: outcome.demoPrices } : {}),
    },
  );
}

/** The service's objects of a priced-positions read, kept with it: the same read is the same objects (issue 34). */
const shaped = new WeakMap<readonly PricedPosition[], PositionObject[]>();

/** The positions in the service's shape; while the store is unchanged, the same array (read it, do not change it). */
export function positionsOf(engine: Engine, account: string | undefined, includeFlat?: boolean): PositionObject[] {
  // The positions and their last prices in one read (issue 34: GetPositions of 20).
  const priced = engine.listPricedPositions({ account, includeFlat });
  let objects = shaped.get(priced);
  // Frozen: answered again while the store is unchanged, so a caller that changed one would change
  // later answers; frozen, it fails at once instead.
  if (!objects) shaped.set(priced, (objects = Object.freeze(priced.map(({ position, last }) => Object.freeze(toPositionObject(position, last)))) as PositionObject[]));
  return objects;
}

/** The answers of GetPositions and GetAllPositions, kept with their positions: the same read, the same answer (its JSON made once: json-once.ts). */
const positionsAnswers = new WeakMap<readonly PositionObject[], Answer<{ positions: PositionObject[]; count: number }>>();

function positionsAnswer(positions: PositionObject[]): Answer<{ positions: PositionObject[]; count: number }> {
  let answer = positionsAnswers.get(positions);
  if (!answer) {
    answer = ok({ positions, count: positions.length });
    answeredAgain(Object.freeze(answer.body));
    positionsAnswers.set(positions, answer);
  }
  return answer;
}

function accountObject(engine: Engine, name: string) {
  const account = engine.resolveAccount(name);
  return toAccountObject(engine.accountId(account), account, engine.accountMoney(account), positionsOf(engine, account));
}

/** Quotes of instruments, every one priced or none answered (§3.17): one is an object, several an array. */
function quotes(engine: Engine, instruments: string[]): Answer {
  const days = instruments.map((instrument) => ({ instrument, day: engine.quoteDay(instrument) }));
  const missing = days.filter((d) => d.day === undefined).map((d) => d.instrument);
  if (missing.length > 0) throw new RejectedError(`Invalid request: instrument: no price for ${missing.join(', ')}`, { code: 'no_price' });
  const objects = days.map(({ instrument, day }) => toQuoteObject(instrument, day!, engine.now()));
  return { body: (objects.length === 1 ? { ...objects[0]!, success: true } : objects) as Answer['body'] };
}

const BAR_MS = { second: 1000, minute: 60_000 } as const;

/** Bars from the price history (§3.18): every price set a tick of volume 0, every fill one of its quantity. */
function bars(engine: Engine, args: ArgsOf<'GetBars'>): Answer {
  const periodType = args.periodType ?? 'minute';
  if (periodType !== 'minute' && periodType !== 'second' && periodType !== 'day')
    throw new RejectedError('Invalid request: periodType: not supported by the simulator', { code: 'invalid_request' });
  const period = args.period ?? 1;
  const now = engine.now().getTime();
  const to = args.to ?? new Date(now).toISOString();
  const from = args.from ?? new Date(Date.parse(to) - (args.daysBack ?? 1) * DAY_MS).toISOString();
  // Day bars are Chicago calendar days; the others are UTC-aligned intervals.
  const bucket = (time: number) =>
    periodType === 'day'
      ? time - (chicagoWallClock(time) % (period * DAY_MS))
      : Math.floor(time / (period * BAR_MS[periodType])) * period * BAR_MS[periodType];
  const built = new Map<number, { open: number; high: number; low: number; close: number; volume: number }>();
  for (const tick of engine.ticks(args.instrument, from, to)) {
    const start = bucket(Date.parse(tick.time));
    const bar = built.get(start);
    if (!bar) built.set(start, { open: tick.price, high: tick.price, low: tick.price, close: tick.price, volume: tick.volume });
    else Object.assign(bar, { high: Math.max(bar.high, tick.price), low: Math.min(bar.low, tick.price), close: tick.price, volume: bar.volume + tick.volume });
  }
  const list = [...built.entries()]
    .slice(-(args.limit ?? 5000))
    .map(([start, bar]) => ({ time: `${new Date(start).toISOString().slice(0, 19)}.0000000Z`, epoch: start, ...bar }));
  return ok({ instrument: args.instrument, periodType, period, count: list.length, bars: list });
}

/** A route the simulator does not model (§2, §6.1): 501. */
function notSimulated(name: OperationName): RejectedError {
  const op = OPERATIONS[name] as OperationSpec;
  const detail = `${op.method} /v1/api${op.path} is not simulated by trade serve`;
  return new RejectedError(detail, { status: 501, code: 'not_implemented', body: { success: false, error: 'not_implemented', detail } });
}

/** Every operation of the table, answered by the simulator. */
export const SIMULATOR: { [K in OperationName]: Handler<K> } = {
  PlaceOrder: (engine, order) => placed(engine, engine.placeOrder(order)),
  FlatPlace: (engine, order) => placed(engine, engine.flatPlace(order)),
  ReversePosition: (engine, order) => placed(engine, engine.reversePosition(order)),
  Reverse: (engine, { account, instrument }) => placed(engine, engine.invertPosition(account, instrument)),
  Cancel(engine, { account, orderId }) {
    const outcome = engine.cancelOrder(account, orderId);
    return ok({ orderId: outcome.orderId }, { order: orderObject(engine, outcome.order), cancelledOrderIds: outcome.cancelledOrderIds });
  },
  CancelOrders(engine, { account, instrument }) {
    const { cancelledOrderIds } = engine.cancelOrders(engine.resolveAccount(account), instrument);
    return ok({ orderIds: cancelledOrderIds }, { cancelledOrderIds });
  },
  CancelAllOrders(engine, { instrument }) {
    const { cancelledOrderIds } = engine.cancelOrders(undefined, instrument);
    return ok({ orderIds: cancelledOrderIds }, { cancelledOrderIds });
  },
  Change(engine, { account, orderId, ...change }) {
    const outcome = engine.changeOrder(account, orderId, change);
    return ok({ orderId: outcome.orderId }, { order: orderObject(engine, outcome.order), cancelledOrderIds: outcome.cancelledOrderIds });
  },
  Replace(engine, { orderId, ...order }) {
    return placed(engine, engine.replaceOrder(order.account, orderId, order));
  },
  CancelAndBracket(engine, { account, ...request }) {
    const outcome = engine.bracket(account, request);
    return ok({ orderIds: outcome.orderIds, cancelledOrderIds: outcome.cancelledOrderIds, ocoId: outcome.ocoId, quantity: outcome.quantity });
  },
  GetOrder: (engine, args) => ok(orderObject(engine, findOrder(engine, args))),
  GetOrders(engine, { account, activeOnly, limit, cursor }) {
    const name = engine.resolveAccount(account);
    const since = tradingDayStart(engine.now()).toISOString();
    const filter = activeOnly ? { account: name, activeOnly } : { account: name, activeOrSince: since };
    const { items, next } = engine.pageOrders(filter, pageOf(limit, cursor));
    const orders = ordersOf(engine, items);
    return ok({ orders, count: orders.length, ...nextCursor(next) });
  },
  GetOrderStatus(engine, args) {
    const order = findOrder(engine, args);
    const rejected = order.rejectReason !== undefined && order.state !== 'WORKING';
    return ok({ status: stateOf(order), orderId: order.orderId, ...(rejected ? { rejectReason: order.rejectReason } : {}) });
  },
  GetOrderLifecycle: () => {
    throw notSimulated('GetOrderLifecycle');
  },
  ClosePosition(engine, { account, instrument, quantity, percent }) {
    const last = engine.lastPrice(instrument);
    const outcome = engine.closePosition(account, instrument, { quantity, percent: percent as number | undefined });
    return ok(
      { closedPositions: [toPositionObject(outcome.closed, last)] },
      { closingOrder: orderObject(engine, outcome.closingOrder), cancelledOrderIds: outcome.cancelledOrderIds },
    );
  },
  Flatten(engine, { account, instrument }) {
    const prices = new Map<string, number | undefined>();
    for (const p of engine.listPositions({ account })) prices.set(p.instrument, engine.lastPrice(p.instrument));
    const outcome = engine.flatten(account, instrument);
    const closedPositions = outcome.closed.map((p) => toPositionObject(p, prices.get(p.instrument)));
    return ok(
      { closedPositions, ...(closedPositions.length === 0 ? { warning: 'No positions to flatten' } : {}) },
      { cancelledOrderIds: outcome.cancelledOrderIds },
    );
  },
  FlattenEverything(engine, filter) {
    const outcome = engine.flattenEverything(filter);
    const closedPositions = outcome.closed.map((p) => toPositionObject(p, engine.lastPrice(p.instrument)));
    return ok({ orderIds: outcome.cancelledOrderIds, closedPositions, ...(closedPositions.length === 0 ? { warning: 'No positions to flatten' } : {}) });
  },
  GetPosition(engine, { account, instrument }) {
    const name = engine.resolveAccount(account);
    const record = engine.getPosition(name, instrument) ?? { account: name, instrument, quantity: 0, avgPrice: null, realizedPnl: 0 };
    return ok(positionObject(engine, record));
  },
  GetAllPositions(engine, { includeFlat }) {
    return positionsAnswer(positionsOf(engine, undefined, includeFlat));
  },
  GetPositions(engine, { account, includeFlat }) {
    return positionsAnswer(positionsOf(engine, engine.resolveAccount(account), includeFlat));
  },
  ListAccounts(engine) {
    const accounts = engine.listAccounts().map((name) => accountObject(engine, name));
    return ok({ accounts, count: accounts.length });
  },
  GetSnapshot(engine) {
    const now = engine.now().getTime();
    const accounts = engine.listAccounts().map((name) => ({ account: accountObject(engine, name), positions: positionsOf(engine, name) }));
    return ok({ type: 'snapshot', timestamp: chicagoTimestamp(now), epoch: now, accounts });
  },
  GetAccount: (engine, { account }) => ok(accountObject(engine, account)),
  GetWatermarks(engine, { account }) {
    // No Account Manager monitor runs in the simulator: both objects are empty, as the service's are then (§3.16).
    return ok({ data: { account: engine.resolveAccount(account), watermarks: {}, stats: {} } });
  },
  GetQuote: (engine, { instrument }) => quotes(engine, instrument),
  GetQuoteLegacy(engine, { account, instrument }) {
    engine.resolveAccount(account);
    return quotes(engine, instrument);
  },
  GetBars: bars,
  GetMarketInfo: () => {
    throw notSimulated('GetMarketInfo');
  },
  GetExecutions(engine, { account, lookbackTime, limit, cursor }) {
    const since = new Date(engine.now().getTime() - (lookbackTime ?? 320) * 1000).toISOString();
    const { items, next } = engine.pageFills({ account: engine.resolveAccount(account), since }, pageOf(limit, cursor));
    const executions = items.map(toExecutionObject);
    return ok({ executions, count: executions.length, ...nextCursor(next) });
  },
  GetExecution(engine, { account, executionId }) {
    const name = engine.resolveAccount(account);
    const fill = engine.getFill(name, executionId);
    if (!fill) throw new RejectedError(`Invalid request: executionId: execution '${executionId}' not found in account '${name}'`, { code: 'execution_not_found' });
    return ok(toExecutionObject(fill));
  },
  CloseStrategy(engine, { account, strategyId }) {
    engine.closeStrategy(account, strategyId);
    return ok({ strategyId });
  },
};

/** A list's page: at most LIST_PAGE_MAX items (docs/reliability.md "Limits"), after the cursor given. */
function pageOf(limit: number | undefined, cursor: string | undefined): Page {
  return { limit: limit ?? LIST_PAGE_MAX, after: cursor === undefined ? undefined : Number(cursor) };
}

/** `nextCursor` only when more remain, so an unpaged list is the reference's body exactly. */
const nextCursor = (next: number | undefined) => (next === undefined ? {} : { nextCursor: String(next) });

/** Runs one operation on the engine; throws the typed error the service's refusal maps to. */
export function simulate<K extends OperationName>(engine: Engine, name: K, args: ArgsOf<K>): Answer {
  return (SIMULATOR[name] as Handler<K>)(engine, args);
}
