#!/usr/bin/env node
// The bin, CommonJS (bin/package.json) so that no ES module loader starts for it.
//
// `trade --version` is answered here from dist/version.txt, before anything else loads. Every
// other command runs dist/cli.cjs (scripts/build.js), compiled with the V8 code cache the build
// made (dist/cli.cache). A cache that is missing, from another build (its id differs) or made
// under another Node version or other V8 flags (V8 rejects it) is ignored: the file is then
// compiled from source, as any script is.
'use strict';
const { readFileSync, writeSync } = require('node:fs');
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
  const source = readFileSync(filename, 'latin1');
  const cachedData = cache ? codeCache(source) : undefined;
  const script = new vm.Script(`(function (exports, require, module, __filename, __dirname, __import) {${source}\n})`, { filename, cachedData });
  const module = { exports: {} };
  // The bundle's import() of the packages that are ES modules only (src/import-esm.ts).
  const importEsm = (specifier) => import(specifier);
  script.runInThisContext().call(module.exports, module.exports, createRequire(filename), module, filename, DIST, importEsm);
  const buildId = source.slice(source.lastIndexOf(BUILD_MARK) + BUILD_MARK.length).trim();
  return { cli: module.exports, script, buildId, cacheUsed: cachedData !== undefined && !script.cachedDataRejected };
}

/** `trade --version`: main's answer (src/cli/main.ts), without loading main. */
function printVersion() {
  const text = readFileSync(join(DIST, 'version.txt'), 'latin1');
  try {
    writeSync(1, text);
  } catch (error) {
    // A reader that has gone loses the line, as in main; a full non-blocking pipe waits for it.
    if (error.code === 'EAGAIN') process.stdout.write(text);
    else if (error.code !== 'EPIPE') throw error;
  }
}

if (require.main === module) {
  const argv = process.argv.slice(2);
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) printVersion();
  else loadCli().cli.main();
} else {
  module.exports = { loadCli };
}
