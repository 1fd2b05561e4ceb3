/**
 * What the HTTP stacks and serialisers of other languages send, byte for byte over a raw socket,
 * to `trade serve` and to the reference double (issue 28; service-reference.md §1.3 and the
 * project's decisions in docs/service-reference.md §11): typed serialisers' `null`s (Jackson,
 * System.Text.Json, Go, pydantic), an `Upgrade: h2c` offer (Java's HttpClient, curl --http2),
 * `Expect: 100-continue` (curl and .NET for larger bodies), chunked bodies, a charset parameter, a
 * byte-order mark, HTTP/1.0, integers written `1.0` or `1e0`, percent-encoded paths; and over
 * WebSocket a permessage-deflate offer (Python's websockets), nulls in args, a BOM, a fragmented
 * message and a binary frame. Each answer is the reference's: the status and body `trade serve`
 * gives (its own words for a refusal), and the service's generic ones from the double.
 */
import { createHash, randomBytes } from 'node:crypto';
import { connect as tcpConnect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exec } from '../helpers/exec.js';
import { startReferenceDouble } from '../helpers/reference-double.js';
import { startServer } from './harness.js';

const INSTRUMENT = 'ES 09-26';
const ACCOUNTS = ['Sim101', 'Sim 101'];

interface Target {
  name: 'trade serve' | 'the reference double';
  url: string;
  token: string;
  /** Orders the target holds: a refusal must leave their number as it was. */
  orders(): Promise<number>;
  close(): Promise<void>;
}

async function serveTarget(): Promise<Target> {
  const h = await startServer();
  h.engine.addAccount('Sim 101');
  h.engine.setPrice(INSTRUMENT, 6000);
  return { name: 'trade serve', url: h.url, token: 'test-token-0123456789abcdef', orders: async () => h.snapshot().orders.length, close: () => h.close() };
}

async function doubleTarget(): Promise<Target> {
  const d = await startReferenceDouble({ accounts: ACCOUNTS, prices: { [INSTRUMENT]: 6000 } });
  const target: Target = {
    name: 'the reference double',
    url: d.url,
    token: d.token,
    async orders() {
      let n = 0;
      for (const account of ACCOUNTS) {
        const reply = await exchange(target, get(`/v1/api/accounts/${encodeURIComponent(account)}/orders`, target));
        n += (reply.json as { orders: unknown[] }).orders.length;
      }
      return n;
    },
    close: () => d.close(),
  };
  return target;
}

interface Reply {
  /** Every status line the server wrote, interim ones (100 Continue) first. */
  statuses: number[];
  status: number;
  /** The final response's head, lower-cased names. */
  headers: Record<string, string>;
  json: unknown;
  /** Whether the server closed the connection after answering. */
  closed: boolean;
}

/** A request as raw bytes: the head, then the body (each part written on its own, in order). */
interface RawRequest {
  head: string;
  body?: Array<string | Buffer>;
  /** Wait for the server's `100 Continue` before writing the body, as curl and .NET do. */
  waitForContinue?: boolean;
  /** Read until the server closes the connection (otherwise: until the response is complete). */
  untilClose?: boolean;
}

