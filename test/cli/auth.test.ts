/**
 * `trade auth status`, `trade login` (the token checked first) and `trade logout`, run as the
 * built bin against a real `trade serve` on 127.0.0.1 port 0, over the http and ws backends.
 * No output of any run (stdout or stderr) may hold any form of either token.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { type CliResult, runBin, tempHome } from '../helpers/cli.js';
import { killServes, type ServeProcess, startServe } from '../helpers/serve-process.js';
import { leaks } from '../helpers/token-forms.js';
import { SERVE_SECRET, WRONG_SECRET } from '../helpers/tokens.js';
import { closedPort } from '../helpers/ports.js';

let serve: ServeProcess;
let serveHome: { env: Env; cleanup: () => void };
let env: Env;
let dir: string;
let cleanup: () => void;
let outputs: string[];

beforeAll(async () => {
  serveHome = tempHome();
  serve = await startServe(serveHome.env, SERVE_SECRET);
});
afterAll(async () => {
  await killServes();
  serveHome.cleanup();
});
beforeEach(() => {
  ({ env, dir, cleanup } = tempHome());
  outputs = [];
});
afterEach(() => {
  // Every run's output, whatever the test checked: neither token in any form.
  for (const text of outputs) {
    expect(leaks(text, SERVE_SECRET)).toEqual([]);
    expect(leaks(text, WRONG_SECRET)).toEqual([]);
  }
  cleanup();
});

async function trade(argv: string[], extra: Env = {}, input?: string): Promise<CliResult> {
  const result = await runBin(argv, { ...env, ...extra }, input);
  outputs.push(result.stdout, result.stderr);
  return result;
}

/** The profile's keys as the config file holds them. */
function saved(profile = 'default'): Record<string, string> {
  try {
    return JSON.parse(readFileSync(join(dir, 'config', 'config.json'), 'utf8')).profiles?.[profile] ?? {};
  } catch {
    return {};
  }
}

async function useBackend(backend: 'http' | 'ws'): Promise<void> {
  expect((await trade(['config', 'set', 'base-url', serve.url])).code).toBe(0);
  expect((await trade(['config', 'set', 'backend', backend])).code).toBe(0);
}


const masked = (token: string) => `${token.slice(0, 4)}…${token.slice(-4)}`;

