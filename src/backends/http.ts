/**
 * The remote service's REST API over undici with a keep-alive pool. A request that may change an
 * order or a position is sent at most once: only a failure to connect (nothing written yet) is
 * retried, once.
 */
import { Agent, request } from 'undici';
import { NetworkError } from '../common/errors.js';
import { OPERATIONS, type OperationSpec } from '../service/operations.js';
import { authHeaders, checkTransport, httpRequest, outcomeUnknown, readReply, type RemoteOptions, serviceRoot } from './remote.js';
import type { Backend } from './types.js';

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
async function readBody(body: AsyncIterable<Buffer> & { destroy(error?: Error): unknown }, deadline: number): Promise<string> {
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

export interface HttpReply {
  status: number;
  body: unknown;
  retryAfter?: string;
}

export interface HttpBackend extends Backend {
  /**
   * One request with the service's headers, from the service's root (`/v1/api/...`); the reply's
   * status and parsed JSON body. `effect` is what a state-changing request may have done.
   */
  send(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, effect?: string): Promise<HttpReply>;
}

export function createHttpBackend(options: HttpBackendOptions): HttpBackend {
  checkTransport(options.baseUrl, options.insecure ?? false);
  const root = serviceRoot(options.baseUrl);
  const host = new URL(root).host;
  const where = `http (${host})`;
  const agent = new Agent({
    keepAliveTimeout: 30_000,
    connections: 64,
    connect: { timeout: Math.min(options.timeoutMs, 10_000) },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  const auth = authHeaders(options.token, false);
  const jsonHeaders = { 'Content-Type': 'application/json', ...auth };

  async function once(method: string, url: string, body: string | undefined): Promise<HttpReply> {
    const deadline = Date.now() + options.timeoutMs;
    const response = await request(url, { method, headers: body === undefined ? auth : jsonHeaders, body, dispatcher: agent });
    const text = await readBody(response.body, deadline);
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const retryAfter = response.headers['retry-after'];
    return { status: response.statusCode, body: parsed, retryAfter: Array.isArray(retryAfter) ? retryAfter[0] : retryAfter };
  }

  async function send(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown, effect?: string): Promise<HttpReply> {
    const url = `${root}${path}`;
    const payload = body === undefined ? undefined : JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      try {
        return await once(method, url, payload);
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
        if (effect) throw outcomeUnknown(why, effect, error);
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

  return {
    name: 'http',
    label: where,
    send,
    async call(name, args) {
      const operation = OPERATIONS[name] as OperationSpec;
      const effect = operation.movesMoney ? operation.effect : undefined;
      const req = httpRequest(name, args);
      const reply = await send(req.method, req.path, req.body, effect);
      const value = readReply(name, reply.status, reply.body, { where, effect, retryAfter: reply.retryAfter });
      return { body: reply.body, value };
    },
    async close() {
      await agent.close();
    },
  };
}
