/**
 * The package as a user gets it: `npm pack`, `npm install -g --prefix <tmp> <tarball>`, then the
 * installed `trade` runs end to end on the embedded engine, with only what the tarball and its
 * installed dependencies provide.
 *
 * better-sqlite3 is native. Its install script is `prebuild-install || node-gyp rebuild
 * --release`: prebuild-install downloads a prebuilt binary from GitHub, and where it cannot,
 * node-gyp compiles SQLite from source (about 2 minutes here). Neither fits the suite. But
 * prebuild-install also looks in a local directory of prebuilt tarballs first
 * (`npm_config_better_sqlite3_local_prebuilds`), the mechanism made for offline and mirrored
 * installs. So the test puts the binary this checkout already built (the same better-sqlite3
 * version, built by the same Node for the same ABI) in a tarball named the way prebuild-install
 * looks for it, and lets better-sqlite3's own install script find it, unpack it and load it.
 *
 * The install runs in two steps so that a mismatch fails at once with a clear message instead of
 * falling back to a 2-minute compile: install with --ignore-scripts, check that npm resolved the
 * same better-sqlite3 version the checkout built, then `npm rebuild` it, which runs exactly the
 * install script the first step skipped. Dependencies come from npm's cache (--prefer-offline,
 * the cache the project's own install filled).
 *
 * The project is packed from a copy of the checkout: `npm pack` runs `prepare` (the build), which
 * replaces dist/, and other test files run the built bin from dist/ at the same time.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMA_VERSION } from '../../src/engine/store.js';
import { exec, type Ran } from '../helpers/exec.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };
const SQLITE_DIR = realpathSync(join(ROOT, 'node_modules', 'better-sqlite3'));
const SQLITE_VERSION = (JSON.parse(readFileSync(join(SQLITE_DIR, 'package.json'), 'utf8')) as { version: string }).version;
const BINARY = join('build', 'Release', 'better_sqlite3.node');

type Run = Ran;


/**
 * npm's environment without what an outer `npm test` exports (npm_config_*, npm_package_*,
 * npm_lifecycle_*), which would otherwise leak into the inner npm runs; the cache is kept.
 */
function npmEnv(extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) || k === 'npm_config_cache'));
  return { ...env, npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false', ...extra };
}

