/**
 * `trade alert` on every backend: the same messages on `embedded`, and on `http` and `ws` against
 * `trade serve`, leave the same orders; on http and ws against the reference double (written
 * from the service's reference alone), in every answer shape it has, they work too. `--webhook`
 * posts the text as it is to the service's webhook (the double's, written from the webhook
 * reference), and reports the answer as received.
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, test } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { createEngine, type Engine, type OrderRecord } from '../../src/engine/engine.js';
import { runCli, tempHome } from '../helpers/cli.js';
import { type ReferenceDouble, SHAPES, startReferenceDouble } from '../helpers/reference-double.js';
import { startServer, TOKEN, type Harness } from '../server/harness.js';

const ES = 'ES 06-26';
const KEY = TOKEN;
const MESSAGES = [
  `key=${KEY}; command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=2; order_type=MARKET; tif=DAY; take_profit=10 ticks; stop_loss=-2 points;`,
  `key=${KEY}; command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=-1%; tif=GTC; order_id=dip-1;`,
  `key=${KEY}; command=CHANGE; account=Sim101; order_id=dip-1; limit_price=-12 ticks;`,
  `key=${KEY}; command=CLOSEPOSITION; account=Sim101; instrument=${ES}; quantity=1;`,
  `key=${KEY}; command=REVERSEPOSITION; account=Sim101; instrument=${ES}; action=SELL; qty=1; order_type=MARKET; tif=DAY;`,
  `key=${KEY}; command=CANCELORDERS; account=Sim101; instrument=${ES};`,
  `key=${KEY}; command=PLACE; account=Sim101; instrument=${ES}; action=SELL; qty=1; order_type=MARKET; tif=DAY; require_market_position=long;`,
].join('\n\n');

/** What an order is, without its ids and times (which differ from run to run). */
const shape = (o: OrderRecord) => [o.action, o.quantity, o.orderType, o.limitPrice ?? null, o.stopPrice ?? null, o.timeInForce, o.state, o.ocoId?.startsWith('br-') ? 'br-*' : (o.ocoId ?? null)];

let cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  cleanups = [];
});

async function viaServe(backend: 'http' | 'ws'): Promise<{ orders: unknown[]; code: number; stdout: string }> {
  const h: Harness = await startServer();
  cleanups.push(() => h.close());
  h.engine.setPrice(ES, 5000);
  const home = tempHome();
  cleanups.push(home.cleanup);
  const env: Env = { ...home.env, TRADE_BACKEND: backend, TRADE_BASE_URL: `${h.url}/v1/api`, TRADE_TOKEN: TOKEN };
  const result = await runCli(['alert', '-', '--json'], env, { stdin: stdin(MESSAGES) });
  return { orders: h.engine.listOrders({}).map(shape), code: result.code, stdout: result.stdout };
}

function stdin(text: string) {
  const stream = new PassThrough();
  stream.end(text);
  return stream;
}

describe('the same messages on every backend leave the same orders', () => {
  test('embedded, and http and ws against trade serve', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    expect((await runCli(['price', 'set', ES, '5000'], home.env)).code).toBe(0);
    const embedded = await runCli(['alert', '-', '--json'], home.env, { stdin: stdin(MESSAGES) });
    const engine: Engine = createEngine(join(home.env.TRADE_HOME!, 'trade.db'));
    const expected = engine.listOrders({}).map(shape);
    engine.close();
    // The last message is blocked (the position is short by then): exit 1, the rest carried out.
    expect(embedded.code).toBe(1);
    expect(expected).toEqual([
      ['BUY', 2, 'MARKET', null, null, 'DAY', 'FILLED', null],
      ['SELL', 2, 'LIMIT', 5002.5, null, 'GTC', 'CANCELLED', 'br-*'],
      ['SELL', 2, 'STOPMARKET', null, 4998, 'GTC', 'CANCELLED', 'br-*'],
      // Placed at -1% (4950), changed to -12 ticks from the last price (4997), cancelled by CANCELORDERS.
      ['BUY', 1, 'LIMIT', 4997, null, 'GTC', 'CANCELLED', null],
      ['SELL', 1, 'MARKET', null, null, 'DAY', 'FILLED', null],
      ['SELL', 1, 'MARKET', null, null, 'DAY', 'FILLED', null],
      ['SELL', 1, 'MARKET', null, null, 'DAY', 'FILLED', null],
    ]);
    for (const backend of ['http', 'ws'] as const) {
      const served = await viaServe(backend);
      expect({ backend, orders: served.orders, code: served.code }).toEqual({ backend, orders: expected, code: 1 });
      expect(served.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { status: string }).status)).toEqual(
        embedded.stdout.trim().split('\n').map((l) => (JSON.parse(l) as { status: string }).status),
      );
    }
  });
});