describe('trade auth status', () => {
  it.each(['http', 'ws'] as const)('over %s, with the token the service takes: masked, its source, accepted; exit 0', async (backend) => {
    await useBackend(backend);
    const result = await trade(['auth', 'status'], { TRADE_TOKEN: SERVE_SECRET });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines).toContain(`  backend   ${backend} (config, profile default)`);
    expect(lines).toContain(`  base-url  ${serve.url} (config, profile default)`);
    expect(lines).toContain(`  token     ${masked(SERVE_SECRET)} (TRADE_TOKEN)`);
    const service = lines.find((l) => l.startsWith('  service'));
    expect(service).toMatch(
      backend === 'http'
        ? new RegExp(`^  service   token accepted \\(GET ${serve.url}/v1/api/positions: HTTP 200 in \\d+ ms\\)$`)
        : new RegExp(`^  service   token accepted \\(GetAllPositions over ${serve.wsUrl}: GetAllPositions answered in \\d+ ms\\)$`),
    );
  });

  it('--json: the whole status as one object', async () => {
    await useBackend('http');
    expect((await trade(['login', '--token-stdin'], {}, SERVE_SECRET)).code).toBe(0);
    const result = await trade(['auth', 'status', '--json']);
    expect(result.code).toBe(0);
    const status = JSON.parse(result.stdout);
    expect(status).toMatchObject({
      profile: 'default',
      config: join(dir, 'config', 'config.json'),
      backend: { value: 'http', source: 'config' },
      baseUrl: { value: serve.url, source: 'config' },
      token: { set: true, masked: masked(SERVE_SECRET), source: 'config', from: 'config, profile default' },
      service: { checked: true, accepted: true, status: 'ok', url: `${serve.url}/v1/api/positions` },
    });
  });

  it('a token the service refuses: said, exit 3', async () => {
    await useBackend('http');
    const result = await trade(['auth', 'status'], { TRADE_TOKEN: WRONG_SECRET });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain(`  token     ${masked(WRONG_SECRET)} (TRADE_TOKEN)`);
    expect(result.stdout).toMatch(/ {2}service {3}token refused \(GET .*: Unauthorized in \d+ ms\); set a valid one with `trade login`\n/);
    expect(result.stderr).toBe('Error: The service refused the token\n');
    const json = await trade(['auth', 'status', '--json'], { TRADE_TOKEN: WRONG_SECRET });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stdout).service).toMatchObject({ checked: true, accepted: false, status: 'auth-refused' });
  });

  it('over ws, a refused token: exit 3', async () => {
    await useBackend('ws');
    const result = await trade(['auth', 'status', '--json'], { TRADE_TOKEN: WRONG_SECRET });
    expect(result.code).toBe(3);
    expect(JSON.parse(result.stdout).service).toMatchObject({ accepted: false, status: 'auth-refused' });
  });

  it('no token on a remote backend: exit 3; a service that does not answer: exit 4', async () => {
    await useBackend('http');
    const none = await trade(['auth', 'status']);
    expect(none.code).toBe(3);
    expect(none.stdout).toContain('  token     not set\n');
    expect(none.stdout).toContain('  service   no token: the http backend needs one (`trade login`, or TRADE_TOKEN)\n');
    const port = await closedPort();
    const down = await trade(['auth', 'status', '--json'], { TRADE_TOKEN: SERVE_SECRET, TRADE_BASE_URL: `http://127.0.0.1:${port}` });
    expect(down.code).toBe(4);
    expect(JSON.parse(down.stdout).service).toMatchObject({ checked: true, accepted: null, status: 'unreachable' });
  });

  it('on embedded with no base URL: no token needed, none sent; exit 0', async () => {
    const result = await trade(['auth', 'status', '--json'], { TRADE_TOKEN: SERVE_SECRET });
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      backend: { value: 'embedded', source: 'default' },
      token: { set: true, masked: masked(SERVE_SECRET), source: 'env', from: 'TRADE_TOKEN' },
      service: { checked: false, accepted: null, status: 'not-needed', message: 'not checked: the embedded backend needs no token and no base URL is set' },
    });
    const none = await trade(['auth', 'status', '--json'], { TRADE_BASE_URL: serve.url });
    expect(none.code).toBe(0);
    expect(JSON.parse(none.stdout).service).toEqual({
      checked: false,
      accepted: null,
      status: 'not-needed',
      url: null,
      ms: null,
      message: 'not checked: the embedded backend needs no token, and none is set',
    });
  });

  it('on embedded with a base URL: the token is checked with its service, refused is exit 3', async () => {
    expect((await trade(['config', 'set', 'base-url', serve.url])).code).toBe(0);
    const refused = await trade(['auth', 'status'], { TRADE_TOKEN: WRONG_SECRET });
    expect(refused.code).toBe(3);
    expect(refused.stdout).toContain('  backend   embedded (default)\n');
    expect(refused.stdout).toMatch(/\n {2}service {3}token refused \(GET http:\/\/127\.0\.0\.1:\d+\/v1\/api\/positions: Unauthorized in \d+ ms\); set a valid one with `trade login`\n$/);
    expect(refused.stderr).toBe('Error: The service refused the token\n');
  });
});

