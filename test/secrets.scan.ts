/**
 * Runs after every other test file (the `secrets-scan` project of vitest.config.ts): reads the
 * record of every CLI run of the suite (runCli and runInTerminal in-process, and every process the
 * tests start, through test/helpers/spawn.ts; see test/helpers/run-log.ts) and checks that no
 * token appears in any of their output. The tokens
 * are the suite's own (test/helpers/tokens.ts) and every token any run was given through
 * TRADE_TOKEN, TRADE_SERVE_TOKEN or stdin. The one place a token may be printed is stdout of
 * `trade config get|list --show-token`, which asks for it.
 */
import { describe, expect, it } from 'vitest';
import { findLeaks, readRuns, RUN_LOG_ENV } from './helpers/run-log.js';
import { SUITE_TOKENS } from './helpers/tokens.js';

describe('secrets across the whole suite', () => {
  it('no token appears in the stdout or stderr of any CLI run', () => {
    const runs = readRuns(process.env[RUN_LOG_ENV]!);
    const leaks = findLeaks(runs, SUITE_TOKENS);
    console.log(`secrets scan: ${runs.length} runs (${runs.filter((r) => r.kind !== 'cli').length} processes)`);
    expect(leaks).toEqual([]);
    // Nothing recorded means the recording broke (or no CLI test ran), not that nothing leaked.
    expect(runs.length, 'CLI runs recorded by the rest of the suite').toBeGreaterThan(0);
  });
});
