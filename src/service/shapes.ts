/**
 * The service's objects and replies (service-reference.md §4, §1.7, §6), declared once.
 *
 * Two readings of each object:
 * - the types (`OrderObject`, ...) are what `trade serve` and the embedded backend emit: every
 *   field of §4, in NinjaTrader spellings;
 * - the `read*` schemas are what the http and ws clients accept from a service: only what they
 *   use is typed, nothing the reference does not show is required, unknown fields pass through,
 *   and a field of the wrong type is dropped rather than failing the whole reply (§1.7 "Client:
 *   read the documented flat fields").
 *
 * Schemas are built on first use (building zod schemas at import costs start-up time).
 */
import * as z from 'zod';

/** Response spellings (§1.5). */
export const ORDER_ACTIONS = ['Buy', 'Sell'] as const;
export const NT_ORDER_TYPES = ['Market', 'Limit', 'StopMarket', 'StopLimit'] as const;
export const NT_TIMES_IN_FORCE = ['Day', 'Gtc'] as const;
export const MARKET_POSITIONS = ['Long', 'Short', 'Flat'] as const;
/** NT8 order states a client accepts (§1.5); the simulator emits only Working, Filled and Cancelled. */
export const ORDER_STATES = [
  'Initialized', 'Submitted', 'Accepted', 'TriggerPending', 'Working', 'ChangePending', 'ChangeSubmitted',
  'CancelPending', 'CancelSubmitted', 'Cancelled', 'Rejected', 'PartFilled', 'Filled', 'Unknown', 'Suspended',
] as const;
export const TERMINAL_STATES: ReadonlySet<string> = new Set(['Filled', 'Cancelled', 'Rejected']);

export type OrderAction = (typeof ORDER_ACTIONS)[number];
export type NtOrderType = (typeof NT_ORDER_TYPES)[number];
export type NtTimeInForce = (typeof NT_TIMES_IN_FORCE)[number];
export type MarketPosition = (typeof MARKET_POSITIONS)[number];
export type OrderState = (typeof ORDER_STATES)[number];

/** The request spellings (upper case, as the REST pages list them) and the NinjaTrader ones. */
const NT_SPELLING: Record<string, string> = {
  BUY: 'Buy', SELL: 'Sell',
  MARKET: 'Market', LIMIT: 'Limit', STOPMARKET: 'StopMarket', STOPLIMIT: 'StopLimit',
  DAY: 'Day', GTC: 'Gtc',
};

/** `BUY` → `Buy`, `STOPMARKET` → `StopMarket`: how responses (and WebSocket requests) spell a value. */
export function ntSpelling<T extends string>(value: T): string {
  return NT_SPELLING[value] ?? value;
}

/** A number as the service writes it: `0.0` when there is none. */
export type Price = number;

export interface OwnerStrategy {
  id: string;
  name: string;
  displayName: string;
}

/** §4.1 */
export interface OrderObject {
  /** trade serve only: why a scenario rule rejected the order (issue 22). */
  rejectReason?: string;
  account: string;
  orderId: string;
  id: string;
  instrument: string;
  instrumentType: 'Future';
  orderType: NtOrderType;
  orderState: OrderState;
  quantity: number;
  averageFillPrice: Price;
  filled: number;
  fromEntrySignal: null;
  gtd: string;
  hasOverfill: boolean;
  isBacktestOrder: boolean;
  limitPrice: Price;
  limitPriceChanged: Price;
  name: string;
  oco: string;
  ocoId: string;
  orderAction: OrderAction;
  ownerStrategy: OwnerStrategy | null;
  stopPrice: Price;
  stopPriceChanged: Price;
  time: string;
  timeInForce: NtTimeInForce;
}

/** §4.2: the side is `marketPosition`; `quantity` is never negative. */
export interface PositionObject {
  type: 'NinjaTrader.Cbi.Position';
  account: string;
  instrument: string;
  instrumentType: 'Future';
  marketPosition: MarketPosition;
  quantity: number;
  averagePrice: Price;
  marketPrice: Price;
  unrealizedProfitLoss: number;
  tag: null;
}

