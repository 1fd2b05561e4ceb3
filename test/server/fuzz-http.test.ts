/**
 * Fuzzing `trade serve` over HTTP: random methods, paths, query strings, headers (content types,
 * odd Authorization values) and bodies (near-valid orders, any JSON, broken JSON, invalid UTF-8,
 * deep nesting, bodies over the limit) on one keep-alive connection, and raw bytes on fresh
 * sockets. Properties: never a 5xx and never a dropped connection; every refusal is a 4xx with a
 * JSON `{error}` body; a refused request leaves the store as it was (and a read never changes
 * it); log lines stay single printable lines without the token; nothing reaches Object.prototype;
 * and a health request after each batch is answered. Seeded, so a failure replays.
 */
import assert from 'node:assert/strict';
import { connect as connectTcp } from 'node:net';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { Client, errors as undiciErrors } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertErrorBody, assertNoPollution, hostileString, hostileValue, orderLike, toJson } from '../helpers/fuzz.js';
import { startServer, TOKEN, type Harness } from './harness.js';

const SEED = 20250910;
const HTTP_RUNS = 2000;
const RAW_RUNS = 150;
/** A health request after every this many cases. */
const BATCH = 50;

let server: Harness;
let client: Client;
let reader: Database.Database;
/**
 * Bumped by SQLite whenever another connection commits a change to the store: an exact and cheap
 * "did this request write anything", checked on every case; the full snapshot is compared per batch.
 */
const storeVersion = () => reader.pragma('data_version', { simple: true }) as number;

beforeAll(async () => {
  server = await startServer();
  client = new Client(server.url, { keepAliveTimeout: 60_000, pipelining: 1 });
  reader = new Database(server.engine.file, { readonly: true });
});
afterAll(async () => {
  reader.close();
  await client.close();
  await server.close();
});

interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[]>;
  body?: string | Buffer;
}

/** Percent-encodes what a request line cannot carry; a lone surrogate (which cannot be encoded) as raw bytes of one. */
function pathSegment(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return '%ED%A0%80';
  }
}

const account = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('Sim101', 'sim101', 'Sim102', 'Nope') },
  { weight: 3, arbitrary: hostileString.map(pathSegment) },
  { weight: 1, arbitrary: fc.constantFrom('%', '%ZZ', '%ED%A0%80', '%00', '%C0%AF', '..', '.', '%2F', 'a%2Fb', 'x'.repeat(600)) },
);
const orderId = fc.oneof(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 }), hostileString.map(pathSegment));

const path = fc.oneof(
  { weight: 5, arbitrary: account.map((a) => `/v1/api/accounts/${a}/orders/place`) },
  { weight: 2, arbitrary: account.map((a) => `/v1/api/accounts/${a}/positions/reverseposition`) },
  { weight: 2, arbitrary: fc.tuple(account, orderId).map(([a, id]) => `/v1/api/accounts/${a}/orders/${id}/cancel`) },
  { weight: 2, arbitrary: account.map((a) => `/v1/api/accounts/${a}/positions/close`) },
  { weight: 2, arbitrary: account.map((a) => `/v1/api/accounts/${a}/orders`) },
  { weight: 2, arbitrary: account.map((a) => `/v1/api/accounts/${a}/position`) },
  { weight: 2, arbitrary: fc.constant('/v1/api/positions') },
  { weight: 1, arbitrary: fc.constant('/ws/stream') },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.oneof(fc.constantFrom('v1', 'api', 'accounts', '', '..', '%', '%2e%2e', '__proto__', 'constructor'), hostileString.map(pathSegment)), {
        maxLength: 6,
      })
      .map((segments) => `/${segments.join('/')}`),
  },
);

