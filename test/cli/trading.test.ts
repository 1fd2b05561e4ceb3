/** The trading commands through the CLI, in-process: price, atm, cancel, close. */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';

let env: Env;
let cleanup: () => void;
let ids: number;
let now: Date;
const id = (n: number) => n.toString(16).padStart(32, '0');
const engine = { now: () => now, newOrderId: () => id(ids++) };
const cli = (argv: string[]) => runCli(argv, env, { engine });
const json = async (argv: string[]) => JSON.parse((await cli([...argv, '--json'])).stdout);
const storeRows = (sql: string) => {
  const db = new Database(join(env.TRADE_HOME!, 'trade.db'), { readonly: true });
  const rows = db.prepare(sql).all();
  db.close();
  return rows;
};

beforeEach(() => {
  ({ env, cleanup } = tempHome());
  ids = 1;
  now = new Date('2025-09-02T14:00:00Z');
});
afterEach(() => cleanup());

describe('scenario: an ATM bracket through the CLI', () => {
  it('entry with a template, price through the target: stop cancelled, flat, P&L of the target', async () => {
    expect(await cli(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16'])).toEqual({
      code: 0,
      stderr: '',
      stdout: 'Added ATM strategy template Scalp: stop-loss 8 ticks, profit-target 16 ticks, tick size 0.25\n',
    });
    expect((await cli(['price', 'set', 'ES 09-25', '4500'])).code).toBe(0);

    const placed = await cli(['place', ...orderArgs({ '--quantity': '2', '--strategy': 'Scalp' })]);
    expect(placed.code).toBe(0);
    expect(placed.stdout.split('\n').slice(0, 6)).toEqual([
      'Placed BUY 2 ES 09-25 MARKET DAY ATM Scalp',
      `  order id   ${id(1)}`,
      '  account    Sim101',
      '  status     filled 2 @ 4500',
      `  stop-loss  SELL 2 ES 09-25 STOPMARKET stop 4498 DAY, working (order ${id(2)})`,
      `  target     SELL 2 ES 09-25 LIMIT limit 4504 DAY, working (order ${id(3)})`,
    ]);

    expect((await cli(['price', 'set', 'ES 09-25', '4503.75'])).stdout).toBe(
      'Price ES 09-25 4503.75 (was 4500)\n  no working order crossed\n',
    );
    const moved = await cli(['price', 'set', 'ES 09-25', '4505']);
    expect(moved).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'Price ES 09-25 4505 (was 4503.75)',
        `  filled     SELL 2 LIMIT @ 4504 in Sim101 (ATM profit-target, order ${id(3)})`,
        `  cancelled  ${id(2)} (OCO)`,
        '',
      ].join('\n'),
    });

    const orders = (await json(['orders', '--account', 'Sim101'])).orders as Array<Record<string, unknown>>;
    expect(orders.map((o) => [o.orderId, o.name, o.orderState, o.ownerStrategy])).toEqual([
      [id(1), 'Entry', 'Filled', { id: id(1), name: 'Scalp', displayName: 'Scalp' }],
      [id(2), 'Stop1', 'Cancelled', { id: id(1), name: 'Scalp', displayName: 'Scalp' }],
      [id(3), 'Target1', 'Filled', { id: id(1), name: 'Scalp', displayName: 'Scalp' }],
    ]);
    expect(orders[1]).toMatchObject({ oco: `ATM-${id(1)}`, ocoId: `ATM-${id(1)}`, orderType: 'StopMarket', stopPrice: 4498 });
    expect((await cli(['positions'])).stdout).toBe('No open positions.\n');
    expect(await json(['positions', '--all'])).toEqual({
      positions: [
        {
          type: 'NinjaTrader.Cbi.Position', account: 'Sim101', instrument: 'ES 09-25', instrumentType: 'Future', marketPosition: 'Flat',
          quantity: 0, averagePrice: 0, marketPrice: 4505, unrealizedProfitLoss: 0, tag: null,
        },
      ],
      count: 1,
      success: true,
    });
    // The target's 4 points on 2 contracts, kept by the engine (P&L in points × contracts).
    expect(storeRows('SELECT realized_pnl FROM positions')).toEqual([{ realized_pnl: 8 }]);
  });
});