const ORDER = { instrument: INSTRUMENT, action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
const PLACE = '/v1/api/accounts/Sim101/orders/place';

function head(target: Target, method: string, path: string, lines: string[], version = '1.1'): string {
  const host = version === '1.0' ? [] : [`Host: ${new URL(target.url).host}`];
  return [`${method} ${path} HTTP/${version}`, ...host, `Authorization: Bearer ${target.token}`, ...lines].join('\r\n') + '\r\n\r\n';
}
const get = (path: string, target: Target, lines: string[] = ['Connection: close']): RawRequest => ({ head: head(target, 'GET', path, lines) });
function post(target: Target, path: string, body: string | Buffer, lines: string[] = ['Content-Type: application/json'], method = 'POST'): RawRequest {
  return { head: head(target, method, path, [...lines, `Content-Length: ${Buffer.byteLength(body)}`, 'Connection: close']), body: [body] };
}

/** Sends one raw request on a fresh connection and reads the answer until the server closes, or a complete response arrives. */
function exchange(target: Target, request: RawRequest): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const socket: Socket = tcpConnect(Number(new URL(target.url).port), '127.0.0.1');
    let received = Buffer.alloc(0);
    let bodySent = false;
    const sendBody = () => {
      if (bodySent) return;
      bodySent = true;
      for (const part of request.body ?? []) socket.write(part);
    };
    let closed = false;
    const parse = (): Reply | undefined => {
      const text = received.toString('latin1');
      const statuses: number[] = [];
      let at = 0;
      for (;;) {
        const end = text.indexOf('\r\n\r\n', at);
        if (end === -1) return undefined;
        const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text.slice(at))?.[1]);
        statuses.push(status);
        if (status >= 200) {
          const headers: Record<string, string> = {};
          for (const line of text.slice(at, end).split('\r\n').slice(1)) {
            const colon = line.indexOf(':');
            headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
          }
          const body = received.subarray(Buffer.byteLength(text.slice(0, end + 4), 'latin1'));
          const bytes = bodyOf(headers, body, closed);
          if (bytes === undefined) return undefined;
          let json: unknown = bytes.toString('utf8');
          try {
            json = JSON.parse(json as string);
          } catch {
            // Kept as text: the expectation shows what came back.
          }
          return { statuses, status, headers, json, closed: false };
        }
        at = end + 4;
      }
    };
    socket.on('connect', () => {
      socket.write(request.head);
      if (!request.waitForContinue) sendBody();
    });
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      if (request.waitForContinue && received.toString('latin1').startsWith('HTTP/1.1 100 ')) sendBody();
      const reply = request.untilClose ? undefined : parse();
      if (reply) {
        socket.destroy();
        resolve(reply);
      }
    });
    socket.on('error', reject);
    socket.on('close', () => {
      closed = true;
      const reply = parse();
      if (reply) resolve({ ...reply, closed: true });
      else reject(new Error(`no complete response: ${received.toString('latin1').slice(0, 300)}`));
    });
  });
}

/** A response body once it is whole: by its Content-Length, its chunks, or (neither) the connection's close. */
function bodyOf(headers: Record<string, string>, body: Buffer, closed: boolean): Buffer | undefined {
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    return body.length < length ? undefined : body.subarray(0, length);
  }
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    for (let at = 0; ; ) {
      const line = body.indexOf('\r\n', at);
      if (line === -1) return undefined;
      const size = parseInt(body.subarray(at, line).toString('latin1'), 16);
      if (size === 0) return Buffer.concat(parts);
      if (body.length < line + 2 + size + 2) return undefined;
      parts.push(body.subarray(line + 2, line + 2 + size));
      at = line + 2 + size + 2;
    }
  }
  return closed ? body : undefined;
}

/** What a case must get from each target: the status, and the body (exact, or matched). */
interface Expectation {
  status: number;
  body: unknown;
}
interface Case {
  name: string;
  request(target: Target): RawRequest;
  serve: Expectation;
  /** The double's answer; absent where it is the same as the server's. */
  double?: Expectation;
  /** Whether the request places an order (otherwise nothing may change). */
  places?: boolean;
}

const ORDER_ID = { orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true };
const PLACED: Expectation = { status: 200, body: ORDER_ID };
const INVALID: Expectation = { status: 400, body: { error: 'Invalid request' } };
const jackson = JSON.stringify({ ...ORDER, limitPrice: null, stopPrice: null, ocoId: null, strategy: null, orderId: null, requireMarketPosition: null, maxPositions: null });
const h2c = ['Connection: Upgrade, HTTP2-Settings', 'Upgrade: h2c', 'HTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA'];

