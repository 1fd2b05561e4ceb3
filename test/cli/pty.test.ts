/**
 * The built bin in a real pseudo-terminal (util-linux `script`): a person types the answers, then
 * the engine's store is checked. Skipped where `script` is not installed.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { runCli, tempHome } from '../helpers/cli.js';
import { KEY, runInPty } from '../helpers/terminal.js';

const { enter, down, backspace, ctrlC } = KEY;

let env: Env;
let cleanup: () => void;
beforeEach(() => ({ env, cleanup } = tempHome()));
afterEach(() => cleanup());

const orders = () => {
  const file = join(env.TRADE_HOME!, 'trade.db');
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true });
  const rows = db.prepare('SELECT account, instrument, action, quantity, order_type, limit_price, time_in_force, state FROM orders').all();
  db.close();
  return rows;
};

// `script` comes with util-linux's bsdutils, an Essential Debian package: always present here.
describe('trade in a real terminal', () => {
  it('asks, confirms and places the order a person typed', async () => {
    const { code, screen } = await runInPty(['place'], env, async (t) => {
      await t.answer('Account', enter);
      await t.answer('Instrument', 'NQ 12-25', enter);
      await t.answer('Action', down, enter);
      await t.answer('Quantity', '2', enter);
      await t.answer('Order type', down, enter);
      await t.answer('Limit price', '21000.25', enter);
      await t.answer('Time in force', enter);
      await t.answer('Send this order? (Y/n)', 'y', enter);
    });
    expect(code).toBe(0);
    expect(screen).toContain(
      [
        '✔ Account Sim101',
        '✔ Instrument (e.g. ES 09-25) NQ 12-25',
        '✔ Action SELL',
        '✔ Quantity (contracts) 2',
        '✔ Order type LIMIT',
        '✔ Limit price 21000.25',
        '✔ Time in force DAY',
        `Place: SELL 2 NQ 12-25 LIMIT limit 21000.25 DAY · account Sim101 · embedded (${join(env.TRADE_HOME!, 'trade.db')})`,
        '✔ Send this order? Yes',
        'Placed SELL 2 NQ 12-25 LIMIT limit 21000.25 DAY',
      ].join('\n'),
    );
    expect(orders()).toEqual([
      { account: 'Sim101', instrument: 'NQ 12-25', action: 'SELL', quantity: 2, order_type: 'LIMIT', limit_price: 21000.25, time_in_force: 'DAY', state: 'WORKING' },
    ]);
  });

  it('does not ask for the configured account; refuses a bad quantity and price as they are typed, then places the order', async () => {
    expect((await runCli(['accounts', 'add', 'Sim102'], env)).code).toBe(0);
    expect((await runCli(['config', 'set', 'account', 'Sim102'], env)).code).toBe(0);
    const { code, screen } = await runInPty(['place', '--instrument', 'ES 09-25', '--action', 'BUY', '--tif', 'DAY'], env, async (t) => {
      await t.answer('Quantity', '0', enter);
      await t.waitFor('must be at least 1, got 0');
      await t.type(backspace, '2', enter);
      await t.answer('Order type', down, enter);
      await t.answer('Limit price', ...'-3', enter);
      await t.waitFor('must be a positive number, got -3');
      await t.type(backspace, backspace, ...'4500.25', enter);
      await t.answer('Send this order? (Y/n)', enter);
    });
    expect(code).toBe(0);
    expect(screen).not.toContain('Account');
    expect(screen).toContain(['✔ Quantity (contracts) 2', '✔ Order type LIMIT', '✔ Limit price 4500.25', 'Place: BUY 2 ES 09-25 LIMIT limit 4500.25 DAY · account Sim102'].join('\n'));
    expect(orders()).toEqual([
      { account: 'Sim102', instrument: 'ES 09-25', action: 'BUY', quantity: 2, order_type: 'LIMIT', limit_price: 4500.25, time_in_force: 'DAY', state: 'WORKING' },
    ]);
  });

  it('-i: the account and the ATM template are picked from lists, the configured account chosen', async () => {
    for (const argv of [
      ['accounts', 'add', 'Sim102'],
      ['config', 'set', 'account', 'Sim102'],
      ['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16'],
      ['atm', 'add', 'Runner', '--stop-loss', '12', '--profit-target', '40'],
    ])
      expect((await runCli(argv, env)).code).toBe(0);
    const { code, screen } = await runInPty(['place', '-i', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'], env, async (t) => {
      await t.waitFor('Account');
      await t.waitFor('  Sim101');
      await t.answer('❯ Sim102', enter);
      for (const q of ['Instrument', 'Action', 'Quantity', 'Order type', 'Time in force', 'OCO group id']) await t.answer(q, enter);
      await t.waitFor('ATM strategy');
      await t.waitFor('❯ (none)');
      await t.waitFor('  Runner');
      await t.answer('  Scalp', down, enter);
      await t.answer('Send this order? (Y/n)', enter);
    });
    expect(code).toBe(0);
    expect(screen).toContain('✔ Account Sim102\n');
    expect(screen).toContain('✔ ATM strategy Runner\n');
    expect(screen).toContain('Place: BUY 1 ES 09-25 MARKET DAY ATM Runner · account Sim102');
    // The filled entry, then the Runner template's stop-loss and profit-target around it.
    expect(orders()).toMatchObject([
      { account: 'Sim102', action: 'BUY', order_type: 'MARKET', state: 'FILLED' },
      { account: 'Sim102', action: 'SELL', order_type: 'STOPMARKET', state: 'WORKING' },
      { account: 'Sim102', action: 'SELL', order_type: 'LIMIT', state: 'WORKING' },
    ]);
  });

  it('Ctrl-C at a question: "Cancelled — nothing was sent.", exit 130, nothing stored', async () => {
    const { code, screen } = await runInPty(['place', '--account', 'Sim101'], env, async (t) => {
      await t.answer('Instrument', 'ES 09-25', enter);
      await t.answer('Action', ctrlC);
    });
    expect(code).toBe(130);
    expect(screen.trimEnd().split('\n').at(-1)).toBe('Cancelled — nothing was sent.');
    expect(orders()).toEqual([]);
  });

  it('Ctrl-D on an empty answer: exit 130, nothing stored', async () => {
    const { code, screen } = await runInPty(['place', '--account', 'Sim101', '--json'], env, async (t) => {
      await t.answer('Instrument', KEY.ctrlD);
    });
    expect(code).toBe(130);
    expect(screen.trimEnd().split('\n').at(-1)).toBe('{"error":"Cancelled — nothing was sent."}');
    expect(orders()).toEqual([]);
  });

  it('--no-input in a terminal exits 2 at once, naming the missing flags', async () => {
    const started = Date.now();
    const { code, screen } = await runInPty(['place', '--account', 'Sim101', '--no-input'], env, async () => {});
    expect(code).toBe(2);
    expect(screen).toContain('Missing required flags: --instrument, --action, --quantity, --order-type, --tif');
    expect(screen).not.toContain('?');
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});
