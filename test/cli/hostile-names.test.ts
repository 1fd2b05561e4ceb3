/**
 * Names that come from a service, printed to a terminal (issue 31): a hostile service puts
 * terminal escape sequences and control characters in account names, instruments, ATM template
 * names and error texts. Every table and message `trade` prints shows them as plain text: no
 * escape reaches the terminal to clear the screen, move the cursor or retitle the window.
 *
 * The service is the reference double (test/helpers/reference-double.ts) behind a proxy that
 * writes the hostile text into every answer; `trade` runs against it with --backend http.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { startReferenceDouble, type ReferenceDouble } from '../helpers/reference-double.js';
import { runCli, tempHome } from '../helpers/cli.js';
import { runInPty } from '../helpers/terminal.js';

/** What the proxy writes into the answers, as JSON escapes: a screen clear, a title, a CSI in C1, a bidi override. */
const HOSTILE = {
  account: ['"Sim101"', '"Sim\\u001b[2J\\u001b[H101"'],
  instrument: ['"ES 09-25"', '"ES 09-25\\u001b]0;pwned\\u0007"'],
  template: ['"Scalp"', '"Sc\\u009b2Jalp\\u202e"'],
  error: ['"Invalid request"', '"Invalid request\\u001b[31m\\r\\u0000evil\\u001b[0m"'],
} as const;

/** Any control or invisible character a terminal could act on (newlines apart: lines are ours). */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/;

let double: ReferenceDouble;
let proxy: Server;
let env: Env;
let cleanup: () => void;

beforeAll(async () => {
  double = await startReferenceDouble({ prices: { 'ES 09-25': 4500 } });
  proxy = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const answer = await fetch(`${double.url}${req.url}`, {
        method: req.method,
        headers: { authorization: req.headers.authorization ?? '', 'content-type': 'application/json' },
        body: chunks.length ? Buffer.concat(chunks) : undefined,
      });
      let text = await answer.text();
      for (const [from, to] of Object.values(HOSTILE)) text = text.replaceAll(from, to);
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const home = tempHome();
  cleanup = home.cleanup;
  env = { ...home.env, TRADE_BACKEND: 'http', TRADE_BASE_URL: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`, TRADE_TOKEN: double.token };
  // An ATM entry and a working order, so that orders, positions and executions have something to show.
  for (const order of [
    { instrument: 'ES 09-25', action: 'BUY', quantity: 2, orderType: 'MARKET', timeInForce: 'DAY', strategy: 'Scalp' },
    { instrument: 'ES 09-25', action: 'SELL', quantity: 1, orderType: 'LIMIT', limitPrice: 4600, timeInForce: 'GTC' },
  ]) {
    const placed = await fetch(`${double.url}/v1/api/accounts/Sim101/orders/place`, {
      method: 'POST',
      headers: { authorization: `Bearer ${double.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(order),
    });
    expect(placed.status).toBe(200);
  }
});
afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  await double.close();
  cleanup();
});

describe('a hostile service', () => {
  it('answers with escapes in every name it sends', async () => {
    const raw = await fetch(`${(env.TRADE_BASE_URL as string)}/v1/api/accounts/Sim101/orders`, { headers: { authorization: `Bearer ${double.token}` } });
    const text = await raw.text();
    expect(text).toContain('Sim\\u001b[2J');
    expect(text).toContain('\\u001b]0;pwned');
    expect(text).toContain('Sc\\u009b2Jalp');
  });

  it.each([
    [['accounts', 'list']],
    [['account', 'Sim101']],
    [['accounts', 'snapshot']],
    [['positions', '--all-accounts']],
    [['position', 'ES 09-25', '--account', 'Sim101']],
    [['orders', '--account', 'Sim101']],
    [['executions', '--account', 'Sim101']],
    [['quote', 'ES 09-25']],
    [['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY']],
    [['reverse', '--account', 'Sim101', '--instrument', 'ES 09-25', '--invert']],
    [['cancel', 'f'.repeat(32), '--account', 'Sim101']],
    [['close', '--account', 'Sim101', '--instrument', 'ES 09-25']],
    [['flatten', '--account', 'Sim101', '--yes']],
    [['history']],
  ])('trade %s prints no control character or escape', async (argv) => {
    const ran = await runCli(argv, env);
    const printed = ran.stdout + ran.stderr;
    expect(printed.length, argv.join(' ')).toBeGreaterThan(0);
    expect(printed.match(CONTROL)?.[0], `${argv.join(' ')}:\n${printed}`).toBeUndefined();
  });

  it('order ID shows the ATM template name as plain text; --json the same value, every control escaped', async () => {
    const listed = await runCli(['orders', '--account', 'Sim101', '--json'], env);
    // JSON.stringify escapes C0 controls; the C1 CSI and the bidi override are escaped on the way out too.
    expect(listed.stdout.match(CONTROL)).toBeNull();
    expect(listed.stdout).toContain('"Sc\\u009b2Jalp\\u202e"');
    const orders = JSON.parse(listed.stdout) as { orders: Array<{ orderId: string; ownerStrategy?: { name: string } }> };
    const entry = orders.orders.find((o) => o.ownerStrategy);
    expect(entry?.ownerStrategy?.name).toBe('Sc\u009b2Jalp\u202e');
    const shown = await runCli(['order', entry!.orderId, '--account', 'Sim101'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain('Sc2Jalp');
    expect(shown.stdout.match(CONTROL)).toBeNull();
  });

  it('at a real terminal, an account named with \\u001b[2J does not clear the screen', async () => {
    const ran = await runInPty(['accounts', 'list'], { ...env, COLUMNS: '200', NO_COLOR: '1' }, async () => undefined);
    expect(ran.code).toBe(0);
    expect(ran.raw).not.toContain('\u001b[2J');
    expect(ran.raw).not.toContain('\u001b]0;');
    // With NO_COLOR, trade writes no escape of its own: any here would be the service's.
    expect(ran.raw).not.toContain('\u001b');
    expect(ran.screen).toMatch(/^ACCOUNT .*\nSim101 /m);
  });
});
