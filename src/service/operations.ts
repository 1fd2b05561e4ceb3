/**
 * The operation table: each of the service's operations declared once (service-reference.md
 * §2, §3). The http backend builds its requests from a row (method, path, query or body), the
 * ws backend its RPC (`api` = the row's first WebSocket name), `trade serve` its routes and its
 * WebSocket dispatch (every name of the row), `trade batch` the names it accepts, and the retry
 * rule reads `movesMoney`. Adding an operation is one row here, one handler in
 * src/engine/service.ts (the compiler insists on it) and one command.
 *
 * Schemas are built on first use: the table itself costs nothing at start-up.
 */
import * as z from 'zod';
import { type FieldIssue, ValidationError } from '../common/errors.js';
import {
  accountNameField,
  type Action,
  ACTIONS,
  booleanField,
  instrumentField,
  instrumentListField,
  isoTimeField,
  MAX_PRICE,
  MAX_QUANTITY,
  nameField,
  noteBuilt,
  type Order,
  orderBodyShape,
  orderIdField,
  placeGuardsShape,
  priceField,
  priceRules,
  show,
  sideField,
  type TimeInForce,
  TIMES_IN_FORCE,
  toIssues,
  upperEnum,
  wellFormedReader,
  wholeNumberField,
} from './order.js';
import {
  type AccountRead,
  type AccountsReply,
  type BracketReply,
  type ExecutionRead,
  type ExecutionsReply,
  type FlattenReply,
  type LooseReply,
  type OrderIdsReply,
  type QuotesReply,
  type StrategyReply,
  type ClosedPositionsReply,
  type OrderIdReply,
  type OrderRead,
  type OrdersReply,
  type OrderStatusReply,
  type PositionRead,
  type PositionsReply,
  readSchemas,
} from './shapes.js';

export interface OperationSpec<A = unknown, R = unknown> {
  readonly name: string;
  readonly method: 'GET' | 'POST' | 'PUT';
  /** The REST path from `/v1/api` on, with `{name}` path parameters (§2). */
  readonly path: string;
  /** WebSocket `api` names; the first is what the client sends, the rest are aliases. */
  readonly ws: readonly [string, ...string[]];
  /** The request may change an order or a position: never re-sent once it may have arrived (§7.4). */
  readonly movesMoney: boolean;
  /**
   * What the guard (src/guard/) makes of such a request: `order` may add risk (every rule
   * applies, unless it only reduces a position); `exit` gets flat (cancel, close, flatten: only
   * the `accounts` rule applies). Set on exactly the rows that move money.
   */
  readonly guard?: 'order' | 'exit';
  /** What such a request may have done, for "outcome unknown" messages. */
  readonly effect?: string;
  readonly summary: string;
  /** The flat `args`: path parameters, then query or body fields (§3: "one flat args object"). */
  readonly fields: () => z.ZodRawShape;
  /** Rules across fields, run once every field has passed; for `server`, it may drop what the service ignores. */
  readonly check?: (args: A, mode: ArgsMode) => FieldIssue[];
  /** The success body, as a client reads it. */
  readonly reply: () => z.ZodType<R>;
  /** Carries the row's types only (never set): what its args and its reply are. */
  readonly types?: { args: A; reply: R };
  /** How the operation is named in the reference's index when not by `name` (`GetQuote (legacy)`). */
  readonly indexName?: string;
  /** The WebSocket name a client sends for these args, when it is not `ws[0]` (§3.14's Flatten). */
  readonly wsApiFor?: (args: A) => string;
  /** A route of the service the simulator does not model: `trade serve` answers 501 (§2). */
  readonly notSimulated?: true;
}

/** Declares a row; the types of its args and reply are what its handler and callers get. */
function row<A, R>(spec: OperationSpec<A, R>): OperationSpec<A, R> {
  return spec;
}

export interface CancelArgs {
  account: string;
  orderId: string;
}
export interface OrderLookupArgs {
  account: string;
  orderId: string;
}
export interface InstrumentArgs {
  account: string;
  instrument: string;
}
/**
 * A page of a long list: `trade serve` answers at most LIST_PAGE_MAX items per call and, when
 * more remain, a `nextCursor` to pass back as `cursor` (docs/reliability.md "Limits"). Not in the reference:
 * the service's own lists are not paged, and a client sends these only to follow a nextCursor.
 */
