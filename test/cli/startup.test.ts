/**
 * The bin loads only what the command and backend need (DESIGN.md: lazy weight), and builds
 * nothing at start-up that the command does not use. The built bin runs with a preload
 * (test/fixtures/trace-load.cjs) that records every bundled module whose body runs, every file
 * require() loads, every module import() resolves and every Intl object built.
 */
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { VERSION } from '../../src/common/version.js';
import { BIN, orderArgs, tempHome } from '../helpers/cli.js';
import { killServes, startServe } from '../helpers/serve-process.js';
import { spawnSyncRecorded } from '../helpers/spawn.js';
import { runInPty } from '../helpers/terminal.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PRELOAD = fileURLToPath(new URL('../fixtures/trace-load.cjs', import.meta.url));
const STDIO_PRELOAD = fileURLToPath(new URL('../fixtures/stdio-made.cjs', import.meta.url));
/** What no command below may load: the other backends, prompts, the server, the MCP SDK, the config writer. */
const HEAVY = ['node_modules/undici/', 'node_modules/ws/', 'node_modules/@inquirer/', 'node_modules/fastify/', 'node_modules/@fastify/', 'node_modules/conf/', 'node_modules/cli-progress/', 'src/server/', 'src/config/store.ts', 'node_modules/@modelcontextprotocol/', 'node_modules/express/', 'src/mcp/'];

let env: Env;
let dir: string;
let cleanup: () => void;
beforeEach(() => ({ env, dir, cleanup } = tempHome()));
afterEach(async () => {
  await killServes();
  cleanup();
});

interface Trace {
  stdout: string;
  /** Bundled modules whose body ran, by source path (src/..., node_modules/...). */
  modules: string[];
  /** Files and builtins loaded by require() or import(). */
  loaded: string[];
  /** Intl objects built. */
  intl: string[];
  /** Schemas built (src/order/schema.ts's fields, the operation table's args), by name. */
  schemas: string[];
  /** Node's own modules loaded after the preload, with or without require() (`perf_hooks`). */
  builtins: string[];
}

function trace(argv: string[], extraEnv: Env = {}, bin = BIN, node: string[] = []): Trace {
  const file = join(dir, `trace-${argv[0]}-${Math.random().toString(36).slice(2)}.txt`);
  const result = spawnSyncRecorded(process.execPath, [...node, '--require', PRELOAD, bin, ...argv], {
    env: { PATH: process.env.PATH, ...env, ...extraEnv, TRACE_FILE: file },
    encoding: 'utf8',
  });
  expect(result.status, result.stderr).toBe(0);
  const lines = readFileSync(file, 'utf8').trim().split('\n');
  const esm = existsSync(`${file}.esm`) ? readFileSync(`${file}.esm`, 'utf8').trim().split('\n').filter(Boolean) : [];
  const field = (kind: string) => lines.filter((l) => l.startsWith(`${kind} `)).map((l) => l.slice(kind.length + 1));
  return {
    stdout: result.stdout,
    modules: field('module'),
    loaded: [...field('require'), ...esm.map((url) => (url.startsWith('file:') ? fileURLToPath(url) : url))],
    intl: field('intl'),
    schemas: field('schema'),
    builtins: field('builtin'),
  };
}

const heavy = (t: Trace, allowed: string[] = []) =>
  [...t.modules, ...t.loaded].filter((m) => HEAVY.some((h) => m.includes(h)) && !allowed.some((a) => m.includes(a)));
const commands = (t: Trace) => t.modules.filter((m) => m.startsWith('src/cli/commands/'));