describe('trade price', () => {
  it('sets and lists prices, as tables and JSON', async () => {
    expect(await json(['price', 'set', 'es 09-25', '4500.25'])).toEqual({
      instrument: 'ES 09-25', price: 4500.25, previousPrice: null,
      fills: [], cancelledOrderIds: [], triggeredOrderIds: [], bracketOrders: [], success: true,
    });
    expect((await cli(['price', 'list'])).stdout).toBe(
      'INSTRUMENT  PRICE    UPDATED\nES 09-25    4500.25  2025-09-02T14:00:00.000Z\n',
    );
    expect(await json(['price', 'list'])).toEqual({
      prices: [{ instrument: 'ES 09-25', price: 4500.25, updatedAt: '2025-09-02T14:00:00.000Z' }],
      success: true,
    });
  });

  it('says when no price is set', async () => {
    expect((await cli(['price', 'list'])).stdout).toBe('No prices set.\n');
  });

  it('shows the fills of a price with JSON', async () => {
    await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4490' })]);
    const result = await json(['price', 'set', 'ES 09-25', '4489']);
    expect(result.fills).toEqual([
      {
        executionId: expect.stringMatching(/^[0-9a-f]{32}$/), orderId: id(1), account: 'Sim101', instrument: 'ES 09-25', action: 'BUY',
        quantity: 1, price: 4489, time: '2025-09-02T14:00:00.000Z', orderType: 'LIMIT', origin: 'client', positionAfter: 1, realized: 0, commission: 0,
      },
    ]);
  });

  it('rejects a bad instrument and a bad price together, exit 2, nothing stored', async () => {
    const result = await cli(['price', 'set', 'ES 13-25', '-5']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "Error: Invalid request: instrument: month must be 01-12, got '13' in 'ES 13-25'; price: must be a positive number, got -5\n" +
        "  Nothing was changed. Run 'trade price set --help' for examples.\n",
    });
    expect((await cli(['price', 'set', 'ES 09-25', 'Infinity'])).code).toBe(2);
    expect((await cli(['price', 'set', 'ES 09-25', '0'])).code).toBe(2);
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
  });
});

describe('trade atm', () => {
  it('adds with a tick size, lists, removes', async () => {
    await cli(['atm', 'add', 'Crude', '--stop-loss', '20', '--profit-target', '40', '--tick-size', '0.01']);
    expect(await json(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16'])).toEqual({
      template: { name: 'Scalp', stopLossTicks: 8, profitTargetTicks: 16, tickSize: 0.25 },
      success: true,
    });
    expect((await cli(['atm', 'list'])).stdout).toBe(
      [
        'NAME   STOP-LOSS TICKS  PROFIT-TARGET TICKS  TICK SIZE',
        'Crude  20               40                   0.01',
        'Scalp  8                16                   0.25',
        '',
      ].join('\n'),
    );
    expect(await cli(['atm', 'remove', 'crude'])).toMatchObject({ code: 0, stdout: 'Removed ATM strategy template Crude\n' });
    expect((await json(['atm', 'list'])).templates.map((t: { name: string }) => t.name)).toEqual(['Scalp']);
    expect(await cli(['atm', 'remove', 'Crude'])).toMatchObject({ code: 1, stderr: "Error: ATM strategy template 'Crude' not found\n" });
  });

  it('names missing and invalid flags, exit 2', async () => {
    expect(await cli(['atm', 'add', 'X'])).toMatchObject({
      code: 2,
      stderr: "Error: Missing required flags: --stop-loss, --profit-target\n  Nothing was changed. Run 'trade atm add --help' for an example.\n",
    });
    const bad = await cli(['atm', 'add', 'X', '--stop-loss', '0', '--profit-target', '1.5', '--tick-size', 'abc']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('stopLossTicks: must be at least 1 tick, got 0; profitTargetTicks: must be a whole number of ticks, got 1.5');
    expect(bad.stderr).toContain('Check --stop-loss, --profit-target, --tick-size');
  });

  it('refuses a duplicate name, and an entry with an unknown template (nothing placed)', async () => {
    await cli(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16']);
    expect((await cli(['atm', 'add', 'SCALP', '--stop-loss', '1', '--profit-target', '1'])).code).toBe(1);
    expect(await cli(['place', ...orderArgs({ '--strategy': 'Nope' }), '--json'])).toEqual({
      code: 1,
      stderr: '',
      stdout: `{"error":"ATM strategy template 'Nope' not found"}\n`,
    });
    expect(storeRows('SELECT * FROM orders')).toEqual([]);
  });

  it('says when there are no templates', async () => {
    expect((await cli(['atm', 'list'])).stdout).toBe('No ATM strategy templates.\n');
  });
});

describe('trade cancel', () => {
  it('cancels a working order and its OCO group', async () => {
    await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400', '--oco-id': 'g' })]);
    await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4401', '--oco-id': 'g' })]);
    const result = await cli(['cancel', id(1)]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 3)).toEqual([
      `Cancelled order ${id(1)}`,
      `  also cancelled  ${id(2)} (OCO)`,
      '  account         Sim101',
    ]);
    expect(storeRows('SELECT state FROM orders')).toEqual([{ state: 'CANCELLED' }, { state: 'CANCELLED' }]);
  });

  it('prints {orderId, success} with --json', async () => {
    await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400' })]);
    expect(await cli(['cancel', id(1), '--account', 'sim101', '--json'])).toEqual({
      code: 0, stderr: '', stdout: `{"orderId":"${id(1)}","success":true}\n`,
    });
  });

  it('refuses a finished or unknown order with the service message, exit 1', async () => {
    await cli(['place', ...orderArgs()]);
    expect(await cli(['cancel', id(1)])).toEqual({
      code: 1, stdout: '', stderr: `Error: Order linked to '${id(1)}' not found or already terminal.\n`,
    });
    expect(await cli(['cancel', 'nope', '--json'])).toEqual({
      code: 1, stderr: '', stdout: `{"error":"Order linked to 'nope' not found or already terminal."}\n`,
    });
  });

  it('uses TRADE_ACCOUNT as the account, and refuses an order of another account', async () => {
    await cli(['accounts', 'add', 'Sim102']);
    await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400' })]);
    const result = await runCli(['cancel', id(1)], { ...env, TRADE_ACCOUNT: 'Sim102' }, { engine });
    expect(result.code).toBe(1);
    expect(storeRows('SELECT state FROM orders')).toEqual([{ state: 'WORKING' }]);
  });
});

describe('trade close', () => {
  it('cancels working orders and flattens, reporting the closed position', async () => {
    await cli(['price', 'set', 'ES 09-25', '4500']);
    await cli(['place', ...orderArgs({ '--quantity': '3' })]);
    await cli(['place', ...orderArgs({ '--action': 'SELL', '--order-type': 'LIMIT', '--limit-price': '4600' })]);
    await cli(['price', 'set', 'ES 09-25', '4502']);
    const result = await cli(['close', '--account', 'Sim101', '--instrument', 'es 09-25']);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 3)).toEqual([
      'Closed long 3 ES 09-25 (average price 4500) in Sim101',
      `  closed     SELL 3 MARKET, filled 3 @ 4502 (order ${id(3)})`,
      '  cancelled  1 working order',
    ]);
    expect(await json(['positions', '--all'])).toMatchObject({ positions: [{ marketPosition: 'Flat', quantity: 0 }] });
    expect(storeRows('SELECT realized_pnl FROM positions')).toEqual([{ realized_pnl: 6 }]);
  });

  it('prints {closedPositions, success} with --json', async () => {
    await cli(['place', ...orderArgs({ '--action': 'SELL', '--quantity': '2' })]);
    expect(await json(['close', '--account', 'Sim101', '--instrument', 'ES 09-25'])).toEqual({
      closedPositions: [
        {
          type: 'NinjaTrader.Cbi.Position', account: 'Sim101', instrument: 'ES 09-25', instrumentType: 'Future', marketPosition: 'Short',
          quantity: 2, averagePrice: 6000, marketPrice: 6000, unrealizedProfitLoss: 0, tag: null,
        },
      ],
      success: true,
    });
  });

  it('with no position: the service message, exit 1', async () => {
    expect(await cli(['close', '--account', 'Sim101', '--instrument', 'ES 09-25', '--json'])).toEqual({
      code: 1, stderr: '', stdout: `{"error":"No positions found for instrument 'ES 09-25'"}\n`,
    });
  });

  it('names missing flags and bad values, exit 2, before opening the store', async () => {
    expect(await cli(['close'])).toMatchObject({ code: 2, stderr: expect.stringContaining('Missing required flags: --account, --instrument') });
    expect(await cli(['close', '--account', 'Sim101', '--instrument', 'ES2!'])).toMatchObject({
      code: 2, stderr: expect.stringContaining("Invalid request: instrument: 'ES2!' is not supported; only the front month (ES1!) is"),
    });
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
  });
});

