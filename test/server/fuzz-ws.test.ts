/**
 * Fuzzing `trade serve` over WebSocket: random frames on one connection (text that is not JSON,
 * binary bytes, JSON of any shape, RPCs that are nearly right) and random upgrade requests on
 * fresh sockets. Properties (service-reference.md §5): every `rpc` gets exactly one reply,
 * exactly `{id, data}`, with the id it carried when it had a usable one (else null); malformed
 * input (not JSON, not an object, another action, a binary frame) gets none; a ping gets a pong;
 * no reply is an internal error and every refusal is `{error}` (or the invalid_account body); the
 * connection stays open; a refused RPC leaves the store as it was; log lines stay clean; nothing
 * reaches Object.prototype; HTTP is answered after each batch. A refused upgrade is a 4xx with
 * `{error}`. Frames over the size limit close the connection: their own test, below. Seeded, so
 * a failure replays.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect as connectTcp } from 'node:net';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OPERATION_NAMES, OPERATIONS } from '../../src/service/operations.js';
import { BODY_LIMIT } from '../../src/server/limits.js';
import { assertErrorBody, assertNoPollution, hostileKey, hostileString, hostileValue, orderLike, pollutionAttempt, toJson, validOrder } from '../helpers/fuzz.js';
import { AUTH, connect, startServer, TOKEN, type Harness, type RpcClient } from './harness.js';

const SEED = 20250911;
const FRAME_RUNS = 2000;
const UPGRADE_RUNS = 200;
const BATCH = 50;
const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

let server: Harness;
let client: RpcClient;
let reader: Database.Database;
let closeInfo: unknown;
/** Bumped by SQLite whenever another connection commits a change: did this message write anything. */
const storeVersion = () => reader.pragma('data_version', { simple: true }) as number;

beforeAll(async () => {
  server = await startServer();
  client = await connect(server.wsUrl);
  void client.closed.then((info) => (closeInfo = info));
  reader = new Database(server.engine.file, { readonly: true });
});
afterAll(async () => {
  reader.close();
  await client.close();
  await server.close();
});

const APIS = OPERATION_NAMES.flatMap((name) => OPERATIONS[name].ws);
const WRITES = new Set(OPERATION_NAMES.filter((name) => OPERATIONS[name].movesMoney).flatMap((name) => OPERATIONS[name].ws));

let nextId = 0;
const freshId = fc.constant(null).map(() => `r${nextId++}`);

const args = fc.oneof(
  { weight: 6, arbitrary: orderLike({ withAccount: true }) },
  // Orders that pass every check often enough that writes are among the frames.
  { weight: 2, arbitrary: validOrder({ withAccount: true }).map((order) => ({ ...order, account: 'Sim101', strategy: undefined, ocoId: undefined })) },
  { weight: 1, arbitrary: fc.record({ account: fc.constantFrom('Sim101', 'sim101', 'Nope'), instrument: fc.constantFrom('ES 09-25', 'es 09-25', 'ES 13-25') }) },
  {
    weight: 1,
    arbitrary: fc.record({ account: fc.constantFrom('Sim101', 'Nope'), orderId: fc.oneof(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 32, maxLength: 32 }), hostileString) }),
  },
  { weight: 2, arbitrary: hostileValue },
  { weight: 1, arbitrary: pollutionAttempt },
);

