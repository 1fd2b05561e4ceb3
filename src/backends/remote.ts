/**
 * What the http and ws backends share: the service's paths, the mapping of a reply (status +
 * body) to a result or a typed error, the transport safety check and the dry-run preview.
 */
import { maskToken } from '../config/keys.js';
import {
  ConfigError,
  NetworkError,
  RateLimitedError,
  RejectedError,
  UsageError,
} from '../order/errors.js';
import {
  closeResponseSchema,
  errorResponseSchema,
  splitOrder,
  successResponseSchema,
  type Order,
} from '../order/schema.js';
import type { CancelResult, CloseResult, OrderResult } from './types.js';

export type OrderOperation = 'place' | 'reverse';

export const RPC_API: Record<OrderOperation, string> = { place: 'PlaceOrder', reverse: 'ReversePosition' };

export function orderPath(operation: OrderOperation, account: string): string {
  const tail = operation === 'place' ? 'orders/place' : 'positions/reverseposition';
  return `/v1/api/accounts/${encodeURIComponent(account)}/${tail}`;
}

/** The base URL and a path, keeping any path prefix the base URL has. */
export function joinUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}

export const CHECK_ORDERS = 'check with `trade orders` before trying again';

/** What may have happened when a request's outcome is unknown, by operation. */
export const EFFECT = {
  place: 'the order may have been placed',
  reverse: 'the position may have been reversed',
  cancel: 'the order may have been cancelled',
  close: 'the position may have been closed',
} as const;
export type Effect = (typeof EFFECT)[keyof typeof EFFECT];

/** The request may have reached the service: never re-sent, and the person is told how to check. */
export function outcomeUnknown(why: string, cause?: unknown, effect: Effect = EFFECT.place): NetworkError {
  return new NetworkError(`Outcome unknown — ${effect} (${why}); ${CHECK_ORDERS}.`, {
    outcomeUnknown: true,
    cause,
  });
}

/** At most this much of the service's own message is shown. */
const MAX_MESSAGE_CHARS = 500;
// Control characters (a terminal's escape sequences start with one) and the marks that reorder text.
// eslint-disable-next-line no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/**
 * Text from the server made safe to print: unprintable characters shown as \u escapes, so a
 * hostile reply cannot drive the terminal, and an over-long message cut short.
 */
export function printable(text: string): string {
  const safe = text.replace(UNPRINTABLE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return safe.length > MAX_MESSAGE_CHARS ? `${safe.slice(0, MAX_MESSAGE_CHARS - 1)}…` : safe;
}

/** The service's error message in either shape, made printable; undefined when the body is not one. */
export function errorText(body: unknown): string | undefined {
  const parsed = errorResponseSchema.safeParse(body);
  if (!parsed.success) return undefined;
  const { error, detail } = parsed.data;
  if (detail === undefined || detail === null || detail === '') return printable(error);
  return printable(`${error} (${typeof detail === 'string' ? detail : JSON.stringify(detail)})`);
}

/** An order id we print and a person may paste into `trade cancel`: visible ASCII, bounded. */
const orderIdReply = successResponseSchema.refine((body) => /^[\x21-\x7e]{1,128}$/.test(body.orderId));

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
  effect?: Effect;
  retryAfter?: string;
}

/**
 * Turns a non-2xx reply into the typed error for its exit code. The service's own message is
 * shown as it is; it never contains our token, which is only ever sent in a header.
 */
export function replyError(status: number, body: unknown, ctx: ReplyContext): Error {
  const message = errorText(body);
  const said = message ?? `HTTP ${status} with a body that is not the service's error shape`;
  if (status === 401 || status === 403)
    return new ConfigError(`The service refused the token (${status}: ${said}).`, {
      code: 'auth',
      hint: 'Set a valid token with `trade login` (or TRADE_TOKEN).',
    });
  if (status === 429) {
    const retryAfterSeconds = parseRetryAfter(ctx.retryAfter);
    return new RateLimitedError(
      `Rate limited by ${ctx.where}: ${said}. Nothing was placed; ${retryAfterSeconds === undefined ? 'retry later' : `retry after ${retryAfterSeconds} s`}.`,
      { retryAfterSeconds },
    );
  }
  if (status === 408)
    return ctx.effect
      ? outcomeUnknown(`the trading platform did not answer in time: ${said}`, undefined, ctx.effect)
      : new NetworkError(`The trading platform did not answer in time (408: ${said}).`);
  if (status >= 500)
    return ctx.effect
      ? outcomeUnknown(`${ctx.where} failed with HTTP ${status}: ${said}`, undefined, ctx.effect)
      : new NetworkError(`${ctx.where} failed with HTTP ${status}: ${said}`);
  if (message !== undefined) return new RejectedError(message, { status });
  return new RejectedError(`${ctx.where} answered HTTP ${status} with a body that is not the service's error shape`, {
    status,
  });
}

