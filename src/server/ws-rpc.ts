/**
 * The WebSocket API of service-reference.md §5: `{action:"rpc", id, api, args}` → exactly
 * `{"id", "data"}`, `data` being the body the HTTP route answers (both go through `dispatch`),
 * for failures too; `{action:"ping"}` → `{"type":"pong"}`; `subscribe`, `unsubscribe` and
 * `streamPnl` start and stop the streams of streams.ts. Malformed input (not JSON, not an
 * object, an unknown action, a binary frame) is logged and gets no reply (§5.4). The messages of
 * one connection are answered in the order received.
 */
import type { RawData, WebSocket } from 'ws';
import type { Engine } from '../engine/engine.js';
import { formatIssues } from '../order/errors.js';
import { printable, show } from '../order/schema.js';
import { duplicateKeyIssues, type KeyPath, parseStrictJson } from '../service/strict-json.js';
import { isOperationName, operationForRpc, operationForWsName } from '../service/operations.js';
import { dispatch, INTERNAL_ERROR_BODY, type OperationResult } from './operations.js';
import { RATE_LIMITED, type TakeResult } from './limits.js';
import { CONGESTED_BYTES, type StreamAction, type StreamEvent, type StreamHub } from './streams.js';

/** What the server lends each connection. */
export interface RpcServerContext {
  engine: Engine;
  /** Takes a token from the rate limit's bucket (always ok when there is none). */
  take(): TakeResult;
  /** One line per RPC (and per ignored message), when request logging is on. */
  log?: (line: string) => void;
  onInternalError(api: string, error: unknown): void;
  /** The server's streams; without them the stream actions are ignored like unknown ones. */
  streams?: StreamHub;
}

export type RpcId = string | number | null;

export interface RpcReply {
  id: RpcId;
  data: unknown;
}

/** The `action`s the server answers (§5.2); any other is ignored. */
export const WS_ACTIONS: readonly string[] = ['rpc', 'ping', 'subscribe', 'unsubscribe', 'streamPnl'];

const STREAM_ACTIONS: readonly unknown[] = ['subscribe', 'unsubscribe', 'streamPnl'] satisfies StreamAction[];

type Parsed =
  | { kind: 'ping' }
  | { kind: 'stream'; action: StreamAction; message: Record<string, unknown> }
  | { kind: 'rpc'; id: RpcId; api: unknown; args: unknown }
  | { kind: 'refused'; reply: RpcReply | StreamEvent; why: string }
  | { kind: 'ignored'; why: string };

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The id is echoed unchanged; one that is missing (or not a string or a number) is echoed as null. */
const usableId = (id: unknown): RpcId => (typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null);

/** One text message, sorted into what it asks for. */
export function parseMessage(text: string): Parsed {
  const parsed = parseStrictJson(text);
  if (!parsed.ok && parsed.invalid) return { kind: 'ignored', why: 'not valid JSON' };
  const message = parsed.value;
  if (!isObject(message)) return { kind: 'ignored', why: `not a JSON object (${show(message)})` };
  if (!parsed.ok) return refuseDuplicates(message, parsed.duplicates);
  const { action, id, api, args } = message;
  if (action === 'ping') return { kind: 'ping' };
  if (STREAM_ACTIONS.includes(action)) return { kind: 'stream', action: action as StreamAction, message };
  if (action !== 'rpc') return { kind: 'ignored', why: `action ${action === undefined ? 'missing' : show(action)}` };
  return { kind: 'rpc', id: usableId(id), api, args };
}

/**
 * A message with a key given twice is refused and nothing is done. A client waiting on an RPC
 * gets its reply, so that it learns "refused" instead of timing out into "outcome unknown": an
 * `rpc` (or a message whose `action` is itself doubled, which may be one) is answered
 * `{id, data: {error}}`, the id echoed unless it is the doubled key; a stream action gets the
 * stream error event (§5.3). Anything else is malformed input, ignored as §5.4 says.
 */