function chunked(parts: string[]): Buffer[] {
  return [...parts.map((p) => Buffer.from(`${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`)), Buffer.from('0\r\n\r\n')];
}

const CASES: Case[] = [
  { name: 'every unset field written null (Jackson, System.Text.Json, Go, pydantic)', request: (t) => post(t, PLACE, jackson), serve: PLACED, places: true },
  {
    name: 'number fields never null, written 0 (Go structs, C# decimals): a price of 0 is none, an unused price is ignored',
    request: (t) => post(t, PLACE, JSON.stringify({ ...ORDER, limitPrice: 0, stopPrice: 0, maxPositions: 100 })),
    serve: PLACED,
    places: true,
  },
  {
    name: 'an enum written as its number (System.Text.Json without JsonStringEnumConverter) is refused, naming the field',
    request: (t) => post(t, PLACE, JSON.stringify({ ...ORDER, action: 0 })),
    serve: { status: 400, body: { error: 'Invalid request: action: must be BUY or SELL, got 0' } },
    double: INVALID,
  },
  {
    name: 'a required field written null is that field missing',
    request: (t) => post(t, PLACE, JSON.stringify({ ...ORDER, quantity: null })),
    serve: { status: 400, body: { error: 'Invalid request: quantity: is required' } },
    double: INVALID,
  },
  { name: 'an h2c upgrade offered on a read (Java HttpClient, curl --http2) is plain HTTP/1.1', request: (t) => get('/v1/api/accounts', t, h2c), serve: { status: 200, body: expect.objectContaining({ accounts: expect.any(Array) }) } },
  { name: 'an h2c upgrade offered with an order body is plain HTTP/1.1', request: (t) => ({ head: head(t, 'POST', PLACE, [...h2c, 'Content-Type: application/json', `Content-Length: ${jackson.length}`]), body: [jackson] }), serve: PLACED, places: true },
  {
    name: 'Expect: 100-continue: the body is sent after the interim answer (curl, .NET)',
    request: (t) => ({ head: head(t, 'POST', PLACE, ['Content-Type: application/json', `Content-Length: ${JSON.stringify(ORDER).length}`, 'Expect: 100-continue', 'Connection: close']), body: [JSON.stringify(ORDER)], waitForContinue: true }),
    serve: PLACED,
    places: true,
  },
  {
    name: 'a chunked body, cut inside a string',
    request: (t) => ({ head: head(t, 'POST', PLACE, ['Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close']), body: chunked(['{"instrument": "ES 0', `9-26", "action": "BUY", "quantity": 1, "orderType": "MARKET", "timeInForce": "DAY"}`]) }),
    serve: PLACED,
    places: true,
  },
  { name: 'Content-Type: application/json; charset=utf-8', request: (t) => post(t, PLACE, JSON.stringify(ORDER), ['Content-Type: application/json; charset=utf-8']), serve: PLACED, places: true },
  { name: 'Content-Type: text/plain (JSON whatever the header says)', request: (t) => post(t, PLACE, JSON.stringify(ORDER), ['Content-Type: text/plain']), serve: PLACED, places: true },
  { name: 'a UTF-8 byte-order mark before the JSON (.NET)', request: (t) => post(t, PLACE, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(ORDER))])), serve: PLACED, places: true },
  { name: 'quantity written 1.0', request: (t) => post(t, PLACE, JSON.stringify(ORDER).replace('"quantity":1', '"quantity":1.0')), serve: PLACED, places: true },
  { name: 'quantity written 1e0', request: (t) => post(t, PLACE, JSON.stringify(ORDER).replace('"quantity":1', '"quantity":1e0')), serve: PLACED, places: true },
  {
    name: 'quantity written 1.5 is not a whole number',
    request: (t) => post(t, PLACE, JSON.stringify(ORDER).replace('"quantity":1', '"quantity":1.5')),
    serve: { status: 400, body: { error: 'Invalid request: quantity: must be a whole number, got 1.5' } },
    double: INVALID,
  },
  { name: 'HTTP/1.0 without keep-alive (no Host)', request: (t) => ({ head: head(t, 'GET', '/v1/api/accounts', [], '1.0') }), serve: { status: 200, body: expect.objectContaining({ accounts: expect.any(Array) }) } },
  {
    name: 'an HTTP/1.0 POST with its Content-Length',
    request: (t) => ({ head: head(t, 'POST', PLACE, ['Content-Type: application/json', `Content-Length: ${JSON.stringify(ORDER).length}`], '1.0'), body: [JSON.stringify(ORDER)] }),
    serve: PLACED,
    places: true,
  },
  { name: 'a percent-encoded account in the path (Sim%20101)', request: (t) => post(t, '/v1/api/accounts/Sim%20101/orders/place', JSON.stringify(ORDER)), serve: PLACED, places: true },
  {
    name: 'percent-encoded path and query (%53im101, ES%2009-26)',
    request: (t) => get('/v1/api/accounts/%53im101/position?instrument=ES%2009-26', t),
    serve: { status: 200, body: expect.objectContaining({ account: 'Sim101', instrument: INSTRUMENT }) },
  },
  {
    name: 'a query with + for a space (ES+09-26)',
    request: (t) => get('/v1/api/accounts/Sim101/position?instrument=ES+09-26', t),
    serve: { status: 200, body: expect.objectContaining({ account: 'Sim101', instrument: INSTRUMENT }) },
  },
  {
    name: 'bytes that are not UTF-8 (ISO-8859-1) are refused, not guessed at',
    request: (t) => post(t, PLACE, Buffer.from(JSON.stringify({ ...ORDER, ocoId: 'café' }), 'latin1'), ['Content-Type: application/json; charset=ISO-8859-1']),
    serve: { status: 400, body: { error: "Invalid request: body: not valid UTF-8 (the Content-Type says charset='iso-8859-1'; send UTF-8)" } },
    double: INVALID,
  },
  {
    name: 'a compressed body (Content-Encoding: gzip) is refused',
    request: (t) => post(t, PLACE, Buffer.from([0x1f, 0x8b, 0x08, 0x00]), ['Content-Type: application/json', 'Content-Encoding: gzip']),
    serve: { status: 415, body: { error: "Invalid request: body: Content-Encoding 'gzip' is not accepted; send the JSON uncompressed" } },
    double: { status: 415, body: { error: 'Invalid request' } },
  },
  {
    name: 'a form-encoded body is not JSON',
    request: (t) => post(t, PLACE, 'instrument=ES+09-26&action=BUY', ['Content-Type: application/x-www-form-urlencoded']),
    serve: { status: 400, body: { error: 'Invalid request: body: not valid JSON' } },
    double: INVALID,
  },
  {
    name: 'an Expect other than 100-continue is 417',
    request: (t) => post(t, PLACE, JSON.stringify(ORDER), ['Content-Type: application/json', 'Expect: 200-ok']),
    serve: { status: 417, body: { error: "Invalid request: Expect: only 100-continue is understood, got '200-ok'" } },
    double: { status: 417, body: '' },
  },
];

