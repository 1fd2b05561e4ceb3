/**
 * The remote service's REST API over undici with a keep-alive pool. An order request is sent at
 * most once: only a failure to connect (nothing written yet) is retried, once.
 */
import { Agent, request } from 'undici';
import type { Order } from '../order/schema.js';
import { NetworkError, UsageError } from '../order/errors.js';
import {
  authHeaders,
  cancelPath,
  cancelReply,
  checkTransport,
  closePath,
  closeReply,
  EFFECT,
  type Effect,
  requireAccount,
  joinUrl,
  orderPath,
  orderReply,
  outcomeUnknown,
  replyError,
  type OrderOperation,
  type RemoteOptions,
} from './remote.js';
import type { Backend, OrderRecord, PositionRecord } from './types.js';

/** A reply is read whole before it is parsed; past this it is cut off (a list of orders stays far below). */
export const MAX_REPLY_BYTES = 16 * 1024 * 1024;

/** Errors raised before any byte of the request was written: safe to retry once. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** Our own reasons to stop reading a reply, as codes beside undici's. */
const REPLY_TIMEOUT = 'TRADE_REPLY_TIMEOUT';
const REPLY_TOO_LARGE = 'TRADE_REPLY_TOO_LARGE';
const codeError = (code: string) => Object.assign(new Error(code), { code });

/**
 * Reads a reply's body by `deadline`, at most MAX_REPLY_BYTES. undici's bodyTimeout only bounds
 * the pause between chunks, so a server trickling a byte at a time would otherwise hold the
 * command forever, and one answering without end would fill the memory.
 */
async function readReply(body: AsyncIterable<Buffer> & { destroy(error?: Error): unknown }, deadline: number): Promise<string> {
  const timer = setTimeout(() => body.destroy(codeError(REPLY_TIMEOUT)), Math.max(0, deadline - Date.now()));
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > MAX_REPLY_BYTES) throw codeError(REPLY_TOO_LARGE);
      chunks.push(chunk);
    }
  } finally {
    clearTimeout(timer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function errorCode(error: unknown): string | undefined {
  let e: unknown = error;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

export interface HttpBackendOptions extends RemoteOptions {
  baseUrl: string;
}

export interface HttpBackend extends Backend {
  /** One GET or POST with the service's headers; the reply's status and parsed JSON body. */
  call(method: 'GET' | 'POST', path: string, body?: unknown, effect?: Effect): Promise<{ status: number; body: unknown; retryAfter?: string }>;
}

export function createHttpBackend(options: HttpBackendOptions): HttpBackend {
  checkTransport(options.baseUrl, options.insecure ?? false);
  const host = new URL(options.baseUrl).host;
  const where = `http (${host})`;
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    connections: 64,
    connect: { timeout: Math.min(options.timeoutMs, 10_000) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const headers = authHeaders(options.token, false);

  async function send(method: 'GET' | 'POST', url: string, body: string | undefined) {
    const deadline = Date.now() + options.timeoutMs;
    const response = await request(url, { method, headers, body, dispatcher: agent });
    const text = await readReply(response.body, deadline);
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const retryAfter = response.headers['retry-after'];
    return { status: response.statusCode, body: parsed, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
  }

  /** `effect` is what a state-changing request may have done; reads have none and are safe to report plainly. */
  async function call(method: 'GET' | 'POST', path: string, body?: unknown, effect?: Effect) {
    const url = joinUrl(options.baseUrl, path);
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      try {
        return await send(method, url, payload);
      } catch (error) {
        const code = errorCode(error);
        if (code !== undefined && NOT_SENT.has(code)) {
          if (attempt === 1) continue;
          throw new NetworkError(`Could not connect to ${host} (${code}). Nothing was sent.`, {
            cause: error,
            hint: 'Check base-url (`trade config get base-url`) and that the service is running.',
          });
        }
        const why = failureReason(code);
        if (effect) throw outcomeUnknown(why, error, effect);
        throw new NetworkError(`Request to ${host} failed: ${why}.`, { cause: error });
      }
    }
  }

  function failureReason(code: string | undefined): string {
    const within = `within ${options.timeoutMs / 1000} s`;
    if (code === 'UND_ERR_HEADERS_TIMEOUT') return `no reply from ${host} ${within}`;
    if (code === 'UND_ERR_BODY_TIMEOUT' || code === REPLY_TIMEOUT) return `no complete reply from ${host} ${within}`;
    if (code === REPLY_TOO_LARGE) return `${host} sent a reply larger than ${MAX_REPLY_BYTES / 1024 / 1024} MiB`;
    return `the connection to ${host} failed after the request was sent${code ? ` (${code})` : ''}`;
  }

  async function order(operation: OrderOperation, o: Order) {
    const { account, ...body } = o;
    const reply = await call('POST', orderPath(operation, account), body, EFFECT[operation]);
    return orderReply(reply.status, reply.body, { where, effect: EFFECT[operation], retryAfter: reply.retryAfter });
  }

  async function read<T>(path: string, key: string): Promise<T[]> {
    const reply = await call('GET', path);
    if (reply.status !== 200) throw replyError(reply.status, reply.body, { where, retryAfter: reply.retryAfter });
    const list = (reply.body as Record<string, unknown> | undefined)?.[key];
    if (!Array.isArray(list)) throw new NetworkError(`${where} answered 200 without a '${key}' list.`);
    return list as T[];
  }

  return {
    name: 'http',
    label: where,
    call: (method, path, body, effect) => call(method, path, body, effect),
    placeOrder: (o) => order('place', o),
    reversePosition: (o) => order('reverse', o),
    async cancelOrder(account, orderId) {
      const reply = await call('POST', cancelPath(requireAccount(account), orderId), {}, EFFECT.cancel);
      return cancelReply(reply.status, reply.body, { where, retryAfter: reply.retryAfter });
    },
    async closePosition(account, instrument) {
      const reply = await call('POST', closePath(account), { instrument }, EFFECT.close);
      return closeReply(reply.status, reply.body, { where, retryAfter: reply.retryAfter });
    },
    async listOrders(filter = {}) {
      if (filter.account === undefined)
        throw new UsageError('Listing orders on a remote backend needs an account: pass --account or set one with `trade config set account NAME`.');
      const orders = await read<OrderRecord>(`/v1/api/accounts/${encodeURIComponent(filter.account)}/orders`, 'orders');
      return filter.instrument === undefined ? orders : orders.filter((o) => o.instrument === filter.instrument);
    },
    async listPositions(filter = {}) {
      const positions = await read<PositionRecord>('/v1/api/positions', 'positions');
      return positions.filter(
        (p) =>
          (filter.account === undefined || p.account.toLowerCase() === filter.account.toLowerCase()) &&
          (filter.instrument === undefined || p.instrument === filter.instrument),
      );
    },
    async close() {
      await agent.close();
    },
  };
}
