/** The bearer token on both transports, the constant-time check, and the token kept out of every line. */
import { describe, expect, it } from 'vitest';
import { createAuthenticator, createScrubber, generateToken, isUsableToken } from '../../src/server/auth.js';
import { connect, ES_MARKET, refusedUpgrade, startServer, TOKEN } from './harness.js';

const PLACE = '/v1/api/accounts/Sim101/orders/place';
const MISSING = { error: 'Unauthorized' };
const INVALID = { error: 'Unauthorized' };

describe('authenticator', () => {
  const check = createAuthenticator('s3cret-token');

  it('accepts exactly the token after a Bearer scheme in any case', () => {
    expect(check('Bearer s3cret-token')).toBe('ok');
    expect(check('bearer  s3cret-token ')).toBe('ok');
  });

  it('tells a missing token from a wrong one', () => {
    expect(check(undefined)).toBe('missing');
    expect(check('')).toBe('missing');
    expect(check('Bearer')).toBe('missing');
    expect(check('Bearer ')).toBe('missing');
    expect(check(['Bearer s3cret-token', 'Bearer s3cret-token'])).toBe('missing');
    expect(check('Bearer s3cret-toke')).toBe('invalid');
    expect(check('Bearer s3cret-token2')).toBe('invalid');
    expect(check('Bearer S3CRET-TOKEN')).toBe('invalid');
    expect(check('Basic czNjcmV0LXRva2Vu')).toBe('invalid');
    expect(check('s3cret-token')).toBe('invalid');
    expect(check('Bearer s3cret-token extra')).toBe('invalid');
  });

  it('generates long random tokens that fit a header', () => {
    const tokens = new Set(Array.from({ length: 50 }, generateToken));
    expect(tokens.size).toBe(50);
    for (const token of tokens) {
      expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(isUsableToken(token)).toBe(true);
    }
    expect(isUsableToken('two words')).toBe(false);
    expect(isUsableToken('tab\there')).toBe(false);
    expect(isUsableToken('naïve')).toBe(false);
  });

  it('scrubs the token, plain or URL-encoded, from a line', () => {
    const scrub = createScrubber('a+b/c=');
    expect(scrub('GET /x?token=a+b/c= and a%2Bb%2Fc%3D')).toBe('GET /x?token=[redacted] and [redacted]');
  });
});

