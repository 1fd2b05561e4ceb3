import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PassThrough } from 'node:stream';
import type { Env } from '../../src/config/paths.js';
import { CancelledError } from '../../src/common/errors.js';
import { orderArgs, runBin, runCli, tempHome } from '../helpers/cli.js';
import { CONFIG_TOKEN } from '../helpers/tokens.js';

const TOKEN = CONFIG_TOKEN;
const MASKED = 'secr…cdef';
let env: Env;
let cleanup: () => void;
let server: Server;
let baseUrl: string;
let requests = 0;

beforeAll(async () => {
  server = createServer((req, res) => {
    requests += 1;
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ orderId: 'f'.repeat(32), success: true }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((r) => server.close(r)));
beforeEach(() => {
  ({ env, cleanup } = tempHome());
  requests = 0;
});
afterEach(() => cleanup());

const login = (extraEnv: Env = {}, args: string[] = []) => runBin([...args, 'login', '--token-stdin'], { ...env, ...extraEnv }, `${TOKEN}\n`);

describe('config store', () => {
  it('round-trips set, get, list and unset; the file is 0600 in a 0700 directory', async () => {
    expect(await runBin(['config', 'set', 'base-url', 'https://trading.example.com/'], env)).toMatchObject({
      code: 0,
      stderr: 'Set base-url = https://trading.example.com (profile default)\n',
    });
    expect(await runBin(['config', 'get', 'base-url'], env)).toMatchObject({ code: 0, stdout: 'https://trading.example.com\n' });
    expect(await runBin(['config', 'get', 'ws-url'], env)).toMatchObject({ stdout: 'wss://trading.example.com/ws/stream\n' });
    const file = join(env.TRADE_CONFIG_DIR!, 'config.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(env.TRADE_CONFIG_DIR!).mode & 0o777).toBe(0o700);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: { default: { 'base-url': 'https://trading.example.com' } } });
    const list = await runBin(['config', 'list', '--json'], env);
    expect(JSON.parse(list.stdout).values).toMatchObject({
      'base-url': { value: 'https://trading.example.com', source: 'config' },
      'ws-url': { value: 'wss://trading.example.com/ws/stream', source: 'derived' },
      backend: { value: 'embedded', source: 'default' },
      token: { value: null, source: 'default' },
    });
    expect(await runBin(['config', 'unset', 'base-url'], env)).toMatchObject({ code: 0 });
    expect(await runBin(['config', 'get', 'base-url'], env)).toMatchObject({
      code: 3,
      stderr: 'Error: base-url is not set (profile default)\n',
    });
    expect((await runBin(['config', 'path'], env)).stdout).toBe(`${file}\n`);
  });

  it('validates values and names the key', async () => {
    expect(await runCli(['config', 'set', 'base-url', 'ftp://x'], env)).toMatchObject({
      code: 3,
      stderr: "Error: base-url must start with http:// or https://, got 'ftp://x'\n",
    });
    expect(await runCli(['config', 'set', 'backend', 'tcp'], env)).toMatchObject({
      code: 3,
      stderr: "Error: backend must be one of embedded, http, ws, got 'tcp'\n",
    });
    expect(await runCli(['config', 'set', 'timeout', '-1'], env)).toMatchObject({ code: 3 });
    expect(await runCli(['config', 'set', 'colour', 'red'], env)).toMatchObject({
      code: 2,
      stderr:
        "Error: Unknown config key 'colour'. Keys: token, base-url, ws-url, backend, account, timeout, webhook-url, guard.max-order-qty, guard.max-position, " +
        'guard.instruments, guard.accounts, guard.window, guard.max-orders, guard.daily-loss, guard.duplicate-window, guard.confirm-live, guard.sim-accounts, guard.ledger, guard.machine, guard.ledger-timeout\n',
    });
    expect(await runCli(['config', 'set', 'guard.max-order-qty', 'ten'], env)).toMatchObject({
      code: 3,
      stderr: "Error: guard.max-order-qty must be a whole number of contracts of at least 1, got 'ten'\n",
    });
    expect(await runCli(['config', 'set', 'guard.window', 'mon-fri 08:30-15:00 America/Chicago'], env)).toMatchObject({ code: 0 });
    expect((await runCli(['config', 'get', 'guard.window'], env)).stdout).toBe('mon-fri 08:30-15:00 America/Chicago\n');
  });

  it('never takes the token on the command line', async () => {
    const result = await runCli(['config', 'set', 'token', TOKEN], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('Use `trade login`');
    expect(result.stderr).not.toContain(TOKEN);
  });

  it('login --token-stdin saves the token; it is shown masked unless --show-token', async () => {
    const saved = await login();
    expect(saved.code).toBe(0);
    // On embedded with no base URL there is no service to ask.
    expect(saved.stderr).toBe(
      `Token ${MASKED} saved for profile default in ${join(env.TRADE_CONFIG_DIR!, 'config.json')}\n` +
        '  not checked: the embedded backend needs no token and no base URL is set\n',
    );
    const list = await runBin(['config', 'list'], env);
    expect(list.stdout).toMatch(new RegExp(`^token +${MASKED.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} +config`, 'm'));
    expect(list.stdout + list.stderr).not.toContain(TOKEN);
    expect((await runBin(['config', 'get', 'token'], env)).stdout).toBe(`${MASKED}\n`);
    expect((await runBin(['config', 'get', 'token', '--show-token'], env)).stdout).toBe(`${TOKEN}\n`);
  });

  it('login at a terminal asks for the token with a masked prompt; Ctrl-C saves nothing (exit 130)', async () => {
    const terminal = (answer: () => Promise<string>) => {
      let stderr = '';
      const deps = {
        stdin: Object.assign(new PassThrough(), { isTTY: true }),
        stderr: { isTTY: true, write: (t: string) => (stderr += t) },
        prompter: () => ({
          text: () => Promise.reject(new Error('unexpected')),
          select: () => Promise.reject(new Error('unexpected')),
          confirm: () => Promise.reject(new Error('unexpected')),
          secret: answer,
        }),
      };
      return { deps, stderr: () => stderr };
    };
    const saved = terminal(async () => TOKEN);
    expect((await runCli(['login'], env, saved.deps)).code).toBe(0);
    expect(saved.stderr()).toContain(`Token ${MASKED} saved for profile default`);
    expect((await runCli(['config', 'get', 'token', '--show-token'], env)).stdout).toBe(`${TOKEN}\n`);
    const cancelled = terminal(() => Promise.reject(new CancelledError()));
    expect((await runCli(['--profile', 'other', 'login'], env, cancelled.deps)).code).toBe(130);
    expect(cancelled.stderr()).toContain('Cancelled — no token was saved.');
    expect((await runCli(['--profile', 'other', 'config', 'get', 'token'], env)).code).toBe(3);
  });

  it('login without a terminal and without --token-stdin exits 2 at once', async () => {
    const result = await runBin(['login'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('stdin is not a terminal');
  });

  it('environment variables override the config', async () => {
    await runBin(['config', 'set', 'account', 'Sim101'], env);
    const list = await runBin(['config', 'list', '--json'], { ...env, TRADE_ACCOUNT: 'Sim202', TRADE_BACKEND: 'ws', TRADE_BASE_URL: baseUrl });
    expect(JSON.parse(list.stdout).values).toMatchObject({
      account: { value: 'Sim202', source: 'env' },
      backend: { value: 'ws', source: 'env' },
      'ws-url': { value: `${baseUrl.replace('http', 'ws')}/ws/stream`, source: 'derived' },
    });
    // The listing still runs, naming the bad key's value and source; the exit code says it is bad.
    const bad = await runCli(['config', 'list'], { ...env, TRADE_BACKEND: 'nope' });
    expect(bad).toMatchObject({
      code: 3,
      stderr: `profile default (${join(env.TRADE_CONFIG_DIR!, 'config.json')})\nError: TRADE_BACKEND: backend must be one of embedded, http, ws, got 'nope'\n`,
    });
    expect(bad.stdout).toMatch(/^backend +invalid: 'nope' +env$/m);
  });

  it('profiles keep separate sets of keys', async () => {
    await runBin(['--profile', 'live', 'config', 'set', 'backend', 'http'], env);
    await runBin(['config', 'set', 'backend', 'embedded', '--profile', 'sim'], env);
    expect((await runBin(['config', 'get', 'backend', '--profile', 'live'], env)).stdout).toBe('http\n');
    expect((await runBin(['config', 'get', 'backend'], { ...env, TRADE_PROFILE: 'live' })).stdout).toBe('http\n');
    expect((await runBin(['config', 'get', 'backend', '--profile', 'sim'], env)).stdout).toBe('embedded\n');
    expect((await runBin(['config', 'get', 'backend'], env)).stdout).toBe('embedded\n');
  });

  it('an unknown --profile is an error listing the profiles there are, and nothing is done; login and config create one', async () => {
    const none = await runCli(['--profile', 'livee', 'positions'], env);
    expect(none).toEqual({
      code: 3,
      stdout: '',
      stderr: "Error: Unknown profile 'livee': the config has no profiles yet\n  Nothing was done. Create it with: trade --profile livee login, or trade --profile livee config set KEY VALUE.\n",
    });
    await runCli(['--profile', 'live', 'config', 'set', 'backend', 'embedded'], env);
    await runCli(['--profile', 'sim', 'config', 'set', 'account', 'Sim101'], env);
    const typo = await runCli(['--profile', 'livee', 'place', ...orderArgs()], env);
    expect(typo.code).toBe(3);
    expect(typo.stderr).toContain("Error: Unknown profile 'livee': the config has live, sim\n");
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
    expect((await runCli(['--profile', 'live', 'positions'], env)).code).toBe(0);
    expect((await runCli(['--profile', 'default', 'positions'], env)).code).toBe(0);
  });
});

describe('remote backends from the CLI', () => {
  it('places through http and says which backend and host served it', async () => {
    await login();
    const result = await runBin(['place', ...orderArgs(), '--backend', 'http'], { ...env, TRADE_BASE_URL: baseUrl });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout).toBe(
      `Placed BUY 1 ES 09-25 MARKET DAY\n  order id  ${'f'.repeat(32)}\n  account   Sim101\n  backend   http (${new URL(baseUrl).host})\n`,
    );
    expect(requests).toBe(1);
  });

  it('without a token exits 3 naming the command that sets one, sending nothing', async () => {
    const result = await runBin(['place', ...orderArgs()], { ...env, TRADE_BACKEND: 'http', TRADE_BASE_URL: baseUrl });
    expect(result.code).toBe(3);
    expect(result.stderr).toBe(
      'Error: No token is set for the http backend.\n  Set one with `trade login` (or `trade login --token-stdin`, or TRADE_TOKEN).\n',
    );
    expect(requests).toBe(0);
  });

  it('without a base URL exits 3', async () => {
    const result = await runBin(['place', ...orderArgs(), '--backend', 'http'], { ...env, TRADE_TOKEN: TOKEN });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('No base URL is set for the http backend.');
  });

  it('refuses plain http to another host without --insecure', async () => {
    const result = await runBin(['place', ...orderArgs(), '--dry-run'], {
      ...env, TRADE_TOKEN: TOKEN, TRADE_BACKEND: 'http', TRADE_BASE_URL: 'http://trading.example.com',
    });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('Refusing to send the token in clear text to trading.example.com over http://.');
  });

  it('--dry-run prints exactly what would be sent with the token masked, and sends nothing', async () => {
    const http = await runBin(['place', ...orderArgs(), '--dry-run'], { ...env, TRADE_TOKEN: TOKEN, TRADE_BACKEND: 'http', TRADE_BASE_URL: baseUrl });
    expect(http.code).toBe(0);
    expect(http.stderr).toBe('Dry run — nothing was sent.\n');
    expect(http.stdout).toBe(
      [
        `POST ${baseUrl}/v1/api/accounts/Sim101/orders/place`,
        'Content-Type: application/json',
        `Authorization: Bearer ${MASKED}`,
        '',
        JSON.stringify({ instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' }, null, 2),
        '',
      ].join('\n'),
    );
    const ws = await runBin(['reverse', ...orderArgs(), '--dry-run', '--json', '--backend', 'ws'], { ...env, TRADE_TOKEN: TOKEN, TRADE_BASE_URL: baseUrl });
    expect(JSON.parse(ws.stdout)).toEqual({
      transport: 'ws',
      url: `${baseUrl.replace('http', 'ws')}/ws/stream`,
      headers: { Authorization: `Bearer ${MASKED}` },
      message: {
        action: 'rpc', id: '1', api: 'ReversePosition',
        // NinjaTrader spelling over WebSocket, as the API's only example writes it (§1.5).
        args: { account: 'Sim101', instrument: 'ES 09-25', action: 'Buy', quantity: 1, orderType: 'Market', timeInForce: 'Day' },
      },
    });
    const embedded = await runBin(['place', ...orderArgs(), '--dry-run'], env);
    expect(embedded.code).toBe(0);
    expect(embedded.stdout).toContain(`embedded engine (${join(env.TRADE_HOME!, 'trade.db')}): PlaceOrder`);
    for (const r of [http, ws, embedded]) expect(r.stdout + r.stderr).not.toContain(TOKEN);
    expect(requests).toBe(0);
  });
});

describe('config writes from many processes at once', () => {
  it('loses none of them', async () => {
    const results = await Promise.all(
      Array.from({ length: 12 }, (_, i) => runBin(['--profile', `p${i}`, 'config', 'set', 'account', `Acct${i}`], env)),
    );
    for (const r of results) expect(r).toMatchObject({ code: 0 });
    const file = JSON.parse(readFileSync(join(env.TRADE_CONFIG_DIR!, 'config.json'), 'utf8'));
    expect(Object.keys(file.profiles).sort()).toEqual(Array.from({ length: 12 }, (_, i) => `p${i}`).sort());
    for (let i = 0; i < 12; i++) expect(file.profiles[`p${i}`]).toEqual({ account: `Acct${i}` });
    expect(existsSync(join(env.TRADE_CONFIG_DIR!, 'config.json.lock'))).toBe(false);
  });
});
