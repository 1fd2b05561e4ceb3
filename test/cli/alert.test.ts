/**
 * `trade alert`: alert messages (the service's webhook language) run on the embedded engine, with
 * `--check` sending nothing; exit codes as for any command; the options the client applies
 * itself (the kill switch as the guard's halt, the rate limit in its ledger, the delay and
 * cancel_after waited for) and those it refuses, pointing to --webhook.
 */
import { PassThrough } from 'node:stream';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { runAlertCommand } from '../../src/cli/commands/alert.js';
import { createEngine } from '../../src/engine/engine.js';
import type { Env } from '../../src/config/paths.js';
import { runCli, tempHome } from '../helpers/cli.js';
import { inProcess } from '../helpers/in-process.js';
import { HARNESS_TOKEN } from '../helpers/tokens.js';

const KEY = HARNESS_TOKEN;
const ES = 'ES 09-26';
const BUY = (extra = '') => `key=${KEY}; command=PLACE; account=Sim101; instrument=${ES}; action=BUY; qty=1; order_type=MARKET; tif=DAY; ${extra}`;

let home: ReturnType<typeof tempHome>;
let env: Env;
beforeEach(() => {
  home = tempHome();
  env = home.env;
});
afterEach(() => home.cleanup());

const cli = (argv: string[], input?: string) => {
  if (input === undefined) return runCli(argv, env);
  const stdin = new PassThrough();
  stdin.end(input);
  return runCli(argv, env, { stdin });
};
const orders = () => {
  const engine = createEngine(join(env.TRADE_HOME!, 'trade.db'));
  try {
    return engine.listOrders({}).map((o) => [o.account, o.action, o.quantity, o.orderType, o.limitPrice ?? o.stopPrice ?? null, o.state]);
  } finally {
    engine.close();
  }
};
const price = async (p: number) => expect((await cli(['price', 'set', ES, String(p)])).code).toBe(0);

describe('trade alert --check', () => {
  test('prints the operations, their args and the options; sends nothing, opens nothing', async () => {
    const result = await cli([
      'alert',
      '--check',
      `key=${KEY}; command=PLACE; account=Sim101,Sim102; instrument=${ES}; action=BUY; qty=2; order_type=LIMIT; limit_price=-10 ticks; tif=DAY; cancel_after=5; delay=1.5; open=6000;`,
    ]);
    expect(result).toEqual({
      code: 0,
      stdout: [
        'PLACE',
        `  Sim101: PlaceOrder {"account":"Sim101","instrument":"${ES}","action":"BUY","quantity":2,"orderType":"LIMIT","timeInForce":"DAY","limitPrice":"-10 ticks"}`,
        `  Sim102: PlaceOrder {"account":"Sim102","instrument":"${ES}","action":"BUY","quantity":2,"orderType":"LIMIT","timeInForce":"DAY","limitPrice":"-10 ticks"}`,
        '  option: delay: 1.5 s before anything else',
        '  option: multi-account: the command once per account (Sim101, Sim102)',
        '  option: cancel after: the order is cancelled if not filled within 5 min',
        '  ignored fields: open',
        '',
      ].join('\n'),
      stderr: 'Checked only: nothing was sent.\n',
    });
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
  });

  test('--json: one line per message; what trade alert itself cannot apply is said', async () => {
    const file = join(home.dir, 'alerts.txt');
    writeFileSync(file, `${BUY('strategy_tag=ORB;')}\n\n  \n// the second one\nkey=${KEY};\nkill_switch=on;\n`);
    const result = await cli(['alert', '--check', '--json', file]);
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n').map((l) => JSON.parse(l))).toEqual([
      {
        alert: 1,
        command: 'PLACE',
        calls: [{ account: 'Sim101', operation: 'PlaceOrder', args: { account: 'Sim101', instrument: ES, action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' } }],
        options: ["strategy lock: the instrument belongs to strategy 'ORB'"],
        warnings: [],
        ignoredFields: [],
        notByTradeAlert: "strategy_tag needs the service's strategy lock, which only its webhook keeps; use --webhook",
      },
      { alert: 2, killSwitch: 'on', warnings: [], ignoredFields: [] },
    ]);
  });

  test('a message that does not parse: its exact error, exit 2, and never its key', async () => {
    const result = await cli(['alert', '--check', `key=${KEY}\ncommand=PLACE;`]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: "Error: invalid_format: missing ';' after 'key=[redacted]'\n  Nothing was sent. docs/webhook-reference.md has the message language.\n",
    });
    expect(await cli(['alert', '--check', BUY('qty=1.5;')])).toMatchObject({ code: 2, stderr: expect.stringContaining("Error: invalid_value: qty: '1.5' is not a whole number from 1 to 100000\n") });
    expect(await cli(['alert', '--check', 'no-such-file.txt'])).toMatchObject({ code: 2, stderr: expect.stringContaining('Error: Cannot read no-such-file.txt: ENOENT') });
  });
});

