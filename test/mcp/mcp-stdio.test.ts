/**
 * `trade mcp` over stdio, as a desktop agent runs it: the built bin as a child process, driven by
 * the MCP SDK's own client. The tool list of each tier, calls on the embedded engine, guard
 * refusals as tool errors with nothing placed, the journal and the halt switch, the paper tier on
 * a remote backend, and the token nowhere in what the server says.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { OPERATION_NAMES, OPERATIONS } from '../../src/service/operations.js';
import { orderArgs, runBin, tempHome } from '../helpers/cli.js';
import { killServes, type ServeProcess, startServe } from '../helpers/serve-process.js';
import { call, closeAll, type McpSession, startMcp, textOf } from './helpers.js';

const TOKEN = 'mcp-stdio-token-7c41e9a2b05d';
const homes: Array<() => void> = [];
function home(extra: Env = {}): Env {
  const h = tempHome();
  homes.push(h.cleanup);
  return { ...h.env, ...extra };
}
afterEach(() => closeAll());
afterAll(async () => {
  await killServes();
  homes.forEach((cleanup) => cleanup());
});

const ORDER = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
/** What the table says each tier lists, read from the table here, not from src/mcp/. */
const READS = OPERATION_NAMES.filter((name) => !OPERATIONS[name].movesMoney);
const sorted = (names: string[]) => [...names].sort();

/**
 * PlaceOrder through the session, which must succeed with the service's body; then the order read
 * back through the session: in `account`, filled (a MARKET order at the price set), as asked.
 */
async function placed(session: McpSession, args: Record<string, unknown>, account: string): Promise<string> {
  const result = await call(session, 'PlaceOrder', args);
  expect({ isError: result.isError ?? false, body: result.structuredContent }).toEqual({
    isError: false,
    body: { orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true },
  });
  const { orderId } = result.structuredContent as { orderId: string };
  const read = await call(session, 'GetOrder', { account, orderId });
  expect(read.structuredContent).toMatchObject({ orderId, account, instrument: 'ES 09-25', orderAction: 'Buy', quantity: args.quantity ?? 1, orderState: 'Filled' });
  return orderId;
}

async function toolNames(session: McpSession): Promise<string[]> {
  return (await session.client.listTools()).tools.map((t) => t.name);
}

async function history(env: Env): Promise<Array<{ source: string; operation: string; outcome: string; rule: string | null; account: string | null }>> {
  const listed = await runBin(['history', '--json'], env);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { entries: never[] }).entries;
}

async function orderCount(env: Env): Promise<number> {
  const listed = await runBin(['orders', '--account', 'Sim101', '--json'], env);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { orders: unknown[] }).orders.length;
}