async function npm(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  const result = await exec('npm', args, { cwd: options.cwd, env: options.env ?? npmEnv() });
  if (result.code !== 0) throw new Error(`npm ${args.join(' ')} exited ${result.code}\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** The name prebuild-install looks for: {name}-v{version}-{runtime}-v{abi}-{platform}{libc}-{arch}.tar.gz */
function prebuildName(): string {
  const glibc = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header?.glibcVersionRuntime;
  const libc = process.platform === 'linux' && !glibc ? 'musl' : '';
  return `better-sqlite3-v${SQLITE_VERSION}-node-v${process.versions.modules}-${process.platform}${libc}-${process.arch}.tar.gz`;
}

let dir: string;
let tarball: string;
let packed: string[];
let prefix: string;
let trade: string;
let withoutBinary: Run;
const ES_BUY = ['--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'trade-pack-'));

  // Pack from a copy of the checkout (sources, not node_modules, .git or a stale dist/).
  const source = join(dir, 'source');
  const skip = new Set(['node_modules', '.git', 'dist', 'coverage']);
  cpSync(ROOT, source, {
    recursive: true,
    filter: (path) => !skip.has(relative(ROOT, path)) && !path.endsWith('.tgz'),
  });
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(source, 'node_modules'), 'dir');
  const out = join(dir, 'out');
  mkdirSync(out);
  const pack = await npm(['pack', '--json', '--pack-destination', out], { cwd: source });
  const report = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('['))) as Array<{ filename: string; files: Array<{ path: string }> }>;
  tarball = join(out, report[0]!.filename);
  packed = report[0]!.files.map((f) => f.path).sort();

  // Install it into a temporary prefix, its dependencies from npm's cache, no scripts yet.
  prefix = join(dir, 'prefix');
  await npm(['install', '--global', '--prefix', prefix, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', tarball]);
  trade = join(prefix, 'bin', 'trade');
  const installedSqlite = join(prefix, 'lib', 'node_modules', PKG.name, 'node_modules', 'better-sqlite3');
  const resolved = (JSON.parse(readFileSync(join(installedSqlite, 'package.json'), 'utf8')) as { version: string }).version;
  if (resolved !== SQLITE_VERSION)
    throw new Error(
      `npm resolved better-sqlite3 ${resolved} for the installed package, but this checkout built ${SQLITE_VERSION}; ` +
        'refresh the lock file and node_modules (npm install) so that the two agree.',
    );
  if (existsSync(join(installedSqlite, BINARY))) throw new Error('better-sqlite3 has a binary before its install script ran');

  // Now better-sqlite3's own install script, finding the local prebuild.
  const prebuilds = join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  const made = await exec('tar', ['-czf', join(prebuilds, prebuildName()), '-C', SQLITE_DIR, BINARY], { env: process.env });
  if (made.code !== 0) throw new Error(`tar failed: ${made.stderr}`);
  // As a user whose npm blocks install scripts that are not allowed (strict-allow-scripts, the
  // default npm has announced): refused without --allow-scripts, run with it, as README says.
  const strict = { npm_config_better_sqlite3_local_prebuilds: prebuilds, npm_config_strict_allow_scripts: 'true' };
  const blocked = await exec('npm', ['rebuild', '--global', '--prefix', prefix, 'better-sqlite3'], { env: npmEnv(strict) });
  if (blocked.code === 0 || !blocked.stderr.includes('ESTRICTALLOWSCRIPTS') || existsSync(join(installedSqlite, BINARY)))
    throw new Error(`npm ran better-sqlite3's install script although strict-allow-scripts blocks it:\n${blocked.stdout}${blocked.stderr}`);
  withoutBinary = await runInstalled(['place', ...ES_BUY], join(dir, 'home-no-binary'));
  const rebuild = await npm(['rebuild', '--global', '--prefix', prefix, '--allow-scripts=better-sqlite3', '--foreground-scripts', 'better-sqlite3'], {
    // prebuild-install's own log (verbose) says where the binary came from.
    env: npmEnv({ ...strict, npm_config_verbose: 'true' }),
  });
  const log = rebuild.stdout + rebuild.stderr;
  if (!log.includes('found local prebuild') || !log.includes('Successfully installed prebuilt binary'))
    throw new Error(`better-sqlite3's install script did not use the local prebuild:\n${log}`);
  if (!existsSync(join(installedSqlite, BINARY))) throw new Error("better-sqlite3's install script did not install the binary");
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function runInstalled(argv: string[], home: string): Promise<Run> {
  return exec(trade, argv, {
    cwd: dir,
    env: { PATH: process.env.PATH, HOME: home, TRADE_HOME: join(home, 'data'), TRADE_CONFIG_DIR: join(home, 'config') },
  });
}

describe('npm pack', () => {
  it('ships the built CLI, README and the manual, the man page, LICENSE and CHANGELOG, and no sources, tests or source maps', () => {
    const top = [...new Set(packed.map((p) => p.split('/')[0]))].sort();
    expect(top).toEqual(['CHANGELOG.md', 'LICENSE', 'README.md', 'bin', 'dist', 'docs', 'package.json', 'trade.1']);
    expect(packed).toEqual(expect.arrayContaining(['trade.1', 'docs/README.md', 'docs/commands.md', 'docs/service-reference.md']));
    expect(packed.filter((p) => p.startsWith('docs/') && !p.endsWith('.md'))).toEqual([]);
    expect(packed).toContain('bin/trade.js');
    expect(packed).toEqual(expect.arrayContaining(['bin/trade.js', 'bin/package.json', 'dist/cli.cjs', 'dist/cli.cache', 'dist/version.txt', 'dist/lib.js']));
    expect(packed).not.toContain('dist/cli.meta.json');
    expect(packed).toContain('dist/types/lib.d.ts');
    expect(packed.filter((p) => p.endsWith('.map') || (p.endsWith('.ts') && !p.endsWith('.d.ts')))).toEqual([]);
  });
});

/** Every package.json under a node_modules folder, however deep. */
function installedPackages(root: string): Array<{ name: string; version: string; engines?: { node?: string } }> {
  const found: Array<{ name: string; version: string; engines?: { node?: string } }> = [];
  const visit = (modules: string) => {
    if (!existsSync(modules)) return;
    for (const entry of readdirSync(modules)) {
      const dirs = entry.startsWith('@') ? readdirSync(join(modules, entry)).map((e) => join(modules, entry, e)) : [join(modules, entry)];
      for (const pkgDir of dirs) {
        const file = join(pkgDir, 'package.json');
        if (existsSync(file)) found.push(JSON.parse(readFileSync(file, 'utf8')));
        visit(join(pkgDir, 'node_modules'));
      }
    }
  };
  visit(join(root, 'node_modules'));
  return found;
}

describe('install scripts', () => {
  it('without better-sqlite3\'s binary (its script blocked), place says what is missing and how to mend it', () => {
    expect(withoutBinary.stdout).toBe('');
    expect(withoutBinary.stderr).not.toContain('Unexpected error');
    expect(withoutBinary.stderr).toContain('The SQLite driver (better-sqlite3) cannot be loaded: its native binary is missing (its install script did not run). Nothing was written.');
    expect(withoutBinary.stderr).toContain('npm rebuild -g --allow-scripts=better-sqlite3 better-sqlite3');
    expect(withoutBinary.code).toBe(1);
  });

  it("the project's allowScripts covers every dependency with an install script, so npm ci works when npm blocks the rest", async () => {
    const pending = await npm(['approve-scripts', '--allow-scripts-pending'], { cwd: ROOT });
    expect(pending.stdout + pending.stderr).toContain('No packages with unreviewed install scripts');
    const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { allowScripts?: Record<string, boolean> };
    expect(manifest.allowScripts).toEqual({ 'better-sqlite3': true, esbuild: true });
  });
});

describe('the installed package', () => {
  it('installs no dependency that refuses Node 20.18 (the engines this package promises)', () => {
    const installed = installedPackages(join(prefix, 'lib', 'node_modules', PKG.name));
    expect(installed.length).toBeGreaterThan(50);
    const refusing = installed
      .filter((p) => p.engines?.node && !semver.satisfies('20.18.1', p.engines.node))
      .map((p) => `${p.name}@${p.version} (node ${p.engines!.node})`);
    expect(refusing).toEqual([]);
  });

  it('puts trade on the prefix bin and prints its version', async () => {
    expect(await runInstalled(['--version'], join(dir, 'home-version'))).toEqual({ code: 0, stdout: `${PKG.version}\n`, stderr: '' });
  });

  it('links the man page where man finds it: man trade renders the installed trade.1', async () => {
    expect(existsSync(join(prefix, 'share', 'man', 'man1', 'trade.1'))).toBe(true);
    const man = await exec('man', ['trade'], {
      env: { PATH: process.env.PATH, MANPATH: join(prefix, 'share', 'man'), MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '80' },
    });
    expect(man.code).toBe(0);
    expect(man.stdout.replace(/.\x08/g, '')).toContain('trade place');
  });

  it('places an order on the embedded engine, with its own better-sqlite3', async () => {
    const home = join(dir, 'home-place');
    const placed = await runInstalled(
      ['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'],
      home,
    );
    expect(placed.stderr).toBe('');
    expect(placed.code).toBe(0);
    expect(placed.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n {2}order id {2}[0-9a-f]{32}\n/);
    expect(placed.stdout).toContain(`backend   embedded (${join(home, 'data', 'trade.db')})`);
    const orders = await runInstalled(['orders', '--account', 'Sim101', '--json'], home);
    expect(JSON.parse(orders.stdout).orders).toEqual([expect.objectContaining({ instrument: 'ES 09-25', orderAction: 'Buy', orderState: 'Filled' })]);
    const doctor = await runInstalled(['doctor'], home);
    expect(doctor.code).toBe(0);
    expect(doctor.stdout).toContain(
      `${join(home, 'data', 'trade.db')}: schema ${SCHEMA_VERSION}; 1 account, 1 order (0 working), 1 open position`,
    );
    // The report's page inlines the chart library from the package's own dependency.
    const page = join(home, 'report.html');
    const report = await runInstalled(['report', '--account', 'Sim101', '--html', page], home);
    expect(report.code).toBe(0);
    expect(readFileSync(page, 'utf8')).toContain('TradingView Lightweight Charts™');
    // Its better-sqlite3 is the installed copy: the checkout's node_modules is nowhere on its path.
    const installed = join(prefix, 'lib', 'node_modules', PKG.name, 'node_modules', 'better-sqlite3', BINARY);
    expect(readFileSync(installed).equals(readFileSync(join(SQLITE_DIR, BINARY)))).toBe(true);
  });
});

describe("the package's types", () => {
  /** Type-checks one file of a project that depends on the installed package (libraries checked too). */
  async function typecheck(name: string, source: string): Promise<Run> {
    const project = join(dir, `consumer-${name}`);
    mkdirSync(join(project, 'node_modules'), { recursive: true });
    symlinkSync(join(prefix, 'lib', 'node_modules', PKG.name), join(project, 'node_modules', PKG.name), 'dir');
    writeFileSync(join(project, 'index.ts'), source);
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: false,
          // A consumer's own @types/node; every other type comes from the installed package and its dependencies.
          typeRoots: [join(ROOT, 'node_modules', '@types')], types: ['node'],
        },
        files: ['index.ts'],
      }),
    );
    return exec(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', project], { cwd: project, env: process.env });
  }

  it("types the import entry: a correct program compiles, with the library's declarations checked", async () => {
    const result = await typecheck(
      'good',
      [
        "import { createEngine, parseOrder, OPERATIONS, type Engine, type Order, type OperationName } from 'trade';",
        "export const engine: Engine = createEngine('/tmp/trade.db');",
        "export const order: Order = parseOrder({ account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });",
        "export const name: OperationName = 'PlaceOrder';",
        'export const count: number = Object.keys(OPERATIONS).length;',
        '',
      ].join('\n'),
    );
    expect(result.stdout + result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 60_000);

  it('and a wrong one does not: the types are real, not any', async () => {
    const result = await typecheck(
      'bad',
      ["import { createEngine, type OperationName } from 'trade';", 'createEngine(42);', "export const name: OperationName = 'NoSuchOperation';", ''].join('\n'),
    );
    expect(result.code).not.toBe(0);
    expect(result.stdout).toMatch(/index\.ts\(2,\d+\): error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'/);
    expect(result.stdout).toMatch(/index\.ts\(3,\d+\): error TS2322: Type '"NoSuchOperation"' is not assignable to type/);
  }, 60_000);
});
