/**
 * Every remote command, on http and ws, against the reference double (a server written from
 * service-reference.md alone), answering each way the reference says a client must accept:
 * flat bodies, the `{"success": true, "data": ...}` envelope, only the fields documented
 * examples show and bare lists (`minimal`), a platform that is not connected (408), and the
 * service's budget (429). If the client required anything the reference does not show, the
 * `minimal` runs would fail.
 */
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';
import { type DoubleOptions, type ReferenceDouble, SHAPES, startReferenceDouble } from '../helpers/reference-double.js';

const ES = 'ES 06-26';
let double: ReferenceDouble | undefined;
let home: ReturnType<typeof tempHome> | undefined;
afterEach(async () => {
  await double?.close();
  home?.cleanup();
  double = undefined;
  home = undefined;
});

async function start(backend: 'http' | 'ws', options: DoubleOptions = {}) {
  double = await startReferenceDouble({ prices: { [ES]: 5000 }, ...options });
  home = tempHome();
  const env: Env = { ...home.env, TRADE_BACKEND: backend, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token, TRADE_ACCOUNT: 'Sim101' };
  return { double, cli: (argv: string[], input?: string) => runCli(argv, env, input === undefined ? {} : { stdin: stdinOf(input) }) };
}

function stdinOf(text: string) {
  const stream = new PassThrough();
  stream.end(text);
  return stream;
}


