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
import { type FieldIssue, ValidationError } from '../order/errors.js';
import {
  accountNameField,
  booleanField,
  instrumentField,
  type Order,
  orderBodyShape,
  orderIdField,
  priceRules,
  show,
  toIssues,
} from '../order/schema.js';
import {
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
  /** What such a request may have done, for "outcome unknown" messages. */
  readonly effect?: string;
  readonly summary: string;
  /** The flat `args`: path parameters, then query or body fields (§3: "one flat args object"). */
  readonly fields: () => z.ZodRawShape;
  /** Rules across fields, run once every field has passed. */
  readonly check?: (args: A) => FieldIssue[];
  /** The success body, as a client reads it. */
  readonly reply: () => z.ZodType<R>;
  /** Carries the row's types only (never set): what its args and its reply are. */
  readonly types?: { args: A; reply: R };
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
export interface OrdersArgs {
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

const account = () => ({ account: accountNameField });

export const OPERATIONS = {
  PlaceOrder: row<Order, OrderIdReply>({
    name: 'PlaceOrder',
    method: 'POST',
    path: '/accounts/{account}/orders/place',
    ws: ['PlaceOrder'],
    movesMoney: true,
    effect: 'the order may have been placed',
    summary: 'Place an order',
    fields: () => ({ ...account(), ...orderBodyShape }),
    check: priceRules,
    reply: readSchemas.orderId,
  }),
  ReversePosition: row<Order, OrderIdReply>({
    name: 'ReversePosition',
    method: 'POST',
    path: '/accounts/{account}/positions/reverseposition',
    ws: ['ReversePosition'],
    movesMoney: true,
    effect: 'the position may have been reversed',
    summary: 'Close the position in the instrument, then place an order',
    fields: () => ({ ...account(), ...orderBodyShape }),
    check: priceRules,
    reply: readSchemas.orderId,
  }),
  Cancel: row<CancelArgs, OrderIdReply>({
    name: 'Cancel',
    method: 'POST',
    path: '/accounts/{account}/orders/{orderId}/cancel',
    ws: ['Cancel', 'CancelOrder'],
    movesMoney: true,
    effect: 'the order may have been cancelled',
    summary: 'Cancel a working order (and its OCO group)',
    fields: () => ({ ...account(), orderId: orderIdField }),
    reply: readSchemas.orderId,
  }),
  ClosePosition: row<InstrumentArgs, ClosedPositionsReply>({
    name: 'ClosePosition',
    method: 'POST',
    path: '/accounts/{account}/positions/close',
    ws: ['ClosePosition'],
    movesMoney: true,
    effect: 'the position may have been closed',
    summary: "Cancel the instrument's working orders and close the position at market",
    fields: () => ({ ...account(), instrument: instrumentField }),
    reply: readSchemas.closedPositions,
  }),
  GetOrder: row<OrderLookupArgs, OrderRead>({
    name: 'GetOrder',
    method: 'GET',
    path: '/accounts/{account}/orders/{orderId}',
    ws: ['GetOrder'],
    movesMoney: false,
    summary: 'One order',
    fields: () => ({ ...account(), orderId: orderIdField }),
    reply: readSchemas.order,
  }),
  GetOrders: row<OrdersArgs, OrdersReply>({
    name: 'GetOrders',
    method: 'GET',
    path: '/accounts/{account}/orders',
    ws: ['GetOrders', 'ListOrders'],
    movesMoney: false,
    summary: "An account's orders: active ones and the current trading day's",
    fields: () => ({ ...account(), activeOnly: booleanField.optional() }),
    reply: readSchemas.orders,
  }),
  GetOrderStatus: row<OrderLookupArgs, OrderStatusReply>({
    name: 'GetOrderStatus',
    method: 'GET',
    path: '/accounts/{account}/orders/{orderId}/status',
    ws: ['GetOrderStatus'],
    movesMoney: false,
    summary: "An order's state",
    fields: () => ({ ...account(), orderId: orderIdField }),
    reply: readSchemas.orderStatus,
  }),
  GetPosition: row<InstrumentArgs, PositionRead>({
    name: 'GetPosition',
    method: 'GET',
    path: '/accounts/{account}/position',
    ws: ['GetPosition'],
    movesMoney: false,
    summary: 'The position in one instrument (Flat when there is none)',
    fields: () => ({ ...account(), instrument: instrumentField }),
    reply: readSchemas.position,
  }),
  GetAllPositions: row<AllPositionsArgs, PositionsReply>({
    name: 'GetAllPositions',
    method: 'GET',
    path: '/positions',
    ws: ['GetAllPositions'],
    movesMoney: false,
    summary: 'The positions of every account',
    fields: () => ({ includeFlat: booleanField.optional() }),
    reply: readSchemas.positions,
  }),
  GetPositions: row<AccountPositionsArgs, PositionsReply>({
    name: 'GetPositions',
    method: 'GET',
    path: '/accounts/{account}/positions',
    ws: ['GetPositions', 'ListPositions'],
    movesMoney: false,
    summary: "One account's positions",
    fields: () => ({ ...account(), includeFlat: booleanField.optional() }),
    reply: readSchemas.positions,
  }),
};

export type Operations = typeof OPERATIONS;
export type OperationName = keyof Operations;
export type ArgsOf<K extends OperationName> = NonNullable<Operations[K]['types']>['args'];
export type ReplyOf<K extends OperationName> = NonNullable<Operations[K]['types']>['reply'];

export const OPERATION_NAMES = Object.keys(OPERATIONS) as OperationName[];

/** Every WebSocket `api` name (aliases included) → its operation. */
let byWsName: Map<string, OperationName> | undefined;
export function operationForWsName(api: string): OperationName | undefined {
  byWsName ??= new Map(OPERATION_NAMES.flatMap((name) => OPERATIONS[name].ws.map((ws) => [ws, name] as const)));
  return byWsName.get(api);
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

const schemas = new Map<string, z.ZodType>();
function argsSchema(operation: OperationSpec, mode: ArgsMode): z.ZodType {
  const key = `${operation.name}/${mode}`;
  let schema = schemas.get(key);
  if (!schema) {
    schema = mode === 'client' ? z.strictObject(operation.fields()) : z.object(operation.fields());
    schemas.set(key, schema);
  }
  return schema;
}

/** Validates and normalizes one operation's flat args. Throws a ValidationError naming every bad field. */
export function parseArgs<K extends OperationName>(name: K, input: unknown, mode: ArgsMode): ArgsOf<K> {
  const operation = OPERATIONS[name] as OperationSpec;
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    throw new ValidationError([{ field: 'body', message: `must be a JSON object, got ${show(input)}` }]);
  const result = argsSchema(operation, mode).safeParse(input);
  if (!result.success) throw new ValidationError(toIssues(result.error));
  const issues = operation.check?.(result.data) ?? [];
  if (issues.length > 0) throw new ValidationError(issues);
  return result.data as ArgsOf<K>;
}