const queryValue = fc.oneof(
  fc.constantFrom('ES%2009-25', 'es+09-25', 'ES 09-25'.replace(' ', '%20'), 'Sim101', '', '%', '%ZZ', '%ED%A0%80'),
  hostileString.map(pathSegment),
);
const queryKey = fc.oneof(
  fc.constantFrom('instrument', 'account', 'extra', '__proto__', 'constructor', '__proto__[polluted]', 'constructor[prototype][polluted]', 'a[]', ''),
  hostileString.map(pathSegment),
);
const query = fc.oneof(
  { weight: 2, arbitrary: fc.constant('') },
  {
    weight: 3,
    arbitrary: fc.array(fc.tuple(queryKey, fc.option(queryValue, { nil: undefined })), { minLength: 1, maxLength: 4 }).map(
      (pairs) => `?${pairs.map(([k, v]) => (v === undefined ? k : `${k}=${v}`)).join('&')}`,
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom('?', '??', '?&&==', '?instrument=ES%2009-25&instrument=NQ%2012-25', '#frag') },
);

/** Header values must be latin1 without control characters to be sent at all. */
const headerText = fc.string({ unit: fc.integer({ min: 0x20, max: 0xff }).filter((c) => c !== 0x7f).map((c) => String.fromCharCode(c)), maxLength: 60 });

const authorization = fc.oneof(
  { weight: 12, arbitrary: fc.constant(`Bearer ${TOKEN}`) },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined, '', 'Bearer', 'Bearer ', `bearer ${TOKEN}`, `BEARER\t${TOKEN} `, `Bearer ${TOKEN.toUpperCase()}`,
      `Bearer ${TOKEN}x`, `Bearer ${TOKEN.slice(0, -1)}`, `Bearer ${TOKEN} ${TOKEN}`, `Basic ${Buffer.from(`u:${TOKEN}`).toString('base64')}`,
      TOKEN, `Bearer ${'A'.repeat(8000)}`, [`Bearer ${TOKEN}`, `Bearer ${TOKEN}`],
    ),
  },
  { weight: 1, arbitrary: headerText },
);

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined, 'Application/JSON', 'application/json; charset=utf-8', 'application/json;charset=UTF-8', 'application/json; charset=latin1',
      'application/json; charset=utf-16le', 'application/json;', 'application/json; foo', ' application/json', 'application/json, text/plain',
      'text/plain', 'text/json', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/jsonp',
      'application/vnd.api+json', 'application/json-seq', '*/*', '', 'application/octet-stream',
    ),
  },
  { weight: 1, arbitrary: headerText },
);

const extraHeaders = fc.dictionary(
  fc.constantFrom('accept', 'accept-encoding', 'content-encoding', 'user-agent', 'x-request-id', 'origin', 'cookie', 'x-forwarded-for', 'upgrade', 'x-http-method-override'),
  fc.oneof(fc.constantFrom('gzip', 'br', 'identity', 'websocket', '*/*', 'DELETE', '127.0.0.1, 10.0.0.1'), headerText),
  { maxKeys: 3 },
);

