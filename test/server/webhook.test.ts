/**
 * `trade serve`'s TradingView webhook (webhook-reference.md §1, §3, §4, §6.2), over plain HTTP as
 * TradingView sends it (`text/plain`, no Authorization header), judged by the orders and
 * positions the engine holds afterwards. A test clock stands in for the minutes of cancel_after
 * and the rate limit; delay=2 runs for real.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { HistoryRow } from '../../src/alerts/store.js';
import { startServer, TOKEN, AUTH, type Harness } from './harness.js';
import { runCli, tempHome } from '../helpers/cli.js';

const ID = 'tv';
const SECRET = 'a1b2c3d4e5f6g7h8';
const PATH = `/v1/send/${ID}/${SECRET}`;
const ES = 'ES 09-26';
/** Monday 15 June 2026, 10:00 in New York. */
const START = Date.parse('2026-06-15T14:00:00Z');

let clock = START;
let h: Harness;

beforeAll(async () => {
  h = await startServer({ webhook: { id: ID, secret: SECRET }, webhookSweepMs: 0 }, { now: () => new Date(clock) });
});
afterAll(() => h.close());
beforeEach(async () => {
  clock = START;
  expect((await h.post('/_sandbox/reset', {})).status).toBe(200);
  await h.http('DELETE', '/_sandbox/log');
  h.engine.addAccount('Sim102');
  h.engine.setPrice(ES, 6000);
});

const TEXT = { 'content-type': 'text/plain' };
const send = (text: string, headers: Record<string, string> = TEXT) => h.http('POST', PATH, { body: text, headers });
const msg = (fields: string) => `key=${TOKEN};\n${fields}`;
const BUY = (extra = '', account = 'Sim101') =>
  msg(`command=PLACE; account=${account}; instrument=${ES}; action=BUY; qty=1; order_type=MARKET; tif=DAY; ${extra}`);

interface Reply {
  success: boolean;
  alertId: string;
  status: string;
  command: string;
  results: Array<{ account: string; status: string; orderIds: string[]; error?: string; detail?: string }>;
  warning?: string;
  error?: string;
  detail?: string;
}
const ok = async (text: string) => {
  const reply = await send(text);
  expect(reply.status).toBe(200);
  return reply.body as Reply;
};

const orders = (account = 'Sim101') =>
  h.engine.listOrders({ account }).map((o) => ({ action: o.action, quantity: o.quantity, type: o.orderType, limit: o.limitPrice, stop: o.stopPrice, tif: o.timeInForce, state: o.state, oco: o.ocoId }));
const position = (account = 'Sim101') => h.engine.getPosition(account, ES)?.quantity ?? 0;
const history = async (query = '') => ((await h.get(`/_sandbox/alerts${query}`)).body as { alerts: HistoryRow[] }).alerts;

