/**
 * The commands of the service's operations (issue 13) through the CLI, in-process on the
 * embedded engine: exact human output, `--json` as the service's body, usage errors that name
 * the flag and send nothing, and the store's state afterwards.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, queryStore, runCli, tempHome } from '../helpers/cli.js';
import { KEY, runInTerminal } from '../helpers/terminal.js';

let env: Env;
let cleanup: () => void;
let ids: number;
const now = new Date('2025-09-02T14:00:00Z');
const id = (n: number) => n.toString(16).padStart(32, '0');
const engine = { now: () => now, newOrderId: () => id(ids++) };
const cli = (argv: string[]) => runCli(argv, env, { engine });
const json = async (argv: string[]) => JSON.parse((await cli([...argv, '--json'])).stdout) as Record<string, unknown>;
const rows = (sql: string) => queryStore(env, sql);
const store = () => `embedded (${join(env.TRADE_HOME!, 'trade.db')})`;
const ok = async (argv: string[]) => expect((await cli(argv)).code).toBe(0);

beforeEach(async () => {
  ({ env, cleanup } = tempHome());
  ids = 1;
  await ok(['price', 'set', 'ES 09-25', '4500']);
});
afterEach(() => cleanup());

/** Long 4 ES 09-25 (order 1), and a SELL LIMIT 4510 GTC working with the client id lim-1. */
async function longWithALimit(): Promise<void> {
  await ok(['place', ...orderArgs({ '--quantity': '4' })]);
  await ok(['place', ...orderArgs({ '--action': 'SELL', '--order-type': 'LIMIT', '--tif': 'GTC' }), '--limit-price', '4510', '--order-id', 'lim-1']);
}

