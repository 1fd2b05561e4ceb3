/**
 * Bad settings from each source (flag, environment, config file of any JSON): the commands that
 * use the key fail with exit 3 naming the key, the value (escaped) and the source; the others,
 * `config list` and `doctor` above all, still run and say what is wrong.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';
import { TOKEN } from '../server/harness.js';

let env: Env;
let cleanup: () => void;
let configFile: string;
beforeEach(() => {
  ({ env, cleanup } = tempHome());
  configFile = join(env.TRADE_CONFIG_DIR!, 'config.json');
});
afterEach(() => cleanup());

const cli = (argv: string[], extra: Env = {}) => runCli(argv, { ...env, ...extra });
const RANGE = 'timeout must be a number of seconds from 0.001 to 3600';
/** A remote backend at an address nothing answers: exit 4 if anything were sent. */
const REMOTE: Env = { TRADE_BACKEND: 'http', TRADE_BASE_URL: 'http://127.0.0.1:9', TRADE_TOKEN: TOKEN };

function writeConfig(profile: unknown): void {
  mkdirSync(env.TRADE_CONFIG_DIR!, { recursive: true });
  writeFileSync(configFile, JSON.stringify({ profiles: { default: profile } }));
}

describe('TRADE_TIMEOUT that is not a number', () => {
  const bad = { TRADE_TIMEOUT: 'abc' };
  const message = `TRADE_TIMEOUT: ${RANGE}, got 'abc'`;

  it('fails a command that waits on the service, before sending anything; exit 3', async () => {
    expect(await cli(['positions'], { ...REMOTE, ...bad })).toEqual({ code: 3, stdout: '', stderr: `Error: ${message}\n  Fix or unset TRADE_TIMEOUT.\n` });
  });

  it('does not fail what never waits on a service: the embedded engine', async () => {
    expect((await cli(['place', ...orderArgs()], bad)).code).toBe(0);
  });

  it('config list still lists every key, naming the bad one, its value and its source; exit 3', async () => {
    const list = await cli(['config', 'list'], bad);
    expect(list.code).toBe(3);
    expect(list.stdout).toMatch(/^timeout +invalid: 'abc' +env$/m);
    expect(list.stdout).toMatch(/^backend +embedded +default$/m);
    expect(list.stderr).toBe(`profile default (${configFile})\nError: ${message}\n`);
    const json = await cli(['config', 'list', '--json'], bad);
    expect(JSON.parse(json.stdout).values.timeout).toEqual({ value: null, source: 'env', error: message });
    expect(await cli(['config', 'get', 'timeout'], bad)).toMatchObject({ code: 3, stderr: `Error: ${message}\n  Fix or unset TRADE_TIMEOUT.\n` });
  });

  it('doctor runs, and fails the config check with exit 3, the store still checked', async () => {
    const doctor = await cli(['doctor'], bad);
    expect(doctor.code).toBe(3);
    expect(doctor.stdout).toContain(`✖ config   ${message}\n           Fix or unset TRADE_TIMEOUT.\n`);
    expect(doctor.stdout).toContain('✔ store ');
    expect(doctor.stdout).not.toContain('All checks passed');
    expect(doctor.stderr).toBe('Error: 1 check failed: config\n');
  });
});