describe.each(['http', 'ws'] as const)('trade --backend %s against the reference double', (backend) => {
  describe.each(SHAPES)('answering with %s', (_, options) => {
    it('place, reverse, positions (a short is Short), orders, cancel, close: each works', async () => {
      const { cli } = await start(backend, options);
      const placed = await cli(['place', ...orderArgs({ '--instrument': ES, '--quantity': '2' }), '--json']);
      expect(placed.code).toBe(0);
      const reversed = await cli(['reverse', ...orderArgs({ '--instrument': ES, '--action': 'SELL', '--quantity': '3' })]);
      expect({ code: reversed.code, stderr: reversed.stderr }).toEqual({ code: 0, stderr: '' });
      expect(reversed.stdout).toMatch(/^Reversed ES 06-26 in Sim101\n {2}placed +SELL 3 ES 06-26 MARKET DAY\n {2}order id +[0-9a-f]{32}\n/);

      const positions = await cli(['positions']);
      expect(positions.code).toBe(0);
      expect(positions.stdout.split('\n')[1]).toMatch(/^Sim101 +ES 06-26 +Short +3 +5000 +5000 +0\.00$/);
      const json = await cli(['positions', '--json']);
      // --json is the service's body as it came: flat, enveloped, or a bare list.
      const short = [{ marketPosition: 'Short', quantity: 3 }];
      expect(JSON.parse(json.stdout)).toMatchObject(
        options.envelope === 'data' ? { success: true, data: { positions: short } } : options.minimal ? short : { positions: short },
      );

      const limit = await cli(['place', ...orderArgs({ '--instrument': ES, '--order-type': 'LIMIT', '--limit-price': '4000', '--tif': 'GTC' }), '--json']);
      const body = JSON.parse(limit.stdout) as { orderId?: string; data?: { orderId: string } };
      const orderId = body.orderId ?? body.data!.orderId;
      const orders = await cli(['orders', '--active']);
      expect(orders.code).toBe(0);
      const row = orders.stdout.split('\n').find((l) => l.startsWith(orderId))!;
      // A minimal Order has no orderAction or timeInForce: shown as —, never as "undefined".
      expect(row).toMatch(options.minimal ? /^\S+ +Sim101 +ES 06-26 +— +1 +LIMIT +4000 +— +— +Working +0 +— +—$/ : /^\S+ +Sim101 +ES 06-26 +BUY +1 +LIMIT +4000 +— +GTC +Working +0 +— +\S+$/);
      expect(orders.stdout).not.toContain('undefined');

      expect(await cli(['cancel', orderId])).toMatchObject({ code: 0, stdout: expect.stringContaining(`Cancelled order ${orderId}`) });
      const again = await cli(['cancel', orderId]);
      expect({ code: again.code, stderr: again.stderr }).toEqual({ code: 1, stderr: `Error: Order linked to '${orderId}' not found or already terminal.\n` });

      const closed = await cli(['close', '--instrument', 'es 6-26']);
      expect(closed.stdout.split('\n')[0]).toBe('Closed short 3 ES 06-26 (average price 5000) in Sim101');
      const flat = await cli(['close', '--instrument', ES]);
      expect({ code: flat.code, stderr: flat.stderr }).toEqual({ code: 1, stderr: `Error: No positions found for instrument '${ES}'\n` });
    });
  });

  describe.each(SHAPES)('answering with %s', (_, options) => {
    it('the commands of every other operation work: modify, replace, order, bracket, quote, executions, accounts, flatten, cancel --all', async () => {
      const { cli, double } = await start(backend, options);
      const ok = async (argv: string[]) => {
        const result = await cli(argv);
        // Tables name their backend, and lists the default account (TRADE_ACCOUNT here), on stderr; nothing else may be there.
        const stderr = result.stderr.replace(/^backend: .*\n/m, '').replace(/^account Sim101 \(from TRADE_ACCOUNT\); --all-accounts for every account\n/m, '');
        expect({ argv, code: result.code, stderr }).toEqual({ argv, code: 0, stderr: '' });
        expect(result.stdout).not.toContain('undefined');
        return result.stdout;
      };
      expect(await ok(['place', ...orderArgs({ '--instrument': ES, '--quantity': '2' }), '--order-id', 'm-1'])).toContain('order id  m-1');
      await ok(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL', '--order-type': 'LIMIT', '--limit-price': '5010', '--tif': 'GTC' }), '--order-id', 'l-1']);
      // The documented Change answers another id (§3.6): the command says which.
      const changed = await ok(['modify', 'l-1', '--limit-price', '5012.5']);
      expect(changed).toMatch(/^Changed order \S+\n {2}limit +5012\.5\n/);
      const newId = /^Changed order (\S+)/.exec(changed)![1]!;
      expect(await ok(['order', newId, '--status'])).toBe('Working\n');
      // A minimal Order has no orderAction (§4.1's documented example): shown as —.
      expect(await ok(['order', newId])).toMatch(new RegExp(`^${options.minimal ? '—' : 'SELL'} 1 ES 06-26 LIMIT`));
      expect(await ok(['order', newId, '--lifecycle'])).not.toBe('No events.\n');
      const replaced = await ok(['replace', newId, ...orderArgs({ '--instrument': ES, '--action': 'SELL', '--order-type': 'LIMIT', '--limit-price': '5020', '--tif': 'GTC' })]);
      expect(replaced.split('\n')[0]).toBe('Replaced with SELL 1 ES 06-26 LIMIT limit 5020 GTC');
      expect(await ok(['position', ES])).toMatch(/\nSim101 +ES 06-26 +Long +2 /);
      expect(await ok(['close', '--instrument', ES, '--quantity', '1'])).toMatch(/^Closed long 1 ES 06-26 /);
      expect(await ok(['bracket', '--instrument', ES, '--action', 'BUY', '--quantity', '5', '--take-profit', '5010', '--stop-loss', '4990'])).toMatch(
        /^Bracketed ES 06-26 in Sim101\n {2}target +SELL \d LIMIT 5010/,
      );
      expect(await ok(['quote', ES])).toMatch(/\nES 06-26 +5000 /);
      double.setPrice('NQ 06-26', 20000);
      expect((await ok(['quote', ES, 'NQ 06-26'])).split('\n')).toHaveLength(4);
      expect(await ok(['executions', '--lookback', '900'])).toMatch(/ES 06-26 +BUY +2 +5000/);
      expect(await ok(['account', 'Sim101'])).toMatch(/\nSim101 /);
      expect(await ok(['accounts', 'list'])).toMatch(/\nSim101 /);
      await ok(['accounts', 'snapshot']);
      await ok(['account', 'Sim101', '--watermarks']);
      // The bracket's two legs are all that work now; the position is long 1.
      const working = (await ok(['orders', '--active'])).split('\n').slice(1, -1).map((line) => line.split(' ')[0]!);
      expect(working).toHaveLength(2);
      const [head, first, second, ...rest] = (await ok(['cancel', '--all', '--instrument', ES])).split('\n');
      expect({ head, ids: [first!.trim(), second!.trim()].sort(), rest }).toEqual({
        head: 'Cancelled 2 working orders in Sim101 ES 06-26',
        ids: [...working].sort(),
        rest: [`backend: ${backend} (${new URL(double.url).host})`, ''],
      });
      expect(await ok(['flatten'])).toBe(`Flattened Sim101\n  closed   long 1 ES 06-26 (average price 5000)\n  backend  ${backend} (${new URL(double.url).host})\n`);
      await ok(['flatten', '--everything', '--yes']);
      await ok(['cancel', '--all-accounts']);
      // Each command sent its one documented request; none was sent again.
      const sent = double.requests.map((r) => r.api);
      for (const api of ['Change', 'Replace', 'CancelAndBracket', 'ClosePosition', 'CancelOrders', 'Flatten', 'FlattenEverything', 'CancelAllOrders'])
        expect(sent.filter((a) => a === api), api).toHaveLength(1);
    });
  });

  it('a refusal is kept whole with --json, and read as a refusal (exit 1), never as "outcome unknown"', async () => {
    const { cli } = await start(backend);
    const ghost = await cli(['place', ...orderArgs({ '--instrument': ES, '--account': 'Sim999' }), '--json']);
    expect(ghost).toMatchObject({ code: 1, stdout: '{"success":false,"error":"invalid_account","detail":"Account Sim999 not found"}\n' });
    const reverse = await cli(['reverse', ...orderArgs({ '--instrument': ES, '--account': 'sim101' })]);
    expect({ code: reverse.code, stderr: reverse.stderr }).toEqual({
      code: 1,
      stderr: "Error: No position found for instrument 'ES 06-26' in account 'sim101'\n",
    });
    const generic = await cli(['place', ...orderArgs({ '--instrument': 'NQ 06-26' })]);
    expect({ code: generic.code, stderr: generic.stderr }).toEqual({ code: 1, stderr: 'Error: Invalid request\n' });
  });

  it('a client order id makes a resend safe: the second is refused, nothing placed twice', async () => {
    const { cli, double } = await start(backend);
    expect((await cli(['place', ...orderArgs({ '--instrument': ES, '--order-id': 'retry-1' }), '--json'])).stdout).toBe('{"orderId":"retry-1","success":true}\n');
    const again = await cli(['place', ...orderArgs({ '--instrument': ES, '--order-id': 'retry-1' })]);
    expect({ code: again.code, stderr: again.stderr }).toEqual({
      code: 1,
      stderr: "Error: Invalid request: orderId: 'retry-1' is already used in account 'Sim101'\n",
    });
    expect(double.requests.filter((r) => r.api === 'PlaceOrder').map((r) => r.status)).toEqual([200, 400]);
  });

  it('a platform that is not connected (408): an order is outcome unknown (exit 4), a read says so (exit 4), doctor too', async () => {
    const { cli } = await start(backend, { disconnected: true });
    const placed = await cli(['place', ...orderArgs({ '--instrument': ES })]);
    expect(placed.code).toBe(backend === 'http' ? 4 : 1);
    if (backend === 'http')
      expect(placed.stderr).toBe(
        'Error: The trading platform is not connected (408: NinjaTrader is not connected); nothing is known to have been placed — check with `trade orders`.\n' +
          '  Start NinjaTrader and connect the add-on, then check what happened before sending again.\n',
      );
    // Over WebSocket the status is not carried (§5.3): the failure in data is a refusal.
    else expect(placed.stderr).toBe('Error: NinjaTrader is not connected\n');
    const positions = await cli(['positions']);
    expect(positions.code).toBe(backend === 'http' ? 4 : 1);
    const doctor = await cli(['doctor', '--json']);
    const report = JSON.parse(doctor.stdout) as { service: { status: string } };
    expect(report.service.status).toBe(backend === 'http' ? 'disconnected' : 'unexpected');
    expect(doctor.code).toBe(4);
  });

  it('doctor proves the service with a read (GetAllPositions), not a pong, which the service never sends', async () => {
    const { cli, double } = await start(backend);
    const doctor = await cli(['doctor']);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain('✔ service   reachable, token accepted');
    expect(double.requests.map((r) => [r.transport, r.api])).toEqual([[backend, 'GetAllPositions']]);
  });

  it('a batch of 30 against the budget (3/s, bursts of 20): exit 0, 30 placed, no line sent twice after a 200', async () => {
    const { cli, double } = await start(backend, { rateLimit: { perSecond: 3, burst: 20 } });
    const lines = Array.from({ length: 30 }, (_, i) =>
      JSON.stringify({ api: 'PlaceOrder', id: i, args: { account: 'Sim101', instrument: ES, action: 'BUY', quantity: i + 1, orderType: 'MARKET', timeInForce: 'DAY' } }),
    );
    const result = await cli(['batch', '-', '--rate', '10'], `${lines.join('\n')}\n`);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: 'Batch of 30 lines: 30 succeeded, 0 rejected.\n' });
    const out = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: number; status: number });
    expect(out.map((r) => [r.id, r.status])).toEqual(lines.map((_, i) => [i, 200]));
    // Each line is known by its quantity: exactly one 200 each, and only 429s besides.
    const placements = double.requests.filter((r) => r.api === 'PlaceOrder');
    for (let q = 1; q <= 30; q++) {
      const statuses = placements.filter((r) => r.args.quantity === q).map((r) => r.status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.at(-1)).toBe(200);
      expect(new Set(statuses)).toEqual(new Set(statuses.length > 1 ? [429, 200] : [200]));
    }
    expect(placements.some((r) => r.status === 429)).toBe(true);
  }, 20_000);
});

describe('trade auth status on the default backend (embedded), against the reference double', () => {
  it('checks the token with the service at the base URL: one GetAllPositions over HTTP, nothing placed', async () => {
    double = await startReferenceDouble({ prices: { [ES]: 5000 } });
    home = tempHome();
    const env: Env = { ...home.env, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token };
    const status = await runCli(['auth', 'status', '--json'], env);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ backend: { value: 'embedded' }, service: { checked: true, accepted: true, status: 'ok' } });
    expect(double.requests.map((r) => [r.transport, r.api])).toEqual([['http', 'GetAllPositions']]);
    const refused = await runCli(['auth', 'status', '--json'], { ...env, TRADE_TOKEN: `${double.token}x` });
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.stdout).service).toMatchObject({ checked: true, accepted: false, status: 'auth-refused' });
  });
});
