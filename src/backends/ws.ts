/**
 * The remote service's WebSocket RPC API on one long connection (service-reference.md §5).
 * Requests are pipelined and matched to replies by id; a reply is exactly `{id, data}`, `data`
 * being the body the HTTP call would return, and success or failure is read from `data` alone.
 * A request that was written is never written again: a timeout or a closed socket rejects it as
 * "outcome unknown"; a readable reply never is.
 *
 * Streams (§5.2–§5.4) ride the same connection: `streams` sends `subscribe`, `unsubscribe` and
 * `streamPnl`, and hands every event (a message with a `type`) to its listeners while RPC replies
 * keep being matched by id. They are a capability of this transport, not an operation of the
 * service's table, so they live here and not on the Backend interface.
 */
import WebSocket from 'ws';
import { NetworkError } from '../common/errors.js';
import { burstWriter } from '../common/ws-burst.js';
import { stripInvisible } from '../config/redact.js';
import { OPERATIONS, type OperationSpec, wsApiFor } from '../service/operations.js';
import { openSocket } from './ws-handshake.js';
import { checkTransport, outcomeUnknown, readReply, type RemoteOptions, rpcArgs, wsStatus } from './remote.js';
import type { Backend } from './types.js';

export interface WsBackendOptions extends RemoteOptions {
  wsUrl: string;
  /** How often a connection with stream listeners is pinged; a ping unanswered by the next one drops it (HEARTBEAT_MS). */
  heartbeatMs?: number;
}

export interface WsBackend extends Backend {
  /** One RPC; resolves with the reply's `data`, whatever it says. `effect`: what it may have done. */
  rpc(api: string, args: unknown, effect?: string): Promise<RpcReply>;
  readonly streams: WsStreams;
}

/** An event as the server sent it: `type` is all a client may count on (§5.3). */
export interface WsEvent {
  type: string;
  [key: string]: unknown;
}

export interface WsStreams {
  /** Instruments as `SYMBOL MM-YY`; `marketData` events follow. Resolves once the message is written. */
  subscribe(instruments: string[]): Promise<void>;
  unsubscribe(instruments: string[]): Promise<void>;
  /** `pnlUpdate` events every `intervalMs` (the server clamps it), or none after `enabled: false`. */
  streamPnl(enabled: boolean, intervalMs?: number): Promise<void>;
  /** Every event of the connection; returns the function that stops listening. */
  onEvent(listener: (event: WsEvent) => void): () => void;
  /** Called once if the connection ends other than by close(): the streams are gone with it. */
  onLost(listener: (error: NetworkError) => void): () => void;
}

/**
 * While streams are listened to, a protocol ping goes out this often; a connection that has not
 * answered the previous one by then is dead (no FIN ever came) and is dropped, so a watch ends
 * instead of waiting forever. Every WebSocket server answers pings (RFC 6455), the service too.
 */
export const HEARTBEAT_MS = 30_000;

export interface RpcReply {
  data: unknown;
  /** Only when the server added one; the service sends none. */
  status?: number;
}

interface Pending {
  resolve(reply: RpcReply): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  effect?: string;
}

/** A request whose fate is lost with the connection: money-moving ones are outcome unknown. */
function lost(why: string, effect: string | undefined, cause?: unknown): Error {
  return effect ? outcomeUnknown(why, effect, cause) : new NetworkError(`${why[0]!.toUpperCase()}${why.slice(1)}.`, { cause });
}

