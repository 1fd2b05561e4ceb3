/** trade doctor: against the embedded store, a real `trade serve` (http and ws), a closed port and a wrong token. */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/engine/store.js';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';
import { startServer, TOKEN, type Harness } from '../server/harness.js';
import { closedPort } from '../helpers/ports.js';

let env: Env;
let dir: string;
let cleanup: () => void;
beforeEach(() => ({ env, dir, cleanup } = tempHome()));
afterEach(() => cleanup());

const cli = (argv: string[], extra: Env = {}) => runCli(argv, { ...env, ...extra });
const doctorJson = async (extra: Env = {}) => {
  const result = await cli(['doctor', '--json'], extra);
  return { ...result, report: JSON.parse(result.stdout) };
};


describe('trade doctor on embedded', () => {
  it('reports the default backend, the paths and a store not created yet, and creates nothing; exit 0', async () => {
    const result = await cli(['doctor']);
    expect(result).toEqual({
      code: 0,
      stderr: '',
      stdout: [
        `trade ${JSON.parse((await cli(['doctor', '--json'])).stdout).version} (Node ${process.version}, ${process.platform}-${process.arch})`,
        '',
        '  profile  default',
        '  backend  embedded (default)',
        `  config   ${join(dir, 'config', 'config.json')} (no file yet)`,
        `  data     ${join(dir, 'home')} (TRADE_HOME)`,
        '  token    not set',
        '',
        '✔ config   the embedded backend needs no URL or token',
        `✔ store    ${join(dir, 'home', 'trade.db')}: not created yet; the first command that needs it creates it`,
        '',
        'All checks passed.',
        '',
      ].join('\n'),
    });
    expect(existsSync(join(dir, 'home', 'trade.db'))).toBe(false);
  });

  it("counts the store's contents and gives its schema version", async () => {
    expect((await cli(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16'])).code).toBe(0);
    expect((await cli(['price', 'set', 'ES 09-25', '4500'])).code).toBe(0);
    expect((await cli(['place', ...orderArgs({ '--quantity': '2' })])).code).toBe(0);
    expect((await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400' })])).code).toBe(0);
    const result = await cli(['doctor']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `✔ store    ${join(dir, 'home', 'trade.db')}: schema ${SCHEMA_VERSION}; 1 account, 2 orders (1 working), 1 open position, 1 price, 1 ATM template\n`,
    );
    const { report } = await doctorJson();
    expect(report.store).toEqual({
      path: join(dir, 'home', 'trade.db'),
      exists: true,
      currentSchemaVersion: SCHEMA_VERSION,
      schemaVersion: SCHEMA_VERSION,
      accounts: 1,
      orders: 2,
      workingOrders: 1,
      openPositions: 1,
      prices: 1,
      atmTemplates: 1,
    });
    expect(report.ok).toBe(true);
  });

  it('fails with exit 1 on a store written by a newer trade', async () => {
    mkdirSync(join(dir, 'home'), { recursive: true });
    const db = new Database(join(dir, 'home', 'trade.db'));
    db.pragma('user_version = 99');
    db.close();
    const result = await cli(['doctor']);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`✖ store    ${join(dir, 'home', 'trade.db')}: schema 99, written by a newer trade (this one knows ${SCHEMA_VERSION})\n`);
    expect(result.stderr).toBe('Error: 1 check failed: store\n');
  });

  it('reports a bad setting as a config problem, exit 3, still saying where config and data live', async () => {
    const { code, report, stderr } = await doctorJson({ TRADE_BACKEND: 'carrier-pigeon' });
    expect(code).toBe(3);
    expect(report).toMatchObject({
      ok: false,
      config: { path: join(dir, 'config', 'config.json'), exists: false },
      data: { path: join(dir, 'home'), source: 'TRADE_HOME' },
      checks: [{ name: 'config', status: 'fail', message: "TRADE_BACKEND: backend must be one of embedded, http, ws, got 'carrier-pigeon'" }],
    });
    expect(stderr).toBe('Error: 1 check failed: config\n');
  });
});

describe('trade doctor on remote backends', () => {
  let server: Harness;
  beforeAll(async () => {
    server = await startServer();
  });
  afterAll(async () => {
    await server.close();
  });

  const http = (extra: Env = {}) => ({ TRADE_BACKEND: 'http', TRADE_BASE_URL: server.url, TRADE_TOKEN: TOKEN, ...extra });
  const ws = (extra: Env = {}) => ({ TRADE_BACKEND: 'ws', TRADE_BASE_URL: server.url, TRADE_TOKEN: TOKEN, ...extra });

  it('http: the service answers an authenticated read and takes the token; nothing is placed; exit 0', async () => {
    const before = server.snapshot();
    const result = await cli(['doctor'], http());
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  backend   http (TRADE_BACKEND)\n');
    expect(result.stdout).toContain('  token     test…cdef (TRADE_TOKEN)\n');
    expect(result.stdout).toContain(`  base-url  ${server.url} (TRADE_BASE_URL)\n`);
    expect(result.stdout).toContain(`  ws-url    ${server.wsUrl} (derived from base-url)\n`);
    expect(result.stdout).toMatch(
      new RegExp(`\\n✔ service   reachable, token accepted \\(GET ${server.url}/v1/api/positions: HTTP 200 in \\d+ ms\\)\\n`),
    );
    expect(result.stdout).toContain('All checks passed.');
    expect(result.stdout).not.toContain(TOKEN);
    expect(server.snapshot()).toEqual(before);
  });

  it('http --json: the report, with the token masked and the probe timed', async () => {
    const { code, report, stdout } = await doctorJson(http());
    expect(code).toBe(0);
    expect(stdout).not.toContain(TOKEN);
    expect(report).toMatchObject({
      profile: 'default',
      backend: { value: 'http', source: 'env' },
      token: { set: true, masked: 'test…cdef', source: 'env' },
      baseUrl: { value: server.url, source: 'env' },
      wsUrl: { value: server.wsUrl, source: 'derived' },
      store: null,
      service: { transport: 'http', url: `${server.url}/v1/api/positions`, status: 'ok', httpStatus: 200, detail: 'HTTP 200' },
      ok: true,
    });
    expect(report.service.ms).toBeGreaterThanOrEqual(0);
  });

  it('http with a wrong token: reachable, token refused, exit 3', async () => {
    const result = await cli(['doctor'], http({ TRADE_TOKEN: 'wrong-token-0000000000' }));
    expect(result.code).toBe(3);
    expect(result.stdout).toMatch(
      /\n✖ service   reachable, but the token was refused \(GET \S+\/v1\/api\/positions: Unauthorized in \d+ ms\)\n {12}Set a valid token with `trade login` \(or TRADE_TOKEN\)\.\n/,
    );
    expect(result.stdout).not.toContain('wrong-token-0000000000');
    expect(result.stderr).toBe('Error: 1 check failed: service\n');
  });

  it('http to a closed port: unreachable, exit 4', async () => {
    const port = await closedPort();
    const { code, report } = await doctorJson(http({ TRADE_BASE_URL: `http://127.0.0.1:${port}` }));
    expect(code).toBe(4);
    expect(report.service).toMatchObject({ transport: 'http', status: 'unreachable', detail: 'ECONNREFUSED' });
    expect(report.checks.at(-1)).toMatchObject({ name: 'service', status: 'fail', exitCode: 4 });
  });

  it('http to something that is not the service (404): exit 3, check base-url', async () => {
    const result = await cli(['doctor'], http({ TRADE_BASE_URL: `${server.url}/not-here` }));
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('✖ service   reachable, but not answering as the order service (GET ');
    expect(result.stdout).toContain('Check base-url: nothing answers the API there.');
  });

  it('http without a token, or in clear text to another host: exit 3 and nothing is contacted', async () => {
    const noToken = await cli(['doctor'], { TRADE_BACKEND: 'http', TRADE_BASE_URL: server.url });
    expect(noToken.code).toBe(3);
    expect(noToken.stdout).toContain('✖ config    the http backend needs a token, and none is set\n');
    expect(noToken.stdout).toContain('Set one with `trade login` (or TRADE_TOKEN).');
    const clear = await doctorJson(http({ TRADE_BASE_URL: 'http://trading.example.com' }));
    expect(clear.code).toBe(3);
    expect(clear.report.service).toBeNull();
    expect(clear.report.checks[0].message).toBe('Refusing to send the token in clear text to trading.example.com over http://.');
  });

  it('ws: the upgrade takes the token and a read-only RPC is answered; exit 0', async () => {
    const result = await cli(['doctor'], ws());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  backend   ws (TRADE_BACKEND)\n');
    expect(result.stdout).toMatch(
      new RegExp(`\\n✔ service   reachable, token accepted \\(GetAllPositions over ${server.wsUrl}: GetAllPositions answered in \\d+ ms\\)\\n`),
    );
  });

  it('ws with a wrong token: the upgrade is refused, exit 3', async () => {
    const { code, report } = await doctorJson(ws({ TRADE_TOKEN: 'wrong-token-0000000000' }));
    expect(code).toBe(3);
    expect(report.service).toMatchObject({ transport: 'ws', status: 'auth-refused', httpStatus: 401, detail: 'Unauthorized' });
  });

  it('ws to a closed port: unreachable, exit 4', async () => {
    const port = await closedPort();
    const { code, report } = await doctorJson(ws({ TRADE_WS_URL: `ws://127.0.0.1:${port}/ws/stream` }));
    expect(code).toBe(4);
    expect(report.service).toMatchObject({ transport: 'ws', url: `ws://127.0.0.1:${port}/ws/stream`, status: 'unreachable', detail: 'ECONNREFUSED' });
  });

  it('ws needs no base-url: every operation, reads included, goes over the WebSocket', async () => {
    const result = await cli(['doctor'], { TRADE_BACKEND: 'ws', TRADE_WS_URL: server.wsUrl, TRADE_TOKEN: TOKEN });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('  base-url  not set\n');
    expect(result.stdout).not.toContain('!');
  });
});
