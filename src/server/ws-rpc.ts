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
import { formatIssues } from '../common/errors.js';
import { burstWriter } from '../common/ws-burst.js';
import { printable, show } from '../service/order.js';
import { duplicateKeyIssues, type KeyPath, parseStrictJson } from '../service/strict-json.js';
import { isOperationName, OPERATIONS, type OperationName, operationForRpc, operationForWsName } from '../service/operations.js';
import { dispatch, dispatchGrouped, INTERNAL_ERROR_BODY, type OperationResult } from './operations.js';
import type { Committer } from '../engine/committer.js';
import { RATE_LIMITED, type TakeResult } from './limits.js';
import { CONGESTED_BYTES, type StreamAction, type StreamEvent, type StreamHub } from './streams.js';
import type { Sandbox } from './sandbox/sandbox.js';
import type { Rule } from './sandbox/rules.js';
import { monotonicMs } from '../common/monotonic.js';

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
  /** Group commit for the operations that may move money; without it each runs on its own. */
  committer?: Committer;
  /** Scenario rules and the request log (issue 22). */
  sandbox?: Sandbox;
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
  const checked = checkRpc(ctx, api, args);
  return 'result' in checked ? checked.result : dispatch(ctx.engine, checked.name, checked.args, { onInternalError: ctx.onInternalError });
}

/** An RPC's api, args and rate limit checked: the refusal, or the operation to run. */
function checkRpc(ctx: RpcServerContext, api: unknown, args: unknown): { result: OperationResult } | { name: OperationName; args: unknown } {
  if (api === undefined || api === null || api === '') return { result: { status: 400, body: { error: 'Invalid request: api: is required' } } };
  if (typeof api !== 'string') return { result: { status: 400, body: { error: `Invalid request: api: must be a string, got ${show(api)}` } } };
  // `args: null` is no args, as a null field is an absent one (§1.3).
  if (args != null && !isObject(args)) return { result: { status: 400, body: { error: 'Invalid request: args: must be an object' } } };
  const flat = (args ?? {}) as Record<string, unknown>;
  const name = operationForRpc(api, flat);
  // The name is echoed short and printable: a client's text never breaks the reply or a terminal.
  if (name === undefined) return { result: { status: 404, body: { error: `Unknown API command ${show(api)}` } } };
  const taken = ctx.take();
  if (!taken.ok) return { result: { status: 429, body: { error: RATE_LIMITED } } };
  // A string is the reason §3.14's rules refuse this use of the name.
  if (!isOperationName(name)) return { result: { status: 400, body: { error: name } } };
  return { name, args: flat };
}

/** Whether a message is an RPC of an operation that may move money: one the committer groups. */
function grouped(ctx: RpcServerContext, message: Parsed): boolean {
  if (!ctx.committer || message.kind !== 'rpc' || typeof message.api !== 'string') return false;
  const name = operationForRpc(message.api, (isObject(message.args) ? message.args : {}) as Record<string, unknown>);
  return name !== undefined && isOperationName(name) && OPERATIONS[name].movesMoney;
}

/**
 * How many grouped RPCs of one connection are handed to the committer in one turn. A client that
 * keeps 64 requests in flight (`trade batch`'s default) gets its replies in two commits rather than
 * one, and sends the next lines while the second is made: with 64, the client and the server took
 * turns, each idle a third of the time (docs/performance.md, tenth round).
 */
const GROUPED_PER_TURN = 32;

/**
 * The bounds of one connection (docs/reliability.md "Limits"): messages wait in a queue and are answered one
 * at a time, yielding to the event loop between them, so one busy client cannot starve the rest.
 * While the replies waiting to be written exceed `highWaterBytes`, or the queue holds
 * `maxQueued` messages, the socket is not read (TCP pushes back on the client); a client that
 * stays over the high-water mark for `stallMs` is closed with 1008. A closed connection's queue
 * is dropped: no work is done for a client that has gone.
 */
