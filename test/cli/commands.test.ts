import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { resolveInstrument } from '../../src/service/instruments.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';
import { runInTerminal } from '../helpers/terminal.js';

let env: Env;
let cleanup: () => void;
let ids: number;
const engine = { now: () => new Date('2025-09-01T14:00:00Z'), newOrderId: () => (ids++).toString(16).padStart(32, '0') };
const cli = (argv: string[]) => runCli(argv, env, { engine });
const storeRows = (sql: string) => {
  const db = new Database(join(env.TRADE_HOME!, 'trade.db'), { readonly: true });
  const rows = db.prepare(sql).all();
  db.close();
  return rows;
};

beforeEach(() => {
  ({ env, cleanup } = tempHome());
  ids = 1;
});
afterEach(() => cleanup());

describe('trade place', () => {
  it('places a market order and says what was done', async () => {
    const result = await cli(['place', ...orderArgs()]);
    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        'Placed BUY 1 ES 09-25 MARKET DAY',
        '  order id  00000000000000000000000000000001',
        '  account   Sim101',
        '  status    filled 1 @ 6000',
        '  price     6000: the demo price of ES, as ES 09-25 had no price (trade price source chooses where prices come from)',
        `  backend   embedded (${join(env.TRADE_HOME!, 'trade.db')})`,
        '',
      ].join('\n'),
    });
  });

  it('takes any instrument form, resolves it to a dated contract and says which (§9)', async () => {
    const resolved = resolveInstrument('ES1!', new Date());
    expect(resolved.ok).toBe(true);
    const contract = resolved.ok ? resolved.instrument : '';
    const result = await cli(['place', ...orderArgs({ '--instrument': 'es1!' })]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(`es1! → ${contract}\n`);
    expect(result.stdout.split('\n')[0]).toBe(`Placed BUY 1 ${contract} MARKET DAY`);
    expect(storeRows('SELECT instrument FROM orders')).toEqual([{ instrument: contract }]);
    // A dated contract is taken as typed, even an expired one, and nothing is said.
    expect((await cli(['place', ...orderArgs({ '--instrument': 'es 9-25' }), '--json'])).stderr).toBe('es 9-25 → ES 09-25\n');
    expect((await cli(['place', ...orderArgs({ '--instrument': 'ES 09-25' }), '--json'])).stderr).toBe('');
  });

  it('takes --order-id: the order carries it, and a second order with it is refused (exit 1)', async () => {
    const placed = await cli(['place', ...orderArgs({ '--order-id': 'my-1' }), '--json']);
    expect(placed).toEqual({ code: 0, stderr: '', stdout: '{"orderId":"my-1","success":true}\n' });
    const again = await cli(['place', ...orderArgs({ '--order-id': 'my-1' }), '--json']);
    expect(again).toEqual({ code: 1, stderr: '', stdout: `{"error":"Invalid request: orderId: 'my-1' is already used in account 'Sim101'"}\n` });
    expect(storeRows('SELECT order_id FROM orders')).toEqual([{ order_id: 'my-1' }]);
    expect(await cli(['place', ...orderArgs({ '--order-id': 'place' })])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("Invalid request: orderId: 'place' is a word of the service's paths; choose another id"),
    });
    expect((await cli(['cancel', 'my-1'])).code).toBe(1); // filled: nothing to cancel, and it is found by its own id
  });

  it('prints the service body with --json', async () => {
    const result = await cli(['place', ...orderArgs({ '--order-type': 'limit', '--limit-price': '4500.5' }), '--json']);
    expect(result).toEqual({ code: 0, stderr: '', stdout: '{"orderId":"00000000000000000000000000000001","success":true}\n' });
    expect(storeRows('SELECT order_type, limit_price, state FROM orders')).toEqual([
      { order_type: 'LIMIT', limit_price: 4500.5, state: 'WORKING' },
    ]);
  });

  it('accepts --time-in-force as an alias of --tif', async () => {
    const result = await cli(['place', ...orderArgs({ '--tif': null, '--time-in-force': 'gtc' }), '--json']);
    expect(result.code).toBe(0);
    expect(storeRows('SELECT time_in_force FROM orders')).toEqual([{ time_in_force: 'GTC' }]);
  });

  it('refuses --tif and --time-in-force that disagree', async () => {
    const result = await cli(['place', ...orderArgs({ '--time-in-force': 'GTC' })]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--tif 'DAY' and --time-in-force 'GTC' disagree");
  });

  it('names every missing flag, exits 2 at once and sends nothing', async () => {
    const result = await cli(['place', '--account', 'Sim101', '--order-type', 'STOPLIMIT']);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'Error: Missing required flags: --instrument, --action, --quantity, --tif, --limit-price, --stop-price\n' +
        "  Nothing was sent. Run 'trade place --help' for an example.\n",
    });
    // Validation runs before any side effect: the store is not even created.
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
  });

  it('rejects invalid values naming the field, exit 2, nothing stored', async () => {
    const result = await cli(['place', ...orderArgs({ '--quantity': 'two', '--action': 'hold' })]);
    expect(result.code).toBe(2);
    expect(result.stderr).toBe(
      "Error: Invalid request: action: must be BUY or SELL (any case), got 'hold'; quantity: must be a whole number, got 'two'\n" +
        "  Nothing was sent. Check --action, --quantity; run 'trade place --help' for examples.\n",
    );
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
  });

  it('says so when a price is given that the order type does not use', async () => {
    const result = await cli(['place', ...orderArgs({ '--limit-price': '1' })]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Invalid request: limitPrice: is not used by MARKET orders; remove it');
  });

  it('puts {error} on stdout with --json when rejected', async () => {
    const result = await cli(['place', ...orderArgs({ '--account': 'Ghost' }), '--json']);
    expect(result).toEqual({ code: 1, stdout: '{"success":false,"error":"invalid_account","detail":"Account Ghost not found"}\n', stderr: '' });
  });

  it('rejects an unknown account with exit 1', async () => {
    const result = await cli(['place', ...orderArgs({ '--account': 'Ghost' })]);
    expect(result).toEqual({ code: 1, stdout: '', stderr: 'Error: Account Ghost not found\n' });
  });
});

