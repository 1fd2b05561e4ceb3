/** The bin loads only what the command and backend need (DESIGN.md: lazy weight). */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { BIN, orderArgs, tempHome } from '../helpers/cli.js';
import { killServes, startServe } from '../helpers/serve-process.js';

const REGISTER = fileURLToPath(new URL('../fixtures/trace-register.mjs', import.meta.url));
const HEAVY = ['undici', '/ws/', '@inquirer', 'fastify', 'chunks/server', 'conf/', 'cli-progress', 'zod'];

let env: Env;
let dir: string;
let cleanup: () => void;
beforeEach(() => ({ env, dir, cleanup } = tempHome()));
afterEach(async () => {
  await killServes();
  cleanup();
});

function loaded(argv: string[], extraEnv: Env = {}): string[] {
  const trace = join(dir, `trace-${argv[0]}.txt`);
  const result = spawnSync(process.execPath, ['--import', REGISTER, BIN, ...argv], {
    env: { PATH: process.env.PATH, ...env, ...extraEnv, TRACE_FILE: trace },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  return readFileSync(trace, 'utf8').trim().split('\n');
}

/** zod is bundled into dist/ chunks, so a loaded chunk is searched for it by content. */
function bundlesZod(url: string): boolean {
  return url.includes('/dist/') && readFileSync(fileURLToPath(url), 'utf8').includes('ZodError');
}

const heavy = (modules: string[], allowed: string[] = []) =>
  modules
    .map((m) => (bundlesZod(m) ? `${m} (zod)` : m))
    .filter((m) => HEAVY.some((h) => m.includes(`node_modules/${h}`) || m.includes(h)) && !allowed.some((a) => m.includes(a)));

describe('start-up weight', () => {
  it('--version and --help load no backend, prompt, server or schema module', () => {
    for (const argv of [['--version'], ['--help'], ['place', '--help']]) {
      const modules = loaded(argv);
      expect(modules.some((m) => m.endsWith('/dist/main.js'))).toBe(true);
      expect(heavy(modules)).toEqual([]);
      expect(modules.some((m) => m.includes('better-sqlite3'))).toBe(false);
    }
  });

  it('--version answers without loading the command tree (commander)', () => {
    const modules = loaded(['--version']);
    const withCommander = modules.filter(
      (m) => m.includes('/dist/') && readFileSync(fileURLToPath(m), 'utf8').includes('commander.unknownCommand'),
    );
    expect(withCommander).toEqual([]);
    expect(loaded(['--help']).some((m) => m.includes('/dist/') && readFileSync(fileURLToPath(m), 'utf8').includes('commander.unknownCommand'))).toBe(true);
  });

  it('place on embedded loads the engine and the schema, but no undici, ws, inquirer or server', () => {
    const modules = loaded(['place', ...orderArgs()]);
    expect(modules.some((m) => m.includes('better-sqlite3'))).toBe(true);
    expect(modules.some(bundlesZod)).toBe(true);
    expect(heavy(modules, ['zod'])).toEqual([]);
  });

  it('place on ws loads ws, but no undici (only reads need it), SQLite, inquirer or server', async () => {
    const serve = await startServe(env, 'startup-weight-token');
    const modules = loaded(['place', ...orderArgs()], { TRADE_BACKEND: 'ws', TRADE_WS_URL: serve.wsUrl, TRADE_TOKEN: 'startup-weight-token' });
    expect(modules.some((m) => m.includes('node_modules/ws/'))).toBe(true);
    expect(heavy(modules, ['zod', '/ws/'])).toEqual([]);
    expect(modules.some((m) => m.includes('better-sqlite3'))).toBe(false);
  });
});