/** An RPC envelope, right or nearly: each of action, id, api and args now and then replaced or dropped. */
const rpc = fc
  .record({
    action: fc.oneof({ weight: 10, arbitrary: fc.constant('rpc') }, { weight: 1, arbitrary: fc.constantFrom('RPC', 'rpc ', 'call', undefined) }, { weight: 1, arbitrary: hostileValue }),
    id: fc.oneof(
      { weight: 10, arbitrary: freshId },
      { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.constantFrom(0, -1, 1e21, 0.5, Number.MAX_SAFE_INTEGER)) },
      { weight: 1, arbitrary: fc.oneof(hostileValue, fc.constantFrom(undefined, null, '', 'x'.repeat(1000))) },
    ),
    api: fc.oneof({ weight: 10, arbitrary: fc.constantFrom(...APIS) }, { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'toString', 'hasOwnProperty', 'placeorder', '') }, { weight: 1, arbitrary: hostileValue }),
    args: fc.oneof({ weight: 10, arbitrary: args }, { weight: 1, arbitrary: fc.constant(undefined) }),
    extra: fc.option(fc.tuple(hostileKey, hostileValue), { freq: 10, nil: undefined }),
  })
  .map(({ extra, ...envelope }) => {
    const message: Record<string, unknown> = { ...envelope };
    if (extra) Object.defineProperty(message, extra[0], { value: extra[1], enumerable: true, writable: true, configurable: true });
    return message;
  });

interface Frame {
  data: string | Buffer;
  binary: boolean;
  /** A top-level key this rpc frame has twice (it is refused, §1.3), when it has one. */
  doubled?: string;
}

/** Frames up to the size limit: a larger one closes the connection (§5.1), which has its own test below. */
const frame: fc.Arbitrary<Frame> = fc.oneof(
  { weight: 12, arbitrary: rpc.map((m) => ({ data: toJson(m) ?? '{}', binary: false })) },
  { weight: 1, arbitrary: rpc.map((m) => ({ data: Buffer.from(toJson(m) ?? '{}'), binary: true })) },
  { weight: 1, arbitrary: fc.constantFrom('{"action":"ping"}', '{"action":"ping","id":"p"}', '{"action":"PING"}').map((data) => ({ data, binary: false })) },
  { weight: 2, arbitrary: hostileValue.map((v) => ({ data: toJson(v) ?? 'null', binary: false })) },
  { weight: 1, arbitrary: hostileString.map((data) => ({ data, binary: false })) },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((b) => ({ data: Buffer.from(b), binary: true })) },
  {
    weight: 1,
    arbitrary: rpc.chain((m) => {
      const json = toJson(m) ?? '{}';
      return fc.constantFrom(json.slice(0, json.length >> 1), `${json}x`, `\ufeff${json}`, json.replace('{', '{"__proto__":{"polluted":"yes"},'), `${json}${json}`);
    }).map((data) => ({ data, binary: false })),
  },
  {
    weight: 1,
    // An rpc with one of its keys given twice, the first time with another value.
    arbitrary: fc.tuple(rpc.filter((m) => m.action === 'rpc'), fc.constantFrom('id', 'api', 'args', 'action')).map(([m, key]): Frame => {
      const json = toJson(m) ?? '{}';
      const doubled = Object.keys(JSON.parse(json) as object).includes(key) ? key : undefined;
      return { data: json.replace('{', `{${JSON.stringify(key)}:"first",`), binary: false, doubled };
    }),
  },
  {
    weight: 1,
    arbitrary: fc.tuple(freshId, fc.integer({ min: BODY_LIMIT - 200, max: BODY_LIMIT - 100 })).map(([id, size]) => ({
      data: JSON.stringify({ action: 'rpc', id, api: 'PlaceOrder', args: { strategy: 'x'.repeat(size) } }),
      binary: false,
    })),
  },
).filter((f) => Buffer.byteLength(f.data) <= BODY_LIMIT);

type Expected = { kind: 'none' } | { kind: 'pong' } | { kind: 'reply'; id: unknown; api?: string; refusal?: string };

/** What the server must answer, worked out from the frame the way a client reads the contract (§5.2–5.4). */
function expected(f: Frame): Expected {
  if (f.binary) return { kind: 'none' };
  let message: unknown;
  try {
    // One byte-order mark before the JSON is ignored (the project's decisions, §1.3).
    message = JSON.parse((typeof f.data === 'string' ? f.data : f.data.toString('utf8')).replace(/^\ufeff/, ''));
  } catch {
    return { kind: 'none' };
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message)) return { kind: 'none' };
  const { action, id, api } = message as Record<string, unknown>;
  const usable = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  // Refused whatever else it says, and answered so that its sender is not left waiting; a doubled id names no request.
  if (f.doubled) return { kind: 'reply', id: f.doubled === 'id' ? null : usable ? id : null, refusal: `Invalid request: message: duplicate key '${f.doubled}'` };
  if (action === 'ping') return { kind: 'pong' };
  if (action !== 'rpc') return { kind: 'none' };
  return { kind: 'reply', id: usable ? id : null, api: typeof api === 'string' ? api : undefined };
}

