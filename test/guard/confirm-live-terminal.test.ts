/**
 * The guard's confirm-live rule at a terminal (real inquirer prompts, in-process): an order to an
 * account that is not a simulation account is sent only once its name is typed back exactly.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, queryStore, runCli, tempHome } from '../helpers/cli.js';
import { KEY, runInTerminal } from '../helpers/terminal.js';

let env: Env;
let cleanup: () => void;
beforeEach(async () => {
  ({ env, cleanup } = tempHome());
  env = { ...env, TRADE_GUARD_CONFIRM_LIVE: 'on' };
  expect((await runCli(['accounts', 'add', 'U1234'], env)).code).toBe(0);
});
afterEach(() => cleanup());

const orders = () => queryStore(env, 'SELECT account FROM orders');
const place = (account: string, typed: string) =>
  runInTerminal(['place', ...orderArgs({ '--account': account }), '--yes'], env, async (t) => {
    await t.answer('Type the account name (U1234) to send it:', ...typed, KEY.enter);
  });

describe('confirm-live at a terminal', () => {
  it('a live account is sent once its name is typed back', async () => {
    const run = await place('U1234', 'U1234');
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).toContain('U1234 is not a simulation account: this order is real.');
    expect(orders()).toEqual([{ account: 'U1234' }]);
  });

  it('another answer refuses it (exit 6) and nothing is sent', async () => {
    const run = await place('U1234', 'u1234');
    expect(run.code).toBe(6);
    expect(run.stderr).toContain('refused by guard confirm-live: account U1234 is not a simulation account and was not confirmed');
    expect(orders()).toEqual([]);
  });

  it('a simulation account is not asked', async () => {
    const run = await runInTerminal(['place', ...orderArgs(), '--yes'], env, async () => undefined);
    expect(run.code, run.screen).toBe(0);
    expect(run.screen).not.toContain('Type the account name');
    expect(orders()).toEqual([{ account: 'Sim101' }]);
  });
});