/** §4.3, the fields `trade` fills; `item` carries the account's money figures. */
export interface AccountObject {
  type: 'NinjaTrader.Cbi.Account';
  id: number;
  name: string;
  displayName: string;
  primaryUser: null;
  provider: string;
  denomination: string;
  status: string;
  dailyLossLimit: number;
  minCashValue: number;
  maxOrderSize: number;
  maxPositionSize: number;
  connection: string;
  connectionStatus: string;
  lastTransactionSum: number;
  isAccountFlat: boolean;
  item: Record<string, number>;
}

/** §4.4 */
export interface QuoteObject {
  description: string;
  type: 'Future';
  tickSize: number;
  pointValue: number;
  tickValue: number;
  exchange: string;
  expiration: string;
  tradingHours: string;
  instrument: string;
  bid: number;
  ask: number;
  last: number;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: number;
  quoteTime: string;
  quoteTimeUtc: string;
  epoch: number;
  dataSource: { status: string; connectedFeeds: string[] };
  isMarketOpen: boolean;
}

/** §4.5 */
export interface ExecutionObject {
  id: string;
  type: 'NinjaTrader.Cbi.Execution';
  time: string;
  epoch: number;
  name: string;
  orderId: string;
  account: string;
  serverName: string;
  instrument: string;
  instrumentType: 'Future';
  position: number;
  marketPosition: 'Long' | 'Short';
  positionStrategy: number;
  price: number;
  quantity: number;
  commission: number;
  isEntry: boolean;
  isExit: boolean;
}

/** Success bodies (§3). `success: true` is added by the server; clients never require it (§1.7). */
export interface OrderIdReply {
  orderId: string;
  success?: true;
}
export interface OrdersReply {
  orders: OrderRead[];
  count?: number;
  success?: true;
}
export interface PositionsReply {
  positions: PositionRead[];
  count?: number;
  success?: true;
}
export interface ClosedPositionsReply {
  closedPositions: PositionRead[];
  success?: true;
}
export interface OrderStatusReply {
  status: string;
  orderId?: string;
  success?: true;
}
/** Flatten's reply (§3.13, §3.14): `orderIds` (the orders cancelled) only on the filtered flatten. */
export interface FlattenReply {
  closedPositions: PositionRead[];
  orderIds?: string[];
  warning?: string;
  success?: true;
}
export interface OrderIdsReply {
  orderIds: string[];
  success?: true;
}
export interface BracketReply {
  orderIds: string[];
  cancelledOrderIds?: string[];
  ocoId?: string;
  quantity?: number;
  success?: true;
}
export interface StrategyReply {
  strategyId: string;
  success?: true;
}
/** An Account as a client reads it: the name is what it needs; the money figures are in `item`. */
export type AccountRead = Partial<Omit<AccountObject, 'item'>> & { name: string; item?: Record<string, unknown> };
export interface AccountsReply {
  accounts: AccountRead[];
  count?: number;
  success?: true;
}
export type QuoteRead = Partial<QuoteObject> & { instrument: string };
/** GetQuote: one instrument is an object, several an array (§3.17). */
export type QuotesReply = QuoteRead | QuoteRead[];
export type ExecutionRead = Partial<ExecutionObject> & { id: string };
export interface ExecutionsReply {
  executions: ExecutionRead[];
  count?: number;
  success?: true;
}
/** Replies a client passes on as they are (snapshot, watermarks, bars): any object. */
export type LooseReply = Record<string, unknown>;

/** The two error forms (§6.1): `{error}` and `{success: false, error, detail}`. */
export interface ErrorBody {
  error: string;
  success?: false;
  detail?: unknown;
  [key: string]: unknown;
}

// ---------------------------------------------------------------------------------------------
// What a client reads.

