/** The http backend against a real local server made to misbehave, one way per path. */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHttpBackend } from '../../src/backends/http.js';
import { ConfigError, NetworkError, RateLimitedError, RejectedError } from '../../src/common/errors.js';
import { parseOrder } from '../../src/service/order.js';

const TOKEN = 'tok-0123456789-abcdefghij';
let server: Server;
let baseUrl: string;
const seen: Array<{ method: string; url: string; auth?: string; type?: string; body: string }> = [];

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};
// The account in the path picks the behaviour.
const behaviours: Record<string, Handler> = {
  ok: (_q, res) => json(res, 200, { orderId: 'a'.repeat(32), success: true }),
  rejected: (_q, res) => json(res, 400, { error: 'Invalid request: quantity: too big' }),
  detail: (_q, res) => json(res, 400, { success: false, error: 'Order rejected', detail: 'market closed' }),
  noposition: (_q, res) => json(res, 400, { error: "No position found for instrument 'ES 09-25' in account 'noposition'" }),
  unauthorized: (_q, res) => json(res, 401, { error: 'Unauthorized' }),
  forbidden: (_q, res) => json(res, 403, { error: 'Forbidden' }),
  platform: (_q, res) => json(res, 408, { error: 'Request timed out' }),
  limited: (_q, res) => json(res, 429, { error: 'Rate limit exceeded' }, { 'retry-after': '7' }),
  broken: (_q, res) => json(res, 500, { error: 'Internal Server Error' }),
  html: (_q, res) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end('<html><body>Bad gateway</body></html>');
  },
  html200: (_q, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html>hello</html>');
  },
  wrongshape: (_q, res) => json(res, 200, { id: 1 }),
  wrongtype: (_q, res) => json(res, 200, { orderId: 42, success: true }),
  notsuccess: (_q, res) => json(res, 200, { orderId: 'a'.repeat(32), success: false }),
  escapedid: (_q, res) => json(res, 200, { orderId: '\u001b[2J0123', success: true }),
  longid: (_q, res) => json(res, 200, { orderId: 'a'.repeat(129), success: true }),
  truncated: (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' });
    res.write('{"orderId":"ab');
    res.socket?.destroy();
  },
  hang: () => undefined,
  drop: (req) => req.socket.destroy(),
  // The headers at once, then the body a byte at a time, never finished.
  slowbody: (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{');
    const timer = setInterval(() => (res.destroyed ? clearInterval(timer) : res.write(' ')), 50);
    res.on('close', () => clearInterval(timer));
  },
  // A body without end: 16 MiB and one more chunk.
  huge: (_q, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    for (let i = 0; i <= 16; i++) res.write(chunk);
    res.end('{}');
  },
};

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d));
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, type: req.headers['content-type'], body });
      const account = decodeURIComponent(req.url!.split('/')[4] ?? '');
      (behaviours[account] ?? behaviours.ok!)(req, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  seen.length = 0;
});

const order = (account: string) =>
  parseOrder({ account, instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });

async function attempt(account: string, timeoutMs = 2000): Promise<unknown> {
  const backend = createHttpBackend({ baseUrl, token: TOKEN, timeoutMs });
  try {
    return (await backend.call('PlaceOrder', order(account))).body;
  } catch (error) {
    return error;
  } finally {
    await backend.close();
  }
}