describe.each(['http', 'ws'] as const)('trade alert --backend %s against the reference double', (backend) => {
  describe.each(SHAPES)('answering with %s', (_, options) => {
    test('a bracketed market entry, a relative limit, a close: each call as the reference documents it', async () => {
      const double: ReferenceDouble = await startReferenceDouble({ prices: { [ES]: 5000 }, ...options });
      cleanups.push(() => double.close());
      const home = tempHome();
      cleanups.push(home.cleanup);
      const env: Env = { ...home.env, TRADE_BACKEND: backend, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token };
      const key = double.token;
      const place = await runCli(['alert', `key=${key}; command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=MARKET; tif=DAY; take_profit=4 ticks; stop_loss=-4 ticks;`], env);
      expect({ code: place.code, stderr: place.stderr }).toEqual({ code: 0, stderr: '' });
      const limit = await runCli(['alert', `key=${key}; command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=-2%; tif=GTC;`], env);
      expect(limit.code).toBe(0);
      const close = await runCli(['alert', `key=${key}; command=CLOSEPOSITION; account=Sim101; instrument=${ES};`], env);
      expect(close.code).toBe(0);
      const placed = double.requests.filter((r) => r.api === 'PlaceOrder' && r.status === 200).map((r) => [r.args.action, r.args.orderType, r.args.limitPrice, r.args.stopPrice, r.args.ocoId === undefined ? null : 'oco']);
      const [buy, sell] = backend === 'ws' ? ['Buy', 'Sell'] : ['BUY', 'SELL'];
      expect(placed.map((p) => [String(p[0]).toUpperCase(), String(p[1]).toUpperCase(), p[2] ?? null, p[3] ?? null, p[4]])).toEqual([
        [buy!.toUpperCase(), 'MARKET', null, null, null],
        [sell!.toUpperCase(), 'LIMIT', 5001, null, 'oco'],
        [sell!.toUpperCase(), 'STOPMARKET', null, 4999, 'oco'],
        [buy!.toUpperCase(), 'LIMIT', 4900, null, null],
      ]);
      expect(double.requests.some((r) => r.api === 'ClosePosition' && r.status === 200)).toBe(true);
      // The key is the token: never printed.
      expect(place.stdout + limit.stdout + close.stdout).not.toContain(key);
    });
  });
});