const nest = (depth: number, arrays: boolean) => (arrays ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`);

const body = fc.oneof(
  { weight: 2, arbitrary: fc.constant(undefined) },
  { weight: 6, arbitrary: orderLike({ withAccount: false }).map((o) => toJson(o)) },
  { weight: 1, arbitrary: orderLike({ withAccount: true }).map((o) => toJson(o)) },
  { weight: 2, arbitrary: hostileValue.map((v) => toJson(v) ?? 'null') },
  { weight: 1, arbitrary: fc.constantFrom('{"instrument":"ES 09-25"}', '{}', '{"quantity":1,"quantity":2}') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  {
    weight: 1,
    arbitrary: orderLike({ withAccount: false }).chain((o) => {
      const json = toJson(o) ?? '{}';
      return fc.constantFrom(
        `\ufeff${json}`, `${json} trailing`, json.slice(0, Math.max(1, json.length >> 1)), `${json}\n${json}`, json.replace('{', '{"__proto__":{"polluted":"yes"},'),
        json.replace('{', '{"constructor":{"prototype":{"polluted":"yes"}},'), Buffer.concat([Buffer.from(json.slice(0, -1)), Buffer.from([0xff, 0xfe, 0x7d])]),
      );
    }),
  },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 100, max: 20_000 }), fc.boolean()).map(([d, a]) => nest(d, a)) },
  { weight: 1, arbitrary: fc.integer({ min: 64 * 1024 - 200, max: 200 * 1024 }).map((n) => `{"strategy":"${'x'.repeat(n)}"}`) },
);

/** Anything: every part of the request drawn on its own. */
const wildRequest: fc.Arbitrary<FuzzRequest> = fc
  .record({
    method: fc.oneof({ weight: 8, arbitrary: fc.constantFrom('POST', 'GET') }, { weight: 1, arbitrary: fc.constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD') }),
    path,
    query,
    authorization,
    contentType,
    extra: extraHeaders,
    body,
  })
  .map(({ method, path, query, authorization, contentType, extra, body }) => {
    const headers: Record<string, string | string[]> = { ...extra };
    if (authorization !== undefined) headers.authorization = authorization;
    if (contentType !== undefined) headers['content-type'] = contentType;
    return { method, path: `${path}${query}`, headers, body: method === 'HEAD' ? undefined : body };
  });

const goodAccount = fc.constantFrom('Sim101', 'sim101', 'SIM101');
const goodQuery = fc.oneof(fc.constant(''), fc.constantFrom('?instrument=ES%2009-25', '?instrument=es+09-25', '?account=Sim101', '?account=sim101&instrument=NQ%2012-25'), query);

/** A request a client of the API would send, right in every part but the body or the query. */
const plausibleRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  fc
    .tuple(goodAccount, fc.constantFrom('orders/place', 'positions/reverseposition', 'positions/close'), body, contentType)
    .map(([a, route, body, type]) => ({
      method: 'POST',
      path: `/v1/api/accounts/${a}/${route}`,
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': type ?? 'application/json' },
      body,
    })),
  fc.tuple(goodAccount, orderId, fc.option(body, { nil: undefined })).map(([a, id, body]) => ({
    method: 'POST',
    path: `/v1/api/accounts/${a}/orders/${id}/cancel`,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body,
  })),
  fc
    .tuple(fc.oneof(goodAccount.map((a) => `/v1/api/accounts/${a}/orders`), goodAccount.map((a) => `/v1/api/accounts/${a}/position`), fc.constant('/v1/api/positions')), goodQuery)
    .map(([p, q]) => ({ method: 'GET', path: `${p}${q}`, headers: { authorization: `Bearer ${TOKEN}` } })),
);

const request = fc.oneof(plausibleRequest, wildRequest);

interface Answer {
  status: number;
  contentType: string | undefined;
  text: string;
}

/** One line about a request, for a failure message: the connection's state may come from the one before. */
function summary(req: FuzzRequest | undefined, answer?: Answer): string {
  if (!req) return 'none';
  const body = req.body === undefined ? 'no body' : `${req.body.length}-byte body ${JSON.stringify(req.body.toString().slice(0, 60))}`;
  return `${req.method} ${req.path.slice(0, 80)} ${JSON.stringify(req.headers).slice(0, 200)} ${body}${answer ? ` -> ${answer.status}` : ''}`;
}
let previous: string | undefined;

/** Sends one request; undefined when undici itself refused to send it (a header it will not write). */
async function send(req: FuzzRequest): Promise<Answer | undefined> {
  let res;
  try {
    res = await client.request({ method: req.method as 'GET', path: req.path, headers: req.headers, body: req.body });
  } catch (error) {
    if (error instanceof undiciErrors.InvalidArgumentError) return undefined;
    throw new Error(`the request failed: ${String(error)}; the request before it: ${previous}`, { cause: error });
  }
  const text = await res.body.text();
  const type = res.headers['content-type'];
  const answer = { status: res.statusCode, contentType: Array.isArray(type) ? type[0] : type, text };
  previous = summary(req, answer);
  return answer;
}

async function healthy(): Promise<void> {
  const res = await client.request({ method: 'GET', path: '/v1/api/positions', headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.statusCode, 200, 'the health request is answered');
  await res.body.dump();
}

/** The checks every answer passes, whatever was sent. */
function checkAnswer(req: FuzzRequest, answer: Answer): void {
  assert.ok(answer.status < 500, `${req.method} ${req.path.slice(0, 80)} answered ${answer.status}: ${answer.text.slice(0, 200)}`);
  if (req.method === 'HEAD') return;
  assert.match(answer.contentType ?? '', /^application\/json/, `content-type of a ${answer.status}`);
  const parsed = JSON.parse(answer.text) as Record<string, unknown>;
  if (answer.status >= 400) {
    assertErrorBody(parsed, `a ${answer.status}: ${answer.text.slice(0, 200)}`);
  } else {
    assert.equal(answer.status, 200);
    assert.equal(parsed.success, true);
  }
}

function checkLogs(from: number): void {
  for (const line of server.logs.slice(from)) {
    assert.ok(!line.includes(TOKEN), 'a log line holds the token');
    assert.doesNotMatch(line, /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u, `a log line that is not one printable line: ${JSON.stringify(line)}`);
  }
}

describe('trade serve over HTTP, fuzzed', () => {
  it(`answers ${HTTP_RUNS} random requests on one keep-alive connection: no 5xx, {error} on every 4xx, the store untouched by refusals`, async () => {
    let cases = 0;
    const statuses = new Map<number, number>();
    let batchStart = JSON.stringify(server.snapshot());
    let batchWrote = false;
    let writes = 0;
    await fc.assert(
      fc.asyncProperty(request, async (req) => {
        const version = storeVersion();
        const logged = server.logs.length;
        const answer = await send(req);
        if (answer) {
          statuses.set(answer.status, (statuses.get(answer.status) ?? 0) + 1);
          checkAnswer(req, answer);
          if (storeVersion() !== version) {
            assert.ok(req.method === 'POST' && answer.status === 200, `${summary(req, answer)} changed the store`);
            batchWrote = true;
            writes++;
          }
          checkLogs(logged);
        }
        assertNoPollution();
        if (++cases % BATCH === 0) {
          await healthy();
          const snapshot = JSON.stringify(server.snapshot());
          if (!batchWrote) assert.equal(snapshot, batchStart, 'a batch of refusals and reads changed the store');
          batchStart = snapshot;
          batchWrote = false;
        }
      }),
      { seed: SEED, numRuns: HTTP_RUNS },
    );
    await healthy();
    // The generator is only worth its runs if it reaches successes and each kind of refusal,
    // and the write detector only if it saw the writes of the orders that were placed.
    expect(writes).toBeGreaterThan(0);
    for (const status of [200, 400, 401, 404, 413, 415]) expect(statuses.get(status) ?? 0, `answers with ${status}`).toBeGreaterThan(0);
    expect(server.warnings).toEqual([]);
  });

  it(`answers raw bytes on a fresh socket with a 4xx or a close, never a 5xx, and keeps serving (${RAW_RUNS} cases)`, async () => {
    const requestLine = fc
      .tuple(
        fc.constantFrom('GET', 'POST', 'get', 'BREW', '', 'G\u0000T'),
        fc.constantFrom('/v1/api/positions', '/ws/stream', '*', 'http://x/', '/%', '/\u0000', ''),
        fc.constantFrom('HTTP/1.1', 'HTTP/1.0', 'HTTP/2.0', 'HTTP/9', 'http/1.1', ''),
        fc.array(
          fc.constantFrom(
            `Authorization: Bearer ${TOKEN}`, 'Content-Length: 5', 'Content-Length: -1', 'Content-Length: 1, 2', 'Transfer-Encoding: chunked',
            'Transfer-Encoding: gzip, chunked', 'Host: x', 'Host:', 'Bad Header', ' folded', `X: ${'a'.repeat(20_000)}`, 'Content-Type: application/json',
            'Expect: 100-continue', 'Connection: upgrade', 'Upgrade: websocket',
          ),
          { maxLength: 5 },
        ),
        fc.constantFrom('', '{}', '0\r\n\r\n', 'zz\r\n', '{"a":1}'),
      )
      .map(([method, target, version, headers, tail]) => Buffer.from(`${method} ${target} ${version}\r\n${headers.join('\r\n')}\r\n\r\n${tail}`, 'latin1'));
    const garbage = fc.uint8Array({ minLength: 1, maxLength: 300 }).map((b) => Buffer.from(b));
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 3, arbitrary: requestLine }, { weight: 1, arbitrary: garbage }), async (bytes) => {
        const before = JSON.stringify(server.snapshot());
        const reply = await rawExchange(bytes);
        const status = /^HTTP\/1\.[01] (\d{3})/.exec(reply)?.[1];
        if (status !== undefined) assert.ok(Number(status) < 500, `answered ${reply.slice(0, 200)}`);
        for (const response of reply.split(/(?=HTTP\/1\.[01] \d{3})/)) {
          const code = Number(/^HTTP\/1\.[01] (\d{3})/.exec(response)?.[1] ?? 0);
          const [head = '', body = ''] = response.split('\r\n\r\n');
          if (code < 400 || /^transfer-encoding: chunked/im.test(head)) continue;
          const parsed = JSON.parse(body) as Record<string, unknown>;
          assertErrorBody(parsed, `a ${code}: ${body}`);
        }
        assert.equal(JSON.stringify(server.snapshot()), before);
        assertNoPollution();
        await healthy();
      }),
      { seed: SEED, numRuns: RAW_RUNS },
    );
  });
});

/** Writes bytes on a fresh connection and collects what comes back until the server closes or goes quiet. */
function rawExchange(bytes: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = new URL(server.url);
    const socket = connectTcp(Number(url.port), url.hostname);
    let reply = '';
    let quiet: NodeJS.Timeout | undefined;
    const finish = () => {
      clearTimeout(quiet);
      socket.destroy();
      resolve(reply);
    };
    const wait = () => {
      clearTimeout(quiet);
      quiet = setTimeout(finish, 150);
    };
    socket.on('connect', () => {
      socket.write(bytes);
      wait();
    });
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      wait();
    });
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' || error.code === 'EPIPE' ? finish() : reject(error)));
    socket.on('close', finish);
  });
}