export interface PageArgs {
  limit?: number;
  cursor?: string;
}
export const LIST_PAGE_MAX = 1000;
export interface OrdersArgs extends PageArgs {
  account: string;
  activeOnly?: boolean;
}
export interface AllPositionsArgs {
  includeFlat?: boolean;
}
export interface AccountPositionsArgs {
  account: string;
  includeFlat?: boolean;
}
export interface CloseArgs extends InstrumentArgs {
  quantity?: number;
  percent?: unknown;
}
export interface AccountArgs {
  account: string;
}
export interface InstrumentFilterArgs {
  account: string;
  instrument?: string;
}
export interface CancelAllArgs {
  instrument?: string;
}
export interface FlattenEverythingArgs {
  account?: string;
  instrument?: string;
  marketPosition?: 'long' | 'short';
}
export interface ChangeArgs {
  account: string;
  orderId: string;
  quantity?: number;
  limitPrice?: number;
  stopPrice?: number;
  strategyId?: string;
}
export type ReplaceArgs = Omit<Order, 'orderId' | 'requireMarketPosition' | 'maxPositions'> & { orderId: string };
export interface BracketArgs {
  account: string;
  instrument: string;
  action: Action;
  quantity: number;
  takeProfit?: number;
  stopLoss?: number;
  timeInForce?: TimeInForce;
}
export interface QuoteArgs {
  instrument: string[];
}
export interface LegacyQuoteArgs extends QuoteArgs {
  account: string;
}
export interface BarsArgs {
  instrument: string;
  periodType?: 'minute' | 'second' | 'day' | 'week' | 'month' | 'year' | 'tick' | 'range' | 'renko';
  period?: number;
  daysBack?: number;
  from?: string;
  to?: string;
  limit?: number;
}
export interface ExecutionsArgs extends PageArgs {
  account: string;
  lookbackTime?: number;
}
export interface ExecutionArgs {
  account: string;
  executionId: string;
}
export interface StrategyArgs {
  account: string;
  strategyId: string;
}
export interface InfoArgs {
  instrument?: string;
}

const account = () => ({ account: accountNameField() });
/** A cursor is the position of the last item of the page before: digits only. */
const page = () => ({
  limit: wholeNumberField(1, LIST_PAGE_MAX).optional(),
  cursor: z
    .string({ error: (iss) => `must be the nextCursor of the page before, got ${show(iss.input)}` })
    .regex(/^\d{1,15}$/, { error: (iss) => `must be the nextCursor of the page before, got ${show(iss.input)}` })
    .optional(),
});
/** 0 (or absent) leaves a value of a Change as it is (§3.6); the message says so. */
const LEAVE_IT = 'or 0 to leave it';
const changedPrice = () =>
  z
    .number({ error: (iss) => `must be a positive number, ${LEAVE_IT}, got ${show(iss.input)}` })
    .nonnegative({ error: (iss) => `must be a positive number, ${LEAVE_IT}, got ${show(iss.input)}` })
    .max(MAX_PRICE, { error: (iss) => `must be at most ${MAX_PRICE}, got ${show(iss.input)}` })
    .optional();
/** The order body without a client's own order id (a Replace keeps the order's id). */
const replaceBodyShape = () => {
  const { orderId: _clientOrderId, ...rest } = orderBodyShape();
  return rest;
};
const PERIOD_TYPES = ['minute', 'second', 'day', 'week', 'month', 'year', 'tick', 'range', 'renko'] as const;
/** Any filter given: a flatten of `POST /positions/flatten` with one is sent as `Flatten` over WebSocket (§3.14). */
export const hasFlattenFilter = (args: object) => ['account', 'instrument', 'marketPosition'].some((k) => (args as Record<string, unknown>)[k] != null);

