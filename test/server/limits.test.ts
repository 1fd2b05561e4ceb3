/** Size, bodies, bad JSON and the rate limit: each an {error} answer, none crashing or storing. */
import { connect as connectTcp } from 'node:net';
import { Client } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { createTokenBucket, describeRateLimit, parseBurst, parseRate } from '../../src/server/limits.js';
import { AUTH, connect, ES_MARKET, JSON_AUTH, refusedUpgrade, startServer, type Harness } from './harness.js';

const PLACE = '/v1/api/accounts/Sim101/orders/place';
const RATE_LIMITED = { error: 'Rate limit exceeded' };

let server: Harness | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('bad requests', () => {
  it('each gets its status and {error}, the store does not move, and the server keeps serving', async () => {
    server = await startServer();
    const before = server.snapshot();
    const order = JSON.stringify(ES_MARKET);
    const big = JSON.stringify({ ...ES_MARKET, strategy: 'x'.repeat(64 * 1024) });
    const missing = 'Invalid request: instrument: is required; action: is required; quantity: is required; orderType: is required; timeInForce: is required';
    const cases: Array<[Record<string, string>, string | undefined, number, string]> = [
      [JSON_AUTH, big, 413, 'Invalid request: body: larger than 65536 bytes'],
      [{ ...AUTH, 'content-type': 'application/x-www-form-urlencoded' }, 'instrument=ES', 400, 'Invalid request: body: not valid JSON'],
      [JSON_AUTH, '{"instrument": "ES 09-25",', 400, 'Invalid request: body: not valid JSON'],
      [JSON_AUTH, '{"__proto__": {"admin": true}}', 400, 'Invalid request: body: __proto__ and constructor keys are not allowed'],
      [JSON_AUTH, '{"a": {"constructor": {"prototype": {"admin": true}}}}', 400, 'Invalid request: body: __proto__ and constructor keys are not allowed'],
      [JSON_AUTH, '', 400, missing],
      [AUTH, undefined, 400, missing],
      [JSON_AUTH, '[]', 400, 'Invalid request: body: must be a JSON object'],
      [JSON_AUTH, 'null', 400, 'Invalid request: body: must be a JSON object'],
      [JSON_AUTH, '"order"', 400, 'Invalid request: body: must be a JSON object'],
    ];
    for (const [headers, body, status, error] of cases) {
      const reply = await server.http('POST', PLACE, { headers, body });
      expect({ status: reply.status, body: reply.body }).toEqual({ status, body: { error } });
    }
    expect(server.snapshot()).toEqual(before);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
    expect((await server.http('POST', PLACE, { headers: JSON_AUTH, body: order })).status).toBe(200);
  });

  it('reads a JSON body whatever its Content-Type says, or when it has none (§1.3)', async () => {
    server = await startServer();
    const order = JSON.stringify(ES_MARKET);
    for (const type of ['Application/JSON; charset=utf-8', 'text/plain', 'application/json-seq', undefined]) {
      const headers = type === undefined ? AUTH : { ...AUTH, 'content-type': type };
      expect((await server.http('POST', PLACE, { headers, body: order })).status).toBe(200);
    }
    expect(server.engine.listOrders()).toHaveLength(4);
  });

  it('a body just under the limit is read and judged by the schema', async () => {
    server = await startServer();
    const body = JSON.stringify({ ...ES_MARKET, strategy: 'x'.repeat(60 * 1024) });
    expect(await server.http('POST', PLACE, { body })).toMatchObject({
      status: 400,
      body: { error: 'Invalid request: strategy: must be at most 64 characters' },
    });
  });
});