/** An Order as a client reads it: only an id is required; `orderId` falls back to `id`. */
export type OrderRead = Partial<Omit<OrderObject, 'orderState' | 'orderAction' | 'orderType' | 'timeInForce'>> & {
  orderId: string;
  /** Any state a service sends (§1.5 lists NT8's; an unknown one is shown as it is). */
  orderState?: string;
  orderAction?: string;
  orderType?: string;
  timeInForce?: string;
};
/** A Position as a client reads it: the side and an unsigned size are required, never a sign. */
export type PositionRead = Partial<PositionObject> & {
  instrument: string;
  marketPosition: MarketPosition;
  quantity: number;
};

/** An id a person may see and paste back: visible ASCII, bounded. */
const VISIBLE_ID = /^[\x21-\x7e]{1,128}$/;

/** Lazily built, then kept. */
function once<T>(build: () => T): () => T {
  let built: T | undefined;
  return () => (built ??= build());
}

/** A field that is kept when it has the expected type and dropped (undefined) otherwise. */
const soft = <T extends z.ZodType>(schema: T) => schema.optional().catch(undefined);

const orderRead = once(() =>
  z
    .looseObject({
      orderId: soft(z.string()),
      id: soft(z.string()),
      account: soft(z.string()),
      instrument: soft(z.string()),
      orderAction: soft(z.string()),
      orderType: soft(z.string()),
      orderState: soft(z.string()),
      quantity: soft(z.number()),
      filled: soft(z.number()),
      averageFillPrice: soft(z.number()),
      limitPrice: soft(z.number()),
      stopPrice: soft(z.number()),
      timeInForce: soft(z.string()),
      time: soft(z.string()),
      name: soft(z.string()),
      oco: soft(z.string()),
      ocoId: soft(z.string()),
    })
    .transform((o, ctx) => {
      const orderId = o.orderId ?? o.id;
      if (orderId === undefined || !VISIBLE_ID.test(orderId)) {
        ctx.issues.push({ code: 'custom', input: o, message: 'an order needs an orderId (or id) of visible ASCII' });
        return z.NEVER;
      }
      return { ...o, orderId } as OrderRead;
    }),
);

const positionRead = once(() =>
  z
    .looseObject({
      account: soft(z.string()),
      instrument: z.string(),
      marketPosition: z.enum(MARKET_POSITIONS),
      quantity: z.number().int().nonnegative(),
      averagePrice: soft(z.number()),
      marketPrice: soft(z.number()),
      unrealizedProfitLoss: soft(z.number()),
    })
    .transform((p) => p as PositionRead),
);

/** A list that may come bare or inside `{key: [...]}` (§3.15, §3.16: clients accept both). */
function listOf<K extends string, T>(key: K, item: () => z.ZodType<T>) {
  return z
    .union([z.array(item()), z.looseObject({ [key]: z.array(item()) })])
    .transform((body) => {
      if (Array.isArray(body)) return { [key]: body, count: body.length } as Record<K, T[]> & { count: number };
      return body as Record<K, T[]> & { count?: number };
    });
}

const accountRead = once(() =>
  z.looseObject({ name: z.string(), item: soft(z.record(z.string(), z.unknown())) }).transform((a) => a as AccountRead),
);
const quoteRead = once(() =>
  z
    .looseObject({
      instrument: z.string(),
      last: soft(z.number()),
      bid: soft(z.number()),
      ask: soft(z.number()),
      open: soft(z.number()),
      high: soft(z.number()),
      low: soft(z.number()),
      close: soft(z.number()),
      volume: soft(z.number()),
      quoteTime: soft(z.string()),
    })
    .transform((q) => q as QuoteRead),
);
const executionRead = once(() =>
  z
    .looseObject({
      id: z.string().regex(VISIBLE_ID),
      orderId: soft(z.string()),
      account: soft(z.string()),
      instrument: soft(z.string()),
      marketPosition: soft(z.string()),
      price: soft(z.number()),
      quantity: soft(z.number()),
      time: soft(z.string()),
      name: soft(z.string()),
    })
    .transform((e) => e as ExecutionRead),
);
const orderIds = () => z.array(z.string().regex(VISIBLE_ID));