describe('the route (§1)', () => {
  test('a message as TradingView posts it places the order: 200 with the §1.3 body', async () => {
    const reply = await ok(BUY());
    expect(reply).toEqual({
      success: true,
      alertId: expect.stringMatching(/^[0-9a-f]{32}$/),
      status: 'success',
      command: 'PLACE',
      results: [{ account: 'Sim101', status: 'success', orderIds: [expect.stringMatching(/^[0-9a-f]{32}$/)] }],
    });
    expect(orders()).toEqual([{ action: 'BUY', quantity: 1, type: 'MARKET', limit: undefined, stop: undefined, tif: 'DAY', state: 'FILLED', oco: undefined }]);
    expect(position()).toBe(1);
  });

  test('any content type, or none: the text is the message', async () => {
    await ok(BUY());
    expect((await send(BUY(), { 'content-type': 'application/json' })).status).toBe(200);
    expect((await send(BUY(), {})).status).toBe(200);
    expect(position()).toBe(3);
  });

  test('another id or secret, or another path under /v1/send: 404; another method: 405', async () => {
    expect(await h.http('POST', `/v1/send/${ID}/wrongsecret1`, { body: BUY(), headers: TEXT })).toMatchObject({ status: 404, body: { success: false, error: 'not_found' } });
    expect(await h.http('POST', `/v1/send/other/${SECRET}`, { body: BUY(), headers: TEXT })).toMatchObject({ status: 404, body: { success: false, error: 'not_found' } });
    expect(await h.http('POST', `/v1/send/${ID}`, { body: BUY(), headers: TEXT })).toMatchObject({ status: 404, body: { success: false, error: 'not_found' } });
    expect(await h.http('GET', PATH, { headers: {} })).toMatchObject({ status: 405, body: { success: false, error: 'method_not_allowed' } });
    expect(position()).toBe(0);
    expect(await history()).toEqual([]);
  });

  test('a wrong or missing key: 401, and a failed row with the key redacted; nothing placed', async () => {
    const wrong = BUY().replace(`key=${TOKEN}`, 'key=not-the-token-123');
    expect(await send(wrong)).toMatchObject({ status: 401, body: { success: false, error: 'invalid_secret_key' } });
    expect(await send(BUY().replace(`key=${TOKEN};`, ''))).toMatchObject({ status: 401, body: { success: false, error: 'invalid_secret_key' } });
    expect(position()).toBe(0);
    const rows = await history();
    expect(rows.map((r) => [r.status, r.error, r.command, r.account])).toEqual([
      ['failed', 'invalid_secret_key', 'PLACE', 'Sim101'],
      ['failed', 'invalid_secret_key', 'PLACE', 'Sim101'],
    ]);
    expect(rows[0]!.raw).toBe(wrong.replace('key=not-the-token-123', 'key=***'));
    expect(JSON.stringify(rows)).not.toContain('not-the-token-123');
    // The request log keeps it redacted too.
    const log = (await h.get('/_sandbox/log?operation=Webhook')).body as { entries: Array<{ body: string; status: number }> };
    expect(log.entries.map((e) => e.status)).toEqual([401, 401]);
    expect(log.entries[0]!.body).toContain('key=***');
    expect(JSON.stringify(log)).not.toContain('not-the-token-123');
  });

  test('a JSON body: 400 invalid_format, nothing placed', async () => {
    const reply = await send(JSON.stringify({ key: TOKEN, command: 'PLACE', account: 'Sim101' }), { 'content-type': 'application/json' });
    expect(reply).toMatchObject({ status: 400, body: { success: false, error: 'invalid_format', detail: 'the webhook takes key=value; text, not JSON' } });
    expect(position()).toBe(0);
    expect((await history()).map((r) => r.error)).toEqual(['invalid_format']);
  });

  test('a body over 64 KiB: 413', async () => {
    expect((await send(`${BUY()} notes=${'x'.repeat(70_000)};`)).status).toBe(413);
  });

  test('the key never comes back: the token is not in a reply, a row or the log', async () => {
    await ok(BUY('flatten_first=maybe;'));
    const everything = JSON.stringify([await history(), (await h.get('/_sandbox/log')).body]);
    expect(everything).not.toContain(TOKEN);
  });

  test('a scenario rule on operation Webhook fires for webhook requests', async () => {
    await h.post('/_sandbox/rules', { operation: 'Webhook', effect: 'status 500', times: 1 });
    expect(await send(BUY())).toMatchObject({ status: 500, body: { success: false, error: 'internal_error' } });
    expect(position()).toBe(0);
    await ok(BUY());
    expect(position()).toBe(1);
    await h.http('DELETE', '/_sandbox/rules');
  });
});

