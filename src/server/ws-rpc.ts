/**
 * The WebSocket RPC of section 4.3: `{action:"rpc", id, api, args}` → `{id, status, data}`, where
 * `data` is exactly the body the HTTP route answers, because both go through `dispatch`.
 * Every message gets exactly one reply (a bad one included) and the connection stays open.
 */
import type { WebSocket, RawData } from 'ws';
import type { Engine } from '../engine/engine.js';
import { show } from '../order/schema.js';
import {
  type ApiName,
  dispatch,
  INTERNAL_ERROR,
  inputFromArgs,
  isApiName,
  type Operation,
  OPERATIONS,
  type OperationResult,
} from './operations.js';
import { BODY_LIMIT, RATE_LIMITED, type TakeResult } from './limits.js';

/** What the server lends each connection. */
export interface RpcServerContext {
  engine: Engine;
  /** Takes a token from the rate limit's bucket (always ok when there is none). */
  take(): TakeResult;
  /** One line per RPC, when request logging is on. */
  log?: (line: string) => void;
  onInternalError(api: string, error: unknown): void;
  /** Registers an RPC being answered, so shutdown can wait for it. */
  track(work: Promise<unknown>): void;
}

export type RpcId = string | number | null;

export interface RpcReply {
  id: RpcId;
  status: number;
  data: unknown;
}

type Parsed =
  | { kind: 'ping' }
  | { kind: 'rpc'; id: string | number; api: unknown; args: Record<string, unknown> }
  | { kind: 'bad'; id: RpcId; status: number; error: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** One text or binary message, checked in the order a client would fix it. */
export function parseMessage(text: string): Parsed {
  const bad = (error: string, id: RpcId = null): Parsed => ({ kind: 'bad', id, status: 400, error });
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return bad('Invalid request: the message is not valid JSON');
  }
  if (!isObject(message)) return bad(`Invalid request: the message must be a JSON object, got ${show(message)}`);
  const { action, id, api, args } = message;
  if (action === 'ping') return { kind: 'ping' };
  // Reply to a usable id even when the rest is wrong, so the client can tell which call failed.
  const usableId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null;
  if (action !== 'rpc') {
    const why = action === undefined ? 'is required' : `must be 'rpc' or 'ping', got ${show(action)}`;
    return bad(`Invalid request: action: ${why}`, usableId);
  }
  if (usableId === null) {
    return bad(`Invalid request: id: ${id === undefined ? 'is required' : `must be a string or a number, got ${show(id)}`}`);
  }
  if (typeof api !== 'string') {
    return bad(`Invalid request: api: ${api === undefined ? 'is required' : `must be a string, got ${show(api)}`}`, usableId);
  }
  if (args !== undefined && !isObject(args)) {
    return bad(`Invalid request: args: must be an object (account and the order fields), got ${show(args)}`, usableId);
  }
  return { kind: 'rpc', id: usableId, api, args: args ?? {} };
}

/** Answers one RPC: rate limit, then the api name, then the operation itself. */
export async function answerRpc(ctx: RpcServerContext, api: unknown, args: Record<string, unknown>): Promise<OperationResult> {
  const taken = ctx.take();
  if (!taken.ok) return { status: 429, body: { error: RATE_LIMITED } };
  if (!isApiName(api)) {
    const known = Object.keys(OPERATIONS).join(', ');
    return { status: 404, body: { error: `Unknown api ${show(api)}; known: ${known}` } };
  }
  const operation: Operation = OPERATIONS[api as ApiName];
  return dispatch(ctx.engine, api, inputFromArgs(operation, args), { onInternalError: ctx.onInternalError });
}

export function handleRpcConnection(socket: WebSocket, remote: string, ctx: RpcServerContext): void {
  const send = (reply: RpcReply | { type: 'pong' }) => {
    // The client may have gone while we worked; its reply has nowhere to go.
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(reply));
  };

  socket.on('message', (raw: RawData) => {
    const started = performance.now();
    const bytes = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    // Too big to be an order: answered without parsing, as HTTP answers 413 without reading.
    const message: Parsed =
      bytes.length > BODY_LIMIT
        ? { kind: 'bad', id: null, status: 413, error: `Message is larger than ${BODY_LIMIT / 1024} KiB` }
        : parseMessage(bytes.toString('utf8'));
    if (message.kind === 'ping') return send({ type: 'pong' });
    const respond = (api: string, reply: RpcReply) => {
      send(reply);
      ctx.log?.(`${remote} WS ${api} id=${show(reply.id)} ${reply.status} ${(performance.now() - started).toFixed(1)}ms`);
    };
    // A bad message is answered at once, so its reply keeps its place among the others.
    if (message.kind === 'bad') return respond('-', { id: message.id, status: message.status, data: { error: message.error } });
    const api = isApiName(message.api) ? message.api : show(message.api);
    const work = (async (): Promise<RpcReply> => {
      try {
        const result = await answerRpc(ctx, message.api, message.args);
        return { id: message.id, status: result.status, data: result.body };
      } catch (error) {
        // dispatch never throws; this keeps the one-reply promise even if something around it does.
        ctx.onInternalError(api, error);
        return { id: message.id, status: 500, data: { error: INTERNAL_ERROR } };
      }
    })()
      .then((answer) => respond(api, answer))
      .catch((error: unknown) => ctx.onInternalError(api, error));
    ctx.track(work);
  });
}