describe('http backend', () => {
  it('POSTs JSON with the Bearer token to the service path and returns the body', async () => {
    expect(await attempt('ok')).toEqual({ orderId: 'a'.repeat(32), success: true });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: '/v1/api/accounts/ok/orders/place',
        auth: `Bearer ${TOKEN}`,
        type: 'application/json',
        body: '{"instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY"}',
      },
    ]);
  });

  it('uses the reverse path for Reverse Position and encodes the account', async () => {
    const backend = createHttpBackend({ baseUrl, token: TOKEN, timeoutMs: 2000 });
    await backend.call('ReversePosition', order('ok'));
    await backend.call('ReversePosition', order('ok/../x y'));
    await backend.close();
    expect(seen.map((r) => r.url)).toEqual([
      '/v1/api/accounts/ok/positions/reverseposition',
      '/v1/api/accounts/ok%2F..%2Fx%20y/positions/reverseposition',
    ]);
  });

  it.each(['/v1/api', '/v1/api/', '/'])('takes a base URL written with %s at the end (§1.1)', async (tail) => {
    const backend = createHttpBackend({ baseUrl: `${baseUrl}${tail}`, token: TOKEN, timeoutMs: 2000 });
    await backend.call('PlaceOrder', order('ok'));
    await backend.close();
    expect(seen[0]!.url).toBe('/v1/api/accounts/ok/orders/place');
  });

  it('sends a read as a GET with its fields in the query and no body or Content-Type', async () => {
    const backend = createHttpBackend({ baseUrl, token: TOKEN, timeoutMs: 2000 });
    await backend.call('GetPosition', { account: 'ok', instrument: 'ES 09-25' }).catch(() => undefined);
    await backend.call('GetOrders', { account: 'ok', activeOnly: true }).catch(() => undefined);
    await backend.close();
    expect(seen).toEqual([
      { method: 'GET', url: '/v1/api/accounts/ok/position?instrument=ES%2009-25', auth: `Bearer ${TOKEN}`, type: undefined, body: '' },
      { method: 'GET', url: '/v1/api/accounts/ok/orders?activeOnly=true', auth: `Bearer ${TOKEN}`, type: undefined, body: '' },
    ]);
  });

  it('sends Cancel with the documented empty body {}', async () => {
    const backend = createHttpBackend({ baseUrl, token: TOKEN, timeoutMs: 2000 });
    await backend.call('Cancel', { account: 'ok', orderId: 'a'.repeat(32) });
    await backend.close();
    expect(seen[0]).toMatchObject({ method: 'POST', url: `/v1/api/accounts/ok/orders/${'a'.repeat(32)}/cancel`, body: '{}' });
  });

  it.each([
    ['rejected', RejectedError, 1, 'Invalid request: quantity: too big'],
    ['detail', RejectedError, 1, 'Order rejected (market closed)'],
    ['noposition', RejectedError, 1, "No position found for instrument 'ES 09-25' in account 'noposition'"],
    ['unauthorized', ConfigError, 3, 'The service refused the token (401: Unauthorized).'],
    ['forbidden', ConfigError, 3, 'The service refused the token (403: Forbidden).'],
    ['limited', RateLimitedError, 5, `Rate limited by http (${'127.0.0.1'}`],
    ['platform', NetworkError, 4, 'The trading platform is not connected (408: Request timed out); nothing is known to have been placed'],
    ['broken', NetworkError, 4, 'failed with HTTP 500: Internal Server Error'],
    ['html', NetworkError, 4, "HTTP 502: HTTP 502 with a body that is not the service's error shape"],
    ['html200', NetworkError, 4, "answered 200 with a body that is not PlaceOrder's reply"],
    ['wrongshape', NetworkError, 4, "answered 200 with a body that is not PlaceOrder's reply"],
    ['wrongtype', NetworkError, 4, "answered 200 with a body that is not PlaceOrder's reply"],
    ['notsuccess', RejectedError, 1, 'the service reported a failure'],
    ['escapedid', NetworkError, 4, "answered 200 with a body that is not PlaceOrder's reply"],
    ['longid', NetworkError, 4, "answered 200 with a body that is not PlaceOrder's reply"],
  ])('maps %s to %s (exit %i) with a clear message', async (account, type, exitCode, message) => {
    const error = (await attempt(account)) as InstanceType<typeof type>;
    expect(error).toBeInstanceOf(type);
    expect(error.exitCode).toBe(exitCode);
    expect(error.message).toContain(message);
    expect(error.message).not.toContain(TOKEN);
    expect(seen).toHaveLength(1);
  });

  it('says when to retry after a 429', async () => {
    const error = (await attempt('limited')) as RateLimitedError;
    expect(error.retryAfterSeconds).toBe(7);
    expect(error.message).toContain('Nothing was executed; retry after 7 s.');
  });

  it('a hang after the request is outcome unknown, and the order was sent exactly once', async () => {
    const error = (await attempt('hang', 300)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toBe(
      'Outcome unknown — the order may have been placed (no reply from 127.0.0.1:' +
        `${new URL(baseUrl).port} within 0.3 s); check with \`trade orders\` before trying again.`,
    );
    await new Promise((r) => setTimeout(r, 400));
    expect(seen).toHaveLength(1);
  });

  it("a body that trickles past the timeout is outcome unknown, whatever undici's pause between chunks allows", async () => {
    const error = (await attempt('slowbody', 500)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toBe(
      `Outcome unknown — the order may have been placed (no complete reply from 127.0.0.1:${new URL(baseUrl).port} within 0.5 s); check with \`trade orders\` before trying again.`,
    );
    expect(seen).toHaveLength(1);
  });

  it('a reply larger than 16 MiB is cut off: outcome unknown for an order', async () => {
    const error = (await attempt('huge')) as NetworkError;
    expect(error.outcomeUnknown).toBe(true);
    expect(error.message).toBe(
      `Outcome unknown — the order may have been placed (127.0.0.1:${new URL(baseUrl).port} sent a reply larger than 16 MiB); check with \`trade orders\` before trying again.`,
    );
  });

  it('a read that fails after it was sent says so, and is not outcome unknown', async () => {
    const backend = createHttpBackend({ baseUrl, token: TOKEN, timeoutMs: 2000 });
    const host = `127.0.0.1:${new URL(baseUrl).port}`;
    try {
      const error = (await backend.call('GetOrders', { account: 'drop' }).catch((e: unknown) => e)) as NetworkError;
      expect(error).toBeInstanceOf(NetworkError);
      expect(error.outcomeUnknown).toBe(false);
      expect(error.message).toMatch(new RegExp(`^Request to ${host.replace(/\./g, '\\.')} failed: the connection to ${host.replace(/\./g, '\\.')} failed after the request was sent \\(UND_ERR_[A-Z_]+\\)\\.$`));
      const slow = createHttpBackend({ baseUrl, token: TOKEN, timeoutMs: 300 });
      const timedOut = (await slow.call('GetOrders', { account: 'hang' }).catch((e: unknown) => e)) as NetworkError;
      await slow.close();
      expect(timedOut.message).toBe(`Request to ${host} failed: no reply from ${host} within 0.3 s.`);
      expect(seen.map((r) => r.method)).toEqual(['GET', 'GET']);
    } finally {
      await backend.close();
    }
  });

  it('a reply that is not JSON is read as no body', async () => {
    const backend = createHttpBackend({ baseUrl, token: TOKEN, timeoutMs: 2000 });
    try {
      expect(await backend.send('GET', '/v1/api/accounts/html200/orders')).toEqual({ status: 200, body: undefined, retryAfter: undefined });
      expect(await backend.send('GET', '/v1/api/accounts/limited/orders')).toEqual({ status: 429, body: { error: 'Rate limit exceeded' }, retryAfter: '7' });
    } finally {
      await backend.close();
    }
  });

  it.each(['drop', 'truncated'])('a connection closed mid-response (%s) is outcome unknown, sent once', async (account) => {
    const error = (await attempt(account)) as NetworkError;
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(true);
    expect(seen).toHaveLength(1);
  });

  /** A port nothing listens on (it was just let go). */
  async function freePort(): Promise<number> {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    return port;
  }

  /** undici's own record of each connection it opens to `port` (its diagnostics channels), for the test's length. */
  function connections(port: number, onRefused?: () => void): { attempts: number; refused: number; stop(): void } {
    const seen = { attempts: 0, refused: 0, stop: () => undefined as void };
    const mine = (event: unknown) => (event as { connectParams: { port: string | number } }).connectParams.port == port;
    const before = (event: unknown) => void (mine(event) && seen.attempts++);
    const error = (event: unknown) => {
      if (!mine(event)) return;
      seen.refused++;
      onRefused?.();
    };
    subscribe('undici:client:beforeConnect', before);
    subscribe('undici:client:connectError', error);
    seen.stop = () => {
      unsubscribe('undici:client:beforeConnect', before);
      unsubscribe('undici:client:connectError', error);
    };
    return seen;
  }

  it('a refused connection is tried exactly twice, then reported as nothing sent', async () => {
    const port = await freePort();
    const seen = connections(port);
    const backend = createHttpBackend({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN, timeoutMs: 1000 });
    const error = (await backend.call('PlaceOrder', order('ok')).catch((e) => e)) as NetworkError;
    await backend.close();
    seen.stop();
    expect(error).toBeInstanceOf(NetworkError);
    expect(error.outcomeUnknown).toBe(false);
    expect(error.message).toBe(`Could not connect to 127.0.0.1:${port} (ECONNREFUSED). Nothing was sent.`);
    expect({ attempts: seen.attempts, refused: seen.refused }).toEqual({ attempts: 2, refused: 2 });
  });

  it('a service that refuses the first connection and accepts the second gets the order once, and it is placed', async () => {
    const port = await freePort();
    const late = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, type: req.headers['content-type'], body });
        json(res, 200, { orderId: 'b'.repeat(32), success: true });
      });
    });
    // The service comes up the moment the first connection is refused: before undici tries again.
    const tries = connections(port, () => {
      if (!late.listening) late.listen(port, '127.0.0.1');
    });
    const backend = createHttpBackend({ baseUrl: `http://127.0.0.1:${port}`, token: TOKEN, timeoutMs: 2000 });
    try {
      expect((await backend.call('PlaceOrder', order('ok'))).value).toEqual({ orderId: 'b'.repeat(32), success: true });
    } finally {
      tries.stop();
      await backend.close();
      late.closeAllConnections();
      await new Promise((r) => late.close(r));
    }
    expect({ attempts: tries.attempts, refused: tries.refused }).toEqual({ attempts: 2, refused: 1 });
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/api/accounts/ok/orders/place']);
  });

  it('refuses to send the token in clear text to another host, unless insecure', () => {
    expect(() => createHttpBackend({ baseUrl: 'http://example.com', token: TOKEN, timeoutMs: 1000 })).toThrow(
      'Refusing to send the token in clear text to example.com over http://.',
    );
    const backend = createHttpBackend({ baseUrl: 'http://example.com', token: TOKEN, timeoutMs: 1000, insecure: true });
    expect(backend.label).toBe('http (example.com)');
    return backend.close();
  });
});