describe('trade login', () => {
  it('asks the service first: a refused token is not saved; exit 3', async () => {
    await useBackend('http');
    const result = await trade(['login', '--token-stdin'], {}, `${WRONG_SECRET}\n`);
    expect(result.code).toBe(3);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(/^Error: The service refused the token: token refused \(GET .*: Unauthorized in \d+ ms\)\. It was not saved\.\n/);
    expect(saved()).not.toHaveProperty('token');
  });

  it('a token the service takes is saved, and auth status then finds it in the profile', async () => {
    await useBackend('ws');
    const result = await trade(['login', '--token-stdin'], {}, `${SERVE_SECRET}\n`);
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(
      new RegExp(`^Token ${masked(SERVE_SECRET)} saved for profile default in .*config\\.json\\n  token accepted \\(GetAllPositions over ${serve.wsUrl}: GetAllPositions answered in \\d+ ms\\)\\n$`),
    );
    expect(saved().token).toBe(SERVE_SECRET);
    const status = await trade(['auth', 'status', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ token: { source: 'config' }, service: { accepted: true } });
  });

  it('on the default backend (embedded) with a base URL: saved once the service takes it, and auth status says it does', async () => {
    expect((await trade(['config', 'set', 'base-url', serve.url])).code).toBe(0);
    const login = await trade(['login', '--token-stdin'], {}, `${SERVE_SECRET}\n`);
    expect(login.code).toBe(0);
    expect(login.stderr).toMatch(/\n {2}token accepted \(GET http:\/\/127\.0\.0\.1:\d+\/v1\/api\/positions: HTTP 200 in \d+ ms\)\n$/);
    expect(saved().token).toBe(SERVE_SECRET);
    const status = await trade(['auth', 'status']);
    expect(status.code).toBe(0);
    expect(status.stdout).toContain('  backend   embedded (default)\n');
    expect(status.stdout).toContain(`  token     ${masked(SERVE_SECRET)} (config, profile default)\n`);
    expect(status.stdout).toMatch(/\n {2}service {3}token accepted \(GET http:\/\/127\.0\.0\.1:\d+\/v1\/api\/positions: HTTP 200 in \d+ ms\)\n$/);
    expect(JSON.parse((await trade(['auth', 'status', '--json'])).stdout).service).toMatchObject({ checked: true, accepted: true, status: 'ok' });
  });

  it('a service that cannot be asked: nothing saved, exit 4, and --no-verify saves it anyway', async () => {
    const port = await closedPort();
    expect((await trade(['config', 'set', 'base-url', `http://127.0.0.1:${port}`])).code).toBe(0);
    expect((await trade(['config', 'set', 'backend', 'http'])).code).toBe(0);
    const refused = await trade(['login', '--token-stdin'], {}, SERVE_SECRET);
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain('Error: Cannot check the token: service unreachable (GET ');
    expect(refused.stderr).toContain('or save it unchecked with `trade login --no-verify`');
    expect(saved()).not.toHaveProperty('token');
    const unchecked = await trade(['login', '--token-stdin', '--no-verify'], {}, SERVE_SECRET);
    expect(unchecked.code).toBe(0);
    expect(unchecked.stderr).toMatch(/saved for profile default in .*\n {2}not checked \(--no-verify\)\n$/);
    expect(saved().token).toBe(SERVE_SECRET);
  });

  it('a remote backend with no URL: nothing saved, exit 3, naming what to set', async () => {
    const result = await trade(['login', '--token-stdin'], { TRADE_BACKEND: 'http' }, SERVE_SECRET);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('The http backend needs a base URL, and none is set');
    expect(result.stderr).toContain('--no-verify');
    expect(saved()).not.toHaveProperty('token');
  });
});

describe('trade logout', () => {
  it("removes the profile's token; says when TRADE_TOKEN still gives one", async () => {
    await useBackend('http');
    expect((await trade(['login', '--token-stdin'], {}, SERVE_SECRET)).code).toBe(0);
    const result = await trade(['logout'], { TRADE_TOKEN: WRONG_SECRET });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe(
      `Removed the token of profile default from ${join(dir, 'config', 'config.json')}\n` +
        'Note: TRADE_TOKEN is set, so commands still send a token; unset it (unset TRADE_TOKEN) to log out fully.\n',
    );
    expect(saved()).toEqual({ 'base-url': serve.url, backend: 'http' });
    const again = await trade(['logout']);
    expect(again).toMatchObject({ code: 0, stderr: `Profile default has no saved token; nothing was changed (${join(dir, 'config', 'config.json')})\n` });
    expect((await trade(['auth', 'status'])).code).toBe(3);
  });
});
