/**
 * Tables that fit the terminal (issue 17): snapshots of orders, positions and executions at 60, 80
 * and 120 columns; order ids shown as unique prefixes and taken back as prefixes by every command
 * that takes one (embedded, and http against a real `trade serve`); and a default account that
 * says so, with --all-accounts for every account.
 */
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, queryStore, runBin, runCli, tempHome, type CliResult } from '../helpers/cli.js';
import { killServes, startServe } from '../helpers/serve-process.js';

let env: Env;
let cleanup: () => void;
const now = new Date('2025-09-02T14:00:00Z');

/**
 * Order ids the engine hands out, in order: the first two share their first 12 characters, so a
 * table shows them with 13; the third shares 8 with neither. Execution ids count up.
 */
const ORDER_IDS = [
  'a1b2c3d4e5f60718293a4b5c6d7e8f90',
  'a1b2c3d4e5f6f1e2d3c4b5a697887766',
  '5c0ffee0d15ea5e0a11ce0b0b0c0ffee',
  '7e57ab1e00000000000000000000beef',
  '90210aaaabbbbccccddddeeeeffff0000',
].map((id) => id.slice(0, 32));
let nextOrder = 0;
let nextExecution = 0;
const engine = {
  now: () => now,
  newOrderId: () => ORDER_IDS[nextOrder++] ?? `f${String(nextOrder).padStart(31, '0')}`,
  newExecutionId: () => `e${String(++nextExecution).padStart(31, '0')}`,
};

