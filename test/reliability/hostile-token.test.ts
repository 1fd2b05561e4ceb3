/**
 * A hostile server that echoes the token it is sent back in every field and every shape — as an
 * order id, in error messages, in every string of list replies; as it is, percent-encoded (upper
 * and lower case), as JSON `\u` escapes, with invisible characters and terminal escapes inside,
 * straddling the 500-character cut of a message (and doctor's 200), as base64 — over HTTP and
 * over WebSocket (replies, stream events, a refused upgrade, a close reason). Every command runs
 * against it on both backends, as text and as --json, and no line of stdout or stderr may hold
 * any 8-character piece of the token in any reading (test/helpers/token-forms.ts). Each run must
 * have sent the token to the server (so the server had it to echo), and --json lines stay JSON.
 *
 * Also `trade serve --log`: the server's own token, sent in paths, queries and WebSocket ids and
 * apis, in every form, never shows in its log.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type WebSocket, WebSocketServer } from 'ws';
import WsClient from 'ws';
import type { Env } from '../../src/config/paths.js';
import { type CliResult, orderArgs, runBin, runCli, tempHome } from '../helpers/cli.js';
import { listen, shut } from '../helpers/hostile.js';
import { killLongRuns, startBin } from '../helpers/long-run.js';
import { killServes, startServe } from '../helpers/serve-process.js';
import { leaks } from '../helpers/token-forms.js';

/** 41 characters, with the characters encodings treat specially (/ + = _ -). */
const TOKEN = 'Hostile/echo+Token=0123456789_abcdefXYZ-4';
const REDACTED = '[redacted]';