export interface ConnectionBounds {
  highWaterBytes: number;
  lowWaterBytes: number;
  maxQueued: number;
  stallMs: number;
}

export const CONNECTION_BOUNDS: ConnectionBounds = {
  highWaterBytes: 1024 * 1024,
  lowWaterBytes: 256 * 1024,
  maxQueued: 64,
  stallMs: 30_000,
};

/** How often a paused connection looks at its outgoing buffer. */
const DRAIN_POLL_MS = 25;
/** How long a client closed for not reading gets to answer the close frame before it is cut off. */
const CLOSE_GRACE_MS = 1_000;

export function handleRpcConnection(socket: WebSocket, remote: string, ctx: RpcServerContext, bounds: ConnectionBounds = CONNECTION_BOUNDS): void {
  // The replies sent in one turn (a group commit's) leave in one write.
  const burst = burstWriter(socket);
  const send = (message: RpcReply | StreamEvent) => {
    // The client may have gone while we worked; its reply has nowhere to go.
    if (socket.readyState !== socket.OPEN) return;
    burst();
    socket.send(JSON.stringify(message));
  };
  const streams = ctx.streams?.open({ send, congested: () => socket.bufferedAmount > CONGESTED_BYTES });
  const queue: Array<{ raw: RawData; isBinary: boolean; parsed?: Parsed }> = [];
  /** Grouped RPCs handed to the committer and not yet answered. */
  let inflight = 0;
  /** RPCs a scenario rule acts on (delayed, dropped...), not yet answered: nothing else of this connection runs meanwhile. */
  let holding = 0;
  const parsedOf = (item: (typeof queue)[number]): Parsed | undefined => {
    if (item.isBinary) return undefined;
    if (!item.parsed) {
      const bytes = Array.isArray(item.raw) ? Buffer.concat(item.raw) : Buffer.isBuffer(item.raw) ? item.raw : Buffer.from(item.raw);
      item.parsed = parseMessage(bytes.toString('utf8'));
    }
    return item.parsed;
  };
  /** A grouped RPC is answered after the commit; until then nothing else of this connection runs, so replies keep its order. */
  const isGrouped = (item: (typeof queue)[number]) => {
    const parsed = parsedOf(item);
    return parsed !== undefined && grouped(ctx, parsed);
  };
  let scheduled = false;
  let waiting: NodeJS.Timeout | undefined;
  let overSince: number | undefined;
  let closed = false;

  const over = () => socket.bufferedAmount > bounds.highWaterBytes;
  const stop = () => {
    closed = true;
    queue.length = 0;
    if (waiting) clearTimeout(waiting);
  };
  socket.on('close', (code: number) => {
    stop();
    streams?.close();
    ctx.log?.(`${remote} WS closed ${code}`);
  });

  /**
   * Answers queued messages until the queue is empty or the client has too much unread: one
   * message run at once per turn, or up to GROUPED_PER_TURN grouped RPCs handed to the committer
   * (answered after their commit). Anything else waits until this connection's grouped RPCs are
   * answered, so a client's replies come in the order it asked.
   */
  const pump = () => {
    scheduled = false;
    if (closed) return;
    if (over()) return waitForDrain();
    overSince = undefined;
    if (holding > 0) return;
    for (let handed = 0; queue.length > 0 && handed < GROUPED_PER_TURN && holding === 0; handed++) {
      if (isGrouped(queue[0]!)) {
        answer(queue.shift()!);
        continue;
      }
      if (inflight === 0) answer(queue.shift()!);
      break;
    }
    if (holding > 0) return;
    if (queue.length > 0 && (inflight === 0 || isGrouped(queue[0]!))) return schedule();
    // The rest waits for the grouped replies, which schedule the next turn.
    if (queue.length > 0) return;
    // Read again once the queue is empty and the replies are on their way.
    if (socket.isPaused) {
      if (over()) waitForDrain();
      else socket.resume();
    }
  };
  const schedule = () => {
    if (scheduled || closed) return;
    scheduled = true;
    setImmediate(pump);
  };
  /** Reads nothing more until the client has read its replies down to the low-water mark. */
  const waitForDrain = () => {
    socket.pause();
    // One wait at a time: a message that arrives meanwhile joins the queue and is answered after it.
    if (waiting) return;
    overSince ??= Date.now();
    if (Date.now() - overSince >= bounds.stallMs) {
      ctx.log?.(`${remote} WS closed 1008: more than ${bounds.highWaterBytes} bytes of replies unread for ${bounds.stallMs} ms`);
      stop();
      socket.close(1008, 'Replies not read');
      setTimeout(() => socket.terminate(), CLOSE_GRACE_MS).unref();
      return;
    }
    waiting = setTimeout(() => {
      waiting = undefined;
      if (socket.bufferedAmount > bounds.lowWaterBytes) {
        // Reading, if slowly: only time spent over the high-water mark counts towards the close.
        if (!over()) overSince = undefined;
        return waitForDrain();
      }
      overSince = undefined;
      schedule();
    }, DRAIN_POLL_MS);
  };

  socket.on('message', (raw: RawData, isBinary: boolean) => {
    if (closed) return;
    queue.push({ raw, isBinary });
    if (queue.length >= bounds.maxQueued) socket.pause();
    schedule();
  });

  /** Closes the connection as a rule says: ws-close with its code, a drop with none (the client sees 1006). */
  function cut(code?: number): void {
    stop();
    if (code === undefined) socket.terminate();
    else socket.close(code, 'closed by a trade serve scenario rule');
  }

  /** A stream action a rule fired on: true when the rule took it (the connection is closed). */
  function streamRule(rule: Rule, action: string, started: number): boolean {
    const effect = rule.effect;
    const logged = (status: number) =>
      ctx.sandbox?.log.add({ time: Date.now(), transport: 'ws', operation: action, status, rule: rule.name, ms: monotonicMs() - started });
    if (effect.kind === 'ws-close' && effect.afterMs === undefined) {
      logged(0);
      cut(effect.code);
      return true;
    }
    if (effect.kind === 'ws-close') setTimeout(() => !closed && cut(effect.code), effect.afterMs).unref();
    if (effect.kind === 'drop-before') {
      logged(0);
      cut();
      return true;
    }
    return false;
  }

  /** An RPC a scenario rule fired on (issue 22): the effect, then (unless it says otherwise) the operation. */
  async function answerWithRule(
    rule: Rule,
    name: OperationName,
    args: Record<string, unknown>,
    reply: (result: OperationResult) => void,
    note: (status: number) => void,
  ): Promise<void> {
    const sandbox = ctx.sandbox!;
    const effect = rule.effect;
    if (effect.kind === 'status') {
      const injected = sandbox.statusReply(effect);
      return reply({ status: injected.status, body: injected.body });
    }
    if (effect.kind === 'drop-before' || (effect.kind === 'ws-close' && effect.afterMs === undefined)) {
      note(0);
      return cut(effect.kind === 'ws-close' ? effect.code : undefined);
    }
    if (effect.kind === 'delay') await new Promise((resolve) => setTimeout(resolve, effect.ms));
    if (closed) return;
    const engine = sandbox.engineFor(rule);
    const result =
      ctx.committer && OPERATIONS[name].movesMoney
        ? await dispatchGrouped(engine, ctx.committer, name, args, { onInternalError: ctx.onInternalError })
        : dispatch(engine, name, args, { onInternalError: ctx.onInternalError });
    if (effect.kind === 'drop-after') {
      note(0);
      return cut();
    }
    if (result.status === 200) sandbox.afterPlaced(rule, result.body, args.account);
    reply(result);
    if (effect.kind === 'ws-close') setTimeout(() => !closed && cut(effect.code), effect.afterMs).unref();
  }

  function answer(item: (typeof queue)[number]): void {
    const started = monotonicMs();
    const message = parsedOf(item);
    if (message === undefined) return ctx.log?.(`${remote} WS ignored: a binary frame`);
    if (message.kind === 'ping') return send({ type: 'pong' });
    if (message.kind === 'refused') {
      send(message.reply);
      return ctx.log?.(`${remote} WS refused 400: ${message.why}`);
    }
    if (message.kind === 'ignored' || (message.kind === 'stream' && !streams))
      return ctx.log?.(`${remote} WS ignored: ${message.kind === 'ignored' ? message.why : `action '${message.action}'`}`);
    if (message.kind === 'stream') {
      const rule = ctx.sandbox?.rules.active ? ctx.sandbox.rules.fire({ operation: message.action, transport: 'ws' }) : undefined;
      if (rule && streamRule(rule, message.action, started)) return;
      let done: string;
      try {
        done = streams!.handle(message.action, message.message);
      } catch (error) {
        ctx.onInternalError(message.action, error);
        done = 'failed';
      }
      ctx.sandbox?.log.add({ time: Date.now(), transport: 'ws', operation: message.action, body: message.message, status: done === 'failed' ? 500 : 200, rule: rule?.name, ms: monotonicMs() - started });
      return ctx.log?.(`${remote} WS ${message.action} ${printable(done)} ${(monotonicMs() - started).toFixed(1)}ms`);
    }
    const label = typeof message.api === 'string' && operationForWsName(message.api) ? message.api : show(message.api);
    let operation = label;
    let account: unknown;
    let fired: Rule | undefined;
    const note = (status: number) => {
      ctx.log?.(`${remote} WS ${label} id=${show(message.id)} ${status} ${(monotonicMs() - started).toFixed(1)}ms`);
      ctx.sandbox?.log.add({
        time: Date.now(),
        transport: 'ws',
        operation,
        account: typeof account === 'string' ? account : undefined,
        body: message.args,
        status,
        rule: fired?.name,
        ms: monotonicMs() - started,
      });
    };
    const reply = (result: OperationResult) => {
      send({ id: message.id, data: result.body });
      note(result.status);
    };
    // dispatch never throws; this keeps the one-reply promise even if something around it does.
    const crashed = (error: unknown): OperationResult => {
      ctx.onInternalError(label, error);
      return { status: 500, body: INTERNAL_ERROR_BODY };
    };
    let checked: ReturnType<typeof checkRpc>;
    try {
      checked = checkRpc(ctx, message.api, message.args);
    } catch (error) {
      return reply(crashed(error));
    }
    if ('result' in checked) return reply(checked.result);
    operation = checked.name;
    const args = checked.args as Record<string, unknown>;
    account = args.account;
    fired = ctx.sandbox?.rules.active
      ? ctx.sandbox.rules.fire({ operation: checked.name, transport: 'ws', account: args.account, instrument: args.instrument })
      : undefined;
    if (fired) {
      holding++;
      void answerWithRule(fired, checked.name, args, reply, note)
        .catch((error: unknown) => reply(crashed(error)))
        .finally(() => {
          holding--;
          if (queue.length > 0) schedule();
        });
      return;
    }
    if (ctx.committer && OPERATIONS[checked.name].movesMoney) {
      inflight++;
      void dispatchGrouped(ctx.engine, ctx.committer, checked.name, checked.args, { onInternalError: ctx.onInternalError })
        .catch(crashed)
        .then((result) => {
          inflight--;
          reply(result);
          if (inflight === 0 && queue.length > 0) schedule();
        });
      return;
    }
    let result: OperationResult;
    try {
      result = dispatch(ctx.engine, checked.name, checked.args, { onInternalError: ctx.onInternalError });
    } catch (error) {
      result = crashed(error);
    }
    reply(result);
  }
}