describe('trade place: client ids and the service guards', () => {
  it('--order-id is the order id; the same id again is refused and nothing is placed', async () => {
    expect(await cli(['place', ...orderArgs(), '--order-id', 'my-1'])).toMatchObject({ code: 0, stdout: expect.stringContaining('  order id  my-1\n') });
    expect(await cli(['place', ...orderArgs(), '--order-id', 'my-1'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "Error: Invalid request: orderId: 'my-1' is already used in account 'Sim101'\n",
    });
    expect(rows('SELECT order_id, quantity FROM orders')).toEqual([{ order_id: 'my-1', quantity: 1 }]);
  });

  it('--require-position and --max-positions refuse with the service text, or place and say so', async () => {
    expect(await cli(['place', ...orderArgs(), '--require-position', 'long,short'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "Error: Market position requirement not met: ES 09-25 in account 'Sim101' is Flat; required long, short\n",
    });
    const placed = await cli(['place', ...orderArgs(), '--require-position', 'flat', '--max-positions', '1']);
    expect(placed.stdout.split('\n')[0]).toBe('Placed BUY 1 ES 09-25 MARKET DAY (only if flat) (at most 1 open position)');
    await ok(['price', 'set', 'NQ 12-25', '21000']);
    expect(await cli(['place', ...orderArgs({ '--instrument': 'NQ 12-25' }), '--max-positions', '1'])).toMatchObject({
      code: 1,
      stderr: "Error: Max positions reached: account 'Sim101' has 1 open positions; maxPositions is 1\n",
    });
    expect(await cli(['place', ...orderArgs(), '--require-position', 'sideways'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('requireMarketPosition'),
    });
    expect(rows('SELECT count(*) AS n FROM orders')).toEqual([{ n: 1 }]);
  });

  it('--flatten-first cancels the instrument, closes the position, then places (FlatPlace)', async () => {
    await longWithALimit();
    const placed = await cli(['place', ...orderArgs({ '--action': 'SELL', '--quantity': '2' }), '--flatten-first']);
    expect(placed.code).toBe(0);
    expect(placed.stdout.split('\n')[0]).toBe('Placed SELL 2 ES 09-25 MARKET DAY');
    expect(rows("SELECT order_id, state FROM orders WHERE order_id = 'lim-1'")).toEqual([{ order_id: 'lim-1', state: 'CANCELLED' }]);
    expect(rows('SELECT quantity FROM positions')).toEqual([{ quantity: -2 }]);
  });
});

describe('trade modify, order, replace', () => {
  it('modify changes the quantity and limit of a working order; the order keeps its id', async () => {
    await longWithALimit();
    expect(await cli(['modify', 'lim-1', '--account', 'Sim101', '--quantity', '2', '--limit-price', '4512.5'])).toEqual({
      code: 0,
      stderr: '',
      stdout: ['Changed order lim-1', '  quantity  2', '  limit     4512.5', '  status    working', '  account   Sim101', `  backend   ${store()}`, ''].join('\n'),
    });
    expect(rows("SELECT quantity, limit_price, state FROM orders WHERE order_id = 'lim-1'")).toEqual([{ quantity: 2, limit_price: 4512.5, state: 'WORKING' }]);
    expect(await json(['modify', 'lim-1', '--account', 'Sim101', '--limit-price', '4499'])).toEqual({ orderId: 'lim-1', success: true });
    // A limit moved through the last price fills at once, at the last price.
    expect(rows("SELECT state, avg_fill_price FROM orders WHERE order_id = 'lim-1'")).toEqual([{ state: 'FILLED', avg_fill_price: 4500 }]);
  });

  it('modify refuses nothing-to-change, a bad value (naming the field) and a terminal order', async () => {
    await longWithALimit();
    expect(await cli(['modify', 'lim-1', '--account', 'Sim101'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "Error: Nothing to change: give --quantity, --limit-price or --stop-price\n  Nothing was sent. Run 'trade modify --help' for examples.\n",
    });
    expect((await cli(['modify', 'lim-1', '--account', 'Sim101', '--quantity', 'two'])).stderr).toBe(
      "Error: Invalid request: quantity: must be a whole number from 1 to 100000, or 0 to leave it, got 'two'\n  Nothing was sent. Run 'trade modify --help' for examples.\n",
    );
    expect((await cli(['modify', 'lim-1', '--account', 'Sim101', '--stop-price', '4520'])).stderr).toBe(
      'Error: Invalid request: stopPrice: a Limit order has no stop price\n',
    );
    expect((await cli(['modify', id(1), '--account', 'Sim101', '--quantity', '3'])).stderr).toBe(
      `Error: Order linked to '${id(1)}' not found or already terminal.\n`,
    );
    expect(rows("SELECT quantity, limit_price FROM orders WHERE order_id = 'lim-1'")).toEqual([{ quantity: 1, limit_price: 4510 }]);
  });

  it('order shows one order, --status only its state, --json the Order object', async () => {
    await longWithALimit();
    expect(await cli(['order', 'lim-1', '--account', 'Sim101'])).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'SELL 1 ES 09-25 LIMIT limit 4510',
        '  order id  lim-1',
        '  account   Sim101',
        '  status    working',
        '  tif       GTC',
        '  time      2025-09-02T09:00:00.0000000',
        `  backend   ${store()}`,
        '',
      ].join('\n'),
    });
    expect(await cli(['order', 'lim-1', '--account', 'Sim101', '--status'])).toEqual({ code: 0, stderr: '', stdout: 'Working\n' });
    expect(await json(['order', 'lim-1', '--account', 'Sim101'])).toMatchObject({
      orderId: 'lim-1',
      orderAction: 'Sell',
      orderType: 'Limit',
      orderState: 'Working',
      limitPrice: 4510,
      timeInForce: 'Gtc',
      success: true,
    });
    expect(await cli(['order', 'lim-1', '--account', 'Sim101', '--lifecycle'])).toEqual({
      code: 1,
      stdout: '',
      stderr: 'Error: GET /v1/api/accounts/{account}/orders/{orderId}/lifecycle is not simulated by trade serve\n',
    });
    expect(await cli(['order', 'lim-1', '--account', 'Sim101', '--lifecycle', '--status'])).toMatchObject({ code: 2 });
    expect(await cli(['order', 'nope', '--account', 'Sim101'])).toMatchObject({
      code: 1,
      stderr: "Error: Invalid request: orderId: order 'nope' not found in account 'Sim101'\n",
    });
  });

  it('replace cancels the old order and places the new one; a second replace of it is refused', async () => {
    await longWithALimit();
    const limit = orderArgs({ '--action': 'SELL', '--order-type': 'LIMIT', '--tif': 'GTC', '--quantity': '2' });
    expect(await cli(['replace', 'lim-1', ...limit, '--limit-price', '4515'])).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'Replaced with SELL 2 ES 09-25 LIMIT limit 4515 GTC',
        '  cancelled  lim-1',
        `  order id   ${id(2)}`,
        '  account    Sim101',
        '  status     working',
        `  backend    ${store()}`,
        '',
      ].join('\n'),
    });
    expect(await cli(['replace', 'lim-1', ...limit, '--limit-price', '4515'])).toMatchObject({
      code: 1,
      stderr: "Error: Order linked to 'lim-1' not found or already terminal.\n",
    });
    expect(await cli(['replace', id(2), ...limit, '--limit-price', '4515', '--order-id', 'x'])).toMatchObject({ code: 2 });
    expect(rows('SELECT order_id, quantity, limit_price, state FROM orders WHERE order_type = \'LIMIT\' ORDER BY seq')).toEqual([
      { order_id: 'lim-1', quantity: 1, limit_price: 4510, state: 'CANCELLED' },
      { order_id: id(2), quantity: 2, limit_price: 4515, state: 'WORKING' },
    ]);
  });
});

