// Builds dist/ with esbuild: the CLI as one CommonJS file with a V8 code cache, and the library
// as ES modules.
//
// dist/cli.cjs: the CLI (src/cli/main.ts), one CommonJS module written as the function Node wraps
//   a module in, which bin/trade.js compiles with vm.Script and the code cache below. Every module
//   reached only through a dynamic import() stays behind esbuild's lazy wrapper, so a command still
//   runs only the modules it uses.
//   commander and zod are bundled in (resolving zod's ~200 files costs more than running it), and
//   so is better-sqlite3's JavaScript (its native addon is required where it was installed: see
//   sqliteAddon). The other packages that are CommonJS (fastify, undici, ws, ...) stay external and are
//   required where used (dynamic imports of them become require()); packages that are ES modules
//   only (conf, @inquirer/prompts) are loaded where used with the bin's own import(), handed to
//   the bundle as `__import` (src/common/import-esm.ts): require() cannot load them on Node 20.18.
// dist/cli.cache: V8's code cache of dist/cli.cjs, made by scripts/code-cache.cjs after running
//   an embedded `place`, so the functions it runs need no compiling. It starts with
//   the bundle's build id; V8 itself rejects it under another Node version or other V8 flags.
// dist/version.txt: the version, so that `trade --version` needs nothing else (bin/trade.js).
// dist/help.txt: `trade --help` as the CLI prints it to a pipe, for the bin to answer from when
//   nothing could change it (bin/trade.js: staticHelp).
// dist/lib.js (+ dist/chunks/): the library (`import ... from 'trade'`), ES modules with code
//   splitting.
// dist/types/: the library's TypeScript declarations (tsconfig.types.json), so that an `import`
//   of 'trade' is typed.
// dist/cli.meta.json: esbuild's metafile of the CLI (which module imports which, and how); read
//   by tests, not shipped.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { replaceDir } from './replace-dir.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = new URL('../dist/', import.meta.url);
const DIST_DIR = fileURLToPath(DIST);
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const dependencies = Object.keys(pkg.dependencies);
const common = {
  // Paths (entry points, outdir, the metafile's names) from the project, wherever the build is run from.
  absWorkingDir: ROOT,
  bundle: true,
  platform: 'node',
  target: 'node20',
  define: { __TRADE_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
};

/**
 * Each module of the CLI bundle ends by telling a hook, when one is installed, that its body has
 * run. Nothing installs it in normal use (one optional call per module); the start-up test's
 * preload does, to see which bundled modules a command really runs.
 */
const traceModules = {
  name: 'trace-modules',
  setup(b) {
    b.onLoad({ filter: /\.(ts|js|mjs|cjs)$/ }, async (args) => {
      const id = relative(ROOT, args.path).split('\\').join('/');
      const contents = `${await readFile(args.path, 'utf8')}\n;globalThis[Symbol.for('trade.module')]?.(${JSON.stringify(id)});\n`;
      return { contents, loader: args.path.endsWith('.ts') ? 'ts' : 'js' };
    });
  },
};

/**
 * commander requires node:child_process at import (~3 ms, with net and dgram) only to run
 * executable subcommands, which trade has none of: it gets a stand-in that loads the real module
 * on first use.
 */
const lazyChildProcess = {
  name: 'lazy-child-process',
  setup(b) {
    b.onResolve({ filter: /^(node:)?child_process$/ }, (args) =>
      args.importer.includes(`${'node_modules'}/commander/`) ? { path: 'child_process', namespace: 'lazy-builtin' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'lazy-builtin' }, () => ({
      contents: "module.exports = new Proxy({}, { get: (_, key) => require('node:child_process')[key] });",
      loader: 'js',
    }));
  },
};

/**
 * better-sqlite3's JavaScript is bundled (its ten files cost ~7 ms to resolve and compile at every
 * start, and get the code cache here), and its native addon is loaded from where its install puts
 * it (build/Release): the `bindings` package it asks instead finds the addon by reading a stack
 * trace and trying a dozen paths (~4 ms). An addon elsewhere (a debug build, another layout) is
 * still found by `bindings`, resolved from better-sqlite3's own directory.
 */
const sqliteAddon = {
  name: 'sqlite-addon',
  setup(b) {
    b.onResolve({ filter: /^bindings$/ }, (args) =>
      args.importer.includes(`${'node_modules'}/better-sqlite3/`) ? { path: 'bindings', namespace: 'sqlite-addon' } : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: 'sqlite-addon' }, () => ({
      contents: `
const { existsSync } = require('node:fs');
const { dirname, join } = require('node:path');
const { createRequire } = require('node:module');
module.exports = (name) => {
  // Where npm puts it for this package (dist/../node_modules): loaded as require() loads an addon
  // (process.dlopen), without resolving the package first (~1 ms of a place).
  const near = join(__dirname, '..', 'node_modules', 'better-sqlite3', 'build', 'Release', name);
  // Already required (a preload that patches better-sqlite3): the same addon, as require() would give.
  if (require.cache[near]) return require.cache[near].exports;
  if (existsSync(near)) {
    const addon = { exports: {} };
    process.dlopen(addon, near);
    return addon.exports;
  }
  const root = dirname(require.resolve('better-sqlite3/package.json'));
  try {
    return require(join(root, 'build', 'Release', name));
  } catch (error) {
    if (error.code !== 'MODULE_NOT_FOUND') throw error;
  }
  // Searched from better-sqlite3's directory: bindings would otherwise take the bundle's.
  return createRequire(join(root, 'package.json'))('bindings')({ bindings: name, module_root: root });
};`,
      loader: 'js',
    }));
  },
};