class Terminal {
  text = '';
  constructor(readonly columns: number | undefined, readonly isTTY = true) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

/** In-process, as at a terminal this wide (or piped, with no width). */
async function at(columns: number | undefined, argv: string[], extraEnv: Env = {}): Promise<CliResult> {
  const stdout = new Terminal(columns, columns !== undefined);
  const stderr = new Terminal(columns, columns !== undefined);
  const stdin = new PassThrough();
  stdin.end();
  const code = await run(argv, { stdin, stdout, stderr, env: { ...env, ...extraEnv }, engine });
  return { code, stdout: stdout.text, stderr: stderr.text };
}
const cli = (argv: string[], extraEnv: Env = {}) => at(undefined, argv, extraEnv);
const ok = async (argv: string[]) => {
  const result = await cli(argv);
  expect(result.code, result.stderr).toBe(0);
  return result;
};
const states = () => queryStore(env, 'SELECT order_id AS id, state FROM orders ORDER BY seq');

/** The store's path is the one thing that differs from run to run. */
const masked = (r: CliResult) => `$ exit ${r.code}\n${r.stdout}--- stderr\n${r.stderr.replaceAll(env.TRADE_HOME!, '<home>')}`;

beforeEach(() => {
  ({ env, cleanup } = tempHome());
  nextOrder = 0;
  nextExecution = 0;
});
afterEach(async () => {
  await killServes();
  cleanup();
});

/**
 * Sim101: long 2 ES 09-25 (a1b2…, filled at 4500), a SELL LIMIT 4510.25 GTC (a1b2…f1…) and a
 * SELL STOPMARKET 4490 (5c0f…) working; Sim102: short 1 ES 09-25 (7e57…). Last price 4502.5.
 */
async function trades(): Promise<void> {
  await ok(['price', 'set', 'ES 09-25', '4500']);
  await ok(['accounts', 'add', 'Sim102']);
  await ok(['place', ...orderArgs({ '--quantity': '2' })]);
  await ok(['place', ...orderArgs({ '--action': 'SELL', '--order-type': 'LIMIT', '--tif': 'GTC' }), '--limit-price', '4510.25']);
  await ok(['place', ...orderArgs({ '--action': 'SELL', '--order-type': 'STOPMARKET' }), '--stop-price', '4490']);
  await ok(['place', ...orderArgs({ '--account': 'Sim102', '--action': 'SELL' })]);
  await ok(['price', 'set', 'ES 09-25', '4502.5']);
}

describe('tables fit the terminal', () => {
  for (const width of [60, 80, 120]) {
    it(`orders, positions and executions at ${width} columns`, async () => {
      await trades();
      for (const argv of [['orders', '--account', 'Sim101'], ['positions'], ['executions', '--account', 'Sim101', '--lookback', '900']]) {
        const result = await at(width, argv);
        expect(result.code).toBe(0);
        for (const line of result.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(width);
        for (const line of result.stderr.split('\n')) expect(line.length).toBeLessThanOrEqual(width);
        expect(masked(result)).toMatchSnapshot(argv[0]);
      }
    });
  }

  it('piped, every column and whole ids, whatever the width would be', async () => {
    await trades();
    const piped = await cli(['orders', '--account', 'Sim101'], { COLUMNS: '60' });
    expect(piped.stdout.split('\n')[0]).toBe(
      'ORDER ID                          ACCOUNT  INSTRUMENT  ACTION  QTY  TYPE        LIMIT    STOP  TIF  STATE    FILLED  AVG FILL  TIME',
    );
    expect(piped.stdout).toContain(`${ORDER_IDS[0]}  Sim101`);
    expect(piped.stderr).not.toContain('Not shown');
  });

  it('a terminal that does not say its width is taken as 80 columns', async () => {
    await trades();
    const piped = await cli(['orders', '--account', 'Sim101']);
    const stdout = new Terminal(undefined, true);
    const stderr = new Terminal(undefined, true);
    const stdin = new PassThrough();
    stdin.end();
    expect(await run(['orders', '--account', 'Sim101'], { stdin, stdout, stderr, env, engine })).toBe(0);
    expect(stdout.text).toBe((await at(80, ['orders', '--account', 'Sim101'])).stdout);
    expect(stdout.text).not.toBe(piped.stdout);
  });

  it('--json is the service body, whole ids, at any width', async () => {
    await trades();
    const wide = await at(200, ['orders', '--account', 'Sim101', '--json']);
    const narrow = await at(60, ['orders', '--account', 'Sim101', '--json']);
    expect(narrow.stdout).toBe(wide.stdout);
    expect(JSON.parse(narrow.stdout).orders.map((o: { orderId: string }) => o.orderId)).toEqual(ORDER_IDS.slice(0, 3));
  });
});

describe('order ids by a unique prefix', () => {
  it('order, modify and cancel take a prefix on the embedded engine', async () => {
    await trades();
    const shown = await at(120, ['order', '5c0ffee0', '--account', 'Sim101']);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain(`  order id  ${ORDER_IDS[2]}\n`);
    expect((await at(120, ['modify', '5c0ffee0', '--account', 'Sim101', '--stop-price', '4488'])).stdout).toContain(`Changed order ${ORDER_IDS[2]}`);
    const cancelled = await cli(['cancel', 'a1b2c3d4e5f6f']);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout.split('\n')[0]).toBe(`Cancelled order ${ORDER_IDS[1]}`);
    expect(states()).toEqual([
      { id: ORDER_IDS[0], state: 'FILLED' },
      { id: ORDER_IDS[1], state: 'CANCELLED' },
      { id: ORDER_IDS[2], state: 'WORKING' },
      { id: ORDER_IDS[3], state: 'FILLED' },
    ]);
  });

  it('replace takes a prefix; the old order is cancelled and the new one placed', async () => {
    await trades();
    const replaced = await cli(['replace', '5c0ffee', ...orderArgs({ '--action': 'SELL', '--order-type': 'STOPMARKET' }), '--stop-price', '4485']);
    expect(replaced.code, replaced.stderr).toBe(0);
    expect(replaced.stdout).toContain(`  cancelled  ${ORDER_IDS[2]}\n`);
    expect(states().slice(2)).toEqual([
      { id: ORDER_IDS[2], state: 'CANCELLED' },
      { id: ORDER_IDS[3], state: 'FILLED' },
      { id: ORDER_IDS[4], state: 'WORKING' },
    ]);
  });

  it('an ambiguous prefix is a usage error listing the candidates, and nothing is cancelled or changed', async () => {
    await trades();
    const before = states();
    const cancel = await cli(['cancel', 'a1b2c3d4']);
    expect(cancel).toEqual({
      code: 2,
      stdout: '',
      stderr:
        `Error: Order id 'a1b2c3d4' is ambiguous: 2 orders start with it: ${ORDER_IDS[0]} (Sim101), ${ORDER_IDS[1]} (Sim101)\n` +
        "  Nothing was sent. Give more of the id; run 'trade cancel --help' for examples.\n",
    });
    expect((await cli(['modify', 'a1b2c3d4e5f6', '--account', 'Sim101', '--quantity', '3'])).code).toBe(2);
    expect((await cli(['replace', 'a1b2', ...orderArgs()])).code).toBe(2);
    expect(states()).toEqual(before);
    expect(queryStore(env, "SELECT quantity FROM orders WHERE order_id = 'a1b2c3d4e5f6f1e2d3c4b5a697887766'")).toEqual([{ quantity: 1 }]);
  });

  it('an unknown prefix, or one under 4 characters, is the usual not-found refusal', async () => {
    await trades();
    expect(await cli(['cancel', 'ffff0000'])).toEqual({
      code: 1,
      stdout: '',
      stderr: "Error: Order linked to 'ffff0000' not found or already terminal.\n",
    });
    expect((await cli(['cancel', '5c0', '--account', 'Sim101'])).stderr).toBe("Error: Order linked to '5c0' not found or already terminal.\n");
    // A prefix is looked for in the account given only.
    expect((await cli(['cancel', '5c0ffee0', '--account', 'Sim102'])).code).toBe(1);
    expect(states()[2]).toEqual({ id: ORDER_IDS[2], state: 'WORKING' });
  });

  it('an exact client id wins over the ids it begins', async () => {
    await ok(['price', 'set', 'ES 09-25', '4500']);
    await ok(['place', ...orderArgs({ '--order-type': 'LIMIT' }), '--limit-price', '4490', '--order-id', 'a1b2c3d4']);
    await ok(['place', ...orderArgs({ '--order-type': 'LIMIT' }), '--limit-price', '4491']);
    expect((await cli(['cancel', 'a1b2c3d4'])).stdout.split('\n')[0]).toBe('Cancelled order a1b2c3d4');
    // The table then shows the other with more than the client id, so it cannot be mistaken for it.
    const table = await at(120, ['orders', '--account', 'Sim101']);
    expect(table.stdout).toContain('\na1b2c3d4e  ');
  });

  it('over http against trade serve: a prefix resolves through GetOrders; an ambiguous one sends nothing', async () => {
    const token = 'tables-test-token-0123456789';
    const serve = await startServe(env, token);
    const remote = { ...env, TRADE_BACKEND: 'http', TRADE_BASE_URL: serve.url, TRADE_TOKEN: token };
    const http = (argv: string[]) => runBin(argv, remote);
    expect((await http(['price', 'set', 'ES 09-25', '4500', '--backend', 'embedded'])).code).toBe(0);
    for (const [id, price] of [[ORDER_IDS[0], '4490'], [ORDER_IDS[1], '4489'], [ORDER_IDS[2], '4488']] as const)
      expect((await http(['place', ...orderArgs({ '--order-type': 'LIMIT' }), '--limit-price', price, '--order-id', id])).code).toBe(0);
    const ambiguous = await http(['cancel', 'a1b2c3d4', '--account', 'Sim101']);
    expect(ambiguous.code).toBe(2);
    expect(ambiguous.stderr).toContain(`Error: Order id 'a1b2c3d4' is ambiguous: 2 orders start with it: ${ORDER_IDS[0]} (Sim101), ${ORDER_IDS[1]} (Sim101)\n`);
    expect(states().map((s) => (s as { state: string }).state)).toEqual(['WORKING', 'WORKING', 'WORKING']);
    const status = await http(['order', '5c0ffee0', '--account', 'Sim101', '--status']);
    expect(status).toMatchObject({ code: 0, stdout: 'Working\n' });
    const cancelled = await http(['cancel', 'a1b2c3d4e5f6f', '--account', 'Sim101']);
    expect(cancelled.code, cancelled.stderr).toBe(0);
    expect(cancelled.stdout.split('\n')[0]).toBe(`Cancelled order ${ORDER_IDS[1]}`);
    expect(states().map((s) => (s as { state: string }).state)).toEqual(['WORKING', 'CANCELLED', 'WORKING']);
    expect(cancelled.stdout + cancelled.stderr + ambiguous.stderr).not.toContain(token);
    // An unknown prefix: the service's own not-found answer.
    expect((await http(['cancel', 'ffff0000', '--account', 'Sim101'])).stderr).toContain("Order linked to 'ffff0000' not found or already terminal.");
  });
});

describe('a default account says so', () => {
  beforeEach(async () => {
    await trades();
    expect((await cli(['config', 'set', 'account', 'Sim101'])).code).toBe(0);
  });
  const NOTE = 'account Sim101 (from config); --all-accounts for every account\n';

  it('positions filtered by the config account say so on stderr; --all-accounts lists every account', async () => {
    const filtered = await cli(['positions']);
    expect(filtered.stdout.split('\n').slice(1, -1).map((l) => l.split(/ +/)[0])).toEqual(['Sim101']);
    expect(filtered.stderr).toContain(NOTE);
    const every = await cli(['positions', '--all-accounts']);
    expect(every.stdout.split('\n').slice(1, -1).map((l) => l.split(/ +/)[0])).toEqual(['Sim101', 'Sim102']);
    expect(every.stderr).not.toContain('from config');
    // From the flag: nothing said.
    expect((await cli(['positions', '--account', 'Sim101'])).stderr).not.toContain('from config');
    // From the environment: said, naming it.
    expect((await cli(['positions'], { TRADE_ACCOUNT: 'Sim102' })).stderr).toContain('account Sim102 (from TRADE_ACCOUNT); --all-accounts for every account\n');
  });

  it('orders and executions too; --json keeps stdout to the body', async () => {
    const orders = await cli(['orders']);
    expect(orders.stderr).toContain(NOTE);
    expect(orders.stdout).not.toContain('Sim102');
    const every = await cli(['orders', '--all-accounts']);
    expect(every.stdout.split('\n').filter((l) => l.includes('Sim102'))).toHaveLength(1);
    expect(every.stderr).not.toContain('from config');
    const json = await cli(['orders', '--all-accounts', '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({ count: 4, success: true });
    const filteredJson = await cli(['orders', '--json']);
    expect(JSON.parse(filteredJson.stdout).count).toBe(3);
    expect(filteredJson.stderr).toBe(NOTE);
    const executions = await cli(['executions']);
    expect(executions.stderr).toContain(NOTE);
    const allExecutions = await cli(['executions', '--all-accounts', '--json']);
    expect(JSON.parse(allExecutions.stdout).executions.map((e: { account: string }) => e.account)).toEqual(['Sim101', 'Sim102']);
  });

  it('--account with --all-accounts is a usage error; the note wraps at the terminal', async () => {
    expect(await cli(['orders', '--account', 'Sim101', '--all-accounts'])).toMatchObject({
      code: 2,
      stderr: "Error: Give --account or --all-accounts, not both\n  Nothing was sent. Run 'trade orders --help' for examples.\n",
    });
    const narrow = await at(40, ['positions']);
    expect(narrow.stderr).toContain('account Sim101 (from config);\n--all-accounts for every account\n');
  });
});
