/**
 * The vitest configuration `npm run mutate` (scripts/mutate.js) hands to Stryker: the suite's own
 * settings without its global setup (no Debian commands to install, no record of CLI runs to scan)
 * and without the secrets-scan project. Stryker runs the test files each module names in
 * scripts/mutate.js; those files import the modules from src/ and run them in-process, so a mutant
 * is seen (a test that runs the built bin, dist/, never sees one).
 */
import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  define: { __TRADE_VERSION__: JSON.stringify(pkg.version) },
  test: {
    // The module's test files (scripts/mutate.js sets them for each module's run).
    include: process.env.TRADE_MUTATE_TESTS ? process.env.TRADE_MUTATE_TESTS.split(',') : ['test/**/*.test.ts'],
    // Each mutant runs the tests that cover it: 200 fuzz cases a property instead of the suite's
    // 2000 (test/service/order-fuzz.test.ts), or a module of fuzzed code takes hours.
    // The ledger conformance suite against SQLite only (the mutated ledger; no PostgreSQL cluster per mutant).
    env: { TRADE_FUZZ_RUNS: '200', TRADE_TEST_LEDGERS: 'sqlite' },
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
