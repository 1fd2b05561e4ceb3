/**
 * The remote service's WebSocket RPC API on one long connection. Requests are pipelined and
 * matched to replies by id. A request that was written is never written again: a timeout or a
 * closed socket rejects it as "outcome unknown".
 */
import WebSocket from 'ws';
import type { Order } from '../order/schema.js';
import { NetworkError } from '../order/errors.js';
import type { HttpBackend } from './http.js';
import { openSocket } from './ws-handshake.js';
import {
  cancelReply,
  checkTransport,
  closeReply,
  EFFECT,
  type Effect,
  requireAccount,
  orderReply,
  outcomeUnknown,
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

export function createWsBackend(options: WsBackendOptions): WsBackend {
  checkTransport(options.wsUrl, options.insecure ?? false);
  const host = new URL(options.wsUrl).host;
  const where = `ws (${host})`;
  const pending = new Map<string, Pending>();
  let nextId = 1;
  let connection: Promise<WebSocket> | undefined;
  let reads: Promise<HttpBackend> | undefined;

  function failAll(why: string): void {
    for (const [id, p] of pending) {
      clearTimeout(p.timer);
      pending.delete(id);
      p.reject(outcomeUnknown(why, undefined, p.effect));
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
    const { id, status, data } = reply as { id?: unknown; status?: unknown; data?: unknown };
    // Messages without an id (a pong, an event) answer nothing and are not replies.
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const p = pending.get(String(id));
    if (!p) {
      stray = `a reply to id ${JSON.stringify(String(id)).slice(0, 40)}, which no request here has`;
      return;
    }
    clearTimeout(p.timer);
    pending.delete(String(id));
    if (typeof status === 'number') p.resolve({ status, data });
    else p.reject(outcomeUnknown(`${where} answered with a message that is not {id, status, data}`, undefined, p.effect));
  }

  function connect(): Promise<WebSocket> {
    connection ??= openSocket({ url: options.wsUrl, token: options.token, timeoutMs: options.timeoutMs }).then(
      (socket) => {
        socket.on('message', onMessage);
        socket.on('close', () => {
          connection = undefined;
          failAll(`the connection to ${host} closed before the reply`);
        });
        return socket;
      },
      (error: unknown) => {
        connection = undefined;
        throw error;
      },
    );
    return connection;
  }

  async function rpc(api: string, args: unknown): Promise<RpcReply> {
    const socket = await connect();
    // The server has sent its close frame and ws refuses to write: this request never leaves.
    if (socket.readyState !== WebSocket.OPEN)
      throw new NetworkError(`The connection to ${host} is closing. Nothing was sent.`);
    const id = String(nextId++);
    const effect = API_EFFECT[api] ?? EFFECT.place;
    return new Promise<RpcReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        const sent = stray === undefined ? '' : `; it sent ${stray}`;
        reject(outcomeUnknown(`no reply from ${host} within ${options.timeoutMs / 1000} s${sent}`, undefined, effect));
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

  /**
   * The RPC API has no reads; orders and positions come from the REST API at base-url. undici is
   * loaded only then: an order over ws does not pay for it.
   */
  function httpReads(): Promise<HttpBackend> {
    const baseUrl = options.baseUrl;
    if (!baseUrl)
      throw new NetworkError('The ws backend reads orders and positions over HTTP: set base-url (`trade config set base-url URL`).');
    reads ??= import('./http.js').then(({ createHttpBackend }) => createHttpBackend({ ...options, baseUrl }));
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
    listOrders: async (filter) => (await httpReads()).listOrders(filter),
    listPositions: async (filter) => (await httpReads()).listPositions(filter),
    async close() {
      await (await reads?.catch(() => undefined))?.close();
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