describe('requests the HTTP parser refuses (found by test/server/fuzz-http.test.ts)', () => {
  it('a URL over the header limit gets 431 {error} with Connection: close, and the same keep-alive client goes on', async () => {
    server = await startServer();
    const client = new Client(server.url, { keepAliveTimeout: 60_000 });
    try {
      // Before: fastify's default answer had no Connection: close, so the client's next request
      // went out on the closing socket and failed with "other side closed".
      for (let round = 0; round < 3; round++) {
        const long = await client.request({ method: 'GET', path: `/v1/api/positions?x=${'a'.repeat(20_000)}`, headers: AUTH });
        expect({ status: long.statusCode, connection: long.headers.connection, body: await long.body.json() }).toEqual({
          status: 431,
          connection: 'close',
          body: { error: 'Request headers (the URL included) are larger than 16 KiB' },
        });
        const next = await client.request({ method: 'GET', path: '/v1/api/positions', headers: AUTH });
        expect(next.statusCode).toBe(200);
        await next.body.dump();
      }
    } finally {
      await client.close();
    }
  });

  it('a malformed request gets 400 {error} and a closed connection', async () => {
    server = await startServer();
    const { port } = new URL(server.url);
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connectTcp(Number(port), '127.0.0.1', () => socket.end('GET /v1/api/positions HTTP/1.1\r\nBad Header\r\n\r\n'));
      let text = '';
      socket.setEncoding('utf8').on('data', (d: string) => (text += d));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
    });
    const body = JSON.stringify({ error: 'Invalid request: the HTTP request is malformed' });
    expect(reply).toBe(
      `HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
  });
});

describe('rate limit', () => {
  it('is off by default', async () => {
    server = await startServer();
    const replies = await Promise.all(Array.from({ length: 60 }, () => server!.get('/v1/api/positions')));
    expect(new Set(replies.map((r) => r.status))).toEqual(new Set([200]));
  });

  it('answers 429 {"error":"Rate limit exceeded"} with Retry-After once the burst is spent, then refills', async () => {
    let now = 1_000_000;
    server = await startServer({ rateLimit: { count: 180, periodMs: 60_000, burst: 3 }, now: () => now });
    const before = server.snapshot();
    for (let i = 0; i < 3; i++) expect((await server.get('/v1/api/positions')).status).toBe(200);
    const limited = await server.post(PLACE, ES_MARKET);
    expect({ status: limited.status, body: limited.body, retryAfter: limited.headers['retry-after'] }).toEqual({
      status: 429,
      body: RATE_LIMITED,
      retryAfter: '1',
    });
    expect(server.snapshot()).toEqual(before);
    now += 1_000; // 180/min refills 3 a second
    for (let i = 0; i < 3; i++) expect((await server.post(PLACE, ES_MARKET)).status).toBe(200);
    expect((await server.get('/v1/api/positions')).status).toBe(429);
  });

  it('counts neither requests without the token nor unknown routes (401, then 404, then 429: §6.1)', async () => {
    const now = 5_000;
    server = await startServer({ rateLimit: { count: 1, periodMs: 60_000, burst: 2 }, now: () => now });
    for (let i = 0; i < 5; i++) {
      expect((await server.http('GET', '/v1/api/positions', { headers: {} })).status).toBe(401);
      expect((await server.get('/v1/api/nothing')).status).toBe(404);
    }
    expect((await server.get('/v1/api/positions')).status).toBe(200);
    expect((await server.get('/v1/api/positions')).status).toBe(200);
    const limited = await server.get('/v1/api/positions');
    expect({ status: limited.status, retryAfter: limited.headers['retry-after'] }).toEqual({ status: 429, retryAfter: '60' });
  });

  it('covers the WebSocket: the upgrade and each RPC take a token; 429 replies keep their id', async () => {
    let now = 0;
    server = await startServer({ rateLimit: { count: 60, periodMs: 60_000, burst: 3 }, now: () => now });
    const client = await connect(server.wsUrl); // 1
    const args = { account: 'Sim101', ...ES_MARKET };
    expect((await client.call('a', 'PlaceOrder', args)).data).toMatchObject({ success: true }); // 2
    expect((await client.call('b', 'GetAllPositions')).data).toMatchObject({ success: true }); // 3
    const before = server.snapshot();
    expect(await client.call('c', 'PlaceOrder', args)).toEqual({ id: 'c', data: RATE_LIMITED });
    expect(server.snapshot()).toEqual(before);
    client.send({ action: 'ping' }); // pings are free
    expect(client.messages).not.toContainEqual({ type: 'pong' });
    await client.waitFor(4);
    expect(client.messages[3]).toEqual({ type: 'pong' });
    expect(await refusedUpgrade(server.wsUrl, AUTH)).toEqual({ status: 429, body: RATE_LIMITED });
    now += 1_000;
    expect((await client.call('d', 'PlaceOrder', args)).data).toMatchObject({ success: true });
    await client.close();
  });
});

describe('token bucket', () => {
  it('allows the burst, then one per refill interval, and says how long to wait', () => {
    let now = 0;
    const bucket = createTokenBucket({ count: 2, periodMs: 1_000, burst: 2 }, () => now);
    expect([bucket.take(), bucket.take()]).toEqual([{ ok: true }, { ok: true }]);
    expect(bucket.take()).toEqual({ ok: false, retryAfterSeconds: 1 });
    now += 499;
    expect(bucket.take().ok).toBe(false);
    now += 1;
    expect(bucket.take()).toEqual({ ok: true });
    now += 10_000; // never more than the burst
    expect([bucket.take(), bucket.take(), bucket.take().ok]).toEqual([{ ok: true }, { ok: true }, false]);
  });

  it('rounds Retry-After up to whole seconds', () => {
    const bucket = createTokenBucket({ count: 1, periodMs: 3_600_000, burst: 1 }, () => 0);
    bucket.take();
    expect(bucket.take()).toEqual({ ok: false, retryAfterSeconds: 3600 });
  });

  it('a clock stepping back refills nothing', () => {
    let now = 10_000;
    const bucket = createTokenBucket({ count: 1, periodMs: 1_000, burst: 1 }, () => now);
    bucket.take();
    now = 0;
    expect(bucket.take().ok).toBe(false);
  });

  it('parses --rate-limit and --burst', () => {
    expect(parseRate('180/min')).toEqual({ count: 180, periodMs: 60_000 });
    expect(parseRate('5/s')).toEqual({ count: 5, periodMs: 1_000 });
    expect(parseRate('1000 / hour')).toEqual({ count: 1000, periodMs: 3_600_000 });
    for (const bad of ['180', '0/min', '-1/min', '1.5/s', '10/fortnight', '/min', 'fast']) {
      expect(() => parseRate(bad)).toThrow(`--rate-limit must look like 180/min (a whole number from 1, per s, min or h), got '${bad}'`);
    }
    expect(parseBurst('20')).toBe(20);
    expect(() => parseBurst('0')).toThrow("--burst must be a whole number from 1, got '0'");
    expect(() => parseBurst('2x')).toThrow("--burst must be a whole number from 1, got '2x'");
    expect(describeRateLimit({ count: 180, periodMs: 60_000, burst: 20 })).toBe('180/min, burst 20');
  });
});