describe('trade reverse', () => {
  it('to the position\'s own side: refused in a script unless --same-side, said and done at a terminal', async () => {
    await cli(['place', ...orderArgs({ '--quantity': '2' })]);
    const before = storeRows('SELECT * FROM orders');
    const refused = await cli(['reverse', ...orderArgs({ '--action': 'BUY', '--quantity': '1' })]);
    expect(refused).toEqual({
      code: 2,
      stdout: '',
      stderr:
        'Error: Reverse to the same side: ES 09-25 in Sim101 is Long and this reverse buys: it closes the position and opens the same side again\n' +
        '  Nothing was sent. Use --action SELL to reverse, or --same-side to do this anyway.\n',
    });
    expect(storeRows('SELECT * FROM orders')).toEqual(before);
    const done = await cli(['reverse', ...orderArgs({ '--action': 'BUY', '--quantity': '1' }), '--same-side']);
    expect(done.code, done.stderr).toBe(0);
    expect(storeRows('SELECT quantity FROM positions')).toEqual([{ quantity: 1 }]);
    const atTerminal = await runInTerminal(['reverse', ...orderArgs({ '--action': 'BUY', '--quantity': '3' })], env, async () => undefined);
    expect(atTerminal.code).toBe(0);
    expect(atTerminal.screen).toContain('Warning: ES 09-25 in Sim101 is Long and this reverse buys: it closes the position and opens the same side again.');
    expect(storeRows('SELECT quantity FROM positions')).toEqual([{ quantity: 3 }]);
  });

  it('reverses an open position and reports the close and the new order', async () => {
    await cli(['place', ...orderArgs({ '--quantity': '2' })]);
    await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400' })]);
    const result = await cli(['reverse', ...orderArgs({ '--action': 'SELL', '--quantity': '1' })]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n').slice(0, 6)).toEqual([
      'Reversed ES 09-25 in Sim101',
      '  closed     SELL 2 MARKET, filled 2 @ 6000 (order 00000000000000000000000000000003)',
      '  cancelled  1 working order',
      '  placed     SELL 1 ES 09-25 MARKET DAY',
      '  order id   00000000000000000000000000000004',
      '  account    Sim101',
    ]);
    const positions = await cli(['positions', '--json']);
    expect(JSON.parse(positions.stdout)).toEqual({
      positions: [
        {
          type: 'NinjaTrader.Cbi.Position', account: 'Sim101', instrument: 'ES 09-25', instrumentType: 'Future', marketPosition: 'Short',
          quantity: 1, averagePrice: 6000, marketPrice: 6000, unrealizedProfitLoss: 0, tag: null,
        },
      ],
      count: 1,
      success: true,
    });
  });

  it('with no position prints the exact service message and exits 1', async () => {
    const result = await cli(['reverse', ...orderArgs(), '--json']);
    expect(result).toEqual({
      code: 1,
      stderr: '',
      stdout: `{"error":"No position found for instrument 'ES 09-25' in account 'Sim101'"}\n`,
    });
  });

  it('with an invalid body while a position is open leaves the position open', async () => {
    await cli(['place', ...orderArgs({ '--quantity': '3' })]);
    const before = storeRows('SELECT * FROM orders');
    const result = await cli(['reverse', ...orderArgs({ '--action': 'SELL', '--order-type': 'LIMIT' })]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Missing required flag: --limit-price');
    const bad = await cli(['reverse', ...orderArgs({ '--action': 'SELL', '--quantity': '-1' })]);
    expect(bad.code).toBe(2);
    expect(storeRows('SELECT * FROM orders')).toEqual(before);
    expect(storeRows('SELECT quantity FROM positions')).toEqual([{ quantity: 3 }]);
  });
});

