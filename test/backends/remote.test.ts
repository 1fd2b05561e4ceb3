/**
 * What both remote backends share (src/backends/remote.ts), function by function: the typed
 * error of every refusal (auth, rate limit with each form of Retry-After, a disconnected platform,
 * a route the server lacks, a server error, a body that is not the service's) for an order and
 * for a read, the outcome-unknown words, the service's text made printable, the REST request and
 * the RPC args of an operation, the status a WebSocket reply stands for, and the transport check.
 * The backends against real servers are http-faults, ws-faults and ws-streams.
 */
import { describe, expect, it } from 'vitest';
import { ConfigError, NetworkError, RateLimitedError, RejectedError } from '../../src/common/errors.js';
import {
  authHeaders,
  checkTransport,
  errorText,
  httpRequest,
  isLoopback,
  outcomeUnknown,
  previewHttp,
  previewWs,
  printable,
  readReply,
  replyError,
  rpcArgs,
  wsStatus,
} from '../../src/backends/remote.js';
import { parseOrder } from '../../src/service/order.js';

const WHERE = 'http (svc:8080)';
const PLACED = 'the order may have been placed';
const order = { where: WHERE, effect: PLACED };
const read = { where: WHERE };

/** The error, its class name, message and the fields a caller reads. */
function shape(error: Error) {
  const e = error as Error & { outcomeUnknown?: boolean; retryAfterSeconds?: number; code?: string; status?: number };
  return { type: error.constructor.name, message: error.message, outcomeUnknown: e.outcomeUnknown ?? false, retryAfterSeconds: e.retryAfterSeconds, code: e.code };
}

describe('the words of an unknown outcome', () => {
  it('says what may have happened, why, and how to check', () => {
    const error = outcomeUnknown('no reply within 2 s', PLACED, new Error('cause'));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toBe('Outcome unknown — the order may have been placed (no reply within 2 s); check with `trade orders` before trying again.');
  });
});

describe("the service's text, made printable", () => {
  it('keeps 500 characters, cut with …, never between the halves of a character', () => {
    expect(printable('x'.repeat(500))).toBe('x'.repeat(500));
    expect(printable('x'.repeat(501))).toBe(`${'x'.repeat(499)}…`);
    expect(printable(`${'x'.repeat(498)}😀yy`)).toBe(`${'x'.repeat(498)}…`);
    expect(printable(`${'x'.repeat(497)}😀yy`)).toBe(`${'x'.repeat(497)}😀…`);
  });

  it('drops controls and invisible characters', () => {
    expect(printable('\u001b[2Jbad\u200b news')).toBe('bad news');
  });

  it('a code with a detail reads as the detail; a sentence with a detail keeps both; no detail is the error', () => {
    expect(errorText({ error: 'order_rejected', detail: 'market closed' })).toBe('market closed');
    expect(errorText({ error: 'Order rejected', detail: 'market closed' })).toBe('Order rejected (market closed)');
    expect(errorText({ error: 'Order rejected', detail: { reason: 'closed' } })).toBe('Order rejected ({"reason":"closed"})');
    expect(errorText({ error: 'Order rejected', detail: '' })).toBe('Order rejected');
    expect(errorText({ error: 'Order rejected', detail: null })).toBe('Order rejected');
    expect(errorText({ error: 'Order2 rejected', detail: 'x' })).toBe('Order2 rejected (x)');
  });
});