describe('a message that parsed: 200, success telling whether it was carried out', () => {
  test('missing field, unknown command, bad value', async () => {
    expect(await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=BUY; order_type=MARKET; tif=DAY;`))).toMatchObject({
      success: false,
      status: 'failed',
      error: 'missing_field',
      detail: 'Check message format, missing required field: QTY',
      results: [],
    });
    expect(await ok(msg('command=PLACEE;'))).toMatchObject({ success: false, error: 'unknown_command', detail: "Unknown command 'PLACEE'" });
    expect(await ok(BUY('delay=75;'))).toMatchObject({ success: false, error: 'invalid_value', detail: 'delay: 75 is more than 60 seconds' });
    expect(position()).toBe(0);
  });

  test('an unknown account fails its own clone only', async () => {
    const reply = await ok(BUY('', 'Sim101,Sim999'));
    expect(reply.results).toEqual([
      { account: 'Sim101', status: 'success', orderIds: [expect.any(String)] },
      { account: 'Sim999', status: 'failed', orderIds: [], error: 'unknown_account', detail: 'Account Sim999 not found' },
    ]);
    expect(reply.success).toBe(false);
    expect(position()).toBe(1);
  });

  test('repeated and unknown fields: a warning, and the row lists what was ignored', async () => {
    const reply = await ok(BUY('qty=2; open=6001; timeframe=5;'));
    expect(reply).toMatchObject({ success: true, status: 'warning', warning: "field 'qty' given twice; the last value was used" });
    expect(position()).toBe(2);
    expect((await history())[0]).toMatchObject({ status: 'success', ignoredFields: ['open', 'timeframe'], command: 'PLACE', account: 'Sim101', instrument: ES });
  });
});

describe('commands (§3)', () => {
  test('FLATPLACE and flatten_first: cancel, close, place', async () => {
    await ok(BUY('', 'Sim101'));
    await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=5990; tif=GTC;`));
    await ok(msg(`command=FLATPLACE; account=Sim101; instrument=${ES}; action=SELL; qty=2; order_type=MARKET; tif=DAY;`));
    expect(position()).toBe(-2);
    expect(h.engine.listOrders({ account: 'Sim101', activeOnly: true })).toEqual([]);
    await ok(BUY('flatten_first=true;'));
    expect(position()).toBe(1);
  });

  test('CLOSEPOSITION by percent rounds up; flat is a warning', async () => {
    await ok(BUY().replace('qty=1', 'qty=3'));
    await ok(msg(`command=CLOSEPOSITION; account=Sim101; instrument=${ES}; percent=0.5;`));
    expect(position()).toBe(1);
    await ok(msg(`command=closeposition; account=Sim101; instrument=${ES};`));
    expect(position()).toBe(0);
    expect(await ok(msg(`command=CLOSEPOSITION; account=Sim101; instrument=${ES};`))).toMatchObject({
      success: true,
      status: 'warning',
      results: [{ status: 'warning', detail: `No positions found for instrument '${ES}'` }],
    });
  });

  test('REVERSE and REVERSEPOSITION; flat is a warning and nothing is placed', async () => {
    expect(await ok(msg(`command=REVERSE; account=Sim101; instrument=${ES};`))).toMatchObject({
      status: 'warning',
      results: [{ detail: `No position found for instrument '${ES}' in account 'Sim101'; nothing done` }],
    });
    await ok(BUY().replace('qty=1', 'qty=2'));
    await ok(msg(`command=REVERSE; account=Sim101; instrument=${ES};`));
    expect(position()).toBe(-2);
    await ok(msg(`command=REVERSEPOSITION; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=MARKET; tif=DAY;`));
    expect(position()).toBe(1);
  });

  test('FLATTEN by account and side, FLATTENEVERYTHING', async () => {
    await ok(BUY('', 'Sim101,Sim102'));
    h.engine.setPrice('NQ 09-26', 21000);
    await ok(msg('command=PLACE; account=Sim101; instrument=NQ 09-26; action=SELL; qty=1; order_type=MARKET; tif=DAY;'));
    await ok(msg('command=FLATTEN; account=Sim101; market_position=short;'));
    expect(h.engine.listPositions().map((p) => [p.account, p.instrument, p.quantity])).toEqual([
      ['Sim101', ES, 1],
      ['Sim102', ES, 1],
    ]);
    expect(await ok(msg('command=FLATTEN; account=Sim101; market_position=short;'))).toMatchObject({ status: 'warning', results: [{ detail: 'No positions to flatten' }] });
    await ok(msg('command=FLATTENEVERYTHING;'));
    expect(h.engine.listPositions()).toEqual([]);
  });

  test('CANCEL and CHANGE find the order in its account; CANCELORDERS, CANCELALLORDERS', async () => {
    const limit = (id: string, account = 'Sim101') =>
      msg(`command=PLACE; account=${account}; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=5990; tif=GTC; order_id=${id};`);
    await ok(limit('mine-1', 'Sim102'));
    await ok(msg('command=CHANGE; order_id=mine-1; limit_price=-12 ticks; qty=2;'));
    expect(orders('Sim102')).toEqual([{ action: 'BUY', quantity: 2, type: 'LIMIT', limit: 5997, stop: undefined, tif: 'GTC', state: 'WORKING', oco: undefined }]);
    expect(h.engine.getOrder('mine-1', 'Sim102')?.limitPriceChanged).toBe(5997);
    await ok(msg('command=CANCEL; order_id=mine-1;'));
    expect(h.engine.getOrder('mine-1', 'Sim102')?.state).toBe('CANCELLED');
    expect(await ok(msg('command=CANCEL; order_id=nobody;'))).toMatchObject({
      success: false,
      results: [{ error: 'order_not_found', detail: "Order linked to 'nobody' not found or already terminal." }],
    });
    await ok(limit('a'));
    await ok(limit('b', 'Sim102'));
    const cancelled = await ok(msg('command=CANCELORDERS; account=Sim101;'));
    expect(cancelled.results[0]!.orderIds).toEqual(['a']);
    await ok(msg('command=CANCELALLORDERS;'));
    expect(h.engine.listOrders({ activeOnly: true })).toEqual([]);
  });

  test('ATM strategies: CANCEL and CHANGE by the order names of a strategy_id; CLOSESTRATEGY finds its account', async () => {
    h.engine.addAtmTemplate({ name: 'Scalp', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 });
    const entry = await ok(BUY('strategy=Scalp;', 'Sim102'));
    const strategyId = entry.results[0]!.orderIds[0]!;
    const working = () => h.engine.listOrders({ account: 'Sim102', activeOnly: true }).map((o) => [o.orderType, o.stopPrice ?? o.limitPrice]);
    expect(working()).toEqual([
      ['STOPMARKET', 5998],
      ['LIMIT', 6004],
    ]);
    await ok(msg(`command=CHANGE; strategy_id=${strategyId}; order_id=STOP1; stop_price=-4 ticks;`));
    expect(working()).toEqual([
      ['STOPMARKET', 5999],
      ['LIMIT', 6004],
    ]);
    expect(await ok(msg(`command=CLOSESTRATEGY; strategy_id=${strategyId};`))).toMatchObject({ success: true, results: [{ account: 'Sim102', status: 'success' }] });
    expect([position('Sim102'), working()]).toEqual([0, []]);
    expect(await ok(msg(`command=CLOSESTRATEGY; strategy_id=${strategyId};`))).toMatchObject({
      success: false,
      results: [{ error: 'rejected', detail: `Invalid request: strategyId: no active strategy '${strategyId}'` }],
    });
    // Cancelling one leg of the strategy's OCO pair cancels the other (REST Cancel).
    const second = (await ok(BUY('strategy=Scalp;', 'Sim102'))).results[0]!.orderIds[0]!;
    expect(await ok(msg(`command=CANCEL; strategy_id=${second}; order_id=TARGET1;`))).toMatchObject({ success: true, results: [{ account: 'Sim102' }] });
    expect(working()).toEqual([]);
  });

  test('CANCELREPLACE places only after the cancel; CANCELANDBRACKET protects the position', async () => {
    await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=5990; tif=GTC; order_id=old;`));
    await ok(msg(`command=CANCELREPLACE; order_id=old; account=Sim101; instrument=${ES}; action=BUY; qty=2; order_type=LIMIT; limit_price=5995; tif=GTC;`));
    expect(orders().map((o) => [o.quantity, o.limit, o.state])).toEqual([
      [1, 5990, 'CANCELLED'],
      [2, 5995, 'WORKING'],
    ]);
    expect(await ok(msg(`command=CANCELREPLACE; order_id=old; account=Sim101; instrument=${ES}; action=BUY; qty=2; order_type=MARKET; tif=DAY;`))).toMatchObject({
      success: false,
      results: [{ error: 'order_not_found' }],
    });
    expect(position()).toBe(0);
    await ok(BUY().replace('qty=1', 'qty=3'));
    await ok(msg(`command=CANCELANDBRACKET; account=Sim101; instrument=${ES}; action=BUY; qty=5; take_profit=12 ticks; stop_loss=5990;`));
    expect(h.engine.listOrders({ account: 'Sim101', activeOnly: true }).map((o) => [o.action, o.quantity, o.orderType, o.limitPrice ?? o.stopPrice])).toEqual([
      ['SELL', 3, 'LIMIT', 6003],
      ['SELL', 3, 'STOPMARKET', 5990],
    ]);
  });
});

describe('options (§4)', () => {
  test('a bracket in ticks lands at the right prices: an OCO pair, GTC, opposite side', async () => {
    const reply = await ok(BUY('take_profit=8 ticks; stop_loss=-6 ticks;'));
    expect(reply.results[0]!.orderIds).toHaveLength(3);
    expect(orders()).toEqual([
      { action: 'BUY', quantity: 1, type: 'MARKET', limit: undefined, stop: undefined, tif: 'DAY', state: 'FILLED', oco: undefined },
      { action: 'SELL', quantity: 1, type: 'LIMIT', limit: 6002, stop: undefined, tif: 'GTC', state: 'WORKING', oco: `br-${reply.alertId}` },
      { action: 'SELL', quantity: 1, type: 'STOPMARKET', limit: undefined, stop: 5998.5, tif: 'GTC', state: 'WORKING', oco: `br-${reply.alertId}` },
    ]);
    // The take-profit fills; its OCO sibling goes.
    h.engine.setPrice(ES, 6002);
    expect(position()).toBe(0);
    expect(orders().map((o) => o.state)).toEqual(['FILLED', 'FILLED', 'CANCELLED']);
  });

  test('brackets in percent, points and dollars; a stop-limit stop-loss; the wrong side is refused', async () => {
    await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=SELL; qty=2; order_type=MARKET; tif=DAY; take_profit=-0.5%; stop_loss_limit=+$250; stop_loss_stop=4 points;`));
    expect(orders().slice(1).map((o) => [o.action, o.quantity, o.type, o.limit, o.stop])).toEqual([
      ['BUY', 2, 'LIMIT', 5970, undefined],
      ['BUY', 2, 'STOPLIMIT', 6005, 6004],
    ]);
    expect(await ok(BUY('take_profit=5990;'))).toMatchObject({ success: false, results: [{ error: 'invalid_value', detail: expect.stringContaining('take_profit: 5990 is on the wrong side of the BUY entry at 6000') }] });
    expect(position()).toBe(-2);
  });

  test('a bracket on a limit entry waits for the fill and is worked out from the fill price', async () => {
    await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=-8 ticks; tif=DAY; take_profit=10 ticks;`));
    expect(orders().map((o) => [o.type, o.limit, o.state])).toEqual([['LIMIT', 5998, 'WORKING']]);
    await h.server.webhook.sweep();
    expect(orders()).toHaveLength(1);
    h.engine.setPrice(ES, 5997);
    await h.server.webhook.sweep();
    expect(orders().map((o) => [o.action, o.type, o.limit, o.state])).toEqual([
      ['BUY', 'LIMIT', 5998, 'FILLED'],
      ['SELL', 'LIMIT', 6000.5, 'WORKING'],
    ]);
  });

  test('require_market_position=flat blocks when long', async () => {
    await ok(BUY());
    const reply = await ok(BUY('require_market_position=flat;'));
    expect(reply).toMatchObject({
      success: false,
      status: 'failed',
      results: [{ account: 'Sim101', status: 'failed', error: 'market_position_blocked', detail: `Market position requirement not met: ${ES} in account 'Sim101' is Long; required flat` }],
    });
    expect(position()).toBe(1);
    await ok(msg(`command=CLOSEPOSITION; account=Sim101; instrument=${ES}; require_market_position=flat/short;`));
    expect(position()).toBe(1);
    await ok(BUY('require_market_position=long,flat;'));
    expect(position()).toBe(2);
  });

  test('max_positions blocks a new instrument, not an addition', async () => {
    h.engine.setPrice('NQ 09-26', 21000);
    await ok(BUY());
    expect(await ok(msg('command=PLACE; account=Sim101; instrument=NQ 09-26; action=BUY; qty=1; order_type=MARKET; tif=DAY; max_positions=1;'))).toMatchObject({
      results: [{ error: 'max_positions_reached', detail: "Max positions reached: account 'Sim101' has 1 open positions; maxPositions is 1" }],
    });
    await ok(BUY('max_positions=1;'));
    expect(position()).toBe(2);
  });

  test('cancel_after=1 cancels an unfilled limit after a minute', async () => {
    await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=5990; tif=DAY; cancel_after=1;`));
    clock += 59_000;
    await h.server.webhook.sweep();
    expect(orders().map((o) => o.state)).toEqual(['WORKING']);
    clock += 1_000;
    await h.server.webhook.sweep();
    expect(orders().map((o) => o.state)).toEqual(['CANCELLED']);
    // One that fills in time is left alone.
    await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=5990; tif=DAY; cancel_after=1;`));
    h.engine.setPrice(ES, 5990);
    clock += 60_000;
    await h.server.webhook.sweep();
    expect(orders().map((o) => o.state)).toEqual(['CANCELLED', 'FILLED']);
  });

  test('a rate limit refuses the fourth alert of three per minute, and lets one through a minute later', async () => {
    const limited = BUY('rate_limit=3/60; id=orb;');
    for (let i = 0; i < 3; i++) expect((await ok(limited)).success).toBe(true);
    expect(await ok(limited)).toMatchObject({
      success: false,
      error: 'rate_limited',
      detail: "Rate limit for id 'orb' reached: 3 per 60 s",
      results: [{ account: 'Sim101', status: 'failed', error: 'rate_limited' }],
    });
    expect(position()).toBe(3);
    // Another id counts apart.
    expect((await ok(BUY('rate_limit=3/60; id=other;'))).success).toBe(true);
    clock += 60_001;
    expect((await ok(limited)).success).toBe(true);
    expect(position()).toBe(5);
  });

  test('the kill switch blocks every alert until it is turned off', async () => {
    expect(await ok(msg('kill_switch=on;'))).toMatchObject({ success: true, status: 'success', command: 'KILL_SWITCH' });
    expect(await ok(BUY())).toMatchObject({ success: false, error: 'kill_switch_on', detail: 'Kill switch is on; alert not processed' });
    expect(await ok(msg('command=FLATTENEVERYTHING;'))).toMatchObject({ success: false, error: 'kill_switch_on' });
    // Even a message that would fail its own checks is answered with the switch first (§5).
    expect(await ok(msg('command=PLACEE;'))).toMatchObject({ error: 'kill_switch_on' });
    expect(position()).toBe(0);
    expect(await send(`${msg('kill_switch=on;')} command=PLACE;`)).toMatchObject({ status: 400, body: { error: 'invalid_format' } });
    await ok(msg('kill_switch=off;'));
    expect((await ok(BUY())).success).toBe(true);
    expect(position()).toBe(1);
  });

  test('delay=2 answers pending at once and places two seconds later', async () => {
    const sent = performance.now();
    const reply = await ok(BUY('delay=2;'));
    // Answered before the order: nothing placed yet, the reply says pending (no wall-clock bound on a busy machine).
    expect(reply).toMatchObject({ success: true, status: 'pending', command: 'PLACE', results: [] });
    expect(position()).toBe(0);
    expect((await history()).map((r) => [r.id, r.status])).toEqual([[reply.alertId, 'pending']]);
    await h.server.webhook.idle();
    expect(performance.now() - sent).toBeGreaterThanOrEqual(2_000);
    expect(position()).toBe(1);
    expect((await history()).map((r) => [r.id, r.status, r.orderIds.length])).toEqual([[reply.alertId, 'success', 1]]);
  });

  test('trading windows: outside blocked, inside placed, bypass_trade_windows passes, closing only lets exits through', async () => {
    expect(await ok(BUY('start_time=9:30 AM; end_time=9:45 AM;'))).toMatchObject({
      success: false,
      error: 'outside_trade_window',
      detail: 'Outside trading window 09:30–09:45 ET',
    });
    expect(position()).toBe(0);
    await ok(BUY('start_time=9:30 AM; end_time=4:00 PM;'));
    await ok(BUY('start_time=9:30; end_time=9:45; bypass_trade_windows=TRUE;'));
    expect(position()).toBe(2);
    const closingOnly = 'start_time=9:00 AM; end_time=4:00 PM; closing_only_after=9:50 AM;';
    expect(await ok(BUY(closingOnly))).toMatchObject({ success: false, results: [{ error: 'outside_trade_window', detail: 'Closing only after 09:50 ET: opening orders blocked' }] });
    await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=SELL; qty=1; order_type=MARKET; tif=DAY; ${closingOnly}`));
    expect(position()).toBe(1);
    // flatten_first runs its close, then its order is blocked.
    expect(await ok(BUY(`flatten_first=true; ${closingOnly}`))).toMatchObject({ success: false, results: [{ error: 'outside_trade_window' }] });
    expect(position()).toBe(0);
  });

  test('multi-account: one clone per account, one row each sharing the multi-account id', async () => {
    const reply = await ok(BUY('', 'Sim101, sim102'));
    expect(reply.results.map((r) => [r.account, r.status])).toEqual([
      ['Sim101', 'success'],
      ['Sim102', 'success'],
    ]);
    expect([position('Sim101'), position('Sim102')]).toEqual([1, 1]);
    const rows = await history();
    expect(rows.map((r) => [r.account, r.multiAccountId])).toEqual([
      ['Sim101', reply.alertId],
      ['Sim102', reply.alertId],
    ]);
    expect(new Set(rows.map((r) => r.id)).size).toBe(2);
  });

  test('strategy lock: the tag owns the instrument until it is flat with no working orders', async () => {
    await ok(BUY('strategy_tag=ORB;'));
    expect(await ok(BUY('strategy_tag=VWAP;'))).toMatchObject({
      success: false,
      results: [{ error: 'strategy_locked', detail: `Trade blocked: ${ES} is managed by strategy 'ORB'` }],
    });
    expect(await ok(msg(`command=CLOSEPOSITION; account=Sim101; instrument=${ES};`))).toMatchObject({ results: [{ error: 'strategy_locked' }] });
    await ok(msg(`command=CLOSEPOSITION; account=Sim101; instrument=${ES}; strategy_tag=ORB;`));
    expect(position()).toBe(0);
    // Flat with nothing working: the lock is let go, and VWAP takes it.
    await ok(BUY('strategy_tag=VWAP;'));
    expect(await ok(BUY('strategy_tag=ORB;'))).toMatchObject({ results: [{ detail: `Trade blocked: ${ES} is managed by strategy 'VWAP'` }] });
    expect(position()).toBe(1);
  });

  test('strategy sync: block, flatten, resync', async () => {
    const sync = (prev: string, after: string, mode: string, extra = '') =>
      BUY(`sync_strategy=true; prev_market_position=${prev}; market_position=${after}; out_of_sync=${mode}; ${extra}`);
    await ok(BUY());
    expect(await ok(sync('flat', 'long', 'block'))).toMatchObject({
      results: [{ error: 'out_of_sync', detail: `Position Out of Sync: strategy expected flat, ${ES} in account 'Sim101' is Long` }],
    });
    await ok(sync('long', 'long', 'block'));
    expect(position()).toBe(2);
    await ok(sync('short', 'long', 'flatten'));
    expect(position()).toBe(0);
    await ok(sync('long', 'short', 'resync', 'target_quantity=-3;'));
    expect(position()).toBe(-3);
  });

  test('relative limit and stop prices; no last price is no_market_data', async () => {
    await ok(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=SELL; qty=1; order_type=STOPLIMIT; stop_price=-2 ticks; limit_price=-3 ticks; tif=DAY;`));
    expect(orders().map((o) => [o.type, o.stop, o.limit])).toEqual([['STOPLIMIT', 5999.5, 5999.25]]);
    expect(await ok(msg('command=PLACE; account=Sim101; instrument=NQ 12-26; action=BUY; qty=1; order_type=LIMIT; limit_price=-1%; tif=DAY;'))).toMatchObject({
      results: [{ error: 'no_market_data', detail: 'No last price for NQ 12-26' }],
    });
  });
});

describe('a restart', () => {
  test('the kill switch, the timers and the Alert History are where the server left them', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { createEngine } = await import('../../src/engine/engine.js');
    const { createServer } = await import('../../src/server/server.js');
    const dir = mkdtempSync(join(tmpdir(), 'trade-webhook-restart-'));
    const file = join(dir, 'trade.db');
    let now = START;
    const serve = async () => {
      const engine = createEngine(file, { now: () => new Date(now) });
      const server = await createServer({ engine, token: TOKEN, webhook: { id: ID, secret: SECRET }, webhookSweepMs: 0 });
      const url = await server.listen({ port: 0 });
      const post = async (text: string) => (await (await fetch(`${url}${PATH}`, { method: 'POST', body: text })).json()) as Reply;
      return { engine, server, post, close: async () => (await server.close(), engine.close()) };
    };
    try {
      const first = await serve();
      first.engine.setPrice(ES, 6000);
      await first.post(msg(`command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=LIMIT; limit_price=5990; tif=GTC; cancel_after=2;`));
      await first.post(msg('kill_switch=on;'));
      await first.close();
      now += 120_000;
      const second = await serve();
      await second.server.webhook.sweep();
      expect(second.engine.listOrders({}).map((o) => o.state)).toEqual(['CANCELLED']);
      expect(await second.post(BUY())).toMatchObject({ error: 'kill_switch_on' });
      expect(second.server.webhook.store.history().map((r) => r.command)).toEqual(['PLACE', 'KILL_SWITCH', 'PLACE']);
      await second.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('Alert History (§6.2)', () => {
  test('rows are read newest last, filtered by status, and go with a reset; a snapshot keeps them', async () => {
    await ok(BUY());
    await ok(BUY('require_market_position=flat;'));
    expect((await history()).map((r) => r.status)).toEqual(['success', 'failed']);
    expect((await history('?status=failed')).map((r) => r.error)).toEqual(['market_position_blocked']);
    expect((await h.get('/_sandbox/alerts?status=nope')).status).toBe(400);
    expect((await h.post('/_sandbox/save', { name: 'two-alerts' })).status).toBe(200);
    await h.post('/_sandbox/reset', {});
    expect(await history()).toEqual([]);
    await h.post('/_sandbox/restore', { name: 'two-alerts' });
    expect((await history()).map((r) => r.status)).toEqual(['success', 'failed']);
    expect(position()).toBe(1);
  });

  test('trade sandbox alerts prints them; --status and --json', async () => {
    await ok(BUY());
    await ok(BUY('require_market_position=flat;'));
    await send(BUY().replace(`key=${TOKEN}`, 'key=wrong-key-0000'));
    const home = tempHome();
    try {
      const env = { ...home.env, TRADE_BASE_URL: h.url, TRADE_TOKEN: TOKEN };
      const shown = await runCli(['sandbox', 'alerts'], env);
      expect(shown.code).toBe(0);
      const lines = shown.stdout.split('\n');
      expect(lines[0]).toMatch(new RegExp(`^\\S+  success PLACE +Sim101 +${ES} +orders [0-9a-f]{32}$`));
      expect(lines[1]).toMatch(new RegExp(`^\\S+  failed  PLACE +Sim101 +${ES} +market_position_blocked: Market position requirement not met: `));
      expect(lines[2]).toMatch(/^\S+  failed  PLACE +Sim101 +ES 09-26 +invalid_secret_key: invalid or missing key$/);
      expect(lines.slice(3)).toEqual(['3 alerts shown', '']);
      const failed = await runCli(['sandbox', 'alerts', '--status', 'failed', '--json'], env);
      expect((JSON.parse(failed.stdout) as { alerts: HistoryRow[] }).alerts.map((r) => r.error)).toEqual(['market_position_blocked', 'invalid_secret_key']);
      expect(await runCli(['sandbox', 'alerts', '--status', 'lost'], env)).toMatchObject({ code: 1, stderr: expect.stringContaining('status: must be one of success, pending, warning, failed') });
    } finally {
      home.cleanup();
    }
  });

  test('the control route needs the token', async () => {
    expect((await h.http('GET', '/_sandbox/alerts', { headers: {} })).status).toBe(401);
    expect((await h.http('GET', '/_sandbox/alerts', { headers: AUTH })).status).toBe(200);
  });
});