describe.each([
  ['trade serve', serveTarget],
  ['the reference double', doubleTarget],
] as const)('what common HTTP stacks send, raw, to %s', (_, open) => {
  let target: Target;
  beforeAll(async () => {
    target = await open();
  });
  afterAll(() => target.close());

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const before = await target.orders();
    const reply = await exchange(target, c.request(target));
    const want = target.name === 'trade serve' ? c.serve : (c.double ?? c.serve);
    expect({ status: reply.status, body: reply.json }).toEqual(want);
    expect(await target.orders()).toBe(before + (c.places && want.status === 200 ? 1 : 0));
  });

  it('Expect: 100-continue is answered 100 before the body is sent, then 200', async () => {
    const body = JSON.stringify(ORDER);
    const reply = await exchange(target, {
      head: head(target, 'POST', PLACE, ['Content-Type: application/json', `Content-Length: ${body.length}`, 'Expect: 100-continue', 'Connection: close']),
      body: [body],
      waitForContinue: true,
    });
    expect(reply.statuses).toEqual([100, 200]);
  });

  it('an HTTP/1.0 request is answered and its connection closed', async () => {
    const reply = await exchange(target, { head: head(target, 'GET', '/v1/api/accounts', [], '1.0'), untilClose: true });
    expect(reply).toMatchObject({ status: 200, closed: true });
  });

  it('after an ignored h2c offer the connection stays HTTP/1.1 for the next request', async () => {
    const first = head(target, 'GET', '/v1/api/accounts', h2c);
    const second = head(target, 'GET', '/v1/api/positions', ['Connection: close']);
    const answers = await new Promise<string>((resolve, reject) => {
      const socket = tcpConnect(Number(new URL(target.url).port), '127.0.0.1', () => socket.write(first + second));
      let text = '';
      socket.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      socket.on('error', reject).on('close', () => resolve(text));
    });
    expect([...answers.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]))).toEqual([200, 200]);
    expect(answers).not.toMatch(/101 Switching Protocols/);
  });
});