describe('replyError: each refusal its typed error', () => {
  it.each([
    [401, { error: 'Unauthorized' }, order, { type: 'ConfigError', message: 'The service refused the token (401: Unauthorized).', outcomeUnknown: false, retryAfterSeconds: undefined, code: 'auth' }],
    [403, { error: 'Forbidden' }, read, { type: 'ConfigError', message: 'The service refused the token (403: Forbidden).', outcomeUnknown: false, retryAfterSeconds: undefined, code: 'auth' }],
    [408, { error: 'Request timed out' }, order, {
      type: 'NetworkError',
      message: 'The trading platform is not connected (408: Request timed out); nothing is known to have been placed — check with `trade orders`.',
      outcomeUnknown: true,
      retryAfterSeconds: undefined,
    }],
    [408, { error: 'Request timed out' }, read, { type: 'NetworkError', message: 'The trading platform is not connected (408: Request timed out).', outcomeUnknown: false, retryAfterSeconds: undefined }],
    [500, { error: 'Internal Server Error' }, order, {
      type: 'NetworkError',
      message: 'Outcome unknown — the order may have been placed (http (svc:8080) failed with HTTP 500: Internal Server Error); check with `trade orders` before trying again.',
      outcomeUnknown: true,
      retryAfterSeconds: undefined,
    }],
    [503, '<html>', read, { type: 'NetworkError', message: "http (svc:8080) failed with HTTP 503: HTTP 503 with a body that is not the service's error shape", outcomeUnknown: false, retryAfterSeconds: undefined }],
    [501, { success: false, error: 'not_implemented', detail: 'GetMarketInfo is not simulated' }, order, { type: 'RejectedError', message: 'GetMarketInfo is not simulated', outcomeUnknown: false, retryAfterSeconds: undefined }],
    [404, { error: 'Order not found' }, order, { type: 'RejectedError', message: 'Order not found', outcomeUnknown: false, retryAfterSeconds: undefined }],
    [400, 'nope', order, { type: 'RejectedError', message: "http (svc:8080) answered HTTP 400 with a body that is not the service's error shape", outcomeUnknown: false, retryAfterSeconds: undefined }],
  ] as const)('%i %j (%j)', (status, body, ctx, expected) => {
    expect(shape(replyError(status, body, ctx))).toMatchObject(expected);
  });

  it('a rate limit: by status or by its words, with each form of Retry-After', () => {
    const limited = (retryAfter: string | undefined, status = 429) => replyError(status, { error: 'Rate limit exceeded' }, { ...order, retryAfter }) as RateLimitedError;
    expect(limited('7')).toBeInstanceOf(RateLimitedError);
    expect(limited('7').message).toBe('Rate limited by http (svc:8080): Rate limit exceeded. Nothing was executed; retry after 7 s.');
    expect(limited('2.2').retryAfterSeconds).toBe(3);
    expect(limited('0').retryAfterSeconds).toBe(0);
    expect(limited(undefined).message).toBe('Rate limited by http (svc:8080): Rate limit exceeded. Nothing was executed; wait a moment and send it again.');
    expect(limited('soon').retryAfterSeconds).toBeUndefined();
    // '-5' is no number of seconds; read as a date, it is long past: now.
    expect(limited('-5').retryAfterSeconds).toBe(0);
    expect(limited(new Date(Date.now() + 30_500).toUTCString()).retryAfterSeconds).toBeGreaterThanOrEqual(29);
    expect(limited(new Date(Date.now() + 30_500).toUTCString()).retryAfterSeconds).toBeLessThanOrEqual(31);
    expect(limited('Wed, 21 Oct 2015 07:28:00 GMT').retryAfterSeconds).toBe(0);
    expect(limited('7', 400)).toBeInstanceOf(RateLimitedError);
  });
});

describe('readReply', () => {
  it('a 2xx with the reply is its value; a failure body is one whatever the status', () => {
    expect(readReply('PlaceOrder', 200, { orderId: 'a'.repeat(32), success: true }, order)).toEqual({ orderId: 'a'.repeat(32), success: true });
    expect(() => readReply('PlaceOrder', 200, { error: 'Order rejected', detail: 'closed' }, order)).toThrow(RejectedError);
    expect(shape(readReplyError(() => readReply('PlaceOrder', 200, { error: 'Rate limit exceeded' }, order))).type).toBe('RateLimitedError');
    expect(shape(readReplyError(() => readReply('PlaceOrder', 199, { orderId: 'x' }, order))).type).toBe('RejectedError');
    expect(shape(readReplyError(() => readReply('PlaceOrder', 300, { orderId: 'x' }, order))).type).toBe('RejectedError');
  });

  it('a 2xx that is not the reply: outcome unknown for an order, a question for a read', () => {
    expect(shape(readReplyError(() => readReply('PlaceOrder', 200, { id: 1 }, order)))).toMatchObject({
      type: 'NetworkError',
      outcomeUnknown: true,
      message: "Outcome unknown — the order may have been placed (http (svc:8080) answered 200 with a body that is not PlaceOrder's reply); check with `trade orders` before trying again.",
    });
    expect(shape(readReplyError(() => readReply('GetOrders', 204, 'x', read)))).toMatchObject({
      type: 'NetworkError',
      outcomeUnknown: false,
      message: "http (svc:8080) answered 204 with a body that is not GetOrders's reply: is it the order service?",
    });
  });
});

function readReplyError(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected it to throw');
}

describe('wsStatus: what a WebSocket reply stands for', () => {
  it.each([
    [{ orderId: 'x', success: true }, 200],
    [[], 200],
    [{ error: 'Rate limit exceeded' }, 429],
    [{ success: false, error: 'invalid_account', detail: 'x' }, 404],
    [{ error: 'Unknown API: GetFoo' }, 404],
    [{ error: 'unknown api' }, 404],
    [{ success: false, error: 'not_implemented', detail: 'x' }, 501],
    [{ error: 'Order rejected' }, 400],
  ])('%j is %i', (data, status) => {
    expect(wsStatus(data)).toBe(status);
  });
});