function refuseDuplicates(message: Record<string, unknown>, duplicates: KeyPath[]): Parsed {
  const error = formatIssues(duplicateKeyIssues('message', duplicates));
  const doubled = (key: string) => duplicates.some((path) => path.length === 1 && path[0] === key);
  const { action, id } = message;
  if (action === 'rpc' || doubled('action'))
    return { kind: 'refused', reply: { id: doubled('id') ? null : usableId(id), data: { error } }, why: error };
  if (STREAM_ACTIONS.includes(action)) return { kind: 'refused', reply: { type: 'error', action: action as StreamAction, error }, why: error };
  return { kind: 'ignored', why: error };
}

/** Answers one RPC: the api and args, then the rate limit, then the operation itself. */
export function answerRpc(ctx: RpcServerContext, api: unknown, args: unknown): OperationResult {
  if (api === undefined || api === null || api === '') return { status: 400, body: { error: 'Invalid request: api: is required' } };
  if (typeof api !== 'string') return { status: 400, body: { error: `Invalid request: api: must be a string, got ${show(api)}` } };
  if (args !== undefined && !isObject(args)) return { status: 400, body: { error: 'Invalid request: args: must be an object' } };
  const name = operationForRpc(api, (args ?? {}) as Record<string, unknown>);
  // The name is echoed short and printable: a client's text never breaks the reply or a terminal.
  if (name === undefined) return { status: 404, body: { error: `Unknown API command ${show(api)}` } };
  const taken = ctx.take();
  if (!taken.ok) return { status: 429, body: { error: RATE_LIMITED } };
  // A string is the reason §3.14's rules refuse this use of the name.
  if (!isOperationName(name)) return { status: 400, body: { error: name } };
  return dispatch(ctx.engine, name, args ?? {}, { onInternalError: ctx.onInternalError });
}

export function handleRpcConnection(socket: WebSocket, remote: string, ctx: RpcServerContext): void {
  const send = (message: RpcReply | StreamEvent) => {
    // The client may have gone while we worked; its reply has nowhere to go.
    if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
  };
  const streams = ctx.streams?.open({ send, congested: () => socket.bufferedAmount > CONGESTED_BYTES });
  socket.on('close', (code: number) => {
    streams?.close();
    ctx.log?.(`${remote} WS closed ${code}`);
  });

  socket.on('message', (raw: RawData, isBinary: boolean) => {
    const started = performance.now();
    if (isBinary) return ctx.log?.(`${remote} WS ignored: a binary frame`);
    const bytes = Array.isArray(raw) ? Buffer.concat(raw) : Buffer.isBuffer(raw) ? raw : Buffer.from(raw);
    const message = parseMessage(bytes.toString('utf8'));
    if (message.kind === 'ping') return send({ type: 'pong' });
    if (message.kind === 'refused') {
      send(message.reply);
      return ctx.log?.(`${remote} WS refused 400: ${message.why}`);
    }
    if (message.kind === 'ignored' || (message.kind === 'stream' && !streams))
      return ctx.log?.(`${remote} WS ignored: ${message.kind === 'ignored' ? message.why : `action '${message.action}'`}`);
    if (message.kind === 'stream') {
      let done: string;
      try {
        done = streams!.handle(message.action, message.message);
      } catch (error) {
        ctx.onInternalError(message.action, error);
        done = 'failed';
      }
      return ctx.log?.(`${remote} WS ${message.action} ${printable(done)} ${(performance.now() - started).toFixed(1)}ms`);
    }
    const label = typeof message.api === 'string' && operationForWsName(message.api) ? message.api : show(message.api);
    let result: OperationResult;
    try {
      result = answerRpc(ctx, message.api, message.args);
    } catch (error) {
      // dispatch never throws; this keeps the one-reply promise even if something around it does.
      ctx.onInternalError(label, error);
      result = { status: 500, body: INTERNAL_ERROR_BODY };
    }
    send({ id: message.id, data: result.body });
    ctx.log?.(`${remote} WS ${label} id=${show(message.id)} ${result.status} ${(performance.now() - started).toFixed(1)}ms`);
  });
}