describe('trade alert --webhook', () => {
  async function start(webhookAnswer?: { status: number; body: string }) {
    const double = await startReferenceDouble({ prices: { [ES]: 5000 }, ...(webhookAnswer ? { webhookAnswer } : {}) });
    cleanups.push(() => double.close());
    const home = tempHome();
    cleanups.push(home.cleanup);
    const env: Env = { ...home.env, TRADE_WEBHOOK_URL: double.webhookUrl };
    return { double, env, key: double.token };
  }

  test('posts the text as it is, text/plain and no Authorization header; the answer is received, not executed', async () => {
    const { double, env, key } = await start();
    const message = `key=${key};\ncommand=PLACE;\naccount=Sim101;\ninstrument=ES1!;\naction=BUY;\nqty=1;\norder_type=MARKET;\ntif=DAY;\nstrategy_tag=ORB;\n`;
    const result = await runCli(['alert', '--webhook', message], env);
    expect(result).toEqual({
      code: 0,
      stdout:
        'received by the webhook (HTTP 200): Alert received\n' +
        "  received is not executed: check trade orders, trade positions or the service's Alert History for what it did\n",
      stderr: '',
    });
    expect(double.webhookMessages).toEqual([{ status: 200, contentType: 'text/plain; charset=utf-8', authorization: undefined, text: message }]);
    // Nothing went to the API: the service's webhook does it all.
    expect(double.requests).toEqual([]);
  });

  test('the URL is a credential: never printed whole, not even by trade config', async () => {
    const { double, env } = await start();
    const shown = await runCli(['config', 'get', 'webhook-url'], env);
    expect(shown).toEqual({ code: 0, stdout: `${double.url}/v1/send/…\n`, stderr: '' });
    const secret = double.webhookUrl.split('/').pop()!;
    const list = await runCli(['config', 'list', '--json'], env);
    expect(list.stdout).not.toContain(secret);
    expect(JSON.parse(list.stdout).values['webhook-url']).toEqual({ value: `${double.url}/v1/send/…`, source: 'env' });
  });

  test('a wrong key: refused (401) → exit 3; a message without a key or in JSON is not sent (exit 2)', async () => {
    const { double, env, key } = await start();
    const wrong = await runCli(['alert', '--webhook', 'key=not-the-key-at-all; command=FLATTENEVERYTHING;'], env);
    expect(wrong).toMatchObject({ code: 3, stderr: expect.stringContaining('refused by the webhook (HTTP 401): invalid_secret_key') });
    expect(await runCli(['alert', '--webhook', 'command=FLATTENEVERYTHING;'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('the message has no key=') });
    expect(await runCli(['alert', '--webhook', JSON.stringify({ key, command: 'PLACE' })], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('invalid_format: the webhook takes key=value; text, not JSON') });
    expect(double.webhookMessages.map((m) => m.status)).toEqual([401]);
  });

  test('a 5xx: the outcome is unknown (exit 4), and the messages after it are not sent', async () => {
    const { double, env, key } = await start({ status: 502, body: 'Bad Gateway' });
    const two = `key=${key}; command=FLATTENEVERYTHING;\n\nkey=${key}; command=CANCELALLORDERS;`;
    const result = await runCli(['alert', '--webhook', '-'], env, { stdin: stdin(two) });
    expect(result.code).toBe(4);
    expect(result.stderr).toContain('Error: alert 1: the webhook answered 502: the alert may have been acted on; the 1 after it were not sent');
    expect(double.webhookMessages).toHaveLength(1);
  });

  test('no webhook-url: exit 3 saying how to set it', async () => {
    const home = tempHome();
    cleanups.push(home.cleanup);
    expect(await runCli(['alert', '--webhook', `key=${KEY}; command=FLATTENEVERYTHING;`], home.env)).toEqual({
      code: 3,
      stdout: '',
      stderr: "Error: No webhook URL is set: trade alert --webhook posts to the service's webhook URL.\n  Set it with `trade config set webhook-url https://…/v1/send/ID/SECRET` (or TRADE_WEBHOOK_URL).\n",
    });
  });

  test('against trade serve: the webhook runs it, and the reply says what it did', async () => {
    const h = await startServer({ webhook: { id: 'tv', secret: 'serve-secret-1' } });
    cleanups.push(() => h.close());
    h.engine.setPrice(ES, 5000);
    const home = tempHome();
    cleanups.push(home.cleanup);
    const env: Env = { ...home.env, TRADE_WEBHOOK_URL: `${h.url}${h.server.webhook.path}` };
    const result = await runCli(['alert', '--webhook', `key=${TOKEN}; command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=MARKET; tif=DAY; strategy_tag=ORB;`], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^received by the webhook \(HTTP 200\): \{"success":true,"alertId":"[0-9a-f]{32}","status":"success","command":"PLACE"/);
    expect(h.engine.getPosition('Sim101', ES)?.quantity).toBe(1);
  });
});
