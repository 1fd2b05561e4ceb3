/**
 * What the http and ws backends share: building a request from a row of the operation table,
 * reading a reply (status + body, or a WebSocket `data`) into a result or a typed error, the
 * transport safety check and the dry-run preview. Everything here follows service-reference.md
 * §1, §5.3, §6 and §7; nothing here assumes how `trade serve` answers.
 */
import { maskToken, serviceRoot } from '../config/keys.js';
import {
  ConfigError,
  NetworkError,
  RateLimitedError,
  RejectedError,
} from '../common/errors.js';
import { type ArgsOf, OPERATIONS, type OperationName, type OperationSpec, pathParams, type ReplyOf, wsApiFor } from '../service/operations.js';
import { stripInvisible } from '../config/redact.js';
import { type ErrorBody, failureOf, ntSpelling, parseReply } from '../service/shapes.js';

/** The service's words for a rate limit (§7.1), the only reply that is safe to send again. */
export const RATE_LIMIT_TEXT = 'Rate limit exceeded';

export { serviceRoot };

export const CHECK_ORDERS = 'check with `trade orders` before trying again';

/** The request may have reached the service: never re-sent, and the person is told how to check. */
export function outcomeUnknown(why: string, effect: string, cause?: unknown): NetworkError {
  return new NetworkError(`Outcome unknown — ${effect} (${why}); ${CHECK_ORDERS}.`, { outcomeUnknown: true, cause });
}

/** At most this much of the service's own message is shown. */
const MAX_MESSAGE_CHARS = 500;

/**
 * Text from the server made safe to print: control and invisible characters removed, so a hostile
 * reply cannot drive the terminal — nor hide a token from the redactor behind a zero-width
 * character or its `\u200b` escape — and an over-long message cut short.
 */
export function printable(text: string): string {
  const safe = stripInvisible(text);
  if (safe.length <= MAX_MESSAGE_CHARS) return safe;
  // Never cut between the two halves of a character outside the BMP.
  const end = /[\ud800-\udbff]/.test(safe[MAX_MESSAGE_CHARS - 2]!) ? MAX_MESSAGE_CHARS - 2 : MAX_MESSAGE_CHARS - 1;
  return `${safe.slice(0, end)}…`;
}

/**
 * The service's message from an error body, made printable. `{success:false, error: code,
 * detail: message}` reads as its message (the code stays in `--json`); `{error}` as itself.
 */
export function errorText(failure: ErrorBody): string {
  const { error, detail } = failure;
  if (detail === undefined || detail === null || detail === '') return printable(error);
  const said = typeof detail === 'string' ? detail : JSON.stringify(detail);
  return printable(/^[a-z][a-z0-9_]*$/.test(error) ? said : `${error} (${said})`);
}

