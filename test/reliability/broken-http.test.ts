/**
 * The http backend against servers that misbehave, through the built bin as a user runs it:
 * every case ends with a clear message and the right exit code, and the server saw the order
 * exactly once (nothing is re-sent).
 */
import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { MAX_RATE_RETRIES } from '../../src/cli/commands/batch.js';
import { orderArgs, runBin, tempHome } from '../helpers/cli.js';
import { type CountingServer, hostileHttpServer, json, ORDER_ID, trickle } from '../helpers/hostile.js';

const TOKEN = 'hostile-http-token-0123456789';
let server: CountingServer;
let host: string;
let home: { env: Env; cleanup: () => void };

const html = (res: ServerResponse, status: number) => {
  res.writeHead(status, { 'content-type': 'text/html' });
  res.end('<html><body><h1>Bad Gateway</h1></body></html>');
};

beforeAll(async () => {
  server = await hostileHttpServer({
    ok: (_req, res) => json(res, 200, { orderId: ORDER_ID, success: true }),
    slowheaders: (req) => trickle(req.socket, 'HTTP/1.1 200 OK\r\n', (n) => `x-slow-${n}: still coming\r\n`),
    slowbody: (req) =>
      trickle(req.socket, 'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100000\r\n\r\n{', () => ' '),
    endless: (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const chunk = Buffer.alloc(64 * 1024, ' ');
      const more = () => {
        while (!res.destroyed && res.write(chunk));
      };
      res.on('drain', more);
      more();
    },
    hang: () => undefined,
    html200: (_req, res) => html(res, 200),
    truncated: (_req, res) => json(res, 200, '{"orderId":"c0ffee'),
    wrongshape: (_req, res) => json(res, 200, { id: 1, ok: true }),
    rejected: (_req, res) => json(res, 400, { error: 'Invalid request: quantity: too big' }),
    escapes: (_req, res) => json(res, 400, { error: `\u001b]0;owned\u0007\u001b[2J\u202eRejected: ${'x'.repeat(5000)}` }),
    unauthorized: (_req, res) => json(res, 401, { error: 'Unauthorized' }),
    limited: (_req, res) => json(res, 429, { error: 'Rate limit exceeded' }, { 'retry-after': '7' }),
    // Limited on the first request of each account, then served: what a burst over the budget sees.
    flaky: (req, res) =>
      server.count(decodeURIComponent(req.url!.split('/')[4]!)) === 1
        ? json(res, 429, { error: 'Rate limit exceeded' })
        : json(res, 200, { orderId: ORDER_ID, success: true }),
    limitedfast: (_req, res) => json(res, 429, { error: 'Rate limit exceeded' }, { 'retry-after': '0' }),
  });
  host = new URL(server.url).host;
  home = tempHome();
});
afterAll(async () => {
  await server.close();
  home.cleanup();
});

function place(account: string, extra: string[] = [], timeout = '0.5') {
  const env: Env = { ...home.env, TRADE_BACKEND: 'http', TRADE_BASE_URL: server.url, TRADE_TOKEN: TOKEN, TRADE_TIMEOUT: timeout };
  return runBin(['place', ...orderArgs({ '--account': account }), ...extra], env);
}

const unknown = (why: string) =>
  `Error: Outcome unknown — the order may have been placed (${why}); check with \`trade orders\` before trying again.\n`;

describe.concurrent('trade place --backend http against a broken server', () => {
  it.each([
    ['slowheaders', () => unknown(`no reply from ${host} within 0.5 s`)],
    ['slowbody', () => unknown(`no complete reply from ${host} within 0.5 s`)],
    ['hang', () => unknown(`no reply from ${host} within 0.5 s`)],
    ['html200', () => unknown(`http (${host}) answered 200 with a body that is not PlaceOrder's reply`)],
    ['truncated', () => unknown(`http (${host}) answered 200 with a body that is not PlaceOrder's reply`)],
    ['wrongshape', () => unknown(`http (${host}) answered 200 with a body that is not PlaceOrder's reply`)],
  ])('%s: exit 4, outcome unknown, sent exactly once', async (account, message) => {
    const started = Date.now();
    const result = await place(account);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 4, stdout: '', stderr: message() });
    // The timeout bounds the whole reply, however slowly its bytes come (the bound is loose for busy machines).
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(server.count(account)).toBe(1);
  });

  it('endless: a reply that never ends is cut off at 16 MiB, exit 4, sent exactly once', async () => {
    const result = await place('endless', [], '30');
    expect(result).toEqual({ code: 4, stdout: '', stderr: unknown(`${host} sent a reply larger than 16 MiB`) });
    expect(server.count('endless')).toBe(1);
  });

  it.each([
    ['rejected', 1, 'Error: Invalid request: quantity: too big\n'],
    ['unauthorized', 3, 'Error: The service refused the token (401: Unauthorized).\n  Set a valid token with `trade login` (or TRADE_TOKEN).\n'],
    ['limited', 5, () => `Error: Rate limited by http (${host}): Rate limit exceeded. Nothing was executed; retry after 7 s.\n`],
  ])('%s: exit %i with the service message, sent exactly once', async (account, code, stderr) => {
    const result = await place(account);
    expect(result).toEqual({ code, stdout: '', stderr: typeof stderr === 'string' ? stderr : stderr() });
    expect(server.count(account)).toBe(1);
  });

  it('a message that would drive the terminal is shown without its control characters, and cut short (exit 1)', async () => {
    const result = await place('escapes');
    const shown = `Rejected: ${'x'.repeat(500)}`.slice(0, 499);
    expect(result).toEqual({ code: 1, stdout: '', stderr: `Error: ${shown}…\n` });
  });

  it('--json prints the error as JSON on stdout, and nothing but the message on stderr', async () => {
    const result = await place('hang', ['--json']);
    expect(result.code).toBe(4);
    expect(JSON.parse(result.stdout)).toEqual({ error: unknown(`no reply from ${host} within 0.5 s`).slice(7, -1) });
    expect(result.stderr).toBe('');
    expect(result.stdout).not.toContain(TOKEN);
  });
});