/** A 200 reply must match the operation's success body; anything else is a typed error. */
export function successReply<T>(
  status: number,
  body: unknown,
  ctx: ReplyContext & { effect: Effect },
  schema: { safeParse(input: unknown): { success: true; data: T } | { success: false } },
  shape: string,
): T {
  if (status !== 200) throw replyError(status, body, ctx);
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const failed = errorText(body);
    if (failed !== undefined) throw new RejectedError(failed, { status });
    throw outcomeUnknown(`${ctx.where} answered 200 with a body that is not ${shape}`, undefined, ctx.effect);
  }
  return parsed.data;
}

/** A 200 reply to Place Order or Reverse Position must be `{orderId, success:true}`. */
export function orderReply(status: number, body: unknown, ctx: ReplyContext & { effect: Effect }): OrderResult {
  const { orderId } = successReply(status, body, ctx, orderIdReply, '{orderId, success:true}');
  return { orderId, success: true };
}

export function cancelReply(status: number, body: unknown, ctx: ReplyContext): CancelResult {
  const { orderId } = successReply(status, body, { ...ctx, effect: EFFECT.cancel }, orderIdReply, '{orderId, success:true}');
  return { orderId, success: true };
}

export function closeReply(status: number, body: unknown, ctx: ReplyContext): CloseResult {
  const { closedPositions } = successReply(
    status, body, { ...ctx, effect: EFFECT.close }, closeResponseSchema, '{closedPositions, success:true}',
  );
  return { closedPositions, success: true };
}

export function cancelPath(account: string, orderId: string): string {
  return `/v1/api/accounts/${encodeURIComponent(account)}/orders/${encodeURIComponent(orderId)}/cancel`;
}

export function closePath(account: string): string {
  return `/v1/api/accounts/${encodeURIComponent(account)}/positions/close`;
}

/** The service's cancel path needs the account; only the embedded engine can do without it. */
export function requireAccount(account: string | undefined): string {
  if (account === undefined)
    throw new UsageError('Cancelling on a remote backend needs the account: pass --account (or set a default account).');
  return account;
}

export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Refuses to send a token in clear text to a host that is not this machine, unless --insecure. */
export function checkTransport(url: string, insecure: boolean): void {
  const u = new URL(url);
  if ((u.protocol === 'http:' || u.protocol === 'ws:') && !isLoopback(u.hostname) && !insecure) {
    throw new ConfigError(
      `Refusing to send the token in clear text to ${u.host} over ${u.protocol.slice(0, -1)}://.`,
      { code: 'insecure', hint: 'Use https:// (or wss://), or pass --insecure if you really mean it.' },
    );
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
  | { transport: 'http'; method: 'POST'; url: string; headers: Record<string, string>; body: unknown }
  | { transport: 'ws'; url: string; headers: Record<string, string>; message: unknown }
  | { transport: 'embedded'; store: string; api: string; args: unknown };

export function authHeaders(token: string, masked: boolean): Record<string, string> {
  return { 'Content-Type': 'application/json', Authorization: `Bearer ${masked ? maskToken(token) : token}` };
}

export function previewHttp(baseUrl: string, token: string, operation: OrderOperation, order: Order): RequestPreview {
  const { account, body } = splitOrder(order);
  return { transport: 'http', method: 'POST', url: joinUrl(baseUrl, orderPath(operation, account)), headers: authHeaders(token, true), body };
}

export function previewWs(wsUrl: string, token: string, operation: OrderOperation, order: Order): RequestPreview {
  const { Authorization } = authHeaders(token, true);
  return {
    transport: 'ws',
    url: wsUrl,
    headers: { Authorization },
    message: { action: 'rpc', id: '1', api: RPC_API[operation], args: order },
  };
}