type Outcome = 'ok' | 'refused' | 'unknown-api' | 'invalid-account';

/** Checks the messages one frame (followed by a ping) brought; returns how its RPC was answered. */
function checkAnswer(f: Frame, messages: unknown[]): { outcome: Outcome; api?: string } | undefined {
  const want = expected(f);
  assert.deepEqual(messages.at(-1), { type: 'pong' }, 'the ping after each frame is answered last');
  const answers = messages.slice(0, -1);
  if (want.kind === 'none') return void assert.deepEqual(answers, [], 'malformed input gets no reply');
  if (want.kind === 'pong') return void assert.deepEqual(answers, [{ type: 'pong' }]);
  assert.equal(answers.length, 1, 'exactly one reply to an rpc');
  const reply = answers[0] as { id: unknown; data: Record<string, unknown> };
  assert.deepEqual(Object.keys(reply), ['id', 'data'], 'a reply is exactly {id, data}');
  assert.equal(reply.id, want.id, 'the reply carries the id the message had');
  const { data } = reply;
  if (want.refusal) assert.deepEqual({ ...data }, { error: want.refusal }, 'a duplicate key is refused, naming it');
  assert.notEqual(data.error, 'internal_error', `an internal error: ${JSON.stringify(data).slice(0, 200)}`);
  if (data.success === true) return { outcome: 'ok', api: want.api };
  if (data.error === 'invalid_account' || data.error === 'not_implemented') {
    assert.deepEqual(Object.keys(data), ['success', 'error', 'detail']);
    return { outcome: data.error === 'invalid_account' ? 'invalid-account' : 'refused' };
  }
  assert.deepEqual(Object.keys(data), ['error'], "a refusal's data is exactly {error}");
  assert.equal(typeof data.error, 'string');
  assert.doesNotMatch(data.error as string, UNSHOWABLE, 'the message is one printable line');
  return { outcome: /^Unknown API command/.test(data.error as string) ? 'unknown-api' : 'refused' };
}

async function healthy(): Promise<void> {
  const reply = await client.call(`health-${client.messages.length}`, 'GetAllPositions', {});
  assert.equal((reply.data as { success?: boolean }).success, true);
  assert.equal((await server.get('/v1/api/positions')).status, 200, 'HTTP is answered too');
}

/**
 * How long one frame may go unanswered before the run fails naming it: a bound for a clear message,
 * not a speed check (alone, a frame is answered in milliseconds; on a 2-core machine that a suite and
 * a benchmark share, the in-process server was once seen silent for over 5 s).
 */
const FRAME_WAIT_MS = 20_000;