describe('trade serve only', () => {
  let target: Target;
  beforeAll(async () => {
    target = await serveTarget();
  });
  afterAll(() => target.close());

  it('an h2c offer on the stream is a plain GET of it: 426, not an upgrade', async () => {
    const reply = await exchange(target, get('/ws/stream', target, [...h2c]));
    expect({ status: reply.status, body: reply.json }).toEqual({ status: 426, body: { error: '/ws/stream takes WebSocket connections only' } });
  });

  it('a chunked body over 64 KiB is 413, nothing placed', async () => {
    const before = await target.orders();
    const big = JSON.stringify({ ...ORDER, strategy: 'x'.repeat(70_000) });
    const reply = await exchange(target, {
      head: head(target, 'POST', PLACE, ['Content-Type: application/json', 'Transfer-Encoding: chunked', 'Connection: close']),
      body: chunked([big.slice(0, 40_000), big.slice(40_000)]),
    });
    expect({ status: reply.status, body: reply.json }).toEqual({ status: 413, body: { error: 'Invalid request: body: larger than 65536 bytes' } });
    expect(await target.orders()).toBe(before);
  });
});

describe('curl itself against trade serve', () => {
  let target: Target;
  beforeAll(async () => {
    target = await serveTarget();
  });
  afterAll(() => target.close());

  /** curl's answer: the body, then a line with the status and the HTTP version it spoke. */
  async function curl(args: string[]): Promise<{ status: number; version: string; body: unknown }> {
    const ran = await exec('curl', ['-sS', '-H', `Authorization: Bearer ${target.token}`, '-w', '\n%{http_code} %{http_version}', ...args], { env: process.env });
    expect(ran.stderr).toBe('');
    const cut = ran.stdout.lastIndexOf('\n');
    const [status, version] = ran.stdout.slice(cut + 1).split(' ');
    return { status: Number(status), version: version!, body: JSON.parse(ran.stdout.slice(0, cut)) };
  }
  const order = JSON.stringify(ORDER);

  it('curl --http2 (an h2c upgrade offer) reads and places over HTTP/1.1', async () => {
    expect(await curl(['--http2', `${target.url}/v1/api/accounts`])).toEqual({ status: 200, version: '1.1', body: expect.objectContaining({ accounts: expect.any(Array) }) });
    const before = await target.orders();
    expect(await curl(['--http2', '-X', 'POST', '-H', 'Content-Type: application/json', '-d', order, `${target.url}${PLACE}`])).toEqual({ status: 200, version: '1.1', body: ORDER_ID });
    expect(await target.orders()).toBe(before + 1);
  });

  it('curl --http1.0 reads and places', async () => {
    expect(await curl(['--http1.0', `${target.url}/v1/api/positions`])).toEqual({ status: 200, version: '1.1', body: expect.objectContaining({ positions: expect.any(Array) }) });
    expect(await curl(['--http1.0', '-X', 'POST', '-d', order, `${target.url}${PLACE}`])).toEqual({ status: 200, version: '1.1', body: ORDER_ID });
  });

  it('curl asking Expect: 100-continue (as it does for large bodies) waits for it, and the order is placed', async () => {
    // Unknown fields are ignored (§1.3); this one only makes the body large, as the bodies curl asks about are.
    const large = JSON.stringify({ ...ORDER, comment: 'x'.repeat(2_000) });
    // -i, not -v: -v would echo the request's Authorization header (the token) to stderr. The interim
    // answer among the received headers shows both sides: the server sends 100 only when asked.
    const args = ['-sSi', '-H', `Authorization: Bearer ${target.token}`, '-H', 'Content-Type: application/json', '-H', 'Expect: 100-continue', '-d', large, `${target.url}${PLACE}`];
    const ran = await exec('curl', args, { env: process.env });
    expect(ran.stdout).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 200 OK\r\n/);
    const body = ran.stdout.slice(ran.stdout.lastIndexOf('\r\n\r\n') + 4);
    expect(JSON.parse(body)).toEqual(ORDER_ID);
  });
});

