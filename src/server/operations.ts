/**
 * How `trade serve` answers one operation of the table (src/service/operations.ts), on either
 * transport: the flat args checked by the row's schema (unknown fields ignored, as the service
 * does), then the simulator's handler, then the status and exact body. Both the HTTP routes and
 * the WebSocket RPC call `dispatch`, so an operation answers the same body on either.
 */
import type { Engine } from '../engine/engine.js';
import { simulate } from '../engine/service.js';
import { AbandonedError, type Committer } from '../engine/committer.js';
import { RejectedError, StoreError, UsageError } from '../common/errors.js';
import { OPERATIONS, type OperationName, parseArgs } from '../service/operations.js';

/** What an operation answers: the HTTP status and the exact JSON body (also the RPC's `data`). */
export interface OperationResult {
  status: number;
  body: unknown;
}

/** The 500 body (§6.1): says nothing of the cause, which goes to the operator's stderr only. */
export const INTERNAL_ERROR_BODY = {
  success: false,
  error: 'internal_error',
  detail: 'trade serve failed unexpectedly; the cause is on its stderr',
} as const;

/** Every route the server serves, as the catalog lists it (§1.7): `POST /v1/api/accounts/{account}/orders/place`. */
export const CATALOG: string[] = (Object.keys(OPERATIONS) as OperationName[]).map(
  (name) => `${OPERATIONS[name].method} /v1/api${OPERATIONS[name].path}`,
);

/**
 * What an operation throws becomes a status and a body here, and only here (the transports add
 * only their own refusals: token, limits, malformed input). Typed errors carry bodies written
 * for the client; anything else may hold internals (SQL, paths), so the client gets a fixed body
 * and the caller reports the real error to the operator.
 */
export function errorResult(error: unknown): OperationResult & { internal: boolean } {
  if (error instanceof RejectedError) return { status: error.status, body: error.body, internal: false };
  // The client learns the store cannot be used (5xx, §6.1); the operator, told as for an internal
  // error, gets the file and what to do.
  if (error instanceof StoreError) return { status: error.status, body: error.body, internal: true };
  // ValidationError is a UsageError: a request the schema refused.
  if (error instanceof UsageError) return { status: 400, body: { error: error.message }, internal: false };
  return { status: 500, body: INTERNAL_ERROR_BODY, internal: true };
}

export interface DispatchOptions {
  /** Told about internal errors (the client only sees INTERNAL_ERROR_BODY). */
  onInternalError?: (api: string, error: unknown) => void;
}

/** Runs one operation with its flat args (path parameters win over body fields of the same name); never throws. */
export function dispatch(engine: Engine, name: OperationName, args: unknown, options: DispatchOptions = {}): OperationResult {
  try {
    const { body } = simulate(engine, name, parseArgs(name, args, 'server'));
    return { status: 200, body };
  } catch (error) {
    return failed(name, error, options);
  }
}

function failed(name: OperationName, error: unknown, options: DispatchOptions): OperationResult {
  const { status, body, internal } = errorResult(error);
  if (internal) options.onInternalError?.(name, error);
  return { status, body };
}

/**
 * `dispatch` with group commit: an operation that may move money is run in the committer's next
 * group (one transaction for the operations that arrived together, a savepoint each) and answered
 * only after that transaction committed; a read keeps its place behind them (Committer.inOrder).
 * Never rejects.
 */
export async function dispatchGrouped(
  engine: Engine,
  committer: Committer,
  name: OperationName,
  args: unknown,
  options: DispatchOptions & { abandoned?: () => boolean } = {},
): Promise<OperationResult> {
  try {
    const parsed = parseArgs(name, args, 'server');
    const { body } = await committer.inOrder(() => simulate(engine, name, parsed), OPERATIONS[name].movesMoney, options.abandoned);
    return { status: 200, body };
  } catch (error) {
    // Nobody is there to read an answer: 499, as nginx writes it; nothing was done.
    if (error instanceof AbandonedError) return { status: 499, body: { error: error.message } };
    return failed(name, error, options);
  }
}