describe('the request of an operation', () => {
  it('path parameters encoded, undefined dropped, lists as comma lists in the body', () => {
    const placed = parseOrder({ account: 'Sim 101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', requireMarketPosition: 'flat,long' });
    expect(httpRequest('PlaceOrder', placed)).toEqual({
      method: 'POST',
      path: '/v1/api/accounts/Sim%20101/orders/place',
      body: { instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY', requireMarketPosition: 'flat,long' },
    });
  });

  it('a read: the rest in the query, encoded; nothing left, no ?', () => {
    expect(httpRequest('GetQuote', { instrument: ['ES 09-25', 'NQ 09-25'] } as never)).toEqual({ method: 'GET', path: '/v1/api/market/quote?instrument=ES%2009-25%2CNQ%2009-25' });
    expect(httpRequest('GetOrders', { account: 'Sim101', activeOnly: undefined } as never)).toEqual({ method: 'GET', path: '/v1/api/accounts/Sim101/orders' });
    expect(httpRequest('GetOrders', { account: 'Sim101', activeOnly: true } as never)).toEqual({ method: 'GET', path: '/v1/api/accounts/Sim101/orders?activeOnly=true' });
  });

  it('RPC args: NinjaTrader spelling for the enumerations, comma lists, nothing undefined', () => {
    expect(rpcArgs({ account: 'Sim101', action: 'SELL', orderType: 'STOPLIMIT', timeInForce: 'GTC', quantity: 2, limitPrice: undefined, requireMarketPosition: ['flat', 'short'] })).toEqual({
      account: 'Sim101',
      action: 'Sell',
      orderType: 'StopLimit',
      timeInForce: 'Gtc',
      quantity: 2,
      requireMarketPosition: 'flat,short',
    });
    expect(rpcArgs({ action: 7 })).toEqual({ action: 7 });
  });

  it('previews show the token masked, and a JSON content type only with a body', () => {
    const token = 'tok-0123456789-abcdefghij';
    const get = previewHttp('https://svc:8080', token, 'GetOrders', { account: 'Sim101' } as never);
    expect(get).toMatchObject({ transport: 'http', method: 'GET', url: 'https://svc:8080/v1/api/accounts/Sim101/orders', body: undefined });
    expect(Object.keys((get as { headers: object }).headers)).toEqual(['Authorization']);
    expect(JSON.stringify(get)).not.toContain(token);
    expect(authHeaders(token, true).Authorization).not.toContain(token);
    expect(authHeaders(token, false)).toEqual({ Authorization: `Bearer ${token}` });
    const post = previewHttp('https://svc:8080', token, 'Cancel', { account: 'Sim101', orderId: 'o-1' } as never);
    expect((post as { headers: Record<string, string> }).headers['Content-Type']).toBe('application/json');
    expect(previewWs('wss://svc:8080/ws', token, 'GetOrders', { account: 'Sim101' } as never)).toMatchObject({
      transport: 'ws',
      url: 'wss://svc:8080/ws',
      message: { action: 'rpc', id: '1', args: { account: 'Sim101' } },
    });
  });
});

describe('the transport', () => {
  it.each([
    ['localhost', true],
    ['LOCALHOST', true],
    ['[::1]', true],
    ['127.0.0.1', true],
    ['127.255.3.4', true],
    ['127.1', false],
    ['128.0.0.1', false],
    ['x127.0.0.1', false],
    ['127.0.0.1.example.com', false],
    ['example.com', false],
  ])('%s is loopback: %s', (host, loopback) => {
    expect(isLoopback(host)).toBe(loopback);
  });

  it('clear text to another host is refused, naming the host and the scheme, unless insecure', () => {
    for (const url of ['http://example.com:8080', 'ws://example.com:8080/ws']) {
      const scheme = url.split(':')[0];
      expect(() => checkTransport(url, false)).toThrow(ConfigError);
      expect(() => checkTransport(url, false)).toThrow(`Refusing to send the token in clear text to example.com:8080 over ${scheme}://.`);
      expect(() => checkTransport(url, true)).not.toThrow();
    }
    for (const url of ['https://example.com', 'wss://example.com/ws', 'http://127.0.0.1:9', 'ws://localhost:9/ws']) expect(() => checkTransport(url, false)).not.toThrow();
  });
});