export function createWsBackend(options: WsBackendOptions): WsBackend {
  checkTransport(options.wsUrl, options.insecure ?? false);
  const host = new URL(options.wsUrl).host;
  const where = `ws (${host})`;
  const pending = new Map<string, Pending>();
  let nextId = 1;
  let connection: Promise<WebSocket> | undefined;
  const eventListeners = new Set<(event: WsEvent) => void>();
  const lostListeners = new Set<(error: NetworkError) => void>();
  /** Set by close(): the connection ending then is no loss. */
  let closing = false;
  /** Why we cut the connection ourselves, to say so when it is reported lost. */
  let dropped: string | undefined;
  let heartbeat: NodeJS.Timeout | undefined;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;

  function failAll(why: string): void {
    for (const [id, p] of pending) {
      clearTimeout(p.timer);
      pending.delete(id);
      p.reject(lost(why, p.effect));
    }
  }

  /** The last message that answered no request, to say in a timeout what the server did send. */
  let stray: string | undefined;

  function parse(raw: WebSocket.RawData): unknown {
    try {
      return JSON.parse(raw.toString());
    } catch {
      return undefined;
    }
  }

  function onMessage(raw: WebSocket.RawData): void {
    const reply = parse(raw);
    if (reply === null || typeof reply !== 'object') {
      stray = 'a message that is not a JSON object';
      return;
    }
    // A reply is `{id, data}` (§5.3); an event has a `type` and no id, and answers nothing.
    const { id, data, status, ...rest } = reply as Record<string, unknown>;
    if (typeof rest.type === 'string' && id === undefined) {
      for (const listener of [...eventListeners]) listener(reply as WsEvent);
      return;
    }
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const p = pending.get(String(id));
    if (!p) {
      stray = `a reply to id ${JSON.stringify(String(id)).slice(0, 40)}, which no request here has`;
      return;
    }
    clearTimeout(p.timer);
    pending.delete(String(id));
    // A reply is read whatever else it carries: a `status` a server adds is used, never required;
    // a reply that put its body beside the id instead of in `data` is still read.
    p.resolve({ data: data === undefined ? rest : data, status: typeof status === 'number' ? status : undefined });
  }

  function connect(): Promise<WebSocket> {
    connection ??= openSocket({ url: options.wsUrl, token: options.token, timeoutMs: options.timeoutMs }).then(
      (socket) => {
        socket.on('message', onMessage);
        socket.on('pong', () => (awaitingPong = false));
        socket.on('close', (code: number, reason: Buffer) => {
          connection = undefined;
          stopHeartbeat();
          failAll(`the connection to ${host} closed before the reply`);
          if (!closing) reportLost(code, stripInvisible(reason.toString('utf8')));
        });
        if (eventListeners.size > 0) startHeartbeat(socket);
        return socket;
      },
      (error: unknown) => {
        connection = undefined;
        throw error;
      },
    );
    return connection;
  }

  function reportLost(code: number, reason: string): void {
    const why = dropped ?? `code ${code}${reason ? `: ${reason}` : ''}`;
    dropped = undefined;
    const error = new NetworkError(`The connection to ${host} was lost (${why}).`, {
      hint: 'Subscriptions end with their connection; start again once the service answers (`trade doctor` checks it).',
    });
    for (const listener of [...lostListeners]) listener(error);
  }

  let awaitingPong = false;
  function startHeartbeat(socket: WebSocket): void {
    if (heartbeat) return;
    awaitingPong = false;
    heartbeat = setInterval(() => {
      if (awaitingPong) {
        dropped = `no answer to a ping within ${heartbeatMs / 1000} s`;
        socket.terminate();
        return;
      }
      awaitingPong = true;
      socket.ping();
    }, heartbeatMs);
    // Only listeners keep a process alive; a forgotten heartbeat must not.
    heartbeat.unref();
  }
  function stopHeartbeat(): void {
    if (heartbeat) clearInterval(heartbeat);
    heartbeat = undefined;
  }

  /** A stream action (§5.2): written or refused, never answered by id. */
  async function sendAction(message: Record<string, unknown>): Promise<void> {
    const socket = await connect();
    if (socket.readyState !== WebSocket.OPEN) throw new NetworkError(`The connection to ${host} is closing. Nothing was sent.`);
    await new Promise<void>((resolve, reject) =>
      socket.send(JSON.stringify(message), (error) =>
        error ? reject(new NetworkError(`The connection to ${host} failed while sending ${String(message.action)}.`, { cause: error })) : resolve(),
      ),
    );
  }

  const streams: WsStreams = {
    subscribe: (instruments) => sendAction({ action: 'subscribe', instruments }),
    unsubscribe: (instruments) => sendAction({ action: 'unsubscribe', instruments }),
    streamPnl: (enabled, intervalMs) => sendAction({ action: 'streamPnl', enabled, ...(intervalMs === undefined ? {} : { interval: intervalMs }) }),
    onEvent(listener) {
      eventListeners.add(listener);
      void connection?.then(startHeartbeat, () => undefined);
      return () => {
        eventListeners.delete(listener);
        if (eventListeners.size === 0) stopHeartbeat();
      };
    },
    onLost(listener) {
      lostListeners.add(listener);
      return () => lostListeners.delete(listener);
    },
  };

  /** Each connection's burst writer: the requests sent in one turn leave in one write. */
  const bursts = new WeakMap<WebSocket, () => void>();
  const burstOf = (socket: WebSocket) => {
    let burst = bursts.get(socket);
    if (!burst) bursts.set(socket, (burst = burstWriter(socket)));
    return burst;
  };

  async function rpc(api: string, args: unknown, effect?: string): Promise<RpcReply> {
    const socket = await connect();
    // The server has sent its close frame and ws refuses to write: this request never leaves.
    if (socket.readyState !== WebSocket.OPEN)
      throw new NetworkError(`The connection to ${host} is closing. Nothing was sent.`);
    const id = String(nextId++);
    return new Promise<RpcReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        const sent = stray === undefined ? '' : `; it sent ${stray}`;
        reject(lost(`no reply from ${host} within ${options.timeoutMs / 1000} s${sent}`, effect));
      }, options.timeoutMs);
      pending.set(id, { resolve, reject, timer, effect });
      burstOf(socket)();
      socket.send(JSON.stringify({ action: 'rpc', id, api, args }), (error) => {
        if (!error) return;
        const p = pending.get(id);
        if (!p) return;
        clearTimeout(p.timer);
        pending.delete(id);
        p.reject(lost(`the connection to ${host} failed while sending`, effect, error));
      });
    });
  }

  return {
    name: 'ws',
    label: where,
    rpc,
    streams,
    async call(name, args) {
      const operation = OPERATIONS[name] as OperationSpec;
      const effect = operation.movesMoney ? operation.effect : undefined;
      const { data, status } = await rpc(wsApiFor(name, args), rpcArgs(args), effect);
      return { body: data, value: readReply(name, status ?? wsStatus(data), data, { where, effect }) };
    },
    async close() {
      closing = true;
      stopHeartbeat();
      const open = connection;
      connection = undefined;
      if (!open) return;
      const socket = await open.catch(() => undefined);
      if (!socket || socket.readyState === WebSocket.CLOSED) return;
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => socket.terminate(), 1000);
        socket.once('close', () => {
          clearTimeout(force);
          resolve();
        });
        socket.close(1000);
      });
    },
  };
}
