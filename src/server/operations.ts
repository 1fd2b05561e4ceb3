/**
 * The service's operations in one dispatch table. The HTTP routes and the WebSocket RPC both go
 * through `dispatch`, so an operation answers the same status and body on either transport, and a
 * new operation (Cancel, ClosePosition) is one entry here: its route and its RPC name follow.
 */
import type { Engine, PositionRecord } from '../engine/engine.js';
import { parseAll, RejectedError, UsageError } from '../order/errors.js';
import { toClosedPosition } from '../backends/embedded.js';
import {
  cancelBodySchema,
  closeBodySchema,
  type Order,
  type OrderBody,
  ordersQuerySchema,
  parseOrderId,
  parseAccountName,
  parseOrderBody,
  parseQuery,
  positionQuerySchema,
  positionsQuerySchema,
} from '../order/schema.js';

/** What an operation answers: the HTTP status and the exact JSON body (also the RPC's `data`). */
export interface OperationResult {
  status: number;
  body: unknown;
}

export interface OperationInput {
  /** Path parameters: from the URL over HTTP, picked out of `args` by name over WebSocket. */
  params: Record<string, unknown>;
  /** The JSON body of a POST, or the query of a GET (over WebSocket: the rest of `args`). */
  data: unknown;
}

export interface Operation {
  method: 'GET' | 'POST';
  /** A fastify route; its `:name` segments are the operation's path parameters. */
  path: string;
  run(engine: Engine, input: OperationInput): OperationResult | Promise<OperationResult>;
}

export const INTERNAL_ERROR = 'Internal server error';

const ok = (body: Record<string, unknown>): OperationResult => ({ status: 200, body: { ...body, success: true } });

/**
 * The account from the path and the order from the body, validated together so that one 400
 * names every bad field. The schema module holds the rules; this only combines its answers.
 */
function orderFrom(input: OperationInput): Order {
  const [account, body] = parseAll<[string, OrderBody]>([
    () => parseAccountName(input.params.account),
    () => parseOrderBody(input.data),
  ]);
  return { account, ...body };
}

export const OPERATIONS = {
  PlaceOrder: {
    method: 'POST',
    path: '/v1/api/accounts/:account/orders/place',
    run(engine, input) {
      return ok({ orderId: engine.placeOrder(orderFrom(input)).orderId });
    },
  },
  ReversePosition: {
    method: 'POST',
    path: '/v1/api/accounts/:account/positions/reverseposition',
    run(engine, input) {
      return ok({ orderId: engine.reversePosition(orderFrom(input)).orderId });
    },
  },
  Cancel: {
    method: 'POST',
    path: '/v1/api/accounts/:account/orders/:orderId/cancel',
    run(engine, { params, data }) {
      const account = parseAccountName(params.account);
      const orderId = parseOrderId(params.orderId);
      if (data !== undefined) parseQuery(cancelBodySchema, data);
      return ok({ orderId: engine.cancelOrder(account, orderId).orderId });
    },
  },
  ClosePosition: {
    method: 'POST',
    path: '/v1/api/accounts/:account/positions/close',
    run(engine, { params, data }) {
      const account = parseAccountName(params.account);
      const { instrument } = parseQuery(closeBodySchema, data);
      return ok({ closedPositions: [toClosedPosition(engine.closePosition(account, instrument).closed)] });
    },
  },
  GetOrders: {
    method: 'GET',
    path: '/v1/api/accounts/:account/orders',
    run(engine, { params, data }) {
      const account = parseAccountName(params.account);
      const { instrument } = parseQuery(ordersQuerySchema, data);
      return ok({ orders: engine.listOrders({ account, instrument }) });
    },
  },
  GetPositions: {
    method: 'GET',
    path: '/v1/api/positions',
    run(engine, { data }) {
      return ok({ positions: engine.listPositions(parseQuery(positionsQuerySchema, data)) });
    },
  },
  GetPosition: {
    method: 'GET',
    path: '/v1/api/accounts/:account/position',
    run(engine, { params, data }) {
      const name = parseAccountName(params.account);
      const { instrument } = parseQuery(positionQuerySchema, data);
      const account = engine.resolveAccount(name);
      // A position never opened reads as flat, so a client sees one shape whatever happened before.
      const flat: PositionRecord = { account, instrument, quantity: 0, avgPrice: null, realizedPnl: 0 };
      return ok({ position: engine.getPosition(account, instrument) ?? flat });
    },
  },
} satisfies Record<string, Operation>;

export type ApiName = keyof typeof OPERATIONS;

export function isApiName(name: unknown): name is ApiName {
  return typeof name === 'string' && Object.hasOwn(OPERATIONS, name);
}

/** The names of an operation's path parameters, e.g. ['account'] (later also ['account', 'orderId']). */
export function pathParams(operation: Operation): string[] {
  return operation.path
    .split('/')
    .filter((segment) => segment.startsWith(':'))
    .map((segment) => segment.slice(1));
}

/** A WebSocket `args` object, flat as section 4.3 has it, split the way the HTTP route splits it. */
export function inputFromArgs(operation: Operation, args: Record<string, unknown>): OperationInput {
  const params: Record<string, unknown> = {};
  const data: Record<string, unknown> = { ...args };
  for (const name of pathParams(operation)) {
    params[name] = args[name];
    delete data[name];
  }
  return { params, data };
}

/**
 * What an operation throws becomes a status and an `{error}` body here, and only here (the
 * transports add only their own refusals: token, limits, malformed input). Typed errors carry
 * messages written for the client; anything else may hold internals (SQL, paths), so the client
 * gets a fixed text and the caller reports the real error to the operator.
 */
export function errorResult(error: unknown): OperationResult & { internal: boolean } {
  if (error instanceof RejectedError) return { status: error.status, body: { error: error.message }, internal: false };
  // ValidationError is a UsageError: a request the schema refused.
  if (error instanceof UsageError) return { status: 400, body: { error: error.message }, internal: false };
  return { status: 500, body: { error: INTERNAL_ERROR }, internal: true };
}

export interface DispatchOptions {
  /** Told about internal errors (the client only sees INTERNAL_ERROR). */
  onInternalError?: (api: ApiName, error: unknown) => void;
}

/** Runs one operation; never throws. Both transports call this and send what it answers. */
export async function dispatch(
  engine: Engine,
  api: ApiName,
  input: OperationInput,
  options: DispatchOptions = {},
): Promise<OperationResult> {
  try {
    return await (OPERATIONS[api] as Operation).run(engine, input);
  } catch (error) {
    const { status, body, internal } = errorResult(error);
    if (internal) options.onInternalError?.(api, error);
    return { status, body };
  }
}