const hex = (code: number, lower = false) => code.toString(16).padStart(2, '0')[lower ? 'toLowerCase' : 'toUpperCase']();
const pctAll = (text: string, lower = false) => [...Buffer.from(text, 'utf8')].map((b) => `%${hex(b, lower)}`).join('');
const escAll = (text: string) => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** The token in every shape: `ids` are visible ASCII of at most 128 characters (what an order id may be). */
function shapes(t: string) {
  const ids = {
    plain: t,
    uri: encodeURIComponent(t),
    pct: pctAll(t),
    pctLower: pctAll(t, true),
    escHalf: `${escAll(t.slice(0, 15))}${t.slice(15)}`,
    zwEscaped: `${t.slice(0, 20)}\\u200b${t.slice(20)}`,
    slash: t.replace(/\//g, '\\/'),
    b64: base64(t),
    b64url: Buffer.from(t).toString('base64url'),
    b64inner: base64(`x${t}yz`),
    head: t.slice(0, Math.ceil(t.length / 2)),
    tail: t.slice(Math.ceil(t.length / 2)),
  };
  const texts = {
    ...ids,
    zw: `${t.slice(0, 10)}\u200b${t.slice(10, 20)}\u2060${t.slice(20, 30)}\u00ad${t.slice(30)}`,
    joiners: [...t].join('\u200c\u200d\ufeff'),
    bidi: `${t.slice(0, 8)}\u202e${t.slice(8, 16)}\u2066${t.slice(16, 24)}\u202a${t.slice(24, 32)}\u2069${t.slice(32)}`,
    ctrl: `${t.slice(0, 20)}\x1b[31m\x07${t.slice(20)}`,
    escFull: escAll(t),
  };
  return { ids: Object.values(ids), texts: Object.values(texts), named: texts };
}

/** A reply that fits every operation's reply at once, every string field one of the shapes. */
function universal(t: string, rotation: number): Record<string, unknown> {
  const { ids, texts } = shapes(t);
  const at = (list: string[], i: number) => list[(i + rotation) % list.length]!;
  // Each list item shows several fields: every other start is enough for each shape to show in each list.
  const every = Array.from({ length: Math.ceil(texts.length / 2) }, (_, i) => 2 * i);
  const position = (i: number) => ({
    account: at(texts, i), instrument: at(texts, i + 1), marketPosition: 'Long', quantity: 1, averagePrice: 4500, marketPrice: 4501, unrealizedProfitLoss: 50,
  });
  const order = (i: number) => ({
    orderId: at(ids, i), account: at(texts, i), instrument: at(texts, i + 1), orderAction: at(texts, i + 2), orderType: at(texts, i + 3),
    orderState: at(texts, i + 4), timeInForce: at(texts, i + 5), time: at(texts, i + 6), name: at(texts, i + 7), oco: at(texts, i + 8),
    ocoId: at(texts, i + 9), quantity: 1, filled: 0, limitPrice: 4500, stopPrice: 4490, averageFillPrice: 0,
  });
  return {
    ...position(3),
    ...order(0),
    id: at(ids, 1),
    name: at(texts, 4),
    status: at(texts, 5),
    strategyId: at(texts, 6),
    warning: at(texts, 7),
    quoteTime: at(texts, 8),
    ownerStrategy: { name: at(texts, 9), id: at(ids, 10) },
    last: 4500, bid: 4499.75, ask: 4500.25, high: 4510, low: 4490, volume: 10,
    item: { cashValue: 1000, note: at(texts, 11) },
    orderIds: ids,
    cancelledOrderIds: ids,
    orders: every.map(order),
    positions: every.map(position),
    closedPositions: every.map(position),
    accounts: every.map((i) => ({
      name: at(texts, i), status: at(texts, i + 1), item: { cashValue: 1 }, account: { name: at(texts, i + 2), status: at(texts, i + 3) }, positions: [position(i)],
    })),
    executions: ids.map((_, i) => ({
      id: at(ids, i), orderId: at(ids, i + 1), account: at(texts, i), instrument: at(texts, i + 2), marketPosition: 'Long', price: 4500, quantity: 1, time: at(texts, i + 3), name: at(texts, i + 4),
    })),
    events: every.map((i) => ({ timestamp: at(texts, i), source: at(texts, i + 1), event: at(texts, i + 2) })),
    success: true,
  };
}

/** An error message that carries the token: several shapes at once, or the token across a cut. */
function message(t: string, variant: string): string {
  const s = shapes(t).named;
  const cut = /^cut(\d+)at(\d+)$/.exec(variant);
  if (cut) return `${'x'.repeat(Number(cut[2]) - 1 - Number(cut[1]))}${t} and more`;
  switch (variant) {
    case 'mixA':
      return `Refused: plain ${s.plain} zw ${s.zw} b64 ${s.b64} uri ${s.uri} joiners ${s.joiners}`;
    case 'mixB':
      return `Refused: esc ${s.escFull} pct ${s.pctLower}`;
    case 'mixC':
      return `Refused: zwesc ${s.zwEscaped} slash ${s.slash} inner ${s.b64inner} ctrl ${s.ctrl} bidi ${s.bidi} halves ${s.head} / ${s.tail}`;
    case 'cutPct':
      return `${'x'.repeat(499 - 60)}${s.pct}`;
    case 'short':
      return `zw ${s.zw}`;
    default:
      throw new Error(`no variant ${variant}`);
  }
}

interface Echo {
  url: string;
  wsBase: string;
  /** Requests (and WebSocket messages) that carried the token, per run key. */
  got(key: string): number;
  /** Everything the server sent that carried the token, for the control check. */
  sent: string[];
  close(): Promise<void>;
}

/**
 * The echo server. A request's first two path segments pick the behaviour and name the run:
 * `/<mode>/<run>/v1/api/...` and `/<mode>/<run>/ws/stream`. Modes: `data-N` (every reply is
 * `universal`, shapes rotated by N), `eSTATUS-VARIANT` (`{error}` with that status; on ws the
 * RPC's data and stream events are `{error}`), `dSTATUS-VARIANT` (`{success:false, error, detail}`),
 * `upSTATUS-VARIANT` (the WebSocket upgrade is refused with that status and body), `close-VARIANT`
 * (the WebSocket closes with the message as its reason).
 */
async function startEcho(): Promise<Echo> {
  const counts = new Map<string, number>();
  const sent: string[] = [];
  const tokenOf = (req: IncomingMessage) => /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
  const route = (url: string) => {
    const [, mode = '', run = ''] = url.split('/');
    return { mode, key: `${mode}/${run}` };
  };
  const count = (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);
  const failure = (mode: string, t: string) => {
    const m = /^([edu]p?)(\d{3})-(.+)$/.exec(mode);
    if (!m) return undefined;
    const text = message(t, m[3]!);
    const body = m[1] === 'd' ? { success: false, error: 'invalid_request', detail: text } : { error: text };
    return { status: Number(m[2]), body };
  };
  const reply = (mode: string, t: string): { status: number; body: unknown } => {
    const data = /^(data|quote)-(\d+)$/.exec(mode);
    // `quote-N`: the data, as a quote of ES 09-25 (what `watch quotes` waits for).
    if (data) return { status: 200, body: { ...universal(t, Number(data[2])), ...(data[1] === 'quote' ? { instrument: 'ES 09-25' } : {}) } };
    return failure(mode, t) ?? { status: 200, body: universal(t, 0) };
  };
  const send = (res: ServerResponse, status: number, body: unknown) => {
    const text = JSON.stringify(body);
    sent.push(text);
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(text);
  };

  const server: Server = createServer((req, res) => {
    const { mode, key } = route(req.url ?? '/');
    const t = tokenOf(req);
    req.resume();
    req.on('end', () => {
      if (t === undefined) return send(res, 401, { error: 'Unauthorized' });
      count(key);
      const { status, body } = reply(mode.replace(/^up/, 'e'), t);
      send(res, status, body);
    });
  });
  const wss = new WebSocketServer({ noServer: true });
  const sockets = new Set<Socket>();
  server.on('upgrade', (req, socket: Socket, head) => {
    sockets.add(socket.once('close', () => sockets.delete(socket)));
    socket.on('error', () => undefined);
    const { mode, key } = route(req.url ?? '/');
    const t = tokenOf(req);
    if (t === undefined) return socket.end('HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"error":"Unauthorized"}');
    count(key);
    if (mode.startsWith('up')) {
      const { status, body } = failure(mode, t)!;
      const text = JSON.stringify(body);
      sent.push(text);
      return socket.end(`HTTP/1.1 ${status} Refused\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`);
    }
    wss.handleUpgrade(req, socket, head, (ws: WebSocket) => {
      const out = (value: unknown) => {
        const text = JSON.stringify(value);
        sent.push(text);
        ws.send(text);
      };
      ws.on('message', (raw) => {
        count(key);
        const m = JSON.parse(raw.toString()) as { action?: string; id?: unknown; api?: string };
        const closing = /^close-(.+)$/.exec(mode);
        if (closing) {
          // A close reason is at most 123 bytes.
          const reason = Buffer.from(message(t, closing[1]!)).subarray(0, 123).toString();
          sent.push(reason);
          return ws.close(4000, reason);
        }
        const { body } = reply(mode, t);
        const failed = typeof (body as { error?: unknown }).error === 'string' || (body as { success?: unknown }).success === false;
        if (m.action === 'subscribe' || m.action === 'unsubscribe') {
          const quotes = (body as { orders?: unknown[] }).orders ?? [];
          out(failed ? { type: 'error', action: m.action, error: message(t, /-(.+)$/.exec(mode)![1]!) } : { type: 'marketData', quotes: [body, ...quotes] });
        } else if (m.action === 'streamPnl') {
          const positions = (body as { positions?: unknown[] }).positions ?? [];
          out(
            failed
              ? { type: 'error', action: 'streamPnl', error: message(t, /-(.+)$/.exec(mode)![1]!) }
              : { type: 'pnlUpdate', epoch: 1, accounts: shapes(t).texts.map((account, i) => ({ account, realizedProfitLoss: i, positions })) },
          );
        } else if (m.action === 'rpc') out({ id: m.id, data: body });
      });
    });
  });
  const host = await listen(server);
  return {
    url: `http://${host}`,
    wsBase: `ws://${host}`,
    got: (key) => counts.get(key) ?? 0,
    sent,
    async close() {
      for (const socket of sockets) socket.destroy();
      wss.close();
      await shut(server);
    },
  };
}

let echo: Echo;
let home: { env: Env; cleanup: () => void };
let runs = 0;

beforeAll(async () => {
  echo = await startEcho();
  home = tempHome();
});
afterAll(async () => {
  // Tests run concurrently: a watch left running is only killed once all are done.
  await killLongRuns();
  await echo.close();
  home.cleanup();
});

/** The environment of one run against the echo server: its own run key under `mode`. */
function target(backend: 'http' | 'ws', mode: string, token = TOKEN): { env: Env; key: string } {
  const key = `${mode}/r${++runs}`;
  return {
    key,
    env: {
      ...home.env,
      TRADE_BACKEND: backend,
      TRADE_BASE_URL: `${echo.url}/${key}`,
      TRADE_WS_URL: `${echo.wsBase}/${key}/ws/stream`,
      TRADE_TOKEN: token,
      TRADE_TIMEOUT: '10',
    },
  };
}

/** No line of either stream holds a piece of the token; --json lines are JSON; something was redacted. */
function expectClean(result: Pick<CliResult, 'stdout' | 'stderr'>, what: string, options: { json?: boolean; redacted?: boolean; token?: string } = {}): void {
  for (const [name, text] of [['stdout', result.stdout], ['stderr', result.stderr]] as const) {
    text.split('\n').forEach((line, i) => {
      const found = leaks(line, options.token ?? TOKEN);
      if (found.length > 0) throw new Error(`${what}: ${name} line ${i + 1} shows ${found.join(', ')} of the token:\n${line}`);
    });
  }
  if (options.json) {
    for (const line of result.stdout.split('\n').filter((l) => l !== '')) {
      expect(() => JSON.parse(line), `${what}: a --json line that is not JSON: ${line.slice(0, 300)}`).not.toThrow();
    }
  }
  if (options.redacted !== false) expect(`${result.stdout}${result.stderr}`, `${what}: nothing of the echo was shown`).toContain(REDACTED);
}

const ORDER = orderArgs();
const ACCOUNT = ['--account', 'Sim101'];
/** Every command that talks to the service, with what it needs; `json` when it has --json. */
const COMMANDS: Array<{ name: string; argv: string[]; json?: boolean }> = [
  { name: 'place', argv: ['place', ...ORDER], json: true },
  // --same-side: the echoing server's position is whatever it echoes; the reverse itself is under test.
  { name: 'reverse', argv: ['reverse', ...ORDER, '--same-side'], json: true },
  { name: 'reverse --invert', argv: ['reverse', '--invert', ...ACCOUNT, '--instrument', 'ES 09-25'], json: true },
  { name: 'cancel', argv: ['cancel', 'abc123', ...ACCOUNT], json: true },
  { name: 'cancel --all', argv: ['cancel', '--all', ...ACCOUNT], json: true },
  { name: 'modify', argv: ['modify', 'abc123', ...ACCOUNT, '--quantity', '2'], json: true },
  { name: 'replace', argv: ['replace', 'abc123', ...ORDER], json: true },
  { name: 'bracket', argv: ['bracket', ...ACCOUNT, '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--take-profit', '4510', '--stop-loss', '4490'], json: true },
  { name: 'close', argv: ['close', ...ACCOUNT, '--instrument', 'ES 09-25'], json: true },
  { name: 'close --strategy', argv: ['close', ...ACCOUNT, '--strategy', 'abc123'], json: true },
  { name: 'flatten', argv: ['flatten', ...ACCOUNT], json: true },
  { name: 'flatten --everything', argv: ['flatten', '--everything', '--yes'], json: true },
  { name: 'orders', argv: ['orders', ...ACCOUNT], json: true },
  { name: 'order', argv: ['order', 'abc123', ...ACCOUNT], json: true },
  { name: 'order --status', argv: ['order', 'abc123', ...ACCOUNT, '--status'], json: true },
  { name: 'order --lifecycle', argv: ['order', 'abc123', ...ACCOUNT, '--lifecycle'], json: true },
  { name: 'positions', argv: ['positions'], json: true },
  { name: 'positions --account', argv: ['positions', ...ACCOUNT], json: true },
  { name: 'position', argv: ['position', 'ES 09-25', ...ACCOUNT], json: true },
  { name: 'quote', argv: ['quote', 'ES 09-25', 'NQ 09-25'], json: true },
  { name: 'executions', argv: ['executions', ...ACCOUNT], json: true },
  { name: 'execution', argv: ['execution', 'exec1', ...ACCOUNT], json: true },
  { name: 'account', argv: ['account', 'Sim101'], json: true },
  { name: 'account --watermarks', argv: ['account', 'Sim101', '--watermarks'], json: true },
  { name: 'accounts', argv: ['accounts'], json: true },
  { name: 'accounts snapshot', argv: ['accounts', 'snapshot'], json: true },
];

const BATCH = [
  { api: 'PlaceOrder', id: 'a1', args: { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' } },
  { api: 'ReversePosition', id: 'a2', args: { account: 'Sim101', instrument: 'ES 09-25', action: 'SELL', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' } },
  { api: 'Cancel', id: 'a3', args: { account: 'Sim101', orderId: 'abc123' } },
  { api: 'GetOrders', id: 'a4', args: { account: 'Sim101' } },
  { api: 'GetOrder', id: 'a5', args: { account: 'Sim101', orderId: 'abc123' } },
  { api: 'GetPositions', id: 'a6', args: { account: 'Sim101' } },
  { api: 'GetAllPositions', id: 'a7', args: {} },
  { api: 'ClosePosition', id: 'a8', args: { account: 'Sim101', instrument: 'ES 09-25' } },
].map((line) => JSON.stringify(line)).join('\n');

/** The modes every command runs in: the data in three rotations, and refusals of each kind. */
const MODES = ['data-0', 'data-1', 'e400-mixA', 'e400-mixB', 'e401-mixC', 'e400-cut8at500', 'e500-cut39at500', 'd400-cutPct', 'e408-mixA'];
const BACKENDS = ['http', 'ws'] as const;

type Run = (argv: string[], env: Env) => Promise<CliResult>;

async function check(backend: 'http' | 'ws', mode: string, argv: string[], options: { json?: boolean; run?: Run; redacted?: boolean; token?: string } = {}) {
  const { env, key } = target(backend, mode, options.token);
  const result = await (options.run ?? runCli)(argv, env);
  const what = `${argv.join(' ')} on ${backend} (${mode}, exit ${result.code})`;
  expect(echo.got(key), `${what}: the server never got the token`).toBeGreaterThan(0);
  expectClean(result, what, options);
  return result;
}

describe('the echo server is a real threat', () => {
  it('sends the token in forms the leak check finds, and a plain redaction would miss', async () => {
    const { env } = target('http', 'data-0');
    await runCli(['orders', ...ACCOUNT, '--json'], env);
    for (const mode of MODES.filter((m) => !m.startsWith('data'))) await runCli(['place', ...ORDER], target('http', mode).env);
    expect(echo.sent.length).toBeGreaterThan(MODES.length - 3);
    for (const body of echo.sent) expect(leaks(body, TOKEN).length, body.slice(0, 200)).toBeGreaterThan(0);
    const { texts } = shapes(TOKEN);
    // Most shapes do not contain the token as it is: only a reader of every form finds them.
    expect(texts.filter((s) => !s.includes(TOKEN)).length).toBeGreaterThan(12);
  });
});

describe.concurrent.each(BACKENDS)('every command on %s against a server that echoes the token', (backend) => {
  it.each(MODES)('%s: no form of the token in any line, text or --json', async (mode) => {
    await pool(
      COMMANDS.flatMap((command) => [
        () => check(backend, mode, command.argv),
        ...(command.json ? [() => check(backend, mode, [...command.argv, '--json'], { json: true })] : []),
      ]),
    );
  });

  it.each(['data-0', 'data-1', 'e400-mixA', 'd400-mixC', 'd400-cutPct', 'e500-cut8at500'])('batch, %s: no form of the token in any result line, each one JSON', async (mode) => {
    const result = await check(backend, mode, ['batch', '-'], { json: true, run: withInput(BATCH) });
    expect(result.stdout.trim().split('\n')).toHaveLength(8);
  });

  it.each(['data-0', 'data-2', 'e400-mixB', 'e401-mixA', 'e400-cut8at200', 'e500-cut20at200', 'd400-cut39at200'])('doctor and doctor --json, %s', async (mode) => {
    // A probe that succeeds reports its timing, none of the reply: nothing there to redact.
    const redacted = !mode.startsWith('data');
    await check(backend, mode, ['doctor'], { redacted });
    await check(backend, mode, ['doctor', '--json'], { json: true, redacted });
  });

  it.each([
    ['quotes', ['watch', 'quotes', 'ES 09-25']],
    ['pnl', ['watch', 'pnl']],
    ['orders', ['watch', 'orders', ...ACCOUNT]],
  ])('watch %s: the first updates, then stopped; and a refused watch', async (_name, argv) => {
    for (const json of [false, true]) {
      const { env, key } = target(backend, 'quote-1');
      const watch = startBin([...argv, ...(json ? ['--json'] : [])], env);
      await watch.line(/./, { ms: 10_000 }).catch(async (error: unknown) => {
        await watch.stop('SIGKILL');
        throw error;
      });
      expect(await watch.stop('SIGINT')).toMatchObject({ code: 0 });
      expect(echo.got(key)).toBeGreaterThan(0);
      expectClean({ stdout: watch.lines().join('\n'), stderr: watch.stderr() }, `${argv.join(' ')} on ${backend}`, { json });
    }
    for (const mode of ['e400-mixA', 'd400-cut20at500']) await check(backend, mode, argv);
  });
});

describe.concurrent('a short token (under 8 characters)', () => {
  const SHORT = 'k3Y-7z';
  it.each(BACKENDS)('%s: redacted whole, in every form, wherever it is', async (backend) => {
    await pool(
      ['data-0', 'data-1', 'e400-mixA', 'e400-mixB', 'd400-mixC'].flatMap((mode) =>
        ['place', 'orders', 'order', 'positions', 'accounts'].flatMap((name) => {
          const { argv } = COMMANDS.find((c) => c.name === name)!;
          return [() => check(backend, mode, argv, { token: SHORT }), () => check(backend, mode, [...argv, '--json'], { json: true, token: SHORT })];
        }),
      ),
    );
  });
});

describe.concurrent('as a process, through the real bin', () => {
  it.each(BACKENDS)('%s: place, orders --json, batch, doctor --json', async (backend) => {
    await check(backend, 'data-0', ['place', ...ORDER], { run: runBin });
    await check(backend, 'data-2', ['orders', ...ACCOUNT, '--json'], { json: true, run: runBin });
    await check(backend, 'e400-mixC', ['place', ...ORDER, '--json'], { json: true, run: runBin });
    await check(backend, 'data-1', ['batch', '-'], { json: true, run: (argv, env) => runBin(argv, env, `${BATCH}\n`) });
    await check(backend, 'e400-cut8at200', ['doctor', '--json'], { json: true, run: runBin });
  });

  it('ws: a refused upgrade, and a close reason, that carry the token', async () => {
    await pool([
      ...['up401-mixA', 'up500-mixC', 'up500-cutPct'].flatMap((mode) => [
        () => check('ws', mode, ['place', ...ORDER], { run: runBin }),
        () => check('ws', mode, ['orders', ...ACCOUNT, '--json'], { json: true }),
        () => check('ws', mode, ['batch', '-'], { json: true, run: withInput(BATCH) }),
      ]),
      // Refused with 429 at the handshake: nothing was sent (a batch would wait and try again).
      () => check('ws', 'up429-cut20at500', ['place', ...ORDER]),
      () => check('ws', 'up429-mixB', ['orders', ...ACCOUNT, '--json'], { json: true }),
      // The close reason is shown when a stream is lost; an RPC cut off says only that it was.
      ...['close-short', 'close-mixA'].flatMap((mode) => [
        () => check('ws', mode, ['watch', 'quotes', 'ES 09-25']),
        () => check('ws', mode, ['watch', 'pnl', '--json'], { json: true }),
        () => check('ws', mode, ['place', ...ORDER], { redacted: false }),
      ]),
    ]);
  });
});

describe('trade serve --log', () => {
  afterEach(async () => {
    await killServes();
  });

  it('never writes its own token, however a request carries it', async () => {
    const served = tempHome();
    try {
      const serve = await startServe(served.env, TOKEN, { args: ['--log'] });
      const { named, ids } = shapes(TOKEN);
      const auth = { authorization: `Bearer ${TOKEN}` };
      const paths = [
        ...ids.map((form) => `/v1/api/accounts/${encodeURIComponent(form)}/orders`),
        `/v1/api/accounts/Sim101/orders/${named.pct}`,
        `/v1/api/accounts/Sim101/orders/${named.pctLower}/status`,
        `/v1/api/positions?token=${encodeURIComponent(TOKEN)}`,
        `/v1/api/positions?token=${named.pct}&zw=${encodeURIComponent(named.zw)}&j=${encodeURIComponent(named.joiners)}`,
        `/v1/api/nothing/${TOKEN}`,
        `/v1/api/nothing/${encodeURIComponent(named.bidi)}/${encodeURIComponent(named.ctrl)}`,
        `/${'x'.repeat(470)}${TOKEN}`,
      ];
      for (const path of paths) {
        for (const headers of [auth, {}]) await fetch(`${serve.url}${path}`, { headers }).then((r) => r.arrayBuffer());
      }
      // The WebSocket: the token as an id (clipped in the log), an api, inside args; and in the upgrade's path.
      const ws = new WsClient(`${serve.url.replace(/^http/, 'ws')}/ws/stream?t=${encodeURIComponent(TOKEN)}`, { headers: auth });
      await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
      const replies: unknown[] = [];
      ws.on('message', (raw) => replies.push(raw.toString()));
      const messages = [
        ...[...ids, named.zw, named.bidi, named.joiners].map((id) => ({ action: 'rpc', id, api: 'GetAllPositions', args: {} })),
        { action: 'rpc', id: `${'x'.repeat(20)}${TOKEN}`, api: 'GetAllPositions', args: {} },
        ...[TOKEN, named.zw, named.pct].map((api) => ({ action: 'rpc', id: 'api', api, args: {} })),
        { action: 'rpc', id: 'args', api: 'GetOrders', args: { account: TOKEN } },
      ];
      for (const m of messages) ws.send(JSON.stringify(m));
      ws.send(`${TOKEN} is not JSON`);
      await expect.poll(() => replies.length, { timeout: 5_000 }).toBe(messages.length);
      ws.close();
      await new Promise((resolve) => ws.once('close', resolve));
      const refused = new WsClient(`${serve.url.replace(/^http/, 'ws')}/ws/stream/${TOKEN}`);
      await new Promise((resolve) => refused.once('error', resolve).once('close', resolve));
      serve.child.kill('SIGTERM');
      await serve.exited;

      const log = serve.stderr();
      const lines = log.split('\n').filter((l) => /^\d{4}-\d\d-\d\dT/.test(l));
      expect(lines.length).toBeGreaterThan(paths.length * 2 + messages.length);
      log.split('\n').forEach((line) => expect(leaks(line, TOKEN), line).toEqual([]));
      expect(log).toContain(REDACTED);
      // A WebSocket id that is the token, clipped in the log, is redacted, not shown in part.
      expect(log).toMatch(/WS GetAllPositions id='\[redacted\]/);
    } finally {
      served.cleanup();
    }
  });
});

/** Runs the tasks, at most `limit` at a time (the CLI runs share this process with the server). */
async function pool(tasks: Array<() => Promise<unknown>>, limit = 6): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/** runCli with `input` on stdin (batch). */
function withInput(input: string): Run {
  return (argv, env) => {
    const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
    stdin.end(`${input}\n`);
    return runCli(argv, env, { stdin });
  };
}