function parseRetryAfter(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

export interface ReplyContext {
  /** "http (host:port)": who answered, for messages. */
  where: string;
  /** What a request that changes state may have done; undefined for reads, which change nothing. */
  effect?: string;
  retryAfter?: string;
}

function rateLimited(ctx: ReplyContext, said: string): RateLimitedError {
  const retryAfterSeconds = parseRetryAfter(ctx.retryAfter);
  const wait = retryAfterSeconds === undefined ? 'wait a moment and send it again' : `retry after ${retryAfterSeconds} s`;
  return new RateLimitedError(`Rate limited by ${ctx.where}: ${said}. Nothing was executed; ${wait}.`, { retryAfterSeconds });
}

/**
 * Turns a refusal into the typed error for its exit code. The service's own message is shown as
 * it is; it never contains our token, which is only ever sent in a header.
 */
export function replyError(status: number, body: unknown, ctx: ReplyContext): Error {
  const failure = failureOf(body);
  const message = failure && errorText(failure);
  const said = message ?? `HTTP ${status} with a body that is not the service's error shape`;
  if (status === 401 || status === 403)
    return new ConfigError(`The service refused the token (${status}: ${said}).`, {
      code: 'auth',
      hint: 'Set a valid token with `trade login` (or TRADE_TOKEN).',
    });
  if (status === 429 || failure?.error === RATE_LIMIT_TEXT) return rateLimited(ctx, said);
  if (status === 408) {
    const why = `the trading platform is not connected (408: ${said})`;
    return ctx.effect
      ? new NetworkError(`${why[0]!.toUpperCase()}${why.slice(1)}; nothing is known to have been placed — check with \`trade orders\`.`, {
          outcomeUnknown: true,
          hint: 'Start NinjaTrader and connect the add-on, then check what happened before sending again.',
        })
      : new NetworkError(`The trading platform is not connected (408: ${said}).`, {
          hint: 'Start NinjaTrader and connect the add-on, then try again.',
        });
  }
  // 501: a route the server does not have (trade serve's routes it does not simulate, §6.1); nothing was done.
  if (status === 501 && failure) return new RejectedError(message!, { status, body: failure });
  if (status >= 500)
    return ctx.effect
      ? outcomeUnknown(`${ctx.where} failed with HTTP ${status}: ${said}`, ctx.effect)
      : new NetworkError(`${ctx.where} failed with HTTP ${status}: ${said}`);
  if (failure) return new RejectedError(message!, { status, body: failure });
  return new RejectedError(`${ctx.where} answered HTTP ${status} with a body that is not the service's error shape`, { status });
}

/**
 * A reply read against the operation's row: the value, or the typed error. A body that carries
 * a failure is one whatever the status (§6.1: "branch on `error`, not on the HTTP status
 * alone"); a 2xx whose body is not the operation's reply is outcome unknown for a request that
 * moves money, since the service may have acted on it.
 */
export function readReply<K extends OperationName>(name: K, status: number, body: unknown, ctx: ReplyContext): ReplyOf<K> {
  const operation = OPERATIONS[name] as OperationSpec<unknown, ReplyOf<K>>;
  if (status < 200 || status > 299) throw replyError(status, body, ctx);
  const failure = failureOf(body);
  if (failure) throw replyError(failure.error === RATE_LIMIT_TEXT ? 429 : 400, failure, ctx);
  const parsed = parseReply(operation.reply(), body);
  if (parsed.ok) return parsed.value;
  const why = `${ctx.where} answered ${status} with a body that is not ${operation.name}'s reply`;
  if (ctx.effect) throw outcomeUnknown(why, ctx.effect);
  throw new NetworkError(`${why}: is it the order service?`);
}

/**
 * The status a WebSocket reply's `data` stands for (§5.3: the status is not carried): a failure
 * is 429 for the rate limit, 404 for an unknown account, 501 for an operation the server does not
 * have (§6.1's `not_implemented`), else 400; anything else is a success.
 */
export function wsStatus(data: unknown): number {
  const failure = failureOf(data);
  if (!failure) return 200;
  if (failure.error === RATE_LIMIT_TEXT) return 429;
  if (failure.error === 'invalid_account' || /unknown api/i.test(failure.error)) return 404;
  if (failure.error === 'not_implemented') return 501;
  return 400;
}

export interface HttpRequest {
  method: 'GET' | 'POST' | 'PUT';
  /** From the root on: `/v1/api/accounts/Sim101/orders/place?…`. */
  path: string;
  /** JSON body (POST and PUT). */
  body?: Record<string, unknown>;
}

/**
 * A value as the service takes it: the lists a schema reads from a comma list (GetQuote's
 * `instrument`, PlaceOrder's `requireMarketPosition`, §3.1, §3.17) go back as one.
 */
const wire = (value: unknown): unknown => (Array.isArray(value) ? value.join(',') : value);

/** The REST request for an operation's flat args (§1.3): path parameters, then query or body. */
export function httpRequest<K extends OperationName>(name: K, args: ArgsOf<K>): HttpRequest {
  const operation = OPERATIONS[name] as OperationSpec;
  const rest: Record<string, unknown> = Object.fromEntries(Object.entries(args as Record<string, unknown>).map(([key, value]) => [key, wire(value)]));
  let path = operation.path;
  for (const param of pathParams(operation.path)) {
    path = path.replace(`{${param}}`, encodeURIComponent(String(rest[param])));
    delete rest[param];
  }
  for (const key of Object.keys(rest)) if (rest[key] === undefined) delete rest[key];
  if (operation.method !== 'GET') return { method: operation.method, path: `/v1/api${path}`, body: rest };
  const query = Object.entries(rest)
    .map(([key, value]) => `${encodeURIComponent(key)}=${encodeURIComponent(String(value))}`)
    .join('&');
  return { method: 'GET', path: `/v1/api${path}${query ? `?${query}` : ''}` };
}

const ENUM_FIELDS = ['action', 'orderType', 'timeInForce'];

/**
 * An RPC's args: the same flat object (comma lists as the query string has them), with enumerated
 * values in NinjaTrader spelling (`Buy`, `Market`, `Day`), as the WebSocket API's only example
 * writes them (§1.5).
 */
export function rpcArgs(args: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args as Record<string, unknown>)) {
    if (value === undefined) continue;
    out[key] = ENUM_FIELDS.includes(key) && typeof value === 'string' ? ntSpelling(value) : wire(value);
  }
  return out;
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Refuses to send a token in clear text to a host that is not this machine, unless --insecure. */
export function checkTransport(url: string, insecure: boolean): void {
  const u = new URL(url);
  if ((u.protocol === 'http:' || u.protocol === 'ws:') && !isLoopback(u.hostname) && !insecure) {
    throw new ConfigError(`Refusing to send the token in clear text to ${u.host} over ${u.protocol.slice(0, -1)}://.`, {
      code: 'insecure',
      hint: 'Use https:// (or wss://), or pass --insecure if you really mean it.',
    });
  }
}

export interface RemoteOptions {
  baseUrl?: string;
  wsUrl?: string;
  token: string;
  timeoutMs: number;
  insecure?: boolean;
}

export type RequestPreview =
  | { transport: 'http'; method: string; url: string; headers: Record<string, string>; body?: unknown }
  | { transport: 'ws'; url: string; headers: Record<string, string>; message: unknown }
  | { transport: 'embedded'; store: string; api: string; args: unknown };

export function authHeaders(token: string, masked: boolean): Record<string, string> {
  return { Authorization: `Bearer ${masked ? maskToken(token) : token}` };
}

export function previewHttp<K extends OperationName>(baseUrl: string, token: string, name: K, args: ArgsOf<K>): RequestPreview {
  const request = httpRequest(name, args);
  const headers = request.body === undefined ? authHeaders(token, true) : { 'Content-Type': 'application/json', ...authHeaders(token, true) };
  return { transport: 'http', method: request.method, url: `${serviceRoot(baseUrl)}${request.path}`, headers, body: request.body };
}

export function previewWs<K extends OperationName>(wsUrl: string, token: string, name: K, args: ArgsOf<K>): RequestPreview {
  return { transport: 'ws', url: wsUrl, headers: authHeaders(token, true), message: { action: 'rpc', id: '1', api: wsApiFor(name, args), args: rpcArgs(args) } };
}