describe('trade position, close, reverse --invert', () => {
  it('position shows Long, Short or Flat; --json is the Position object', async () => {
    await ok(['place', ...orderArgs({ '--action': 'SELL', '--quantity': '2' })]);
    expect(await cli(['position', 'ES 09-25', '--account', 'Sim101'])).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'ACCOUNT  INSTRUMENT  POSITION  QTY  AVG PRICE  MARKET  UNREALIZED P&L',
        'Sim101   ES 09-25    Short     2    4500       4500    0.00',
        `backend: ${store()}`,
        '',
      ].join('\n'),
    });
    expect(await json(['position', 'NQ 12-25', '--account', 'Sim101'])).toEqual({
      type: 'NinjaTrader.Cbi.Position',
      account: 'Sim101',
      instrument: 'NQ 12-25',
      instrumentType: 'Future',
      marketPosition: 'Flat',
      quantity: 0,
      averagePrice: 0,
      marketPrice: 0,
      unrealizedProfitLoss: 0,
      tag: null,
      success: true,
    });
  });

  it('close --quantity and --percent close a part and leave the working orders', async () => {
    await longWithALimit();
    expect(await cli(['close', '--account', 'Sim101', '--instrument', 'ES 09-25', '--quantity', '1'])).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'Closed long 1 ES 09-25 (average price 4500) in Sim101',
        `  closed   SELL 1 MARKET, filled 1 @ 4500 (order ${id(2)})`,
        `  backend  ${store()}`,
        '',
      ].join('\n'),
    });
    // 50 % of the 3 left, rounded up: 2.
    expect((await json(['close', '--account', 'Sim101', '--instrument', 'ES 09-25', '--percent', '50%'])).closedPositions).toMatchObject([
      { marketPosition: 'Long', quantity: 2 },
    ]);
    expect(rows('SELECT quantity FROM positions')).toEqual([{ quantity: 1 }]);
    expect(rows("SELECT state FROM orders WHERE order_id = 'lim-1'")).toEqual([{ state: 'WORKING' }]);
  });

  it('close refuses a bad percent, and --quantity with --percent, naming them; nothing is sent', async () => {
    await longWithALimit();
    expect(await cli(['close', '--account', 'Sim101', '--instrument', 'ES 09-25', '--percent', '150'])).toEqual({
      code: 2,
      stdout: '',
      stderr: "Error: Invalid request: percent: must be a fraction between 0 and 1, e.g. 0.25\n  Nothing was sent. Run 'trade close --help' for examples.\n",
    });
    expect((await cli(['close', '--account', 'Sim101', '--instrument', 'ES 09-25', '--quantity', '1', '--percent', '5'])).stderr).toBe(
      "Error: --quantity and --percent say the same thing two ways: give one of them\n  Nothing was sent. Run 'trade close --help' for examples.\n",
    );
    expect(rows('SELECT quantity FROM positions')).toEqual([{ quantity: 4 }]);
  });

  it('reverse --invert turns the position over at its size; it takes no order flags', async () => {
    await ok(['place', ...orderArgs({ '--quantity': '2' })]);
    expect(await cli(['reverse', '--invert', '--account', 'Sim101', '--instrument', 'ES 09-25'])).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'Turned over ES 09-25 in Sim101',
        `  closed    SELL 2 MARKET (order ${id(2)})`,
        '  opened    SELL 2 MARKET',
        `  order id  ${id(3)}`,
        '  account   Sim101',
        `  backend   ${store()}`,
        '',
      ].join('\n'),
    });
    expect(rows('SELECT quantity FROM positions')).toEqual([{ quantity: -2 }]);
    expect(await cli(['reverse', '--invert', '--account', 'Sim101', '--instrument', 'ES 09-25', '--quantity', '2'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--invert takes only --account and --instrument'),
    });
    expect(await cli(['reverse', '--invert', '--account', 'Sim101', '--instrument', 'NQ 12-25'])).toMatchObject({
      code: 1,
      stderr: "Error: No position found for instrument 'NQ 12-25' in account 'Sim101'\n",
    });
  });
});