/** zod's ES module entry, which the stand-in below loads (lazyZod). */
const ZOD_ESM = fileURLToPath(import.meta.resolve('zod'));

/**
 * The zod exports the sources read, as `z.NAME` of an `import * as z from 'zod'` (the one form the
 * stand-in serves: any other import of zod, or the namespace used otherwise, fails the build).
 */
function zodExportsUsed(runtimeExports) {
  const ts = createRequire(import.meta.url)('typescript');
  const used = new Set();
  const files = readdirSync(join(ROOT, 'src'), { recursive: true }).filter((f) => f.endsWith('.ts')).map((f) => join(ROOT, 'src', f));
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    if (!/from 'zod'/.test(text)) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const namespaces = new Set();
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement) || statement.moduleSpecifier.text !== 'zod') continue;
      const bindings = statement.importClause?.namedBindings;
      if (statement.importClause?.isTypeOnly) continue;
      if (!bindings || !ts.isNamespaceImport(bindings) || statement.importClause.name) throw new Error(`${relative(ROOT, file)}: zod is imported as \`import * as z from 'zod'\` only (scripts/build.js, lazyZod)`);
      namespaces.add(bindings.name.text);
    }
    const visit = (node) => {
      if (ts.isIdentifier(node) && namespaces.has(node.text) && !ts.isNamespaceImport(node.parent)) {
        const { parent } = node;
        if (ts.isPropertyAccessExpression(parent) && parent.expression === node) used.add(parent.name.text);
        // z.NAME in a type (a qualified name) is erased: nothing to serve.
        else if (!(ts.isQualifiedName(parent) && parent.left === node))
          throw new Error(`${relative(ROOT, file)}: zod's namespace is read only as z.NAME (scripts/build.js, lazyZod)`);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return [...used].filter((name) => runtimeExports.has(name)).sort();
}
const ZOD_USED = zodExportsUsed(new Set(Object.keys(await import('zod'))));

/**
 * zod, in the CLI bundle, runs on first use: the sources' `import * as z from 'zod'` gets a
 * stand-in whose exports are getters that load zod the first time one is read. zod's own start
 * (~30 modules, ~1.5 ms and a quarter of a scavenge) is then paid only by a command that builds a
 * schema: a well-formed `place` reads its fields without one (src/service/order.ts, WELL_FORMED)
 * and never loads it. The stand-in serves the exports the sources read (zodExportsUsed), and what
 * it loads re-exports only those, so the bundle keeps only the zod they need, as before.
 */
const lazyZod = {
  name: 'lazy-zod',
  setup(b) {
    b.onResolve({ filter: /^zod$/ }, (args) => {
      if (args.namespace === 'lazy-zod-used') return { path: ZOD_ESM };
      if (args.namespace === 'lazy-zod') return { path: 'zod', namespace: 'lazy-zod-used' };
      return args.importer.startsWith(join(ROOT, 'src')) ? { path: 'zod', namespace: 'lazy-zod' } : undefined;
    });
    b.onLoad({ filter: /.*/, namespace: 'lazy-zod' }, () => ({
      contents: `
let zod;
const exported = { __esModule: true };
for (const name of ${JSON.stringify(ZOD_USED)}) Object.defineProperty(exported, name, { enumerable: true, get: () => (zod ??= require('zod'))[name] });
module.exports = exported;`,
      loader: 'js',
    }));
    b.onLoad({ filter: /.*/, namespace: 'lazy-zod-used' }, () => ({ contents: `export { ${ZOD_USED.join(', ')} } from 'zod';`, loader: 'js' }));
  },
};

/** src/common/import-esm.ts, in the CLI bundle: the bin's import() (bin/trade.js passes it in). */
const importEsm = {
  name: 'import-esm',
  setup(b) {
    b.onLoad({ filter: /[\\/]src[\\/]common[\\/]import-esm\.ts$/ }, () => ({
      contents: 'export function importEsm(specifier: string) { return __import(specifier); }\ndeclare const __import: (specifier: string) => Promise<unknown>;\n',
      loader: 'ts',
    }));
  },
};

/**
 * A module that is imported with import() or required has a namespace object, which esbuild fills
 * at the bundle's top level (`var x_exports = {}; __export(x_exports, { name: () => name, ... })`):
 * 83 objects and ~430 getters made at every start, for modules a command mostly never runs (~1 ms
 * of a `place`). This moves each filling into the module's own lazy init, first thing, where it
 * runs only when the module does. Only where that changes nothing: the namespace is read nowhere
 * but right after its module's init (`init_x(), x_exports`, or `init_x(), __toCommonJS(x_exports)`),
 * and the init is the next one of the same module (no other module's code or end between). The
 * rest stay where they are.
 */
function namespacesInInit(code) {
  const fill = /var ([\w$]+_exports)=\{\};(__export\(\1,\{(?:(?:[\w$]+|"[^"\\]*"):\(\)=>[\w$]+,?)*\}\);)/g;
  const moves = [];
  for (const match of code.matchAll(fill)) {
    const [, name, call] = match;
    const end = match.index + match[0].length;
    const init = /var (init_[\w$]+)=__esm\(\{"[^"\\]+"\(\)\{("use strict";)?/g;
    init.lastIndex = end;
    const found = init.exec(code);
    if (!found) continue;
    const between = code.slice(end, found.index);
    if (/__esm\(|__commonJS\(|__export\(|Symbol\.for\("trade\.module"\)/.test(between)) continue;
    const initName = found[1];
    // Where the name is written: its declaration, the filling's first argument, and its reads.
    const declared = match.index + 'var '.length;
    const filled = match.index + `var ${name}={};__export(`.length;
    const reads = [...code.matchAll(new RegExp(`(?<![\\w$.])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g'))].map((m) => m.index);
    const safe = reads.every((at) => at === declared || at === filled || code.endsWith(`${initName}(),`, at) || code.endsWith(`${initName}(),__toCommonJS(`, at));
    if (safe) moves.push({ from: match.index + `var ${name}={};`.length, call, to: found.index + found[0].length });
  }
  // Applied from the end, so that the offsets before each edit stay right.
  const edits = moves.flatMap(({ from, call, to }) => [{ at: to, remove: 0, insert: call }, { at: from, remove: call.length, insert: '' }]).sort((a, b) => b.at - a.at);
  for (const { at, remove, insert } of edits) code = code.slice(0, at) + insert + code.slice(at + remove);
  return code;
}

// dist/ is replaced file by file, each written whole beside its place and renamed onto it, never
// emptied first: a `trade` started while a build runs (a test suite, a bot beside a rebuild) reads
// the old file or the new one, never none and never esbuild's bundle before its wrap. A cache or
// a help text of the other build is told apart by bin/trade.js (the build id) or removed first.
mkdirSync(DIST, { recursive: true });
const written = new Set();
/** Writes one file of dist/ whole: into a file of its own beside it, then renamed onto it. */
function put(name, data) {
  const file = join(DIST_DIR, name);
  mkdirSync(dirname(file), { recursive: true });
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, data);
  renameSync(partial, file);
  written.add(name);
}
/** esbuild's output files, put in dist/ (write: false: esbuild writes none itself). */
const putAll = (outputFiles) => outputFiles.forEach((f) => put(relative(DIST_DIR, f.path).split('\\').join('/'), f.contents));

// The help made below must come from the new CLI: the bin would answer from the old text.
rmSync(join(DIST_DIR, 'help.txt'), { force: true });

const cli = await build({
  ...common,
  entryPoints: { cli: 'src/cli/main.ts' },
  outdir: DIST_DIR,
  write: false,
  outExtension: { '.js': '.cjs' },
  format: 'cjs',
  external: [...dependencies.filter((name) => !['commander', 'zod', 'better-sqlite3'].includes(name)), 'bindings', 'better-sqlite3/package.json'],
  // No comments and no indentation: a smaller file to read and hold. Names are kept.
  minifyWhitespace: true,
  charset: 'ascii',
  legalComments: 'none',
  metafile: true,
  // import() of the CommonJS externals becomes require(): vm.Script has no import() of its own.
  supported: { 'dynamic-import': false },
  plugins: [importEsm, traceModules, lazyChildProcess, sqliteAddon, lazyZod],
});
if (cli.outputFiles.length !== 1) throw new Error(`the CLI bundle is ${cli.outputFiles.length} files, not one: ${cli.outputFiles.map((f) => f.path).join(', ')}`);
const bundle = namespacesInInit(Buffer.from(cli.outputFiles[0].contents).toString('latin1'));
// Pure ASCII, so bin/trade.js may read it as latin1 into a one-byte string, the fastest way.
if (/[^\x00-\x7f]/.test(bundle)) throw new Error('dist/cli.cjs is not ASCII');
const buildId = createHash('sha256').update(bundle).digest('hex').slice(0, 32);
// Written as the function Node would wrap a CommonJS module in (with the bin's import() beside
// require), so that bin/trade.js compiles the file as it is read, without a wrapped copy.
put('cli.cjs', `(function (exports, require, module, __filename, __dirname, __import) {${bundle}\n})//# trade-build=${buildId}\n`);
put('cli.meta.json', JSON.stringify(cli.metafile));
put('version.txt', `${pkg.version}\n`);

const lib = await build({
  ...common,
  entryPoints: { lib: 'src/lib.ts' },
  outdir: DIST_DIR,
  write: false,
  splitting: true,
  format: 'esm',
  external: dependencies.filter((name) => !['commander', 'zod'].includes(name)),
  chunkNames: 'chunks/[name]-[hash]',
  // commander is CommonJS: its require('node:events') needs a real require inside the ESM bundle.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
});
// The chunks first, then the entry that imports them by name.
putAll(lib.outputFiles.filter((f) => !f.path.endsWith(`${sep}lib.js`)));
putAll(lib.outputFiles.filter((f) => f.path.endsWith(`${sep}lib.js`)));

// The library's declarations, by the project's own TypeScript.
// Emitted into a directory of their own, then swapped for the old ones (declarations of removed
// modules do not stay behind).
const types = join(DIST_DIR, `types.${process.pid}.partial`);
execFileSync(process.execPath, [fileURLToPath(import.meta.resolve('typescript/bin/tsc')), '-p', 'tsconfig.types.json', '--outDir', types], { cwd: ROOT, stdio: 'inherit' });
// Swapped whole for the old ones, whatever another build of this checkout does meanwhile.
replaceDir(join(DIST_DIR, 'types'), types);
written.add('types');

// In a child process: the cache must come from the Node that will run the CLI, with no test or
// tool preloaded into it.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => name !== 'NODE_OPTIONS'));

// dist/help.txt: what `trade --help` prints to a pipe, printed by the CLI just built, in an empty
// home and with none of the variables that change it (bin/trade.js answers from it only then).
const helpHome = mkdtempSync(join(tmpdir(), 'trade-help-'));
try {
  const helpEnv = { PATH: process.env.PATH, HOME: helpHome, TRADE_HOME: join(helpHome, 'home'), TRADE_CONFIG_DIR: join(helpHome, 'config') };
  const help = execFileSync(process.execPath, [fileURLToPath(new URL('../bin/trade.js', import.meta.url)), '--help'], { env: helpEnv, encoding: 'latin1' });
  if (!help.startsWith('Usage: trade ') || /[^\x00-\x7f]/.test(help)) throw new Error(`trade --help printed what dist/help.txt cannot hold: ${help.slice(0, 200)}`);
  put('help.txt', help);
} finally {
  rmSync(helpHome, { recursive: true, force: true });
}
execFileSync(process.execPath, [fileURLToPath(new URL('code-cache.cjs', import.meta.url))], { env, stdio: 'inherit' });
written.add('cli.cache');

// What an earlier build left that this one did not make: chunks of other hashes, the partial
// files of a build that was stopped. Not those of another build still running in this checkout.
const PARTIAL = /\.(\d+)\.partial$/;
const othersInProgress = (name) =>
  name.split('/').some((part) => {
    const pid = Number(PARTIAL.exec(part)?.[1]);
    if (!pid || pid === process.pid) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return error.code === 'EPERM';
    }
  });
for (const entry of readdirSync(DIST_DIR, { recursive: true, withFileTypes: true })) {
  const name = relative(DIST_DIR, join(entry.parentPath ?? entry.path, entry.name)).split('\\').join('/');
  if (written.has(name) || name === 'types' || name.startsWith('types/') || othersInProgress(name)) continue;
  // A directory goes only when it is a stopped build's partial one (its types).
  if (entry.isDirectory() && !PARTIAL.test(entry.name)) continue;
  rmSync(join(DIST_DIR, name), { recursive: true, force: true });
}