describe('start-up weight', () => {
  it('--version is answered by the bin: no bundle, no module of the CLI, no Intl', () => {
    for (const flag of ['--version', '-V']) {
      const t = trace([flag]);
      expect(t.stdout).toBe(`${VERSION}\n`);
      expect(t.modules).toEqual([]);
      expect(t.loaded.filter((f) => !f.startsWith('node:'))).toEqual([BIN]);
      expect(t.intl).toEqual([]);
    }
  });

  it('--help runs the command tree, and no command, schema, backend, engine, prompt or server module', () => {
    for (const argv of [['--help'], ['place', '--help']]) {
      // FORCE_COLOR=0 changes nothing the CLI prints to a pipe, but makes the CLI answer `--help` (below).
      const t = trace(argv, { FORCE_COLOR: '0' });
      expect(t.stdout).toContain('Usage: trade');
      expect(t.modules).toContain('src/cli/program.ts');
      expect(t.modules.some((m) => m.startsWith('node_modules/commander/'))).toBe(true);
      expect(commands(t)).toEqual([]);
      expect(t.modules.filter((m) => /node_modules\/zod\/|src\/order\/schema|src\/(service|backends|engine)\//.test(m))).toEqual([]);
      expect(heavy(t)).toEqual([]);
      expect(t.loaded.filter((f) => f.includes('better-sqlite3') || f === 'node:child_process')).toEqual([]);
      expect(t.intl).toEqual([]);
    }
  });

  it('--help to a pipe or a file is answered by the bin from dist/help.txt, exactly as the CLI answers it (issue 34)', () => {
    const cli = trace(['--help'], { FORCE_COLOR: '0' });
    expect(cli.modules).toContain('src/cli/program.ts');
    for (const flag of ['--help', '-h']) {
      const t = trace([flag]);
      expect(t.stdout).toBe(cli.stdout);
      expect(t.modules).toEqual([]);
      expect(t.loaded.filter((f) => !f.startsWith('node:'))).toEqual([BIN]);
    }
    // To a file, and to /dev/null, the same.
    const file = join(dir, 'help.txt');
    for (const target of [file, '/dev/null']) {
      const result = spawnSyncRecorded('sh', ['-c', 'exec "$0" "$1" --help > "$2"', process.execPath, BIN, target], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
      expect(result.status, result.stderr).toBe(0);
    }
    expect(readFileSync(file, 'utf8')).toBe(cli.stdout);
  });

  it("--help is the CLI's when anything could change it: a width, forced colour, a token to redact, other arguments, a terminal", async () => {
    for (const extra of [{ COLUMNS: '60' }, { FORCE_COLOR: '1' }, { TRADE_TOKEN: 'startup-help-token' }]) {
      expect(trace(['--help'], extra).modules, JSON.stringify(extra)).toContain('src/cli/program.ts');
    }
    const piped = trace(['--help']).stdout;
    const narrow = trace(['--help'], { COLUMNS: '60' }).stdout;
    expect(narrow.startsWith('Usage: trade [options] [command]\n')).toBe(true);
    expect(narrow).not.toBe(piped);
    expect(trace(['--help', '--backend', 'embedded']).modules).toContain('src/cli/program.ts');
    // In a real terminal (a pty): the CLI answers, fitted to it.
    const file = join(dir, 'trace-pty.txt');
    const ran = await runInPty(['--help'], { ...env, NODE_OPTIONS: `--require ${PRELOAD}`, TRACE_FILE: file }, async () => undefined);
    expect(ran.code).toBe(0);
    expect(ran.screen).toContain('Usage: trade [options] [command]');
    expect(readFileSync(file, 'utf8')).toContain('module src/cli/program.ts\n');
  });

  it('place on embedded runs the place command, the schema and the engine, and loads no node:crypto and builds no Intl formatter', () => {
    const t = trace(['place', ...orderArgs()]);
    expect(t.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n/);
    expect(commands(t)).toEqual(['src/cli/commands/place.ts']);
    expect(t.modules).toEqual(expect.arrayContaining(['src/service/order.ts', 'src/engine/engine.ts', 'src/backends/embedded.ts']));
    expect(t.loaded.some((f) => f.includes('node_modules/better-sqlite3/'))).toBe(true);
    expect(heavy(t)).toEqual([]);
    // Neither the other backends' nor the stream events' schemas, nor commander's child_process.
    expect(t.modules.filter((m) => /src\/(backends\/(http|ws|probe)|service\/events)\.ts$/.test(m))).toEqual([]);
    expect(t.loaded.filter((f) => f === 'node:child_process')).toEqual([]);
    // Order ids come from the kernel's generator (src/common/random.ts): node:crypto costs ~5 ms.
    expect(t.loaded.filter((f) => f === 'node:crypto' || f === 'crypto')).toEqual([]);
    expect(t.intl).toEqual([]);
    // Nor perf_hooks: the global `performance` loads it on first read (1–2 ms); src/common/monotonic.ts reads the same clock.
    expect(t.builtins).not.toContain('perf_hooks');
  });

  it('place to a pipe writes its lines without making stdout or stderr a stream (issue 34)', () => {
    /** What `trade ARGV` printed, its exit code, and which of process.stdout, stderr and stdin it made. */
    const stdio = (argv: string[], input = '') => {
      const file = join(dir, `stdio-${Math.random().toString(36).slice(2)}.txt`);
      const result = spawnSyncRecorded(process.execPath, ['--require', STDIO_PRELOAD, BIN, ...argv], {
        env: { PATH: process.env.PATH, ...env, STDIO_FILE: file },
        encoding: 'utf8',
        input,
      });
      return { ...result, made: readFileSync(file, 'utf8').split('\n').filter(Boolean) };
    };
    // A line to stderr (the instrument's name normalised) and the order's to stdout.
    const placed = stdio(['place', ...orderArgs({ '--instrument': 'ES 9-25' })]);
    expect(placed.status).toBe(0);
    expect(placed.stderr).toBe('ES 9-25 → ES 09-25\n');
    expect(placed.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n {2}order id {2}[0-9a-f]{32}\n/);
    expect(placed.made).toEqual([]);
    // A usage error's message.
    const usage = stdio(['place', '--quantity', 'x']);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toMatch(/^Error: Missing required flags: --account/);
    // (It looks whether stdin is a terminal that could be asked for the missing flags.)
    expect(usage.made).toEqual(['stdin']);
    // A command that streams its output makes the stream: batch corks its stdout (and reads its stdin).
    const batch = stdio(['batch', '-'], '{"api":"PlaceOrder","args":{"account":"Sim101","instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY"}}\n');
    expect(batch.status, batch.stderr).toBe(0);
    expect(batch.stdout).toMatch(/^\{"line":1,.*"status":200/);
    expect(batch.made).toContain('stdout');
  });

  it('place builds the validators of the fields it checks and no other (issue 34)', () => {
    // A MARKET order: its six fields are well-formed, so read without their schemas (WELL_FORMED in
    // src/service/order.ts); no price, OCO, strategy, order id or guard rule, nor any operation's args.
    const market = trace(['place', ...orderArgs()]);
    expect(market.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n/);
    expect(market.schemas).toEqual([]);
    // And so zod itself never starts: the bundle's stand-in loads it on first use (scripts/build.js, lazyZod).
    expect(market.modules.filter((m) => m.startsWith('node_modules/zod/'))).toEqual([]);
    // A LIMIT order with an OCO id builds exactly those two rules (the limit price's and the name's).
    const limit = trace(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4500', '--oco-id': 'pair-1' })]);
    expect(limit.stdout).toMatch(/^Placed BUY 1 ES 09-25 LIMIT limit 4500 DAY OCO pair-1\n/);
    expect(limit.schemas.sort()).toEqual(['limitPrice', 'ocoId', 'price']);
    expect(commands(limit)).toEqual(['src/cli/commands/place.ts']);
    expect(limit.modules).toContain('node_modules/zod/v4/classic/schemas.js');
    // --help builds none.
    expect(trace(['place', '--help']).schemas).toEqual([]);
  });

  it("place on ws loads ws and SQLite (the guard's ledger), but no undici (only reads need it), engine, inquirer or server", async () => {
    const serve = await startServe(env, 'startup-weight-token');
    const t = trace(['place', ...orderArgs()], { TRADE_BACKEND: 'ws', TRADE_WS_URL: serve.wsUrl, TRADE_TOKEN: 'startup-weight-token' });
    expect(t.loaded.some((f) => f.includes('node_modules/ws/'))).toBe(true);
    expect(heavy(t, ['node_modules/ws/'])).toEqual([]);
    expect(t.loaded.some((f) => f.includes('better-sqlite3'))).toBe(true);
    expect(t.modules).toContain('src/guard/ledger.ts');
    expect(t.modules).not.toContain('src/engine/engine.ts');
  });

  it('trade serve starts zod before the service and server modules, not where the stand-in would first load it (src/service/zod-now.ts)', async () => {
    const file = join(dir, 'trace-serve.txt');
    const serve = await startServe(env, 'startup-zod-token', { nodeArgs: ['--require', PRELOAD], extraEnv: { TRACE_FILE: file } });
    serve.child.kill('SIGTERM');
    await serve.exited;
    const modules = readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('module ')).map((l) => l.slice('module '.length));
    const zod = modules.indexOf('node_modules/zod/v4/classic/schemas.js');
    expect(zod).toBeGreaterThanOrEqual(0);
    for (const later of ['src/service/order.ts', 'src/service/operations.ts', 'src/server/operations.ts', 'src/server/server.ts']) expect(modules.indexOf(later), later).toBeGreaterThan(zod);
  });

  it('__complete (every Tab) runs only its command: no schema, engine, backend or conf; SQLite read-only', () => {
    expect(trace(['__complete', 'accounts']).stdout).toBe(''); // no store yet: nothing, and none made
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
    trace(['accounts', 'add', 'Sim102']);
    for (const source of ['accounts', 'working-orders', 'profiles']) {
      const t = trace(['__complete', source]);
      if (source === 'accounts') expect(t.stdout).toBe('Sim101\nSim102\n');
      expect(commands(t)).toEqual(['src/cli/commands/complete.ts']);
      expect(t.modules.filter((m) => /node_modules\/zod\/|src\/order\/schema|src\/(backends|engine)\/|src\/config\/(settings|keys)\.ts/.test(m))).toEqual([]);
      expect(heavy(t)).toEqual([]);
      expect(t.loaded.filter((f) => f === 'node:child_process')).toEqual([]);
      expect(t.intl).toEqual([]);
    }
  });

  it('a prompt imports inquirer only then, and conf only for the commands that write the config', () => {
    const t = trace(['config', 'set', 'account', 'Sim202']);
    expect(t.loaded.some((f) => f.includes('node_modules/conf/'))).toBe(true);
    expect(t.loaded.some((f) => f.includes('node_modules/@inquirer/'))).toBe(false);
  });
});

describe('the bundle', () => {
  it("holds only the zod it uses: a namespace object used as a value (`import { z } from 'zod'`) would bring all of zod, locales included", () => {
    const meta = JSON.parse(readFileSync(new URL('../../dist/cli.meta.json', import.meta.url), 'utf8')) as {
      outputs: Record<string, { inputs: Record<string, { bytesInOutput: number }> }>;
    };
    const inputs = Object.values(meta.outputs)[0]!.inputs;
    expect(Object.keys(inputs).filter((k) => k.includes('zod/v4/locales/') && !k.endsWith('/en.js') && !k.endsWith('/index.js'))).toEqual([]);
    const zod = Object.entries(inputs).filter(([k]) => k.includes('node_modules/zod/')).reduce((sum, [, v]) => sum + v.bytesInOutput, 0);
    expect(zod).toBeLessThan(300_000);
  });

  it('fills the namespace objects of lazily run modules in their init, not at every start (scripts/build.js, namespacesInInit)', () => {
    const bundle = readFileSync(new URL('../../dist/cli.cjs', import.meta.url), 'latin1');
    const atStart = bundle.match(/var [\w$]+_exports=\{\};__export\(/g) ?? [];
    const inInit = bundle.match(/"\(\)\{(?:"use strict";)?__export\(/g) ?? [];
    // Those left at the top level are read otherwise than right after their init (zod's util, the entry's).
    expect(atStart.length).toBeLessThanOrEqual(3);
    expect(inInit.length).toBeGreaterThan(50);
  });
});

describe("better-sqlite3's native addon", () => {
  const bindings = (t: Trace) => t.loaded.filter((f) => f.includes('node_modules/bindings/'));
  const addon = (t: Trace) => t.loaded.filter((f) => f.endsWith('/better_sqlite3.node'));

  it('is loaded from build/Release, where its install put it, without the bindings package (issue 34)', () => {
    const t = trace(['place', ...orderArgs()]);
    expect(addon(t)).toEqual([join(ROOT, 'node_modules/better-sqlite3/build/Release/better_sqlite3.node')]);
    expect(bindings(t)).toEqual([]);
    // Its JavaScript is in the bundle: no file of it is required.
    expect(t.loaded.filter((f) => f.includes('node_modules/better-sqlite3/lib/'))).toEqual([]);
    expect(t.modules).toContain('node_modules/better-sqlite3/lib/database.js');
  });

  it('is found by the bindings package when it is not in build/Release (another build, another layout)', () => {
    // A package whose better-sqlite3 has its addon in build/Debug (a debug build), every other package as installed.
    const root = join(dir, 'package');
    const modules = join(root, 'node_modules');
    mkdirSync(modules, { recursive: true });
    for (const d of ['bin', 'dist']) cpSync(join(ROOT, d), join(root, d), { recursive: true });
    writeFileSync(join(root, 'package.json'), readFileSync(join(ROOT, 'package.json')));
    for (const name of readdirSync(join(ROOT, 'node_modules'))) {
      if (name !== 'better-sqlite3') symlinkSync(join(ROOT, 'node_modules', name), join(modules, name), 'dir');
    }
    const sqlite = join(ROOT, 'node_modules/better-sqlite3');
    for (const f of ['package.json', 'lib']) cpSync(join(sqlite, f), join(modules, 'better-sqlite3', f), { recursive: true });
    mkdirSync(join(modules, 'better-sqlite3/build/Debug'), { recursive: true });
    cpSync(join(sqlite, 'build/Release/better_sqlite3.node'), join(modules, 'better-sqlite3/build/Debug/better_sqlite3.node'));
    const t = trace(['place', ...orderArgs()], {}, join(root, 'bin', 'trade.js'));
    expect(t.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n/);
    expect(addon(t)).toEqual([join(modules, 'better-sqlite3/build/Debug/better_sqlite3.node')]);
    expect(bindings(t)).toEqual([join(modules, 'bindings/bindings.js')]);
  });
});

describe('the code cache', () => {
  const loadCli = (bin: string, node: string[] = []) =>
    spawnSyncRecorded(process.execPath, [...node, '-e', `console.log(require(${JSON.stringify(bin)}).loadCli().cacheUsed)`], { encoding: 'utf8' });

  it('is used by the built CLI', () => {
    const result = loadCli(BIN);
    expect(result.stderr).toBe('');
    expect(result.stdout).toBe('true\n');
  });

  /** A copy of bin/ and dist/ whose cache the test may spoil. */
  function copy(): string {
    const root = join(dir, 'package');
    mkdirSync(root);
    for (const d of ['bin', 'dist']) cpSync(join(ROOT, d), join(root, d), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules'), join(root, 'node_modules'), 'dir');
    writeFileSync(join(root, 'package.json'), readFileSync(join(ROOT, 'package.json')));
    return join(root, 'bin', 'trade.js');
  }

  it('is ignored, never an error, when V8 rejects it (other flags), when it is from another build, or when it is missing', () => {
    const bin = copy();
    const cache = join(dir, 'package', 'dist', 'cli.cache');
    const help = trace(['place', '--help']).stdout;
    const placeWorks = (node: string[] = []) => {
      expect(trace(['place', '--help'], {}, bin, node).stdout).toBe(help);
      expect(trace(['place', ...orderArgs()], {}, bin, node).stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n/);
    };
    // V8's own check: a cache made under other V8 flags.
    expect(loadCli(bin, ['--no-opt']).stdout).toBe('false\n');
    placeWorks(['--no-opt']);
    // Another build's cache: the id differs, so V8 never sees it.
    const original = readFileSync(cache);
    writeFileSync(cache, Buffer.concat([Buffer.from('0'.repeat(32)), original.subarray(32)]));
    expect(loadCli(bin).stdout).toBe('false\n');
    placeWorks();
    // Right id, spoiled payload: V8 rejects it.
    writeFileSync(cache, Buffer.concat([original.subarray(0, 33), Buffer.alloc(original.length - 33, 7)]));
    expect(loadCli(bin).stdout).toBe('false\n');
    placeWorks();
    writeFileSync(cache, '');
    expect(loadCli(bin).stdout).toBe('false\n');
    placeWorks();
  });
});
