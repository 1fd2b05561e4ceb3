/**
 * Runs after every other test file (the `secrets-scan` project of vitest.config.ts): reads the
 * record of every CLI run of the suite (runBin, runCli and `trade serve` subprocesses, see
 * test/helpers/run-log.ts) and checks that no token appears in any of their output. The tokens
 * are the suite's own (test/helpers/tokens.ts) and every token any run was given through
 * TRADE_TOKEN, TRADE_SERVE_TOKEN or stdin. The one place a token may be printed is stdout of
 * `trade config get|list --show-token`, which asks for it.
 */
import { describe, expect, it } from 'vitest';
import { readRuns, RUN_LOG_ENV } from './helpers/run-log.js';
import { SUITE_TOKENS } from './helpers/tokens.js';

/** Shorter strings could turn up in output by chance; no test token is this short. */
const MIN_LENGTH = 8;

describe('secrets across the whole suite', () => {
  it('no token appears in the stdout or stderr of any CLI run', () => {
    const runs = readRuns(process.env[RUN_LOG_ENV]!);
    const tokens = [...new Set([...SUITE_TOKENS, ...runs.flatMap((r) => r.secrets)])].filter((t) => t.length >= MIN_LENGTH);
    const leaks: string[] = [];
    for (const run of runs) {
      const shown = run.argv.includes('--show-token');
      for (const token of tokens) {
        const where = [...(shown ? [] : [['stdout', run.stdout]]), ['stderr', run.stderr]].filter(([, text]) => text!.includes(token));
        for (const [stream] of where) leaks.push(`${run.test}: \`trade ${run.argv.join(' ')}\` (${run.kind}) printed a token on ${stream}`);
      }
    }
    console.log(`secrets scan: ${runs.length} CLI runs, ${tokens.length} tokens`);
    expect(leaks).toEqual([]);
    // Nothing recorded means the recording broke (or no CLI test ran), not that nothing leaked.
    expect(runs.length, 'CLI runs recorded by the rest of the suite').toBeGreaterThan(0);
  });
});