export const OPERATIONS = {
  PlaceOrder: row<Order, OrderIdReply>({
    name: 'PlaceOrder',
    method: 'POST',
    path: '/accounts/{account}/orders/place',
    ws: ['PlaceOrder'],
    movesMoney: true,
    guard: 'order',
    effect: 'the order may have been placed',
    summary: 'Place an order',
    fields: () => ({ ...account(), ...orderBodyShape(), ...placeGuardsShape() }),
    check: priceRules,
    reply: readSchemas.orderId,
  }),
  FlatPlace: row<Order, OrderIdReply>({
    name: 'FlatPlace',
    method: 'POST',
    path: '/accounts/{account}/orders/flatplace',
    ws: ['FlatPlace'],
    movesMoney: true,
    guard: 'order',
    effect: 'the position may have been closed and the order placed',
    summary: "Cancel the instrument's orders, close any position, then place an order",
    fields: () => ({ ...account(), ...orderBodyShape(), ...placeGuardsShape() }),
    check: priceRules,
    reply: readSchemas.orderId,
  }),
  ReversePosition: row<Order, OrderIdReply>({
    name: 'ReversePosition',
    method: 'POST',
    path: '/accounts/{account}/positions/reverseposition',
    ws: ['ReversePosition'],
    movesMoney: true,
    guard: 'order',
    effect: 'the position may have been reversed',
    summary: 'Close the position in the instrument, then place an order',
    fields: () => ({ ...account(), ...orderBodyShape() }),
    check: priceRules,
    reply: readSchemas.orderId,
  }),
  Reverse: row<InstrumentArgs, OrderIdReply>({
    name: 'Reverse',
    method: 'POST',
    path: '/accounts/{account}/positions/reverse',
    ws: ['Reverse'],
    movesMoney: true,
    guard: 'order',
    effect: 'the position may have been turned over',
    summary: 'Turn a position over: long N becomes short N (two market orders)',
    fields: () => ({ ...account(), instrument: instrumentField() }),
    reply: readSchemas.orderId,
  }),
  Cancel: row<CancelArgs, OrderIdReply>({
    name: 'Cancel',
    method: 'POST',
    path: '/accounts/{account}/orders/{orderId}/cancel',
    ws: ['Cancel', 'CancelOrder'],
    movesMoney: true,
    guard: 'exit',
    effect: 'the order may have been cancelled',
    summary: 'Cancel a working order (and its OCO group)',
    fields: () => ({ ...account(), orderId: orderIdField() }),
    reply: readSchemas.orderId,
  }),
  CancelOrders: row<InstrumentFilterArgs, OrderIdsReply>({
    name: 'CancelOrders',
    method: 'POST',
    path: '/accounts/{account}/orders/cancel',
    ws: ['CancelOrders'],
    movesMoney: true,
    guard: 'exit',
    effect: 'orders may have been cancelled',
    summary: "Cancel an account's working orders (of one instrument, or all)",
    fields: () => ({ ...account(), instrument: instrumentField().optional() }),
    reply: readSchemas.orderIds,
  }),
  CancelAllOrders: row<CancelAllArgs, OrderIdsReply>({
    name: 'CancelAllOrders',
    method: 'POST',
    path: '/orders/cancelall',
    ws: ['CancelAllOrders'],
    movesMoney: true,
    guard: 'exit',
    effect: 'orders may have been cancelled',
    summary: 'Cancel every working order of every account (of one instrument, or all)',
    fields: () => ({ instrument: instrumentField().optional() }),
    reply: readSchemas.orderIds,
  }),
  Change: row<ChangeArgs, OrderIdReply>({
    name: 'Change',
    method: 'PUT',
    path: '/accounts/{account}/orders/{orderId}/change',
    ws: ['Change'],
    movesMoney: true,
    guard: 'order',
    effect: 'the order may have been changed',
    summary: 'Change the quantity, limit or stop price of a working order',
    fields: () => ({
      ...account(),
      orderId: orderIdField(),
      quantity: wholeNumberField(0, MAX_QUANTITY, `must be a whole number from 1 to ${MAX_QUANTITY}, ${LEAVE_IT}`).optional(),
      limitPrice: changedPrice(),
      stopPrice: changedPrice(),
      strategyId: nameField('strategy id').optional(),
    }),
    reply: readSchemas.orderId,
  }),
  Replace: row<ReplaceArgs, OrderIdReply>({
    name: 'Replace',
    method: 'POST',
    path: '/accounts/{account}/orders/{orderId}/replace',
    ws: ['Replace', 'CancelReplace'],
    movesMoney: true,
    guard: 'order',
    effect: 'the order may have been replaced',
    summary: 'Cancel a working order and place another in one step',
    fields: () => ({ ...account(), orderId: orderIdField(), ...replaceBodyShape() }),
    check: priceRules,
    reply: readSchemas.orderId,
  }),
  CancelAndBracket: row<BracketArgs, BracketReply>({
    name: 'CancelAndBracket',
    method: 'POST',
    path: '/accounts/{account}/orders/cancel_and_bracket',
    ws: ['CancelAndBracket'],
    movesMoney: true,
    guard: 'order',
    effect: "the instrument's orders may have been cancelled and a bracket placed",
    summary: "Cancel the instrument's orders, then protect the position with a take-profit and a stop-loss",
    fields: () => ({
      ...account(),
      instrument: instrumentField(),
      action: upperEnum(ACTIONS),
      quantity: wholeNumberField(1, MAX_QUANTITY),
      takeProfit: priceField().optional(),
      stopLoss: priceField().optional(),
      timeInForce: upperEnum(TIMES_IN_FORCE).optional(),
    }),
    check: (args) => (args.takeProfit === undefined && args.stopLoss === undefined ? [{ field: 'takeProfit', message: 'give takeProfit, stopLoss or both' }] : []),
    reply: readSchemas.bracket,
  }),
  GetOrder: row<OrderLookupArgs, OrderRead>({
    name: 'GetOrder',
    method: 'GET',
    path: '/accounts/{account}/orders/{orderId}',
    ws: ['GetOrder'],
    movesMoney: false,
    summary: 'One order',
    fields: () => ({ ...account(), orderId: orderIdField() }),
    reply: readSchemas.order,
  }),
  GetOrders: row<OrdersArgs, OrdersReply>({
    name: 'GetOrders',
    method: 'GET',
    path: '/accounts/{account}/orders',
    ws: ['GetOrders', 'ListOrders'],
    movesMoney: false,
    summary: "An account's orders: active ones and the current trading day's",
    fields: () => ({ ...account(), activeOnly: booleanField().optional(), ...page() }),
    reply: readSchemas.orders,
  }),
  GetOrderStatus: row<OrderLookupArgs, OrderStatusReply>({
    name: 'GetOrderStatus',
    method: 'GET',
    path: '/accounts/{account}/orders/{orderId}/status',
    ws: ['GetOrderStatus'],
    movesMoney: false,
    summary: "An order's state",
    fields: () => ({ ...account(), orderId: orderIdField() }),
    reply: readSchemas.orderStatus,
  }),
  GetOrderLifecycle: row<OrderLookupArgs, LooseReply>({
    name: 'GetOrderLifecycle',
    method: 'GET',
    path: '/accounts/{account}/orders/{orderId}/lifecycle',
    ws: ['GetOrderLifecycle'],
    movesMoney: false,
    summary: "An order's events (not simulated)",
    fields: () => ({ ...account(), orderId: orderIdField() }),
    reply: readSchemas.loose,
    notSimulated: true,
  }),
  ClosePosition: row<CloseArgs, ClosedPositionsReply>({
    name: 'ClosePosition',
    method: 'POST',
    path: '/accounts/{account}/positions/close',
    ws: ['ClosePosition'],
    movesMoney: true,
    guard: 'exit',
    effect: 'the position may have been closed',
    summary: 'Close a position at market, all of it or a part (quantity or percent)',
    fields: () => ({
      ...account(),
      instrument: instrumentField(),
      quantity: wholeNumberField(1, MAX_QUANTITY, 'must be greater than zero').optional(),
      // Checked below only when there is no quantity: "both given, quantity wins" (§3.10).
      percent: z.unknown().optional(),
    }),
    check: (args) =>
      args.quantity === undefined && args.percent !== undefined && !(typeof args.percent === 'number' && args.percent > 0 && args.percent <= 1)
        ? [
            {
              field: 'percent',
              message: typeof args.percent === 'number' && args.percent <= 0 ? 'must be greater than zero' : 'must be a fraction between 0 and 1, e.g. 0.25',
            },
          ]
        : [],
    reply: readSchemas.closedPositions,
  }),
  Flatten: row<InstrumentFilterArgs, FlattenReply>({
    name: 'Flatten',
    method: 'POST',
    path: '/accounts/{account}/positions/flatten',
    ws: ['Flatten'],
    movesMoney: true,
    guard: 'exit',
    effect: 'positions may have been closed',
    summary: "Cancel an account's working orders and close its positions (of one instrument, or all)",
    fields: () => ({ ...account(), instrument: instrumentField().optional() }),
    reply: readSchemas.flatten,
  }),
  FlattenEverything: row<FlattenEverythingArgs, FlattenReply>({
    name: 'FlattenEverything',
    method: 'POST',
    path: '/positions/flatten',
    ws: ['FlattenEverything'],
    movesMoney: true,
    guard: 'exit',
    effect: 'positions may have been closed',
    summary: 'Close the positions meeting every filter (account, instrument, side); no filter closes everything everywhere',
    fields: () => ({ account: accountNameField().optional(), instrument: instrumentField().optional(), marketPosition: sideField().optional() }),
    reply: readSchemas.flatten,
    wsApiFor: (args) => (hasFlattenFilter(args) ? 'Flatten' : 'FlattenEverything'),
  }),
  GetPosition: row<InstrumentArgs, PositionRead>({
    name: 'GetPosition',
    method: 'GET',
    path: '/accounts/{account}/position',
    ws: ['GetPosition'],
    movesMoney: false,
    summary: 'The position in one instrument (Flat when there is none)',
    fields: () => ({ ...account(), instrument: instrumentField() }),
    reply: readSchemas.position,
  }),
  GetAllPositions: row<AllPositionsArgs, PositionsReply>({
    name: 'GetAllPositions',
    method: 'GET',
    path: '/positions',
    ws: ['GetAllPositions'],
    movesMoney: false,
    summary: 'The positions of every account',
    fields: () => ({ includeFlat: booleanField().optional() }),
    reply: readSchemas.positions,
  }),
  GetPositions: row<AccountPositionsArgs, PositionsReply>({
    name: 'GetPositions',
    method: 'GET',
    path: '/accounts/{account}/positions',
    ws: ['GetPositions', 'ListPositions'],
    movesMoney: false,
    summary: "One account's positions",
    fields: () => ({ ...account(), includeFlat: booleanField().optional() }),
    reply: readSchemas.positions,
  }),
  ListAccounts: row<Record<string, never>, AccountsReply>({
    name: 'ListAccounts',
    method: 'GET',
    path: '/accounts',
    ws: ['ListAccounts'],
    movesMoney: false,
    summary: 'Every account, with its money figures',
    fields: () => ({}),
    reply: readSchemas.accounts,
  }),
  GetSnapshot: row<Record<string, never>, LooseReply>({
    name: 'GetSnapshot',
    method: 'GET',
    path: '/accounts/snapshot',
    ws: ['GetSnapshot'],
    movesMoney: false,
    summary: 'Every account with its positions, at one moment',
    fields: () => ({}),
    reply: readSchemas.loose,
  }),
  GetAccount: row<AccountArgs, AccountRead>({
    name: 'GetAccount',
    method: 'GET',
    path: '/accounts/{account}',
    ws: ['GetAccount'],
    movesMoney: false,
    summary: "One account: cash, buying power, P&L",
    fields: () => account(),
    reply: readSchemas.account,
  }),
  GetWatermarks: row<AccountArgs, LooseReply>({
    name: 'GetWatermarks',
    method: 'GET',
    path: '/accounts/{account}/watermarks',
    ws: ['GetWatermarks'],
    movesMoney: false,
    summary: "An account's P&L high-water marks",
    fields: () => account(),
    reply: readSchemas.loose,
  }),
  GetQuote: row<QuoteArgs, QuotesReply>({
    name: 'GetQuote',
    method: 'GET',
    path: '/market/quote',
    ws: ['GetQuote'],
    movesMoney: false,
    summary: 'Quotes: one instrument, or a comma list',
    fields: () => ({ instrument: instrumentListField() }),
    reply: readSchemas.quotes,
  }),
  GetQuoteLegacy: row<LegacyQuoteArgs, QuotesReply>({
    name: 'GetQuoteLegacy',
    indexName: 'GetQuote (legacy)',
    method: 'GET',
    path: '/accounts/{account}/quote',
    ws: ['GetQuote'],
    movesMoney: false,
    summary: 'Quotes through an account (the older route)',
    fields: () => ({ ...account(), instrument: instrumentListField() }),
    reply: readSchemas.quotes,
  }),
  GetBars: row<BarsArgs, LooseReply>({
    name: 'GetBars',
    method: 'POST',
    path: '/market/bars',
    ws: ['GetBars'],
    movesMoney: false,
    summary: 'Historical bars',
    fields: () => ({
      instrument: instrumentField(),
      periodType: z.enum(PERIOD_TYPES, { error: (iss) => `must be one of ${PERIOD_TYPES.join(', ')}, got ${show(iss.input)}` }).optional(),
      period: wholeNumberField(1, 100_000).optional(),
      daysBack: wholeNumberField(1, 3_650).optional(),
      from: isoTimeField().optional(),
      to: isoTimeField().optional(),
      limit: wholeNumberField(1, 5_000).optional(),
    }),
    reply: readSchemas.loose,
  }),
  GetMarketInfo: row<InfoArgs, LooseReply>({
    name: 'GetMarketInfo',
    method: 'GET',
    path: '/market/info',
    ws: ['GetMarketInfo'],
    movesMoney: false,
    summary: 'Session status and boundaries (not simulated)',
    fields: () => ({ instrument: instrumentField().optional() }),
    reply: readSchemas.loose,
    notSimulated: true,
  }),
  GetExecutions: row<ExecutionsArgs, ExecutionsReply>({
    name: 'GetExecutions',
    method: 'GET',
    path: '/accounts/{account}/executions',
    ws: ['GetExecutions'],
    movesMoney: false,
    summary: "An account's fills of the last seconds (lookbackTime, default 320, at most 900)",
    fields: () => ({ ...account(), lookbackTime: wholeNumberField(1, 900).optional(), ...page() }),
    reply: readSchemas.executions,
  }),
  GetExecution: row<ExecutionArgs, ExecutionRead>({
    name: 'GetExecution',
    method: 'GET',
    path: '/accounts/{account}/executions/{executionId}',
    ws: ['GetExecution'],
    movesMoney: false,
    summary: 'One fill',
    fields: () => ({ ...account(), executionId: nameField('execution id') }),
    reply: readSchemas.execution,
  }),
  CloseStrategy: row<StrategyArgs, StrategyReply>({
    name: 'CloseStrategy',
    method: 'POST',
    path: '/accounts/{account}/strategies/{strategyId}/close',
    ws: ['CloseStrategy'],
    movesMoney: true,
    guard: 'exit',
    effect: 'the strategy may have been closed',
    summary: 'Close an ATM strategy: its orders cancelled, its position closed',
    fields: () => ({ ...account(), strategyId: nameField('strategy id') }),
    reply: readSchemas.strategy,
  }),
};