describe('DAY expiry through the CLI', () => {
  it('a DAY order placed today is expired tomorrow; a GTC order stays', async () => {
    await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400' })]);
    await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400', '--tif': 'GTC' })]);
    now = new Date('2025-09-03T13:30:00Z');
    // The DAY order was cancelled at yesterday's session end, before today's trading day began:
    // GetOrders lists the active orders and today's (§3.9).
    const orders = (await json(['orders', '--account', 'Sim101'])).orders as Array<{ orderState: string; timeInForce: string }>;
    expect(orders.map((o) => [o.timeInForce, o.orderState])).toEqual([['Gtc', 'Working']]);
    expect(storeRows('SELECT time_in_force, state FROM orders ORDER BY seq')).toEqual([
      { time_in_force: 'DAY', state: 'EXPIRED' },
      { time_in_force: 'GTC', state: 'WORKING' },
    ]);
    now = new Date('2025-09-02T22:30:00Z');
    const sameEvening = (await json(['orders', '--account', 'Sim101', '--active'])).orders as Array<{ orderState: string }>;
    expect(sameEvening.map((o) => o.orderState)).toEqual(['Working']);
  });
});

describe('help', () => {
  it('has examples for every new command', async () => {
    for (const command of [['cancel'], ['close'], ['price'], ['price', 'set'], ['price', 'list'], ['atm'], ['atm', 'add'], ['atm', 'list'], ['atm', 'remove']]) {
      const result = await cli([...command, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Examples:\n  $ trade ');
    }
  });
});
