/** `-i/--interactive` review and `trade reverse` at a terminal, with the real inquirer prompts. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { ORDER_COLUMNS, orderArgs, queryStore, runCli, tempHome } from '../helpers/cli.js';
import { KEY, answered, runInTerminal, type Terminal } from '../helpers/terminal.js';

const { enter, down, backspace } = KEY;

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

describe('-i/--interactive', () => {
  it('asks every field with the flag values as defaults, even when all are given; the ATM template from a list', async () => {
    expect((await runCli(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16'], env)).code).toBe(0);
    expect((await runCli(['atm', 'add', 'Runner', '--stop-loss', '12', '--profit-target', '40'], env)).code).toBe(0);
    const argv = ['place', ...orderArgs({ '--order-type': 'LIMIT' }), '--limit-price', '4500', '--strategy', 'scalp', '-i'];
    const result = await interactive(argv, async (t) => {
      await t.answer('Account', enter);
      await t.answer('Instrument (e.g. ES 09-25) (ES 09-25)', enter);
      await t.answer('Action', enter);
      await t.answer('Quantity (contracts) (1)', backspace, '4', enter);
      await t.answer('Order type', enter);
      await t.answer('Limit price (4500)', enter);
      await t.answer('Time in force', enter);
      await t.answer('OCO group id', enter);
      // The store's templates, in name order, the flag's one chosen.
      await t.answer('? ATM strategy\n  (none)\n  Runner\n❯ Scalp\n', enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(answered(result.screen)).toHaveLength(10);
    expect(answered(result.screen)[8]).toBe('✔ ATM strategy Scalp');
    expect(storeRows(`SELECT ${ORDER_COLUMNS} FROM orders`)).toEqual([
      { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 4, order_type: 'LIMIT', limit_price: 4500, stop_price: null, time_in_force: 'DAY', oco_id: null, strategy: 'Scalp' },
    ]);
  });

  it('drops a flag price that the newly picked order type does not use, and shows it in the summary', async () => {
    const argv = ['place', ...orderArgs({ '--order-type': 'LIMIT' }), '--limit-price', '4500', '--interactive', '--json'];
    const result = await interactive(argv, async (t) => {
      for (const q of ['Account', 'Instrument', 'Action', 'Quantity']) await t.answer(q, enter);
      await t.answer('Order type', KEY.up, enter);
      // The store has no ATM templates: nothing to pick, so no question.
      for (const q of ['Time in force', 'OCO group id']) await t.answer(q, enter);
      await t.answer('Send this order?', enter);
    });
    expect(result.code).toBe(0);
    expect(result.screen).not.toContain('Limit price');
    expect(result.screen).toContain('Place: BUY 1 ES 09-25 MARKET DAY · account Sim101');
    expect(storeRows('SELECT order_type, limit_price FROM orders')).toEqual([{ order_type: 'MARKET', limit_price: null }]);
  });
});

describe('trade reverse at a terminal', () => {
  it('asks for the new order, says the position is closed first, then reverses it', async () => {
    await runCli(['place', ...orderArgs({ '--quantity': '2' })], env, { engine });
    const result = await interactive(['reverse', '--account', 'Sim101', '--instrument', 'ES 09-25'], async (t) => {
      await t.answer('Action', down, enter);
      await t.answer('Quantity', '1', enter);
      await t.answer('Order type', enter);
      await t.answer('Time in force', enter);
      await t.answer('Close the position and send this order? (Y/n)', 'y', enter);
    });
    expect(result.code).toBe(0);
    expect(result.screen).toContain('Reverse: close ES 09-25, then SELL 1 ES 09-25 MARKET DAY · account Sim101 · embedded (');
    expect(result.stdout.split('\n')[0]).toBe('Reversed ES 09-25 in Sim101');
    expect(storeRows('SELECT quantity FROM positions')).toEqual([{ quantity: -1 }]);
  });

  it('declined, leaves the position as it was', async () => {
    await runCli(['place', ...orderArgs({ '--quantity': '2' })], env, { engine });
    const result = await interactive(['reverse', ...orderArgs({ '--action': 'SELL', '--tif': null })], async (t) => {
      await t.answer('Time in force', enter);
      await t.answer('Close the position and send this order?', 'n', enter);
    });
    expect(result.code).toBe(130);
    expect(storeRows('SELECT quantity FROM positions')).toEqual([{ quantity: 2 }]);
    expect(storeRows('SELECT COUNT(*) AS n FROM orders')).toEqual([{ n: 1 }]);
  });
});
