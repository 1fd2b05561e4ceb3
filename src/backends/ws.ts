/**
 * The remote service's WebSocket RPC API on one long connection. Requests are pipelined and
 * matched to replies by id. A request that was written is never written again: a timeout or a
 * closed socket rejects it as "outcome unknown".
 */
import WebSocket from 'ws';
import type { Order } from '../order/schema.js';
import { NetworkError } from '../order/errors.js';
import { createHttpBackend, type HttpBackend } from './http.js';
import {
  authHeaders,
  cancelReply,
  checkTransport,
  closeReply,
  EFFECT,
  type Effect,
  requireAccount,
  orderReply,
  outcomeUnknown,
  replyError,
  RPC_API,
  type OrderOperation,
  type RemoteOptions,
} from './remote.js';
import type { Backend } from './types.js';

export interface WsBackendOptions extends RemoteOptions {
  wsUrl: string;
}

export interface RpcReply {
  status: number;
  data: unknown;
}

export interface WsBackend extends Backend {
  /** One RPC; resolves with the reply's status and data, whatever the status. */
  rpc(api: string, args: unknown): Promise<RpcReply>;
}

interface Pending {
  resolve(reply: RpcReply): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  effect: Effect;
}

const API_EFFECT: Record<string, Effect> = {
  PlaceOrder: EFFECT.place,
  ReversePosition: EFFECT.reverse,
  Cancel: EFFECT.cancel,
  ClosePosition: EFFECT.close,
};

const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export function createWsBackend(options: WsBackendOptions): WsBackend {
  checkTransport(options.wsUrl, options.insecure ?? false);
  const host = new URL(options.wsUrl).host;
  const where = `ws (${host})`;
  const pending = new Map<string, Pending>();
  let nextId = 1;
  let connection: Promise<WebSocket> | undefined;
  let reads: HttpBackend | undefined;

  function failAll(why: string): void {
    for (const [id, p] of pending) {
      clearTimeout(p.timer);
      pending.delete(id);
      p.reject(outcomeUnknown(why, undefined, p.effect));
    }
  }

  function onMessage(raw: WebSocket.RawData): void {
    let reply: unknown;
    try {
      reply = JSON.parse(raw.toString());
    } catch {
      return; // not JSON: nothing can be matched; the request's own timeout reports it
    }
    if (reply === null || typeof reply !== 'object') return;
    const { id, status, data } = reply as { id?: unknown; status?: unknown; data?: unknown };
    const p = typeof id === 'string' || typeof id === 'number' ? pending.get(String(id)) : undefined;
    if (!p || typeof status !== 'number') return;
    clearTimeout(p.timer);
    pending.delete(String(id));
    p.resolve({ status, data });
  }

  function connect(): Promise<WebSocket> {
    connection ??= new Promise<WebSocket>((resolve, reject) => {
      let settled = false;
      const settle = (error?: Error) => {
        if (settled) return;
        settled = true;
        if (error) {
          connection = undefined;
          reject(error);
        } else resolve(socket);
      };
      const socket = new WebSocket(options.wsUrl, {
        headers: { Authorization: authHeaders(options.token, false).Authorization },
        handshakeTimeout: options.timeoutMs,
        maxPayload: MAX_MESSAGE_BYTES,
        perMessageDeflate: false,
      });
      socket.on('open', () => settle());
      socket.on('message', onMessage);
      socket.on('unexpected-response', (_req, res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk.length + text.length < 65_536 ? chunk : ''));
        res.on('end', () => {
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          const status = res.statusCode ?? 0;
          settle(replyError(status, body, { where, retryAfter: res.headers['retry-after'] }));
          socket.terminate();
        });
      });
      socket.on('error', (error: NodeJS.ErrnoException) => {
        settle(
          new NetworkError(`Could not connect to ${host} (${error.code ?? error.message}). Nothing was sent.`, {
            cause: error,
            hint: 'Check ws-url / base-url (`trade config list`) and that the service is running.',
          }),
        );
      });
      socket.on('close', () => {
        connection = undefined;
        settle(new NetworkError(`The connection to ${host} closed during the handshake. Nothing was sent.`));
        failAll(`the connection to ${host} closed before the reply`);
      });
    });
    return connection;
  }

  async function rpc(api: string, args: unknown): Promise<RpcReply> {
    const socket = await connect();
    const id = String(nextId++);
    const effect = API_EFFECT[api] ?? EFFECT.place;
    return new Promise<RpcReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(outcomeUnknown(`no reply from ${host} within ${options.timeoutMs / 1000} s`, undefined, effect));
      }, options.timeoutMs);
      pending.set(id, { resolve, reject, timer, effect });
      socket.send(JSON.stringify({ action: 'rpc', id, api, args }), (error) => {
        if (!error) return;
        const p = pending.get(id);
        if (!p) return;
        clearTimeout(p.timer);
        pending.delete(id);
        p.reject(outcomeUnknown(`the connection to ${host} failed while sending`, error, effect));
      });
    });
  }

  async function order(operation: OrderOperation, o: Order) {
    const reply = await rpc(RPC_API[operation], o);
    return orderReply(reply.status, reply.data, { where, effect: EFFECT[operation] });
  }

  /** The RPC API has no reads; orders and positions come from the REST API at base-url. */
  function httpReads(): HttpBackend {
    if (!options.baseUrl)
      throw new NetworkError('The ws backend reads orders and positions over HTTP: set base-url (`trade config set base-url URL`).');
    reads ??= createHttpBackend({ ...options, baseUrl: options.baseUrl });
    return reads;
  }

  return {
    name: 'ws',
    label: where,
    rpc,
    placeOrder: (o) => order('place', o),
    reversePosition: (o) => order('reverse', o),
    async cancelOrder(account, orderId) {
      const reply = await rpc('Cancel', { account: requireAccount(account), orderId });
      return cancelReply(reply.status, reply.data, { where });
    },
    async closePosition(account, instrument) {
      const reply = await rpc('ClosePosition', { account, instrument });
      return closeReply(reply.status, reply.data, { where });
    },
    listOrders: (filter) => httpReads().listOrders(filter),
    listPositions: (filter) => httpReads().listPositions(filter),
    async close() {
      await reads?.close();
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