describe('trade serve over WebSocket, fuzzed', () => {
  it(`answers ${FRAME_RUNS} random frames on one connection: one {id, data} per rpc, none for malformed input, no internal error, the store untouched by refusals`, async () => {
    const outcomes = new Map<Outcome, number>();
    let frames = 0;
    let writes = 0;
    let batchStart = JSON.stringify(server.snapshot());
    let batchWrote = false;
    await fc.assert(
      fc.asyncProperty(frame, async (f) => {
        const version = storeVersion();
        const logged = server.logs.length;
        const seen = client.messages.length;
        client.socket.send(f.data, { binary: f.binary });
        client.send({ action: 'ping' });
        // Everything up to the pong that follows: the pong that answers the frame itself, if any, is not the last.
        for (;;) {
          const messages = await Promise.race([
            client.waitFor(client.messages.length + 1),
            new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(String(f.data).slice(0, 300))} binary=${f.binary}; got ${JSON.stringify(client.messages.slice(seen))} state=${client.socket.readyState} close=${JSON.stringify(closeInfo)} last=${JSON.stringify(client.messages.slice(-3))}`)), FRAME_WAIT_MS)),
          ]);
          const fresh = messages.slice(seen);
          const pongs = fresh.filter((m) => (m as { type?: string }).type === 'pong').length;
          if (pongs === (expected(f).kind === 'pong' ? 2 : 1)) break;
        }
        const checked = checkAnswer(f, client.messages.slice(seen));
        if (checked) outcomes.set(checked.outcome, (outcomes.get(checked.outcome) ?? 0) + 1);
        if (storeVersion() !== version) {
          assert.ok(checked?.outcome === 'ok' && WRITES.has(checked.api ?? ''), `a ${checked?.outcome} reply to ${checked?.api} changed the store`);
          batchWrote = true;
          writes++;
        }
        for (const line of server.logs.slice(logged)) {
          assert.ok(!line.includes(TOKEN));
          assert.doesNotMatch(line, UNSHOWABLE, `a log line that is not one printable line: ${JSON.stringify(line)}`);
        }
        assertNoPollution();
        assert.equal(client.socket.readyState, client.socket.OPEN, 'the connection stays open');
        if (++frames % BATCH === 0) {
          await healthy();
          const snapshot = JSON.stringify(server.snapshot());
          if (!batchWrote) assert.equal(snapshot, batchStart, 'a batch of refusals and reads changed the store');
          batchStart = snapshot;
          batchWrote = false;
        }
      }),
      { seed: SEED, numRuns: FRAME_RUNS },
    );
    await healthy();
    // Exactly one reply each: nothing more arrives once every frame has had its reply.
    const total = client.messages.length;
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(client.messages.length).toBe(total);
    expect(writes).toBeGreaterThan(0);
    for (const outcome of ['ok', 'refused', 'unknown-api', 'invalid-account'] as const) expect(outcomes.get(outcome) ?? 0, `replies ${outcome}`).toBeGreaterThan(0);
    expect(server.warnings).toEqual([]);
  }, 120_000);

  it('a frame over the connection limit closes that connection with 1009 and nothing else: the store and other clients are fine', async () => {
    const other = await connect(server.wsUrl);
    const victim = await connect(server.wsUrl);
    const before = JSON.stringify(server.snapshot());
    victim.socket.send(JSON.stringify({ action: 'rpc', id: 'big', api: 'PlaceOrder', args: { strategy: 'x'.repeat(BODY_LIMIT) } }));
    expect((await victim.closed).code).toBe(1009);
    expect(victim.messages).toEqual([]);
    expect(JSON.stringify(server.snapshot())).toBe(before);
    expect((await other.call('after', 'GetAllPositions', {})).data).toMatchObject({ success: true });
    await other.close();
  });

  it(`refuses ${UPGRADE_RUNS} random upgrade requests with a 4xx and {error}, or upgrades them; never a 5xx, never text/html`, async () => {
    const key = randomBytes(16).toString('base64');
    const header = (name: string, values: fc.Arbitrary<string | undefined>) => values.map((v) => (v === undefined ? [] : [`${name}: ${v}`]));
    const upgrade = fc
      .tuple(
        fc.constantFrom('GET', 'GET', 'GET', 'POST', 'PUT', 'HEAD'),
        fc.constantFrom('/ws/stream', '/ws/stream', '/ws/stream?x=1', '/ws/stream/', '/WS/STREAM', '/v1/api/positions', '/nope'),
        header('Authorization', fc.constantFrom(`Bearer ${TOKEN}`, `Bearer ${TOKEN}`, `bearer ${TOKEN}`, `Bearer ${TOKEN.toUpperCase()}`, `Bearer ${TOKEN}x`, undefined, 'Bearer')),
        header('Upgrade', fc.constantFrom('websocket', 'websocket', 'WebSocket', 'h2c', '', undefined)),
        header('Connection', fc.constantFrom('Upgrade', 'Upgrade', 'keep-alive, Upgrade', 'close', undefined)),
        header('Sec-WebSocket-Key', fc.constantFrom(key, key, key, 'abc', '', `${key}=`, undefined)),
        header('Sec-WebSocket-Version', fc.constantFrom('13', '13', '13', '8', '7', 'x', '', undefined)),
        header('Sec-WebSocket-Protocol', fc.constantFrom(undefined, undefined, 'rpc', 'a b', ', ,', 'x'.repeat(300))),
        header('Sec-WebSocket-Extensions', fc.constantFrom(undefined, undefined, 'permessage-deflate', 'permessage-deflate; server_max_window_bits=99', 'x; y', ';;')),
        fc.constantFrom('', '{"action":"ping"}'),
      )
      .map(([method, path, ...rest]) => {
        const tail = rest.pop() as string;
        const lines = (rest as string[][]).flat();
        return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('\r\n')}${lines.length ? '\r\n' : ''}\r\n${tail}`;
      });
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(upgrade, async (text) => {
        const before = storeVersion();
        const head = await handshake(text);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head.text)?.[1]);
        seen.add(status);
        // 101 only on the stream; 200 for a plain read that was no upgrade at all; otherwise a refusal.
        const onStream = /^\w+ \/ws\/stream(\?|\s)/.test(text);
        assert.ok((status === 101 && onStream) || (status === 200 && !onStream) || (status >= 400 && status < 500), `answered ${head.text.slice(0, 300)}`);
        if (status >= 400 && !text.startsWith('HEAD')) {
          assert.match(head.text, /\r\ncontent-type: application\/json/i, `a ${status} that is not JSON: ${head.text.slice(0, 300)}`);
          assertErrorBody(JSON.parse(head.body) as Record<string, unknown>, `a ${status}: ${head.body}`);
          // Node hands a request to the upgrade path only with both headers; its socket is closed after a refusal.
          if (/\r\nConnection: [^\r]*Upgrade/.test(text) && /\r\nUpgrade: \S/.test(text)) {
            assert.match(head.text, /\r\nconnection: close\r\n/i, 'a refused upgrade says its connection closes');
          }
        }
        assert.equal(storeVersion(), before);
        assertNoPollution();
      }),
      { seed: SEED, numRuns: UPGRADE_RUNS },
    );
    expect([...seen].sort()).toEqual(expect.arrayContaining([101, 400, 401]));
    expect((await server.http('GET', '/v1/api/positions', { headers: AUTH })).status).toBe(200);
  });
});

/** Sends a raw upgrade request; resolves with the status line and headers, and the body of a refusal. */
function handshake(text: string): Promise<{ text: string; body: string }> {
  return new Promise((resolve, reject) => {
    const { port } = new URL(server.url);
    const socket = connectTcp(Number(port), '127.0.0.1', () => socket.write(text));
    let received = '';
    let timer: NodeJS.Timeout | undefined;
    // Only the first answer: bytes after the headers of a plain GET are read by Node as a next request.
    const done = () => {
      clearTimeout(timer);
      socket.destroy();
      const end = received.indexOf('\r\n\r\n');
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received)?.[1] ?? 0);
      resolve({ text: `${received.slice(0, end)}\r\n`, body: received.slice(end + 4, end + 4 + length) });
    };
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (received.startsWith('HTTP/1.1 101') || text.startsWith('HEAD ')) return done(); // no body follows
      const length = Number(/\r\ncontent-length: (\d+)/i.exec(received)?.[1] ?? 0);
      if (received.length >= end + 4 + length) done();
    });
    socket.on('close', done);
    socket.on('error', (error: NodeJS.ErrnoException) => (error.code === 'ECONNRESET' ? done() : reject(error)));
    timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(text.slice(0, 200))}`)), 5_000);
  });
}
