/**
 * The built bin in a real pseudo-terminal (util-linux `script`): a person types the answers, then
 * the engine's store is checked. Skipped where `script` is not installed.
 */
import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { tempHome } from '../helpers/cli.js';
import { KEY, runInPty } from '../helpers/terminal.js';

const { enter, down, ctrlC } = KEY;

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
      await t.answer('OCO group id', enter);
      await t.answer('ATM strategy', enter);
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
        '✔ OCO group id (Enter skips)',
        '✔ ATM strategy (Enter skips)',
        `Place: SELL 2 NQ 12-25 LIMIT limit 21000.25 DAY · account Sim101 · embedded (${join(env.TRADE_HOME!, 'trade.db')})`,
        '✔ Send this order? Yes',
        'Placed SELL 2 NQ 12-25 LIMIT limit 21000.25 DAY',
      ].join('\n'),
    );
    expect(orders()).toEqual([
      { account: 'Sim101', instrument: 'NQ 12-25', action: 'SELL', quantity: 2, order_type: 'LIMIT', limit_price: 21000.25, time_in_force: 'DAY', state: 'WORKING' },
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
