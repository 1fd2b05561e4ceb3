/**
 * The ws backend against servers that misbehave, through the built bin: at the handshake (no
 * answer, headers that trickle, HTML, 401, 429) nothing is sent; after an RPC was written
 * (garbage, a wrong id, a reply of the wrong shape, a close mid-RPC, silence) the outcome is
 * unknown and the RPC was sent exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, runBin, tempHome } from '../helpers/cli.js';
import { hostileWsServer, ORDER_ID, rawResponse, trickle } from '../helpers/hostile.js';

const TOKEN = 'hostile-ws-token-0123456789';
let server: Awaited<ReturnType<typeof hostileWsServer>>;
let host: string;
let home: { env: Env; cleanup: () => void };

beforeAll(async () => {
  server = await hostileWsServer(
    {
      '/nohandshake': () => undefined,
      '/slowhandshake': (socket) => trickle(socket, 'HTTP/1.1 101 Switching Protocols\r\n', (n) => `x-slow-${n}: still coming\r\n`),
      '/html': rawResponse('200 OK', { 'content-type': 'text/html' }, '<html><body>Welcome</body></html>'),
      '/unauthorized': rawResponse('401 Unauthorized', { 'content-type': 'application/json' }, '{"error":"Unauthorized"}'),
      '/limited': rawResponse('429 Too Many Requests', { 'content-type': 'application/json', 'retry-after': '7' }, '{"error":"Rate limit exceeded"}'),
    },
    {
      ok: (ws, m) => ws.send(JSON.stringify({ id: m.id, status: 200, data: { orderId: ORDER_ID, success: true } })),
      garbage: (ws) => ws.send('<html>not json</html>'),
      wrongid: (ws) => ws.send(JSON.stringify({ id: 'someone-else', status: 200, data: { orderId: ORDER_ID, success: true } })),
      closemid: (ws) => ws.close(1011, 'internal error'),
      hang: () => undefined,
      rejected: (ws, m) => ws.send(JSON.stringify({ id: m.id, status: 400, data: { error: 'Invalid request: action: bad' } })),
      unauthorized: (ws, m) => ws.send(JSON.stringify({ id: m.id, status: 401, data: { error: 'Unauthorized' } })),
      limited: (ws, m) => ws.send(JSON.stringify({ id: m.id, status: 429, data: { error: 'Rate limit exceeded' } })),
    },
  );
  host = new URL(server.url).host;
  home = tempHome();
});
afterAll(async () => {
  await server.close();
  home.cleanup();
});

function place(account: string, path = '/ws/stream') {
  const env: Env = { ...home.env, TRADE_BACKEND: 'ws', TRADE_WS_URL: `${server.url}${path}`, TRADE_TOKEN: TOKEN, TRADE_TIMEOUT: '0.5' };
  return runBin(['place', ...orderArgs({ '--account': account })], env);
}

const unknown = (why: string) =>
  `Error: Outcome unknown — the order may have been placed (${why}); check with \`trade orders\` before trying again.\n`;

const notSent = (why: string) =>
  `Error: ${why}. Nothing was sent.\n  Check ws-url / base-url (\`trade config list\`) and that the service is running.\n`;

describe.concurrent('trade place --backend ws against a broken server', () => {
  it.each([
    ['garbage', () => unknown(`no reply from ${host} within 0.5 s; it sent a message that is not a JSON object`)],
    ['wrongid', () => unknown(`no reply from ${host} within 0.5 s; it sent a reply to id "someone-else", which no request here has`)],
    ['closemid', () => unknown(`the connection to ${host} closed before the reply`)],
    ['hang', () => unknown(`no reply from ${host} within 0.5 s`)],
  ])('after the RPC was sent, %s: exit 4, outcome unknown, sent exactly once', async (account, message) => {
    const result = await place(account);
    expect({ code: result.code, stdout: result.stdout, stderr: result.stderr }).toEqual({ code: 4, stdout: '', stderr: message() });
    expect(server.count(account)).toBe(1);
  });

  it.each([
    ['rejected', 1, 'Error: Invalid request: action: bad\n'],
    ['unauthorized', 3, 'Error: The service refused the token (401: Unauthorized).\n  Set a valid token with `trade login` (or TRADE_TOKEN).\n'],
    ['limited', 5, () => `Error: Rate limited by ws (${host}): Rate limit exceeded. Nothing was executed; wait a moment and send it again.\n`],
  ])('an RPC answered %s: exit %i with the service message, sent exactly once', async (account, code, stderr) => {
    const result = await place(account);
    expect(result).toEqual({ code, stdout: '', stderr: typeof stderr === 'string' ? stderr : stderr() });
    expect(server.count(account)).toBe(1);
  });

  it.each([
    ['/nohandshake', 4, () => notSent(`The WebSocket handshake with ${host} did not complete within 0.5 s`)],
    ['/slowhandshake', 4, () => notSent(`The WebSocket handshake with ${host} did not complete within 0.5 s`)],
    ['/html', 4, () => notSent(`ws (${host}) did not accept the WebSocket upgrade (HTTP 200)`)],
    ['/unauthorized', 3, () => 'Error: The service refused the token (401: Unauthorized).\n  Set a valid token with `trade login` (or TRADE_TOKEN).\n'],
    ['/limited', 5, () => `Error: Rate limited by ws (${host}): Rate limit exceeded. Nothing was executed; retry after 7 s.\n`],
  ])('a handshake at %s that goes wrong: exit %i, and no RPC was sent', async (path, code, stderr) => {
    const account = `handshake${path.replace('/', '-')}`;
    const result = await place(account, path);
    expect(result).toEqual({ code, stdout: '', stderr: stderr() });
    expect(server.upgrades(path)).toBe(1);
    expect(server.count(account)).toBe(0);
  });
});

describe.concurrent('trade batch --backend ws against a broken server', () => {
  const line = (id: string, account: string) =>
    JSON.stringify({ api: 'PlaceOrder', id, args: { account, instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' } });
  const batch = (lines: string[], concurrency: number, path = '/ws/stream') =>
    runBin(
      ['batch', '-', '--concurrency', String(concurrency)],
      { ...home.env, TRADE_BACKEND: 'ws', TRADE_WS_URL: `${server.url}${path}`, TRADE_TOKEN: TOKEN, TRADE_TIMEOUT: '0.5' },
      `${lines.join('\n')}\n`,
    );
  const outcomes = (stdout: string) =>
    stdout.trim().split('\n').map((l) => JSON.parse(l) as { id: string; status: number | null; outcome?: string }).map((r) => [r.id, r.status, r.outcome ?? 'done']);

  it.each(['garbage', 'wrongid', 'closemid'])(
    'a line answered %s is unknown, the lines after it are not sent (exit 4)',
    async (behaviour) => {
      const accounts = [`ok-${behaviour}-1`, `${behaviour}-batch`, `ok-${behaviour}-3`, `ok-${behaviour}-4`];
      const result = await batch(accounts.map((a, i) => line(`l${i + 1}`, a)), 1);
      expect(result.code).toBe(4);
      expect(outcomes(result.stdout)).toEqual([['l1', 200, 'done'], ['l2', null, 'unknown'], ['l3', null, 'not-sent'], ['l4', null, 'not-sent']]);
      expect(result.stderr).toContain('Batch of 4 lines: 1 succeeded, 0 rejected, 1 outcome unknown (check with `trade orders`), 2 not sent.');
      expect(accounts.map((a) => server.count(a))).toEqual([1, 1, 0, 0]);
    },
  );

  it.each([
    ['/html/batch', 4],
    ['/unauthorized/batch', 3],
  ])('a handshake at %s that goes wrong: one attempt, every line not sent (exit %i)', async (path, code) => {
    const accounts = [1, 2, 3, 4, 5].map((n) => `ok-${path.split('/')[1]}-${n}`);
    const result = await batch(accounts.map((a, i) => line(`l${i + 1}`, a)), 3, path);
    expect(result.code).toBe(code);
    // The lines in flight shared the one handshake: the first carries its answer, none was sent.
    const first = code === 3 ? [401, 'done'] : [null, 'not-sent'];
    expect(outcomes(result.stdout)).toEqual([['l1', ...first], ...['l2', 'l3', 'l4', 'l5'].map((id) => [id, null, 'not-sent'])]);
    expect(server.upgrades(path)).toBe(1);
    expect(accounts.map((a) => server.count(a))).toEqual([0, 0, 0, 0, 0]);
  });
});