describe('trade bracket, cancel --all, flatten', () => {
  it('bracket protects a short, clamped to its size; cancel --all with and without an instrument', async () => {
    await ok(['place', ...orderArgs({ '--action': 'SELL' })]);
    expect(await cli(['bracket', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'SELL', '--quantity', '5', '--take-profit', '4490', '--stop-loss', '4510'])).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'Bracketed ES 09-25 in Sim101',
        `  target     BUY 1 LIMIT 4490 (order ${id(3)})`,
        `  stop-loss  BUY 1 STOPMARKET 4510 (order ${id(4)})`,
        `  oco        BRACKET-${id(2)}`,
        '  account    Sim101',
        `  backend    ${store()}`,
        '',
      ].join('\n'),
    });
    expect(await cli(['cancel', '--all', '--account', 'Sim101', '--instrument', 'NQ 12-25'])).toEqual({
      code: 0,
      stdout: `No working orders to cancel in Sim101 NQ 12-25\nbackend: ${store()}\n`,
      stderr: '',
    });
    expect(await json(['cancel', '--all', '--account', 'Sim101'])).toEqual({ orderIds: [id(3), id(4)], success: true });
    expect(rows("SELECT count(*) AS n FROM orders WHERE state = 'WORKING'")).toEqual([{ n: 0 }]);
    expect(await cli(['cancel', id(3), '--all'])).toMatchObject({ code: 2, stderr: 'Error: Give an order id or --all, not both\n  Nothing was sent.\n' });
  });

  it('cancel --all-accounts cancels the working orders of every account', async () => {
    await ok(['accounts', 'add', 'Sim102']);
    await ok(['place', ...orderArgs({ '--order-type': 'LIMIT', '--tif': 'GTC' }), '--limit-price', '4400']);
    await ok(['place', ...orderArgs({ '--account': 'Sim102', '--order-type': 'LIMIT', '--tif': 'GTC' }), '--limit-price', '4400']);
    expect((await cli(['cancel', '--all-accounts'])).stdout.split('\n')[0]).toBe('Cancelled 2 working orders in every account');
    expect(rows('SELECT account, state FROM orders ORDER BY seq')).toEqual([
      { account: 'Sim101', state: 'CANCELLED' },
      { account: 'Sim102', state: 'CANCELLED' },
    ]);
  });

  it('flatten closes an account and cancels its orders; a second flatten has nothing to do', async () => {
    await longWithALimit();
    expect(await cli(['flatten', '--account', 'Sim101'])).toEqual({
      code: 0,
      stderr: '',
      stdout: ['Flattened Sim101', '  closed     long 4 ES 09-25 (average price 4500)', '  cancelled  1 working order', `  backend    ${store()}`, ''].join('\n'),
    });
    expect(await json(['flatten', '--account', 'Sim101'])).toEqual({ closedPositions: [], success: true, warning: 'No positions to flatten' });
  });

  it('flatten --all-accounts --side short closes only short positions, in every account', async () => {
    await ok(['accounts', 'add', 'Sim102']);
    await ok(['place', ...orderArgs({ '--action': 'SELL' })]);
    await ok(['place', ...orderArgs({ '--account': 'Sim102' })]);
    expect((await cli(['flatten', '--all-accounts', '--side', 'short'])).stdout.split('\n').slice(0, 2)).toEqual([
      'Flattened 1 position',
      '  closed   Sim101 short 1 ES 09-25 (average price 4500)',
    ]);
    expect(rows('SELECT account, quantity FROM positions ORDER BY account')).toEqual([
      { account: 'Sim101', quantity: 0 },
      { account: 'Sim102', quantity: 1 },
    ]);
    expect(await cli(['flatten', '--all-accounts', '--side', 'up'])).toMatchObject({ code: 2, stderr: expect.stringContaining('marketPosition') });
  });

  it('flatten --everything needs --yes in a script, takes no filters, and with --yes closes everything', async () => {
    await longWithALimit();
    expect(await cli(['flatten', '--everything'])).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'Error: Flattening every position of every account needs --everything --yes in a script\n  Nothing was sent. At a terminal, `trade flatten --everything` asks you to type the confirmation.\n',
    });
    expect((await cli(['flatten', '--everything', '--account', 'Sim101', '--yes'])).stderr.split('\n')[0]).toBe(
      'Error: --everything takes no filters: it closes every position of every account',
    );
    expect(rows('SELECT quantity FROM positions')).toEqual([{ quantity: 4 }]);
    expect(await json(['flatten', '--everything', '--yes'])).toMatchObject({ orderIds: ['lim-1'], closedPositions: [{ quantity: 4 }], success: true });
    expect(rows('SELECT quantity FROM positions')).toEqual([{ quantity: 0 }]);
  });

  it('at a terminal, flatten --everything goes on only when the confirmation is typed', async () => {
    await longWithALimit();
    const declined = await runInTerminal(['flatten', '--everything'], env, async (t) => {
      await t.answer('Type "flatten everything" to go on', 'flatten', KEY.enter);
    }, { engine });
    expect(declined.code).toBe(130);
    expect(rows('SELECT quantity FROM positions')).toEqual([{ quantity: 4 }]);
    const confirmed = await runInTerminal(['flatten', '--everything'], env, async (t) => {
      await t.answer('Type "flatten everything" to go on', 'flatten everything', KEY.enter);
    }, { engine });
    expect(confirmed.code).toBe(0);
    expect(confirmed.stdout.split('\n')[0]).toBe('Flattened 1 position');
    expect(rows('SELECT quantity FROM positions')).toEqual([{ quantity: 0 }]);
  });
});