// ---------------------------------------------------------------------------------------------
// WebSocket, frame by frame (RFC 6455): what Python's websockets and others send.

interface RawWs {
  handshake: string;
  send(opcode: number, payload: Buffer, fin?: boolean): void;
  /** The next text message the server sends, or undefined when none comes within a ping's round trip. */
  next(): Promise<unknown>;
  close(): void;
}

/** A client frame: FIN, opcode, the mask bit and a random mask (clients must mask). */
function frame(opcode: number, payload: Buffer, fin = true): Buffer {
  const mask = randomBytes(4);
  const length = payload.length;
  const header = length < 126 ? Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | length]) : Buffer.from([(fin ? 0x80 : 0) | opcode, 0x80 | 126, length >> 8, length & 0xff]);
  const masked = Buffer.from(payload.map((byte, i) => byte ^ mask[i % 4]!));
  return Buffer.concat([header, mask, masked]);
}

function openRawWs(target: Target, extraLines: string[]): Promise<RawWs> {
  const key = randomBytes(16).toString('base64');
  return new Promise((resolve, reject) => {
    const socket = tcpConnect(Number(new URL(target.url).port), '127.0.0.1');
    let buffer = Buffer.alloc(0);
    let handshake: string | undefined;
    const messages: unknown[] = [];
    const waiters: Array<() => void> = [];
    socket.on('connect', () =>
      socket.write(
        [
          'GET /ws/stream HTTP/1.1',
          `Host: ${new URL(target.url).host}`,
          'Upgrade: websocket',
          'Connection: Upgrade',
          `Sec-WebSocket-Key: ${key}`,
          'Sec-WebSocket-Version: 13',
          `Authorization: Bearer ${target.token}`,
          ...extraLines,
        ].join('\r\n') + '\r\n\r\n',
      ),
    );
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (handshake === undefined) {
        const end = buffer.indexOf('\r\n\r\n');
        if (end === -1) return;
        handshake = buffer.subarray(0, end).toString('latin1');
        buffer = buffer.subarray(end + 4);
        const accept = createHash('sha1').update(`${key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
        if (!handshake.startsWith('HTTP/1.1 101') || !handshake.includes(accept)) return reject(new Error(`no upgrade: ${handshake}`));
        resolve({
          handshake,
          send: (opcode, payload, fin) => socket.write(frame(opcode, payload, fin)),
          async next() {
            // A ping (the server's courtesy pong) or a ListAccounts behind it marks the end of what the frame before brought.
            if (messages.length === 0) await new Promise<void>((wake) => waiters.push(wake));
            return messages.shift();
          },
          close: () => socket.destroy(),
        });
      }
      // Server frames are unmasked; the tests' replies are under 64 KiB.
      while (buffer.length >= 2) {
        let length = buffer[1]! & 0x7f;
        let offset = 2;
        if (length === 126) {
          if (buffer.length < 4) return;
          length = buffer.readUInt16BE(2);
          offset = 4;
        }
        if (buffer.length < offset + length) return;
        const opcode = buffer[0]! & 0x0f;
        if (opcode === 1) messages.push(JSON.parse(buffer.subarray(offset, offset + length).toString('utf8')));
        buffer = buffer.subarray(offset + length);
        for (const wake of waiters.splice(0)) wake();
      }
    });
  });
}

const TEXT = 1;
const BINARY = 2;
const CONTINUATION = 0;
const rpc = (id: string, api: string, args: unknown) => Buffer.from(JSON.stringify({ action: 'rpc', id, api, args }));

describe.each([
  ['trade serve', serveTarget],
  ['the reference double', doubleTarget],
] as const)('what WebSocket clients send, frame by frame, to %s', (_, open) => {
  let target: Target;
  let ws: RawWs;
  beforeAll(async () => {
    target = await open();
    // Python's websockets offers compression by default; the server declines it (the project's decisions).
    ws = await openRawWs(target, ['Sec-WebSocket-Extensions: permessage-deflate; client_max_window_bits']);
  });
  afterAll(async () => {
    ws.close();
    await target.close();
  });

  it('a permessage-deflate offer is declined: the handshake names no extension, and frames go uncompressed', () => {
    expect(ws.handshake).not.toMatch(/sec-websocket-extensions/i);
  });

  it('an RPC whose unset args are null places the order', async () => {
    ws.send(TEXT, rpc('n1', 'PlaceOrder', { account: 'Sim101', ...ORDER, action: 'Buy', limitPrice: null, stopPrice: null, ocoId: null, strategy: null, orderId: null }));
    expect(await ws.next()).toEqual({ id: 'n1', data: ORDER_ID });
  });

  it('args: null is no args', async () => {
    ws.send(TEXT, rpc('n2', 'ListAccounts', null));
    expect(await ws.next()).toEqual({ id: 'n2', data: expect.objectContaining({ accounts: expect.any(Array) }) });
  });

  it('a byte-order mark before the JSON', async () => {
    ws.send(TEXT, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), rpc('n3', 'GetPosition', { account: 'Sim101', instrument: INSTRUMENT })]));
    expect(await ws.next()).toEqual({ id: 'n3', data: expect.objectContaining({ account: 'Sim101', instrument: INSTRUMENT }) });
  });

  it('a message in two fragments', async () => {
    const message = rpc('n4', 'GetPosition', { account: 'Sim101', instrument: INSTRUMENT });
    ws.send(TEXT, message.subarray(0, 10), false);
    ws.send(CONTINUATION, message.subarray(10));
    expect(await ws.next()).toEqual({ id: 'n4', data: expect.objectContaining({ account: 'Sim101' }) });
  });

  it('a whole number written with an exponent (9e2)', async () => {
    ws.send(TEXT, Buffer.from(`{"action":"rpc","id":"n5","api":"GetExecutions","args":{"account":"Sim101","lookbackTime":9e2}}`));
    expect(await ws.next()).toEqual({ id: 'n5', data: expect.objectContaining({ executions: expect.any(Array) }) });
  });

  it('a binary frame gets no reply (§5.4) and the connection goes on', async () => {
    ws.send(BINARY, rpc('b1', 'ListAccounts', {}));
    ws.send(TEXT, rpc('n6', 'ListAccounts', {}));
    // The binary frame's id never comes back: the next message is the text frame's reply.
    expect(await ws.next()).toEqual({ id: 'n6', data: expect.objectContaining({ accounts: expect.any(Array) }) });
  });
});