describe('trade positions, orders and accounts', () => {
  it('lists positions and orders as tables, filtered by account', async () => {
    await cli(['accounts', 'add', 'Sim102']);
    await cli(['place', ...orderArgs({ '--quantity': '2' })]);
    await cli(['place', ...orderArgs({ '--account': 'sim102', '--action': 'SELL' })]);
    const positions = await cli(['positions']);
    expect(positions.stdout).toBe(
      [
        'ACCOUNT  INSTRUMENT  POSITION  QTY  AVG PRICE  MARKET  UNREALIZED P&L',
        'Sim101   ES 09-25    Long      2    6000       6000    0.00',
        'Sim102   ES 09-25    Short     1    6000       6000    0.00',
        '',
      ].join('\n'),
    );
    expect((await cli(['positions', '--account', 'sim102'])).stdout.split('\n')).toHaveLength(3);
    expect(positions.stderr).toContain('backend: embedded');
    const orders = await cli(['orders', '--account', 'SIM102']);
    expect(orders.stdout.split('\n')).toHaveLength(3);
    expect(orders.stdout).toContain('00000000000000000000000000000002  Sim102   ES 09-25    SELL    1    MARKET');
    const json = JSON.parse((await cli(['orders', '--account', 'Sim101', '--json'])).stdout);
    expect(json).toMatchObject({ count: 1, success: true, orders: [{ account: 'Sim101', orderAction: 'Buy', quantity: 2, orderState: 'Filled' }] });
    expect(await cli(['orders'])).toMatchObject({ code: 2, stderr: expect.stringContaining('Listing orders needs an account: pass --account') });
  });

  it('says when there is nothing to list', async () => {
    expect((await cli(['positions'])).stdout).toBe('No open positions.\n');
    expect((await cli(['orders', '--account', 'Sim101'])).stdout).toBe('No orders.\n');
  });

  it('rejects a filter for an unknown account', async () => {
    expect(await cli(['orders', '--account', 'Ghost'])).toMatchObject({ code: 1, stderr: 'Error: Account Ghost not found\n' });
    expect(await cli(['positions', '--account', 'Ghost'])).toMatchObject({ code: 1, stderr: 'Error: Account Ghost not found\n' });
  });

  it('adds and lists accounts, refusing duplicates and bad names', async () => {
    expect(await cli(['accounts', 'add', 'Sim102'])).toMatchObject({ code: 0, stdout: 'Added simulation account Sim102\n' });
    expect(await cli(['accounts', 'add', 'SIM102'])).toMatchObject({ code: 1, stderr: "Error: Account 'Sim102' already exists\n" });
    expect(await cli(['accounts', 'add', ' x'])).toMatchObject({
      code: 2,
      stderr: 'Error: Invalid request: account: must not start or end with spaces\n',
    });
    expect(await cli(['accounts', 'list'])).toMatchObject({
      code: 0,
      stdout: [
        'ACCOUNT  CASH       NET LIQUIDATION  REALIZED TODAY  UNREALIZED  BUYING POWER  STATUS',
        'Sim101   100000.00  100000.00        0.00            0.00        0.00          Enabled',
        'Sim102   100000.00  100000.00        0.00            0.00        0.00          Enabled',
        '',
      ].join('\n'),
    });
    const listed = JSON.parse((await cli(['accounts', 'list', '--json'])).stdout) as { accounts: Array<{ name: string; type: string }>; count: number };
    expect(listed).toMatchObject({ count: 2, success: true });
    expect(listed.accounts.map((a) => [a.name, a.type])).toEqual([
      ['Sim101', 'NinjaTrader.Cbi.Account'],
      ['Sim102', 'NinjaTrader.Cbi.Account'],
    ]);
  });
});

describe('usage', () => {
  it('prints help with examples for every command, exit 0', async () => {
    for (const command of [[], ['place'], ['reverse'], ['positions'], ['orders'], ['accounts'], ['accounts', 'list'], ['accounts', 'add']]) {
      const result = await cli([...command, '--help']);
      expect(result.code).toBe(0);
      expect(result.stdout).toContain('Examples:\n  $ trade ');
    }
  });

  it('exits 2 with help on stderr when called with no arguments', async () => {
    const result = await cli([]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('Usage: trade [options] [command]');
  });

  it('suggests the nearest command for an unknown one, exit 2', async () => {
    const result = await cli(['plac']);
    expect(result).toEqual({ code: 2, stdout: '', stderr: "error: unknown command 'plac'\n(Did you mean place?)\n" });
  });

  it('exits 2 for an unknown flag', async () => {
    const result = await cli(['place', '--qty', '1']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: unknown option '--qty'");
  });

  it('prints the version', async () => {
    expect(await cli(['--version'])).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
  });
});

describe('default account', () => {
  it('comes from TRADE_ACCOUNT when --account is not given', async () => {
    const result = await runCli(['place', ...orderArgs({ '--account': null }), '--json'], { ...env, TRADE_ACCOUNT: 'sim101' }, { engine });
    expect(result.code).toBe(0);
    expect(storeRows('SELECT account FROM orders')).toEqual([{ account: 'Sim101' }]);
  });
});
