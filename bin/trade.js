#!/usr/bin/env node
// The bin, CommonJS (bin/package.json) so that no ES module loader starts for it.
//
// `trade --version` is answered here from dist/version.txt, before anything else loads, and so is
// `trade --help` written to a pipe or a file, from dist/help.txt (what the CLI itself printed at
// build time, under the same conditions: see staticHelp). Every other command runs dist/cli.cjs (scripts/build.js), compiled with the V8 code cache the build
// made (dist/cli.cache). A cache that is missing, from another build (its id differs) or made
// under another Node version or other V8 flags (V8 rejects it) is ignored: the file is then
// compiled from source, as any script is.
'use strict';
const { fstatSync, readFileSync, statSync, writeSync } = require('node:fs');
const { join } = require('node:path');

const DIST = join(__dirname, '..', 'dist');
const BUILD_MARK = '//# trade-build=';

/** The cached code for this build of the CLI, or undefined. */
function codeCache(source) {
  const at = source.lastIndexOf(BUILD_MARK);
  if (at < 0) return undefined;
  const header = `${source.slice(at + BUILD_MARK.length).trim()}\n`;
  let data;
  try {
    data = readFileSync(join(DIST, 'cli.cache'));
  } catch {
    return undefined;
  }
  return data.length > header.length && data.toString('latin1', 0, header.length) === header ? data.subarray(header.length) : undefined;
}

/**
 * Compiles and runs dist/cli.cjs as Node would a CommonJS module, with the code cache unless told
 * not to. Returns its exports, and the script (scripts/code-cache.cjs makes the cache from it).
 */
function loadCli({ cache = true } = {}) {
  const vm = require('node:vm');
  const { createRequire } = require('node:module');
  const filename = join(DIST, 'cli.cjs');
  // The build checks that the file is ASCII: latin1 reads it straight into a one-byte string.
  // The file is the module's function already (scripts/build.js wraps it as Node would): no
  // second, wrapped copy of its megabyte is made here (1 MiB of a place's peak memory).
  const source = readFileSync(filename, 'latin1');
  const cachedData = cache ? codeCache(source) : undefined;
  const script = new vm.Script(source, { filename, cachedData });
  const module = { exports: {} };
  // The bundle's import() of the packages that are ES modules only (src/import-esm.ts).
  const importEsm = (specifier) => import(specifier);
  script.runInThisContext().call(module.exports, module.exports, createRequire(filename), module, filename, DIST, importEsm);
  const buildId = source.slice(source.lastIndexOf(BUILD_MARK) + BUILD_MARK.length).trim();
  return { cli: module.exports, script, buildId, cacheUsed: cachedData !== undefined && !script.cachedDataRejected };
}

/** Writes text to stdout whole, as main would: a reader that has gone loses it (exit code 0). */
function writeOut(text) {
  let rest = Buffer.from(text, 'latin1');
  while (rest.length > 0) {
    try {
      rest = rest.subarray(writeSync(1, rest));
    } catch (error) {
      // A full non-blocking pipe: the stream waits for it to drain.
      if (error.code === 'EAGAIN') process.stdout.write(rest);
      else if (error.code !== 'EPIPE') throw error;
      return;
    }
  }
}

/** `trade --version`: main's answer (src/cli/main.ts), without loading main. */
function printVersion() {
  writeOut(readFileSync(join(DIST, 'version.txt'), 'latin1'));
}

/**
 * Whether fd is certainly no terminal: a pipe, a file, a socket or /dev/null (node:tty costs ~5 ms).
 * The same as src/cli/stdio.ts's, which the bin cannot load before the bundle.
 */
function notTerminal(fd) {
  if (process.platform === 'win32') return false;
  try {
    const stat = fstatSync(fd);
    return !stat.isCharacterDevice() || stat.rdev === statSync('/dev/null').rdev;
  } catch {
    return false;
  }
}

/**
 * `trade --help` (or `-h`) written by the CLI at build time (scripts/build.js), when nothing could
 * make the CLI print anything else: stdout is no terminal (no colour, no width to fit: commander's
 * 80 columns), and none of the variables that would change it is set (COLUMNS, the width;
 * FORCE_COLOR, colour in a pipe; TRADE_TOKEN, a secret the redactor would look for; the empty
 * string counts as unset, as in the CLI). The help names no config value, so no other secret can
 * be in it. Returns false, having written nothing, when the CLI must answer.
 */
function staticHelp(argv, env) {
  if (argv.length !== 1 || (argv[0] !== '--help' && argv[0] !== '-h')) return false;
  if (env.COLUMNS || env.FORCE_COLOR || env.TRADE_TOKEN || !notTerminal(1)) return false;
  let text;
  try {
    text = readFileSync(join(DIST, 'help.txt'), 'latin1');
  } catch {
    return false;
  }
  writeOut(text);
  return true;
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) printVersion();
  else if (!staticHelp(argv, process.env)) loadCli().cli.main();
} else {
  module.exports = { loadCli };
}