describe.concurrent('trade batch --backend http against a broken server', () => {
  const line = (id: string, account: string) =>
    JSON.stringify({ api: 'PlaceOrder', id, args: { account, instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' } });
  const batch = (lines: string[], concurrency: number) =>
    runBin(['batch', '-', '--concurrency', String(concurrency)], { ...home.env, TRADE_BACKEND: 'http', TRADE_BASE_URL: server.url, TRADE_TOKEN: TOKEN, TRADE_TIMEOUT: '0.5' }, `${lines.join('\n')}\n`);
  const outcomes = (stdout: string) =>
    stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; status: number | null; outcome?: string }).map((r) => [r.id, r.status, r.outcome ?? 'done']);

  it.each(['html200', 'slowbody'])(
    'a line answered %s is unknown, the lines after it are not sent (exit 4)',
    async (behaviour) => {
      const key = (n: number) => `${behaviour}-batch${n === 3 ? '' : `-ok${n}`}`;
      const result = await batch([line('a', `ok-${behaviour}-1`), line('b', `ok-${behaviour}-2`), line('c', key(3)), line('d', `ok-${behaviour}-4`)], 1);
      expect(result.code).toBe(4);
      expect(outcomes(result.stdout)).toEqual([['a', 200, 'done'], ['b', 200, 'done'], ['c', null, 'unknown'], ['d', null, 'not-sent']]);
      expect(result.stderr).toMatch(/^Error: Batch of 4 lines: 2 succeeded, 0 rejected, 1 outcome unknown \(check with `trade orders`\), 1 not sent\. Stopped after: Outcome unknown — /);
      expect([1, 2, 3, 4].map((n) => server.count(n === 3 ? key(3) : `ok-${behaviour}-${n}`))).toEqual([1, 1, 1, 0]);
    },
  );

  it('a line that hangs does not hold the others: they go on, and only it is unknown (exit 4)', async () => {
    const lines = Array.from({ length: 10 }, (_, i) => line(`l${i + 1}`, i === 3 ? 'hang-batch' : `ok-hangbatch-${i + 1}`));
    const result = await batch(lines, 4);
    expect(result.code).toBe(4);
    expect(outcomes(result.stdout)).toEqual(lines.map((_, i) => [`l${i + 1}`, i === 3 ? null : 200, i === 3 ? 'unknown' : 'done']));
    expect(server.count('hang-batch')).toBe(1);
  });

  it('a 429 waits and is sent again: the line is placed, by its second request (exit 0)', async () => {
    const result = await batch([line('a', 'ok-429-1'), line('b', 'flaky-batch'), line('c', 'ok-429-3')], 1);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: 'Batch of 3 lines: 3 succeeded, 0 rejected.\n' });
    expect(outcomes(result.stdout)).toEqual([['a', 200, 'done'], ['b', 200, 'done'], ['c', 200, 'done']]);
    expect([server.count('ok-429-1'), server.count('flaky-batch'), server.count('ok-429-3')]).toEqual([1, 2, 1]);
  });

  it(`a line limited every time is given up after ${MAX_RATE_RETRIES} more tries and the rest go on (exit 5); a 401 stops the batch (exit 3)`, async () => {
    const limited = await batch([line('a', 'ok-429x-1'), line('b', 'limitedfast-batch'), line('c', 'ok-429x-3')], 1);
    expect(limited.code).toBe(5);
    expect(outcomes(limited.stdout)).toEqual([['a', 200, 'done'], ['b', 429, 'done'], ['c', 200, 'done']]);
    expect(server.count('limitedfast-batch')).toBe(1 + MAX_RATE_RETRIES);
    const refused = await batch([line('a', 'ok-401-1'), line('b', 'unauthorized-batch'), line('c', 'ok-401-3')], 1);
    expect(refused.code).toBe(3);
    expect(outcomes(refused.stdout)).toEqual([['a', 200, 'done'], ['b', 401, 'done'], ['c', null, 'not-sent']]);
    expect(server.count('ok-401-3')).toBe(0);
  });
});