export const readSchemas = {
  order: orderRead,
  position: positionRead,
  orderId: once(() => z.looseObject({ orderId: z.string().regex(VISIBLE_ID) }).transform((b) => b as OrderIdReply)),
  orders: once(() => listOf('orders', orderRead)),
  positions: once(() => listOf('positions', positionRead)),
  closedPositions: once(() => z.looseObject({ closedPositions: z.array(positionRead()) }).transform((b) => b as ClosedPositionsReply)),
  orderStatus: once(() => z.looseObject({ status: z.string(), orderId: soft(z.string()) }).transform((b) => b as OrderStatusReply)),
  flatten: once(() =>
    z
      .looseObject({ closedPositions: z.array(positionRead()), orderIds: soft(orderIds()), warning: soft(z.string()) })
      .transform((b) => b as FlattenReply),
  ),
  orderIds: once(() => z.looseObject({ orderIds: orderIds() }).transform((b) => b as OrderIdsReply)),
  bracket: once(() =>
    z
      .looseObject({ orderIds: orderIds(), cancelledOrderIds: soft(orderIds()), ocoId: soft(z.string()), quantity: soft(z.number()) })
      .transform((b) => b as BracketReply),
  ),
  strategy: once(() => z.looseObject({ strategyId: z.string() }).transform((b) => b as StrategyReply)),
  account: accountRead,
  accounts: once(() => listOf('accounts', accountRead)),
  quotes: once(() => z.union([z.array(quoteRead()), quoteRead()]).transform((b) => b as QuotesReply)),
  execution: executionRead,
  executions: once(() => listOf('executions', executionRead)),
  loose: once(() => z.looseObject({}).transform((b) => b as LooseReply)),
};

/**
 * A failure in a body, in either form, or undefined when the body is not one (§5.3: "an object
 * with an `error` string or with `success: false` is a failure").
 */
export function failureOf(body: unknown): ErrorBody | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const b = body as Record<string, unknown>;
  if (typeof b.error === 'string') return b as ErrorBody;
  if (b.success === false) return { ...b, error: typeof b.message === 'string' ? b.message : 'the service reported a failure' } as ErrorBody;
  return undefined;
}

/**
 * The object inside the AI docs' envelope (§1.7), when a body is exactly `{"success": true,
 * "data": {...}}` (with nothing else but members set to `null`): GetWatermarks' documented body
 * (§3.16), and any body of a service that wraps them all. Undefined for any other body.
 */
export function envelopeData(body: unknown): Record<string, unknown> | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { success, data, ...rest } = body as Record<string, unknown>;
  // A member written `null` is an absent one (§1.3): a typed service adds `"error": null` to it.
  if (success !== true || Object.values(rest).some((value) => value !== null)) return undefined;
  return data !== null && typeof data === 'object' && !Array.isArray(data) ? (data as Record<string, unknown>) : undefined;
}

/**
 * The body a client reads: the flat body, or, when it does not fit and carries a `data` object
 * (the AI docs' `{"success": true, "data": ...}` form, §1.7), that object. A body that is the
 * envelope and nothing else is read inside first, so that replies any object fits (snapshot,
 * bars, watermarks) are read from their data too.
 */
export function parseReply<T>(schema: z.ZodType<T>, body: unknown): { ok: true; value: T } | { ok: false } {
  const enveloped = envelopeData(body);
  if (enveloped) {
    const inner = schema.safeParse(enveloped);
    if (inner.success) return { ok: true, value: inner.data };
  }
  const flat = schema.safeParse(body);
  if (flat.success) return { ok: true, value: flat.data };
  const data = (body as { data?: unknown } | null)?.data;
  if (data !== undefined && data !== null && typeof data === 'object') {
    const inner = schema.safeParse(data);
    if (inner.success) return { ok: true, value: inner.data };
  }
  return { ok: false };
}
