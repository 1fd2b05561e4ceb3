/**
 * `trade place` at a terminal with the real inquirer prompts, in-process: stdin and stderr claim
 * to be terminals, the test waits for each question and types its answer, then checks the store.
 */
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { ORDER_COLUMNS, orderArgs, queryStore, runCli, tempHome } from '../helpers/cli.js';
import { KEY, answered, runInTerminal, type Terminal } from '../helpers/terminal.js';

const { enter, down, backspace, ctrlC, ctrlD } = KEY;
const ID1 = '00000000000000000000000000000001';

let env: Env;
let cleanup: () => void;
let ids: number;
const engine = { now: () => new Date('2025-09-01T14:00:00Z'), newOrderId: () => (ids++).toString(16).padStart(32, '0') };
const storeRows = (sql: string) => queryStore(env, sql);
const interactive = (argv: string[], act: (t: Terminal) => Promise<void>, extraEnv: Env = {}) =>
  runInTerminal(argv, { ...env, ...extraEnv }, act, { engine });

beforeEach(() => {
  ({ env, cleanup } = tempHome());
  ids = 1;
});
afterEach(() => cleanup());

describe('trade place at a terminal', () => {
  it('asks for every field in order, shows the order, confirms (Yes on embedded) and places it', async () => {
    const result = await interactive(['place'], async (t) => {
      await t.answer('Account', enter);
      await t.answer('Instrument', ...'es 09-25', enter);
      await t.answer('Action', down, enter);
      await t.answer('Quantity', '3', enter);
      await t.answer('Order type', enter);
      await t.answer('Time in force', down, enter);
      await t.answer('Send this order? (Y/n)', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)).toEqual([
      '✔ Account Sim101',
      '✔ Instrument (e.g. ES 09-25) es 09-25',
      '✔ Action SELL',
      '✔ Quantity (contracts) 3',
      '✔ Order type MARKET',
      '✔ Time in force GTC',
      '✔ Send this order? Yes',
    ]);
    expect(result.screen).toContain(
      `\nPlace: SELL 3 ES 09-25 MARKET GTC · account Sim101 · embedded (${join(env.TRADE_HOME!, 'trade.db')})\n`,
    );
    expect(result.screen).not.toMatch(/Limit price|Stop price/);
    expect(result.stdout).toMatch(/^Placed SELL 3 ES 09-25 MARKET GTC\n {2}order id {2}0{31}1\n/);
    expect(storeRows(`SELECT ${ORDER_COLUMNS} FROM orders`)).toEqual([
      { account: 'Sim101', instrument: 'ES 09-25', action: 'SELL', quantity: 3, order_type: 'MARKET', limit_price: null, stop_price: null, time_in_force: 'GTC', oco_id: null, strategy: null },
    ]);
  });

  it.each([
    { type: 'LIMIT', downs: 1, prices: [['Limit price', '4500.25']], limit: 4500.25, stop: null },
    { type: 'STOPMARKET', downs: 2, prices: [['Stop price', '4400']], limit: null, stop: 4400 },
    { type: 'STOPLIMIT', downs: 3, prices: [['Limit price', '4401.5'], ['Stop price', '4400']], limit: 4401.5, stop: 4400 },
  ])('asks only the prices a $type order uses, and not the OCO group or ATM strategy', async ({ type, downs, prices, limit, stop }) => {
    // The engine refuses unknown ATM templates, so the one given below must exist.
    expect((await runCli(['atm', 'add', 'Scalp 2', '--stop-loss', '8', '--profit-target', '16'], env)).code).toBe(0);
    const argv = ['place', '--account', 'Sim101', '--instrument', 'NQ 12-25', '--oco-id', 'bracket-1', '--strategy', 'scalp 2', '--json'];
    const result = await interactive(argv, async (t) => {
      await t.answer('Action', enter);
      await t.answer('Quantity', '1', enter);
      await t.answer('Order type', ...Array<string>(downs).fill(down), enter);
      for (const [question, price] of prices) await t.answer(question!, ...price!, enter);
      await t.answer('Time in force', enter);
      await t.answer('Send this order?', enter);
    });
    expect(result).toMatchObject({ code: 0, stdout: `{"orderId":"${ID1}","success":true}\n` });
    expect(answered(result.screen)).toEqual([
      '✔ Action BUY',
      '✔ Quantity (contracts) 1',
      `✔ Order type ${type}`,
      ...prices.map(([question, price]) => `✔ ${question} ${price}`),
      '✔ Time in force DAY',
      '✔ Send this order? Yes',
    ]);
    expect(storeRows(`SELECT order_type, limit_price, stop_price, oco_id, strategy FROM orders`)).toEqual([
      { order_type: type, limit_price: limit, stop_price: stop, oco_id: 'bracket-1', strategy: 'Scalp 2' },
    ]);
  });

  it('does not ask again for fields given as flags', async () => {
    const argv = ['place', ...orderArgs({ '--action': null, '--order-type': 'limit', '--tif': 'gtc' }), '--oco-id', 'g1'];
    const result = await interactive(argv, async (t) => {
      await t.answer('Action', enter);
      await t.answer('Limit price', '4500', enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)).toEqual([
      '✔ Action BUY',
      '✔ Limit price 4500',
      '✔ Send this order? Yes',
    ]);
    expect(storeRows(`SELECT ${ORDER_COLUMNS} FROM orders`)).toEqual([
      { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, order_type: 'LIMIT', limit_price: 4500, stop_price: null, time_in_force: 'GTC', oco_id: 'g1', strategy: null },
    ]);
  });

  it("refuses a typed value with the schema's own message, then takes the corrected one", async () => {
    const result = await interactive(['place', '--account', 'Sim101', '--action', 'BUY', '--tif', 'DAY', '--order-type', 'LIMIT'], async (t) => {
      await t.answer('Instrument', ...'ES 13-25', enter);
      await t.waitFor("must be 01-12, got '13' in 'ES 13-25'");
      await t.type(...Array<string>(8).fill(backspace), ...'ES 12-25', enter);
      await t.answer('Quantity', enter);
      await t.waitFor('is required');
      await t.type('1', '.', '5', enter);
      await t.waitFor('must be a whole number, got 1.5');
      await t.type(backspace, backspace, backspace, '0', enter);
      await t.waitFor('must be at least 1, got 0');
      await t.type(backspace, '2', enter);
      await t.answer('Limit price', enter);
      await t.waitFor('is required for LIMIT orders');
      await t.type(...'-3', enter);
      await t.waitFor('must be a positive number, got -3');
      await t.type(backspace, backspace, ...'4500', enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)).toEqual([
      '✔ Instrument (e.g. ES 09-25) ES 12-25',
      '✔ Quantity (contracts) 2',
      '✔ Limit price 4500',
      '✔ Send this order? Yes',
    ]);
    expect(storeRows('SELECT instrument, quantity, limit_price, oco_id, strategy FROM orders')).toEqual([
      { instrument: 'ES 12-25', quantity: 2, limit_price: 4500, oco_id: null, strategy: null },
    ]);
  });

  it('offers only the order types that use a price given as a flag', async () => {
    const result = await interactive(['place', ...orderArgs({ '--order-type': null }), '--limit-price', '4500'], async (t) => {
      await t.waitFor('Order type');
      await t.waitFor('MARKET (does not use --limit-price)');
      // The cursor starts on the first type that can be picked.
      await t.type(enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)[0]).toBe('✔ Order type LIMIT');
    expect(result.stderr).toContain('- STOPMARKET (does not use --limit-price)');
    expect(storeRows('SELECT order_type, limit_price FROM orders')).toEqual([{ order_type: 'LIMIT', limit_price: 4500 }]);
  });

  it("lists the backend's accounts when no account is configured", async () => {
    await runCli(['accounts', 'add', 'Sim102'], env);
    const result = await interactive(['place', ...orderArgs({ '--account': null, '--instrument': null })], async (t) => {
      await t.waitFor('? Account\n❯ Sim101\n  Sim102\n');
      await t.type(down, enter);
      await t.answer('Instrument', ...'CL 01-26', enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)[0]).toBe('✔ Account Sim102');
    expect(storeRows('SELECT account, instrument FROM orders')).toEqual([{ account: 'Sim102', instrument: 'CL 01-26' }]);
  });

  it.each([
    { source: 'the config', setting: ['config', 'set', 'account', 'sim102'], extraEnv: {} },
    { source: 'TRADE_ACCOUNT', setting: undefined, extraEnv: { TRADE_ACCOUNT: 'sim102' } },
  ])('does not ask for the account $source sets', async ({ setting, extraEnv }) => {
    await runCli(['accounts', 'add', 'Sim102'], env);
    if (setting) expect((await runCli(setting, env)).code).toBe(0);
    const result = await interactive(
      ['place', ...orderArgs({ '--account': null, '--quantity': null })],
      async (t) => {
        await t.answer('Quantity', '2', enter);
        await t.answer('Send this order?', enter);
      },
      extraEnv,
    );
    expect(result.code).toBe(0);
    expect(answered(result.screen)).toEqual(['✔ Quantity (contracts) 2', '✔ Send this order? Yes']);
    expect(result.screen).not.toContain('Account');
    expect(result.screen).toContain('· account sim102 ·');
    expect(storeRows('SELECT account, quantity FROM orders')).toEqual([{ account: 'Sim102', quantity: 2 }]);
  });

  it('with -i asks the account too, from the list, the configured one chosen', async () => {
    await runCli(['accounts', 'add', 'Sim102'], env);
    expect((await runCli(['config', 'set', 'account', 'Sim102'], env)).code).toBe(0);
    const result = await interactive(['place', ...orderArgs({ '--account': null }), '-i'], async (t) => {
      await t.waitFor('? Account\n  Sim101\n❯ Sim102\n');
      await t.type(enter);
      for (const q of ['Instrument', 'Action', 'Quantity', 'Order type', 'Time in force', 'OCO group id']) await t.answer(q, enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)[0]).toBe('✔ Account Sim102');
    expect(storeRows('SELECT account FROM orders')).toEqual([{ account: 'Sim102' }]);
  });

  it('when the account list cannot be read, says so and asks for a typed name, checked as it is typed', async () => {
    // A port nothing listens on: ListAccounts fails, and so would the order.
    const { createServer } = await import('node:net');
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const extraEnv = { TRADE_BACKEND: 'http', TRADE_BASE_URL: `http://127.0.0.1:${port}`, TRADE_TOKEN: 'a-token-for-nothing-0123', TRADE_TIMEOUT: '1' };
    const result = await interactive(
      ['place', ...orderArgs({ '--account': null })],
      async (t) => {
        await t.waitFor('Cannot list the accounts (');
        await t.waitFor('type the name instead.');
        await t.answer('Account', enter);
        await t.waitFor('is required');
        await t.type(...'x'.repeat(65), enter);
        await t.waitFor('must be at most 64 characters');
        await t.type(ctrlC);
      },
      extraEnv,
    );
    expect(result.code).toBe(130);
    expect(result.screen).not.toContain('✔ Account');
  });

  it('refuses an unknown --strategy before the first question, naming the templates', async () => {
    expect((await runCli(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16'], env)).code).toBe(0);
    const result = await interactive(['place', ...orderArgs({ '--quantity': null }), '--strategy', 'Scalpp'], async () => {});
    expect(result.code).toBe(2);
    expect(result.screen).not.toContain('?');
    expect(result.stderr).toContain("--strategy: ATM strategy template 'Scalpp' not found; the list has Scalp");
    expect(storeRows('SELECT * FROM orders')).toEqual([]);
  });

  it('keeps stdout to the JSON body while the prompts draw on stderr', async () => {
    const result = await interactive(['place', ...orderArgs({ '--quantity': null }), '--json'], async (t) => {
      await t.answer('Quantity', '5', enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.stdout).toBe(`{"orderId":"${ID1}","success":true}\n`);
    expect(result.stderr).toContain('Quantity');
  });

  it('-y/--yes sends after the prompts without the confirm', async () => {
    const result = await interactive(['place', ...orderArgs({ '--tif': null }), '-y'], async (t) => {
      await t.answer('Time in force', enter);
    });
    expect(result.code).toBe(0);
    // The result says what was placed; the line before the confirm would only repeat it.
    expect(result.screen).not.toMatch(/Place:|Send this order\?/);
    expect(storeRows('SELECT time_in_force FROM orders')).toEqual([{ time_in_force: 'DAY' }]);
  });

  it('sends at once, without a question, when every flag is given', async () => {
    const result = await interactive(['place', ...orderArgs()], async () => {});
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(storeRows('SELECT quantity FROM orders')).toEqual([{ quantity: 1 }]);
  });
});

describe('cancelling', () => {
  it('declining the confirm sends nothing: exit 130', async () => {
    const result = await interactive(['place', ...orderArgs({ '--instrument': null })], async (t) => {
      await t.answer('Instrument', ...'ES 09-25', enter);
      await t.answer('Send this order? (Y/n)', 'n', enter);
    });
    expect(result.code).toBe(130);
    expect(result.stdout).toBe('');
    expect(result.screen).toMatch(/✔ Send this order\? No\nCancelled — nothing was sent\.\n$/);
    expect(storeRows('SELECT * FROM orders')).toEqual([]);
  });

  it('Ctrl-C at a question sends nothing: exit 130', async () => {
    const result = await interactive(['place', '--account', 'Sim101', '--json'], async (t) => {
      await t.answer('Instrument', ...'ES 09-25', enter);
      await t.answer('Action', ctrlC);
    });
    expect(result).toMatchObject({ code: 130, stdout: '{"error":"Cancelled — nothing was sent."}\n' });
    expect(storeRows('SELECT * FROM orders')).toEqual([]);
  });

  it('Ctrl-D on an empty answer sends nothing: exit 130', async () => {
    const result = await interactive(['place', '--account', 'Sim101'], async (t) => {
      await t.answer('Instrument', ctrlD);
    });
    expect(result).toMatchObject({ code: 130, stdout: '' });
    expect(result.screen.trimEnd().split('\n').at(-1)).toBe('Cancelled — nothing was sent.');
    expect(storeRows('SELECT * FROM orders')).toEqual([]);
  });

  it('Ctrl-C at the confirm sends nothing: exit 130', async () => {
    const result = await interactive(['place', ...orderArgs({ '--action': null })], async (t) => {
      await t.answer('Action', enter);
      await t.answer('Send this order?', ctrlC);
    });
    expect(result.code).toBe(130);
    expect(result.screen.trimEnd().split('\n').at(-1)).toBe('Cancelled — nothing was sent.');
    expect(storeRows('SELECT * FROM orders')).toEqual([]);
  });
});


describe('trade place at a terminal: a mistake is caught where it is typed', () => {
  it("refuses a price off the instrument's tick at its prompt, naming the nearest valid prices, with the last price shown", async () => {
    expect((await runCli(['price', 'set', 'ES 09-25', '6000.25'], env)).code).toBe(0);
    const argv = ['place', '--account', 'Sim101', '--instrument', 'es 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'LIMIT', '--tif', 'DAY'];
    const result = await interactive(argv, async (t) => {
      await t.answer('Limit price (last 6000.25)', ...'5999.1', enter);
      await t.waitFor('5999.1 is not a multiple of the tick size 0.25 of ES; the nearest valid prices are 5999 and 5999.25');
      await t.type(backspace, ...'25', enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)).toEqual(['✔ Limit price (last 6000.25) 5999.25', '✔ Send this order? Yes']);
    expect(storeRows('SELECT instrument, order_type, limit_price FROM orders')).toEqual([
      { instrument: 'ES 09-25', order_type: 'LIMIT', limit_price: 5999.25 },
    ]);
  });

  it('asks a price without a hint when the instrument has no last price, and checks the stop price against the tick too', async () => {
    const argv = ['place', '--account', 'Sim101', '--instrument', 'NQ 12-25', '--action', 'SELL', '--quantity', '1', '--order-type', 'STOPMARKET', '--tif', 'DAY'];
    const result = await interactive(argv, async (t) => {
      await t.answer('Stop price', ...'21000.3', enter);
      await t.waitFor('21000.3 is not a multiple of the tick size 0.25 of NQ; the nearest valid prices are 21000.25 and 21000.5');
      await t.type(backspace, ...'5', enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)).toEqual(['✔ Stop price 21000.5', '✔ Send this order? Yes']);
    expect(storeRows('SELECT stop_price FROM orders')).toEqual([{ stop_price: 21000.5 }]);
  });

  it("refuses a quantity above the guard's max-order-qty at its prompt, naming where the rule is set", async () => {
    const result = await interactive(['place', ...orderArgs({ '--quantity': null })], async (t) => {
      await t.answer('Quantity', '5', enter);
      await t.waitFor("5 is above the guard's max-order-qty of 3 (TRADE_GUARD_MAX_ORDER_QTY): the guard would refuse it");
      await t.type(backspace, '3', enter);
      await t.answer('Send this order?', enter);
    }, { TRADE_GUARD_MAX_ORDER_QTY: '3' });
    expect(result.code).toBe(0);
    expect(storeRows('SELECT quantity FROM orders')).toEqual([{ quantity: 3 }]);
  });

  it('wraps a long refusal at word boundaries to the terminal width', async () => {
    const argv = ['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'LIMIT', '--tif', 'DAY'];
    const result = await interactive(argv, async (t) => {
      await t.answer('Limit price', ...'5999.1', enter);
      await t.waitFor('5999 and 5999.25');
      await t.type(ctrlC);
    }, { COLUMNS: '40' });
    expect(result.code).toBe(130);
    expect(result.screen).toContain(
      '> 5999.1 is not a multiple of the tick\n  size 0.25 of ES; the nearest valid\n  prices are 5999 and 5999.25\n',
    );
    expect(storeRows('SELECT * FROM orders')).toEqual([]);
  });
});