export type Operations = typeof OPERATIONS;
export type OperationName = keyof Operations;
export type ArgsOf<K extends OperationName> = NonNullable<Operations[K]['types']>['args'];
export type ReplyOf<K extends OperationName> = NonNullable<Operations[K]['types']>['reply'];

export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/** Every WebSocket `api` name (aliases included) → its operation (the first row that has it). */
let byWsName: Map<string, OperationName> | undefined;
export function operationForWsName(api: string): OperationName | undefined {
  byWsName ??= new Map(
    OPERATION_NAMES.flatMap((name) => OPERATIONS[name].ws.map((ws) => [ws, name] as const)).reverse(),
  );
  return byWsName.get(api);
}

/**
 * The operation an RPC stands for, with its args (§3.14, §3.17): `GetQuote` with an account is the
 * legacy route; `Flatten` with a side, or without an account, is the filtered flatten, and with no
 * filter at all is refused; `FlattenEverything` takes no filters. A string is a refusal's reason.
 */
export function operationForRpc(api: string, args: Record<string, unknown>): OperationName | string | undefined {
  const name = operationForWsName(api);
  if (name === 'GetQuote' && args.account != null) return 'GetQuoteLegacy';
  if (name === 'FlattenEverything' && hasFlattenFilter(args)) return 'Invalid request: FlattenEverything takes no filters; use Flatten';
  if (name === 'Flatten') {
    if (!hasFlattenFilter(args))
      return 'Invalid request: account: Flatten needs a filter (account, instrument or marketPosition); use FlattenEverything to close everything';
    if (args.marketPosition != null || args.account == null) return 'FlattenEverything';
  }
  return name;
}