describe('auth over HTTP', () => {
  it('every route answers 401 {error} without the right token, and nothing is stored', async () => {
    const server = await startServer();
    try {
      const before = server.snapshot();
      const json = { 'content-type': 'application/json' };
      const cases: Array<[string, string, Record<string, string>, unknown]> = [
        ['POST', PLACE, json, MISSING],
        ['POST', PLACE, { ...json, authorization: `Bearer ${TOKEN}-wrong` }, INVALID],
        ['POST', PLACE, { ...json, authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}` }, INVALID],
        ['POST', '/v1/api/accounts/Sim101/positions/reverseposition', { ...json, authorization: 'Bearer ' }, MISSING],
        ['GET', '/v1/api/positions', {}, MISSING],
        ['GET', '/v1/api/accounts/Sim101/orders', { authorization: 'Bearer x' }, INVALID],
        ['GET', '/v1/api/accounts/Sim101/position?instrument=ES%2009-25', {}, MISSING],
        // Unknown routes too: without the token a caller cannot even map the API.
        ['GET', '/v1/api/secret-route', {}, MISSING],
      ];
      for (const [method, path, headers, body] of cases) {
        const reply = await server.http(method, path, { headers, body: method === 'POST' ? ES_MARKET : undefined });
        expect({ status: reply.status, body: reply.body, scheme: reply.headers['www-authenticate'] }).toEqual({
          status: 401,
          body,
          scheme: 'Bearer',
        });
      }
      expect(server.snapshot()).toEqual(before);
    } finally {
      await server.close();
    }
  });
});

describe('a token that differs only in length or case', () => {
  const SERVER_TOKEN = 'MiXeD-Case-Token-0123456789';
  const near = [
    SERVER_TOKEN.toUpperCase(),
    SERVER_TOKEN.toLowerCase(),
    SERVER_TOKEN.replace('M', 'm'), // one letter's case
    SERVER_TOKEN.slice(0, -1), // one character short
    `${SERVER_TOKEN}9`, // one character long
    SERVER_TOKEN.slice(1),
    `${SERVER_TOKEN}${SERVER_TOKEN}`,
    SERVER_TOKEN.slice(0, 8), // a prefix
  ];

  it('is refused over HTTP and over the WebSocket upgrade; the exact token passes', async () => {
    const server = await startServer({ token: SERVER_TOKEN });
    try {
      const before = server.snapshot();
      for (const token of near) {
        const reply = await server.http('POST', PLACE, {
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: ES_MARKET,
        });
        expect({ token, status: reply.status, body: reply.body }).toEqual({ token, status: 401, body: INVALID });
        expect(await refusedUpgrade(server.wsUrl, { authorization: `Bearer ${token}` })).toEqual({ status: 401, body: INVALID });
      }
      expect(server.snapshot()).toEqual(before);
      expect((await server.http('GET', '/v1/api/positions', { headers: { authorization: `Bearer ${SERVER_TOKEN}` } })).status).toBe(200);
      const client = await connect(server.wsUrl, { authorization: `Bearer ${SERVER_TOKEN}` });
      await client.close();
    } finally {
      await server.close();
    }
  });

  it('is refused by the authenticator itself, whatever its length (both sides are hashed before the constant-time compare)', () => {
    const check = createAuthenticator(SERVER_TOKEN);
    for (const token of [...near, `${SERVER_TOKEN}\u0000`]) expect(check(`Bearer ${token}`)).toBe('invalid');
    for (const length of [1, 26, 27, 28, 64, 1000, 100_000]) expect(check(`Bearer ${'x'.repeat(length)}`)).toBe('invalid');
    expect(check(`Bearer ${SERVER_TOKEN}`)).toBe('ok');
  });
});

describe('auth over WebSocket', () => {
  it('refuses the upgrade without the token; accepts it with the token', async () => {
    const server = await startServer();
    try {
      expect(await refusedUpgrade(server.wsUrl, {})).toEqual({ status: 401, body: MISSING });
      expect(await refusedUpgrade(server.wsUrl, { authorization: 'Bearer nope' })).toEqual({ status: 401, body: INVALID });
      const client = await connect(server.wsUrl, { authorization: `Bearer ${TOKEN}` });
      client.send({ action: 'ping' });
      expect(await client.next()).toEqual({ type: 'pong' });
      await client.close();
    } finally {
      await server.close();
    }
  });
});

describe('--log lines', () => {
  it('one line per request and per RPC, and never the token', async () => {
    const server = await startServer();
    try {
      await server.post(PLACE, ES_MARKET);
      await server.http('GET', '/v1/api/positions', { headers: { authorization: 'Bearer wrong-guess' } });
      // A client that puts the token in the URL by mistake.
      await server.get(`/v1/api/positions?token=${TOKEN}`);
      await server.get(`/v1/api/nothing/${TOKEN}`);
      const client = await connect(server.wsUrl);
      await client.call('r1', 'PlaceOrder', { account: 'Sim101', ...ES_MARKET });
      await client.call('r2', 'Nope', {});
      client.send('{');
      client.send({ action: 'ping' });
      await client.waitFor(3);
      await client.close();
      await refusedUpgrade(server.wsUrl, { authorization: 'Bearer no' });

      const stamp = String.raw`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z 127\.0\.0\.1`;
      const expected = [
        `POST ${PLACE} 200`,
        'GET /v1/api/positions 401',
        'GET /v1/api/positions\\?token=\\[redacted\\] 200',
        'GET /v1/api/nothing/\\[redacted\\] 404',
        'GET /ws/stream 101',
        "WS PlaceOrder id='r1' 200",
        "WS 'Nope' id='r2' 404",
        'WS ignored: not valid JSON',
        'WS closed 1005',
        'GET /ws/stream 401',
      ];
      expect(server.logs).toHaveLength(expected.length);
      server.logs.forEach((line, i) => {
        expect(line).toMatch(new RegExp(`^${stamp} ${expected[i]}( \\d+\\.\\dms)?$`));
      });
      expect(server.logs.join('\n')).not.toContain(TOKEN);
    } finally {
      await server.close();
    }
  });
});