describe('reading: quote, executions, accounts', () => {
  it('quote prints the last price and the day; an unpriced instrument is an error naming it', async () => {
    await ok(['place', ...orderArgs({ '--quantity': '3' })]);
    expect(await cli(['quote', 'ES 09-25'])).toEqual({
      code: 0,
      stdout: [
        'INSTRUMENT  LAST  BID   ASK   OPEN  HIGH  LOW   CLOSE  VOLUME  TIME',
        'ES 09-25    4500  4500  4500  4500  4500  4500  4500   3       09/02/2025 09:00:00 AM',
        '',
      ].join('\n'),
      stderr: `backend: ${store()}\n`,
    });
    expect(await json(['quote', 'ES 09-25'])).toMatchObject({ instrument: 'ES 09-25', last: 4500, pointValue: 50, tickSize: 0.25, success: true });
    expect(await cli(['quote', 'ES 09-25', 'NQ 12-25'])).toEqual({ code: 1, stdout: '', stderr: 'Error: Invalid request: instrument: no price for NQ 12-25\n' });
  });

  it('executions lists the fills; --lookback out of range is refused', async () => {
    await ok(['place', ...orderArgs({ '--quantity': '2' })]);
    await ok(['close', '--account', 'Sim101', '--instrument', 'ES 09-25']);
    const { executions } = (await json(['executions', '--account', 'Sim101'])) as { executions: Array<Record<string, unknown>> };
    expect(executions.map((e) => [e.orderId, e.marketPosition, e.quantity, e.price, e.position, e.name])).toEqual([
      [id(1), 'Long', 2, 4500, 2, 'Entry'],
      [id(2), 'Short', 2, 4500, 0, 'Exit'],
    ]);
    const one = await json(['execution', executions[1]!.id as string, '--account', 'Sim101']);
    expect(one).toMatchObject({ id: executions[1]!.id, type: 'NinjaTrader.Cbi.Execution', isExit: true, success: true });
    expect(await cli(['executions', '--account', 'Sim101', '--lookback', '901'])).toMatchObject({
      code: 2,
      stderr: "Error: Invalid request: lookbackTime: must be a whole number from 1 to 900, got 901\n  Nothing was sent. Run 'trade executions --help' for examples.\n",
    });
  });

  it('account and accounts list show money; P&L is in money (ES: 50 per point)', async () => {
    await ok(['place', ...orderArgs({ '--quantity': '2' })]);
    await ok(['price', 'set', 'ES 09-25', '4510']);
    expect(await cli(['account', 'Sim101'])).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'ACCOUNT  CASH       NET LIQUIDATION  REALIZED TODAY  UNREALIZED  BUYING POWER  STATUS',
        'Sim101   100000.00  101000.00        0.00            1000.00     0.00          Enabled',
        '',
      ].join('\n'),
    });
    await ok(['close', '--account', 'Sim101', '--instrument', 'ES 09-25']);
    expect(await json(['account', 'Sim101'])).toMatchObject({
      name: 'Sim101',
      item: { cashValue: 101000, realizedProfitLoss: 1000, unrealizedProfitLoss: 0, netLiquidation: 101000 },
    });
    expect((await cli(['accounts', 'snapshot'])).stdout.split('\n').slice(-2)).toEqual(['0 open positions', '']);
    expect(await cli(['account', 'Sim999'])).toMatchObject({ code: 1, stderr: 'Error: Account Sim999 not found\n' });
  });
});

describe('the simulator-only commands on a remote backend', () => {
  it('price, atm and accounts add refuse with a usage error and touch no store', async () => {
    for (const argv of [
      ['--backend', 'http', 'price', 'set', 'ES 09-25', '4400'],
      ['--backend', 'ws', 'price', 'list'],
      ['--backend', 'ws', 'atm', 'list'],
      ['--backend', 'http', 'atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16'],
      ['--backend', 'http', 'accounts', 'add', 'Sim102'],
    ]) {
      const result = await cli(argv);
      expect(result.code, argv.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^Error: trade (price set|price list|atm list|atm add|accounts add) belongs to the simulator \(the embedded engine\), not to the (http|ws) backend's service\.\n/);
    }
    expect(rows('SELECT price FROM prices')).toEqual([{ price: 4500 }]);
    expect(rows('SELECT name FROM accounts')).toEqual([{ name: 'Sim101' }]);
  });
});