describe('the timeout range', () => {
  it.each(['0.0004', '0', '0.0000001', '3601', '-1', '1e-3', ' '])('TRADE_TIMEOUT=%j is refused', async (value) => {
    const result = await cli(['positions'], { ...REMOTE, TRADE_TIMEOUT: value });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`Error: TRADE_TIMEOUT: ${RANGE}, got '${value}'\n`);
  });

  it('`config set` refuses a value below 1 ms and writes nothing', async () => {
    expect(await cli(['config', 'set', 'timeout', '0.0004'])).toEqual({ code: 3, stdout: '', stderr: `Error: ${RANGE}, got '0.0004'\n` });
    expect(() => readFileSync(configFile)).toThrow(/ENOENT/);
  });

  it('the smallest timeout, 1 ms, is a timeout: a server that never answers ends in exit 4, not a hang', async () => {
    const sockets: Socket[] = [];
    const silent: Server = createNetServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as { port: number };
    try {
      const started = Date.now();
      const result = await cli(['positions'], { ...REMOTE, TRADE_BASE_URL: `http://127.0.0.1:${port}`, TRADE_TIMEOUT: '0.001' });
      expect(result.code).toBe(4);
      expect(Date.now() - started).toBeLessThan(5000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('the config file, which may hold any JSON', () => {
  it('takes a number for a numeric key: "timeout": 5', async () => {
    writeConfig({ timeout: 5 });
    expect(await cli(['config', 'get', 'timeout', '--json'])).toEqual({
      code: 0,
      stdout: '{"key":"timeout","value":"5","source":"config"}\n',
      stderr: '',
    });
  });

  it.each([
    [{ timeout: true }, `${RANGE}, got true`, 'timeout'],
    [{ timeout: '0.0001' }, `${RANGE}, got '0.0001'`, 'timeout'],
    [{ timeout: { seconds: 5 } }, `${RANGE}, got {"seconds":5}`, 'timeout'],
    [{ backend: 7 }, 'backend must be text, got 7', 'backend'],
    [{ account: ['Sim101'] }, 'account must be text, got ["Sim101"]', 'account'],
  ])('%j is named with the file, the profile and the value', async (profile, why, key) => {
    writeConfig(profile);
    const message = `${configFile} (profile default): ${why}`;
    const list = await cli(['config', 'list']);
    expect(list.code).toBe(3);
    expect(list.stderr).toBe(`profile default (${configFile})\nError: ${message}\n`);
    expect(list.stdout).toMatch(new RegExp(`^${key} +invalid: .+ +config$`, 'm'));
    const doctor = await cli(['doctor', '--json']);
    expect(doctor.code).toBe(3);
    expect(JSON.parse(doctor.stdout).checks[0]).toEqual({
      name: 'config',
      status: 'fail',
      message,
      hint: `Set it with \`trade config set ${key} VALUE\`, or remove it with \`trade config unset ${key}\`.`,
      exitCode: 3,
    });
  });

  it('a profile or profiles that are not objects are named, and `config set` does not overwrite them', async () => {
    writeConfig('Sim101');
    const message = `${configFile}: profile 'default' must be an object of keys, got 'Sim101'`;
    const list = await cli(['config', 'list']);
    expect(list).toMatchObject({ code: 3, stderr: `profile default (${configFile})\nError: ${message}\n` });
    expect(list.stdout).toMatch(/^timeout +unreadable +config$/m);
    const before = readFileSync(configFile, 'utf8');
    const set = await cli(['config', 'set', 'account', 'Sim101']);
    expect(set.code).toBe(3);
    expect(set.stderr).toContain(`Error: ${configFile} does not hold its profiles as objects of keys; nothing was changed\n`);
    expect(readFileSync(configFile, 'utf8')).toBe(before);
    writeFileSync(configFile, '{"profiles": []}');
    expect((await cli(['config', 'list'])).stderr).toContain(`Error: ${configFile}: "profiles" must be an object with one entry per profile, got []\n`);
  });
});

describe('a config folder that is a file', () => {
  it('config list, doctor and config set name the file and fail with exit 3, changing nothing', async () => {
    writeFileSync(env.TRADE_CONFIG_DIR!, 'not a folder');
    const message = `Cannot read the config file ${configFile}: a file is where a folder should be (ENOTDIR)`;
    const list = await cli(['config', 'list']);
    expect(list).toMatchObject({ code: 3, stderr: `profile default (${configFile})\nError: ${message}\n` });
    const doctor = await cli(['doctor', '--json']);
    expect(doctor.code).toBe(3);
    expect(JSON.parse(doctor.stdout).checks[0]).toMatchObject({ name: 'config', status: 'fail', message });
    const set = await cli(['config', 'set', 'account', 'Sim101']);
    expect(set).toMatchObject({ code: 3, stdout: '' });
    expect(set.stderr).toContain(`Error: ${message}\n`);
    expect(readFileSync(env.TRADE_CONFIG_DIR!, 'utf8')).toBe('not a folder');
  });
});

describe('values shown in messages', () => {
  it('escape control and invisible characters, so a value cannot repaint the terminal or hide', async () => {
    const result = await cli(['positions'], { ...REMOTE, TRADE_TIMEOUT: '\u001b[31m1\u200b' });
    expect(result.stderr).toContain(`Error: TRADE_TIMEOUT: ${RANGE}, got '\\u001b[31m1\\u200b'\n`);
    expect(result.stderr).not.toMatch(/[\u001b\u200b]/);
  });

  it('a flag is named as the flag', async () => {
    expect(await cli(['--backend', 'pigeon', 'positions'])).toMatchObject({
      code: 3,
      stderr: "Error: --backend: backend must be one of embedded, http, ws, got 'pigeon'\n",
    });
  });
});