describe('trade alert on the embedded engine', () => {
  test('a market entry with a bracket in ticks: the three orders, each through the guard', async () => {
    await price(6000);
    const result = await cli(['alert', BUY('take_profit=8 ticks; stop_loss=-4 ticks;')]);
    expect(result.code).toBe(0);
    const lines = result.stdout.split('\n');
    expect(lines[0]).toBe('PLACE success');
    expect(lines[1]).toMatch(new RegExp(`^  Sim101: PlaceOrder BUY 1 ${ES} MARKET DAY → order [0-9a-f]{8}$`));
    expect(lines[2]).toMatch(new RegExp(`^  Sim101: PlaceOrder SELL 1 ${ES} LIMIT limit 6002 GTC OCO br-[0-9a-f]{32} → order [0-9a-f]{8}$`));
    expect(lines[3]).toMatch(new RegExp(`^  Sim101: PlaceOrder SELL 1 ${ES} STOPMARKET stop 5999 GTC OCO br-[0-9a-f]{32} → order [0-9a-f]{8}$`));
    expect(orders()).toEqual([
      ['Sim101', 'BUY', 1, 'MARKET', null, 'FILLED'],
      ['Sim101', 'SELL', 1, 'LIMIT', 6002, 'WORKING'],
      ['Sim101', 'SELL', 1, 'STOPMARKET', 5999, 'WORKING'],
    ]);
    const history = await cli(['history', '--json']);
    expect((JSON.parse(history.stdout) as { entries: Array<{ source: string; operation: string; outcome: string }> }).entries.map((l) => [l.source, l.operation, l.outcome])).toEqual([
      ['alert', 'PlaceOrder', 'accepted'],
      ['alert', 'PlaceOrder', 'accepted'],
      ['alert', 'PlaceOrder', 'accepted'],
    ]);
  });

  test('exit codes: blocked by a condition 1, refused by the guard 6, a value wrong 2, and --json says which', async () => {
    await price(6000);
    await cli(['alert', BUY()]);
    const blocked = await cli(['alert', '--json', BUY('require_market_position=flat;')]);
    expect(blocked.code).toBe(1);
    expect(JSON.parse(blocked.stdout)).toMatchObject({
      command: 'PLACE',
      status: 'failed',
      results: [{ account: 'Sim101', status: 'failed', error: 'market_position_blocked', detail: `Market position requirement not met: ${ES} in account 'Sim101' is Long; required flat` }],
    });
    const guarded = await cli(['--guard', 'max-order-qty=1', 'alert', BUY('qty=2;')]);
    expect(guarded.code).toBe(6);
    expect(guarded.stdout).toContain('refused by guard max-order-qty: quantity 2 is above the limit of 1');
    const wrongSide = await cli(['alert', BUY('take_profit=5990;')]);
    expect(wrongSide.code).toBe(2);
    expect(orders().filter((o) => o[5] === 'FILLED')).toHaveLength(1);
  });

  test('what only the webhook applies is refused before anything is sent, pointing to --webhook', async () => {
    await price(6000);
    const result = await cli(['alert', BUY('strategy_tag=ORB;')]);
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "Error: trade alert cannot apply this message: strategy_tag needs the service's strategy lock, which only its webhook keeps.\n" +
        "  Nothing was sent. `trade alert --webhook` sends it to the service's own webhook, which applies every option.\n",
    });
    const limit = await cli(['alert', `${BUY('take_profit=4 ticks;')}`.replace('order_type=MARKET', 'order_type=LIMIT; limit_price=5990')]);
    expect(limit.code).toBe(2);
    expect(limit.stderr).toContain('a bracket on a LIMIT entry waits for the fill');
    expect(orders()).toEqual([]);
  });

  test('several messages from stdin, run in order; the first wrong one stops them all before anything is sent', async () => {
    await price(6000);
    const two = `${BUY()}\n\n${BUY().replace('BUY', 'SELL').replace('qty=1', 'qty=3')}\n`;
    const result = await cli(['alert', '-'], two);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^alert 1: PLACE success\n[\s\S]*\nalert 2: PLACE success\n/);
    expect(orders().map((o) => [o[1], o[2]])).toEqual([
      ['BUY', 1],
      ['SELL', 3],
    ]);
    const bad = await cli(['alert', '-'], `${BUY()}\n\n${BUY('tif=IOC;')}`);
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("Error: alert 2: invalid_value: tif: 'IOC' is not one of DAY, GTC") });
    expect(orders()).toHaveLength(2);
  });

  test('the kill switch is the guard\'s halt of the profile: every alert refused until it is off', async () => {
    await price(6000);
    expect(await cli(['alert', `key=${KEY}; kill_switch=on;`])).toMatchObject({ code: 0, stdout: expect.stringContaining('kill switch ON') });
    expect((await cli(['guard', 'show'])).stdout).toContain('State: profile default HALTED');
    const refused = await cli(['alert', '--json', BUY()]);
    expect(refused.code).toBe(6);
    expect(JSON.parse(refused.stdout)).toMatchObject({ status: 'failed', error: 'kill_switch_on', detail: 'Kill switch is on; alert not processed' });
    // The halt holds for every trade process, not only alerts.
    expect((await cli(['place', '--account', 'Sim101', '--instrument', ES, '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'])).code).toBe(6);
    expect((await cli(['alert', `key=${KEY}; kill_switch=off;`])).code).toBe(0);
    expect((await cli(['alert', BUY()])).code).toBe(0);
    expect(orders()).toHaveLength(1);
  });

  test('the rate limit is counted in the guard\'s ledger, across runs', async () => {
    await price(6000);
    const limited = BUY('rate_limit=2/600; id=relay-1;');
    expect((await cli(['alert', limited])).code).toBe(0);
    expect((await cli(['alert', limited])).code).toBe(0);
    const third = await cli(['alert', limited]);
    expect(third.code).toBe(6);
    expect(third.stdout).toContain("PLACE failed: rate_limited: Rate limit for id 'relay-1' reached: 2 per 600 s");
    expect(orders()).toHaveLength(2);
  });

  test('flat is a warning, not an error: exit 0', async () => {
    const result = await cli(['alert', `key=${KEY}; command=CLOSEPOSITION; account=Sim101; instrument=${ES};`]);
    expect(result).toMatchObject({ code: 0, stdout: `CLOSEPOSITION warning\n  Sim101: warning: No positions found for instrument '${ES}'\n  backend embedded (${join(env.TRADE_HOME!, 'trade.db')})\n` });
  });
});

describe('what the client waits for', () => {
  test('delay: waited before anything else; cancel_after: waited for, then the unfilled limit cancelled', async () => {
    await price(6000);
    let clock = Date.parse('2026-06-15T14:00:00Z');
    const slept: number[] = [];
    const run = inProcess(env);
    await runAlertCommand(
      run.ctx,
      `${BUY('delay=1.5;')}`.replace('order_type=MARKET', 'order_type=LIMIT; limit_price=-8 ticks; cancel_after=2'),
      {},
      {
        now: () => new Date(clock),
        sleep: async (ms) => {
          slept.push(ms);
          clock += ms;
        },
      },
    );
    expect(slept).toEqual([1500, 120_000]);
    expect(orders()).toEqual([['Sim101', 'BUY', 1, 'LIMIT', 5998, 'CANCELLED']]);
    expect(run.stderr.text).toContain('trade alert: waiting 1.5 s (delay)');
    expect(run.stderr.text).toContain('was not filled in time: cancelled (cancel_after)');
  });
});