export function isOperationName(name: string): name is OperationName {
  return Object.hasOwn(OPERATIONS, name);
}

/** The WebSocket name a client sends for an operation and its args (§3.14: a filtered flatten is `Flatten`). */
export function wsApiFor<K extends OperationName>(name: K, args: ArgsOf<K>): string {
  const operation = OPERATIONS[name] as OperationSpec<ArgsOf<K>>;
  return operation.wsApiFor?.(args) ?? operation.ws[0];
}

/** The names of a path's parameters, in order: `['account', 'orderId']`. */
export function pathParams(path: string): string[] {
  return [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/**
 * How args are checked: `server` ignores unknown fields, as the service does (§1.3: public
 * clients send extra fields); `client` refuses them, so a misspelt field in a batch line is an
 * error rather than an order sent without it.
 */
export type ArgsMode = 'client' | 'server';

/** Each operation's two schemas, built on first use; keyed by the row itself (no key text to build and hash per call). */
const schemas = new Map<OperationSpec, Partial<Record<ArgsMode, z.ZodObject>>>();
function argsSchema(operation: OperationSpec, mode: ArgsMode): z.ZodObject {
  let built = schemas.get(operation);
  if (!built) schemas.set(operation, (built = {}));
  let schema = built[mode];
  if (!schema) {
    schema = mode === 'client' ? z.strictObject(operation.fields()) : z.object(operation.fields());
    built[mode] = schema;
    noteBuilt(`args ${operation.name}/${mode}`);
  }
  return schema;
}

/**
 * Prices whose `0` means "none" on the service: PlaceOrder's (§3.1: "`0` or absent means none"),
 * Change's (§3.6: 0 leaves it), and the bracket's, read the same way.
 */
const ZERO_IS_NONE: ReadonlySet<string> = new Set(['limitPrice', 'stopPrice', 'takeProfit', 'stopLoss']);

/**
 * The args as the service reads them (§1.3): a field of the row whose value is JSON `null` is
 * absent. Typed clients write every unset field as `null` (Jackson, System.Text.Json, Go pointers,
 * pydantic), so `"stopPrice": null` is no stop price and `"quantity": null` a missing quantity.
 * For `server`, a price of `0` is absent too (Go's and C#'s number fields are never null: they
 * write 0). A key the row does not know is left for the schema (refused for `client`). The object
 * is returned as it is when nothing is dropped: the common case costs one pass and no copy.
 */
function presentArgs(input: Record<string, unknown>, shape: Record<string, unknown>, mode: ArgsMode): Record<string, unknown> {
  const absent = (key: string, value: unknown) =>
    (value === null && Object.hasOwn(shape, key)) || (mode === 'server' && value === 0 && ZERO_IS_NONE.has(key));
  for (const key in input) {
    if (absent(key, input[key])) {
      const kept: Record<string, unknown> = {};
      for (const [k, value] of Object.entries(input)) if (!absent(k, value)) kept[k] = value;
      return kept;
    }
  }
  return input;
}

/**
 * What the args schema's safeParse answers when every field given is well-formed (WELL_FORMED, for
 * the order's own account, instrument, action, type, time in force and quantity), found without
 * running zod: each such field's value, in the shape's order, the absent ones left out where the
 * schema leaves them out. undefined for anything else (another field, a malformed value, a
 * missing required field, for `client` a key the row does not know): zod then answers, and says
 * what is wrong. A placement over HTTP or `ws` is usually nothing but such fields; zod's parse was
 * ~8 % of `trade serve`'s CPU on it (issue 34). test/service/quick-args.test.ts holds it to zod's
 * answer for every operation, in both modes, on generated input.
 */
export function quickArgs(shape: Readonly<Record<string, z.ZodType>>, input: Record<string, unknown>, mode: ArgsMode): Record<string, unknown> | undefined {
  const data: Record<string, unknown> = {};
  for (const key in shape) {
    // `in`, as zod's object asks whether a key is present.
    if (!(key in input)) {
      // Absent and plainly optional (no default): zod leaves it out.
      const { optin, optout } = shape[key]!._zod;
      if (optin === 'optional' && optout === 'optional') continue;
      return undefined;
    }
    const value = wellFormedReader(shape[key])?.(input[key]);
    if (value === undefined) return undefined;
    data[key] = value;
  }
  if (mode === 'client') for (const key in input) if (!Object.hasOwn(shape, key)) return undefined;
  return data;
}

/** Validates and normalizes one operation's flat args. Throws a ValidationError naming every bad field. */
export function parseArgs<K extends OperationName>(name: K, input: unknown, mode: ArgsMode): ArgsOf<K> {
  const operation = OPERATIONS[name] as OperationSpec;
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new ValidationError([{ field: 'body', message: `must be a JSON object, got ${show(input)}` }]);
  const schema = argsSchema(operation, mode);
  const present = presentArgs(input as Record<string, unknown>, schema.shape, mode);
  let data = quickArgs(schema.shape, present, mode);
  if (data === undefined) {
    const result = schema.safeParse(present);
    if (!result.success) throw new ValidationError(toIssues(result.error));
    data = result.data;
  }
  const issues = operation.check?.(data as never, mode) ?? [];
  if (issues.length > 0) throw new ValidationError(issues);
  return data as ArgsOf<K>;
}