describe('tiers', () => {
  it("read lists the table's reading operations and GuardStatus, and nothing that moves money", async () => {
    const session = await startMcp(['mcp'], home());
    const names = await toolNames(session);
    expect(sorted(names)).toEqual(sorted([...READS, 'GuardStatus']));
    expect(names).not.toContain('PlaceOrder');
    expect(names).not.toContain('Flatten');
    expect(session.stderr()).toContain('trade mcp: serving on stdio (tier read');
  });

  it('paper and trade list every operation of the table, GuardStatus and Alert', async () => {
    const paper = await startMcp(['mcp', '--tier', 'paper'], home());
    expect(sorted(await toolNames(paper))).toEqual(sorted([...OPERATION_NAMES, 'GuardStatus', 'Alert']));
    const trade = await startMcp(['mcp', '--tier', 'trade'], home({ TRADE_GUARD_MAX_ORDER_QTY: '2', TRADE_GUARD_MAX_POSITION: '4' }));
    expect(sorted(await toolNames(trade))).toEqual(sorted([...OPERATION_NAMES, 'GuardStatus', 'Alert']));
  });

  it('a tool each has the description and input schema of its row', async () => {
    const session = await startMcp(['mcp', '--tier', 'paper', '--account', 'Sim101'], home());
    const tools = (await session.client.listTools()).tools;
    const place = tools.find((t) => t.name === 'PlaceOrder')!;
    expect(place.description).toContain('Place an order');
    expect(place.description).toContain('POST /v1/api/accounts/{account}/orders/place');
    expect(place.inputSchema.additionalProperties).toBe(false);
    expect(sorted(Object.keys(place.inputSchema.properties!))).toEqual(sorted(Object.keys(OPERATIONS.PlaceOrder.fields())));
    // The default account makes account optional, with the default shown.
    expect(place.inputSchema.required).toEqual(['instrument', 'action', 'quantity', 'orderType', 'timeInForce']);
    expect((place.inputSchema.properties as Record<string, { default?: unknown }>).account!.default).toBe('Sim101');
    expect(place.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(tools.find((t) => t.name === 'GetPositions')!.annotations).toMatchObject({ readOnlyHint: true });
  });

  it('PlaceOrder called in the read tier is an unknown tool, and nothing is placed or journaled', async () => {
    const env = home();
    const session = await startMcp(['mcp'], env);
    await expect(call(session, 'PlaceOrder', ORDER)).rejects.toThrow(/Tool PlaceOrder not found/);
    await session.close();
    expect(await orderCount(env)).toBe(0);
    expect(await history(env)).toEqual([]);
  });

  it('--tier trade without max-order-qty and max-position refuses to start, exit 2, and says so', async () => {
    const none = await runBin(['mcp', '--tier', 'trade'], home());
    expect(none.code).toBe(2);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain("--tier trade needs the guard's max-order-qty and max-position rules set; max-order-qty and max-position are not set");
    const one = await runBin(['mcp', '--tier', 'trade'], home({ TRADE_GUARD_MAX_ORDER_QTY: '2' }));
    expect(one.code).toBe(2);
    expect(one.stderr).toContain('max-position is not set');
    const bad = await runBin(['mcp', '--tier', 'live'], home());
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--tier must be read, paper or trade, got 'live'");
  });
});

describe('calls on the embedded engine (paper tier)', () => {
  it('GetQuote and PlaceOrder: the service body as structured content and as JSON text; journaled with source mcp', async () => {
    const env = home();
    expect((await runBin(['price', 'set', 'ES 09-25', '4500'], env)).code).toBe(0);
    const session = await startMcp(['mcp', '--tier', 'paper'], env);
    const quote = await call(session, 'GetQuote', { instrument: 'ES 09-25' });
    expect(quote.isError).toBeFalsy();
    expect(JSON.parse(textOf(quote))).toEqual(quote.structuredContent);
    expect(quote.structuredContent).toMatchObject({ success: true, instrument: 'ES 09-25', last: 4500 });

    const placed = await call(session, 'PlaceOrder', { ...ORDER, action: 'buy' });
    expect(placed.isError).toBeFalsy();
    expect(placed.structuredContent).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
    expect(JSON.parse(textOf(placed))).toEqual(placed.structuredContent);

    const positions = await call(session, 'GetPositions', { account: 'Sim101' });
    expect(positions.structuredContent).toMatchObject({ positions: [{ instrument: 'ES 09-25', marketPosition: 'Long', quantity: 1 }] });
    await session.close();
    expect(await history(env)).toEqual([expect.objectContaining({ source: 'mcp', operation: 'PlaceOrder', outcome: 'accepted', account: 'Sim101' })]);
  });

  it('Alert: a message checked, then run through the guard (journaled with source mcp); a refusal is a tool error', async () => {
    const env = home({ TRADE_GUARD_MAX_ORDER_QTY: '2' });
    expect((await runBin(['price', 'set', 'ES 09-25', '4500'], env)).code).toBe(0);
    const session = await startMcp(['mcp', '--tier', 'paper'], env);
    const message = 'command=PLACE; account=Sim101; instrument=ES 09-25; action=BUY; qty=1; order_type=MARKET; tif=DAY; take_profit=4 ticks;';
    const checked = await call(session, 'Alert', { message, check: true });
    expect(checked.structuredContent).toEqual({
      command: 'PLACE',
      calls: [{ account: 'Sim101', operation: 'PlaceOrder', args: { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' } }],
      options: ['bracket: take-profit LIMIT at 4 ticks, GTC, one OCO group, placed after the entry, from the last price'],
      warnings: [],
      ignoredFields: [],
      checked: true,
      success: true,
    });
    expect(await orderCount(env)).toBe(0);
    const ran = await call(session, 'Alert', { message });
    expect(ran.isError).toBeFalsy();
    expect(ran.structuredContent).toMatchObject({ command: 'PLACE', status: 'success', results: [{ account: 'Sim101', status: 'success', orderIds: [expect.any(String), expect.any(String)] }], success: true });
    const refused = await call(session, 'Alert', { message: message.replace('qty=1', 'qty=5') });
    expect(refused.structuredContent).toMatchObject({ status: 'failed', results: [{ status: 'failed', detail: expect.stringContaining('refused by guard max-order-qty') }], success: false });
    const bad = await call(session, 'Alert', { message: 'command=PLACEE;' });
    expect(bad.isError).toBe(true);
    expect(textOf(bad)).toBe("unknown_command: Unknown command 'PLACEE'");
    await session.close();
    expect((await history(env)).map((l) => [l.source, l.operation, l.outcome])).toEqual([
      ['mcp', 'PlaceOrder', 'accepted'],
      ['mcp', 'PlaceOrder', 'accepted'],
      ['mcp', 'PlaceOrder', 'refused'],
    ]);
  });

  it('--account is the account of a call that gives none', async () => {
    const env = home();
    const session = await startMcp(['mcp', '--tier', 'paper', '--account', 'Sim101'], env);
    const { account: _account, ...order } = ORDER;
    expect((await runBin(['price', 'set', 'ES 09-25', '4500'], env)).code).toBe(0);
    await placed(session, order, 'Sim101');
    const positions = await call(session, 'GetPositions', {});
    expect(positions.structuredContent).toMatchObject({ positions: [{ account: 'Sim101', marketPosition: 'Long' }] });
  });

  it("a guard refusal is a tool error naming the rule, in the CLI's words; nothing is placed; the journal has it", async () => {
    const env = home({ TRADE_GUARD_MAX_ORDER_QTY: '2' });
    const cli = await runBin(['place', ...orderArgs({ '--quantity': '5' })], env);
    expect(cli.code).toBe(6);
    const session = await startMcp(['mcp', '--tier', 'paper'], env);
    const refused = await call(session, 'PlaceOrder', { ...ORDER, quantity: 5 });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toBe('refused by guard max-order-qty: quantity 5 is above the limit of 2 (TRADE_GUARD_MAX_ORDER_QTY); nothing was sent');
    expect(cli.stderr.split('\n')[0]).toBe(`Error: ${textOf(refused)}`);
    expect(refused.structuredContent).toMatchObject({ success: false, rule: 'max-order-qty', limit: 2, value: 5 });
    await session.close();
    expect(await orderCount(env)).toBe(0);
    expect((await history(env)).filter((e) => e.source === 'mcp')).toEqual([expect.objectContaining({ operation: 'PlaceOrder', outcome: 'refused', rule: 'max-order-qty' })]);
  });

  it("a bad argument is a tool error with the CLI's message, and nothing is sent", async () => {
    const env = home();
    const cli = await runBin(['place', ...orderArgs({ '--quantity': '0' })], env);
    expect(cli.code).toBe(2);
    const session = await startMcp(['mcp', '--tier', 'paper'], env);
    const bad = await call(session, 'PlaceOrder', { ...ORDER, quantity: 0 });
    expect(bad.isError).toBe(true);
    expect(cli.stderr.split('\n')[0]).toBe(`Error: ${textOf(bad)}`);
    const unknown = await call(session, 'PlaceOrder', { ...ORDER, qty: 1 });
    expect(textOf(unknown)).toBe('Invalid request: qty: is not a known field');
    await session.close();
    expect(await orderCount(env)).toBe(0);
  });

  it('trade halt, from another process, stops the agent mid-session; trade resume lets it go on', async () => {
    const env = home();
    const session = await startMcp(['mcp', '--tier', 'paper'], env);
    expect((await call(session, 'PlaceOrder', ORDER)).isError).toBeFalsy();
    expect((await runBin(['halt', '--reason', 'agent runaway'], env)).code).toBe(0);
    const halted = await call(session, 'PlaceOrder', ORDER);
    expect(halted.isError).toBe(true);
    expect(textOf(halted)).toMatch(/^refused by guard halt: .*agent runaway.*nothing was sent$/);
    const status = await call(session, 'GuardStatus');
    expect(status.structuredContent).toMatchObject({ tier: 'paper', halts: [expect.objectContaining({ scope: 'profile:default', mode: 'halted', reason: 'agent runaway' })] });
    expect((await runBin(['resume'], env)).code).toBe(0);
    expect((await call(session, 'PlaceOrder', ORDER)).isError).toBeFalsy();
    expect(await orderCount(env)).toBe(2);
  });

  it('GuardStatus reports the rules, the state and the headroom', async () => {
    const env = home({ TRADE_GUARD_MAX_ORDER_QTY: '3', TRADE_GUARD_MAX_POSITION: '6', TRADE_GUARD_MAX_ORDERS: '5/min', TRADE_GUARD_DAILY_LOSS: '500' });
    const session = await startMcp(['mcp', '--tier', 'trade'], env);
    expect((await call(session, 'PlaceOrder', ORDER)).isError).toBeFalsy();
    const status = await call(session, 'GuardStatus');
    expect(status.isError).toBeFalsy();
    expect(JSON.parse(textOf(status))).toEqual(status.structuredContent);
    expect(status.structuredContent).toMatchObject({
      tier: 'trade',
      profile: 'default',
      rules: { 'max-order-qty': { value: '3', source: 'TRADE_GUARD_MAX_ORDER_QTY' }, 'max-position': { value: '6' }, 'max-orders': { value: '5/min' }, 'daily-loss': { value: '500' } },
      halts: [],
      pace: [{ pace: '5/min', limit: 5, counts: { Sim101: 1 }, left: { Sim101: 4 } }],
      headroom: { maxOrderQty: 3, maxPosition: 6, dailyLoss: -500 },
      success: true,
    });
  });
});

describe('on a remote backend', () => {
  let serve: ServeProcess;
  beforeAll(async () => {
    const serverEnv = home();
    expect((await runBin(['accounts', 'add', 'Live1'], serverEnv)).code).toBe(0);
    expect((await runBin(['price', 'set', 'ES 09-25', '4500'], serverEnv)).code).toBe(0);
    serve = await startServe(serverEnv, TOKEN);
  });
  const remote = (extra: Env = {}) => home({ TRADE_BACKEND: 'http', TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN, ...extra });

  it('paper sends money-moving calls to simulation accounts only; a live account or every account is refused by the tier', async () => {
    const env = remote();
    const session = await startMcp(['mcp', '--tier', 'paper'], env);
    await placed(session, ORDER, 'Sim101');
    const live = await call(session, 'PlaceOrder', { ...ORDER, account: 'Live1' });
    expect(live.isError).toBe(true);
    expect(textOf(live)).toBe("refused by tier paper: Live1 is not a simulation account (Sim*, or the guard's sim-accounts); nothing was sent");
    const everywhere = await call(session, 'CancelAllOrders', {});
    expect(textOf(everywhere)).toBe('refused by tier paper: CancelAllOrders without an account reaches every account, live ones too; nothing was sent');
    // Reads of a live account are the read tier's, and pass.
    const live1 = await call(session, 'GetPositions', { account: 'Live1' });
    expect({ isError: live1.isError ?? false, success: (live1.structuredContent as { success?: unknown }).success }).toEqual({ isError: false, success: true });
    const positions = await call(session, 'GetAllPositions', {});
    expect((positions.structuredContent as { positions: Array<{ account: string }> }).positions.map((p) => p.account)).toEqual(['Sim101']);
    // What the agent tried and the tier refused is in the journal, with who asked and what.
    const refused = (await runBin(['history', '--refused', '--json'], env)).stdout;
    expect((JSON.parse(refused) as { entries: unknown[] }).entries).toEqual([
      expect.objectContaining({ source: 'mcp', operation: 'PlaceOrder', account: 'Live1', outcome: 'refused', rule: 'tier', request: expect.objectContaining({ account: 'Live1', quantity: 1 }) }),
      expect.objectContaining({ source: 'mcp', operation: 'CancelAllOrders', account: null, outcome: 'refused', rule: 'tier', message: textOf(everywhere) }),
    ]);
  });

  it("the guard's sim-accounts make an account a simulation one for the paper tier", async () => {
    const session = await startMcp(['mcp', '--tier', 'paper'], remote({ TRADE_GUARD_SIM_ACCOUNTS: 'Live*' }));
    await placed(session, { ...ORDER, account: 'Live1' }, 'Live1');
  });

  it('trade places on a live account, within the limits', async () => {
    const session = await startMcp(['mcp', '--tier', 'trade'], remote({ TRADE_GUARD_MAX_ORDER_QTY: '2', TRADE_GUARD_MAX_POSITION: '10' }));
    await placed(session, { ...ORDER, account: 'Live1' }, 'Live1');
    const big = await call(session, 'PlaceOrder', { ...ORDER, account: 'Live1', quantity: 3 });
    expect(textOf(big)).toMatch(/^refused by guard max-order-qty: /);
  });

  it('the token appears in no result, error or log line, even when an agent sends it and the service echoes it', async () => {
    const session = await startMcp(['mcp', '--tier', 'paper'], remote());
    const echoed = await call(session, 'GetAccount', { account: TOKEN });
    expect(echoed.isError).toBe(true);
    expect(textOf(echoed)).toBe("Invalid request: arguments: an argument holds the profile's service token, which trade mcp never passes on");
    await call(session, 'GetQuote', { instrument: 'ES 09-25' });
    await call(session, 'GuardStatus');
    const placed = await call(session, 'PlaceOrder', { ...ORDER, account: TOKEN });
    expect(textOf(placed)).toBe(textOf(echoed));
    // A piece of it is refused as well: it is matched as the redactor matches it.
    expect(textOf(await call(session, 'PlaceOrder', { ...ORDER, orderId: `x${TOKEN.slice(2, 14)}` }))).toBe(textOf(echoed));
    await session.client.listTools();
    const seen = session.seen();
    expect(seen).not.toContain(TOKEN);
    expect(seen).not.toContain(TOKEN.slice(0, 12));
    expect(seen).not.toContain(Buffer.from(TOKEN).toString('base64').slice(0, 12));
  });
});
