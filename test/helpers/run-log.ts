/**
 * A record of every CLI run of the suite (runCli in-process, and every process the tests start,
 * through test/helpers/spawn.ts): argv, the secrets the run was given, and all it printed. test/secrets.scan.ts reads it once every other
 * test file has finished and fails if a secret shows up in any output. The directory comes from
 * test/global-setup.ts through TRADE_TEST_RUN_LOG; each worker process appends to its own file,
 * so parallel workers never interleave.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { expect } from 'vitest';
import { RUN_LOG_ENV } from '../global-setup.js';

export { RUN_LOG_ENV };

export interface RecordedRun {
  /** cli: in-process; bin: the built bin; serve: `trade serve`; process: any other command (a pty's `script`, bash, node -e, npm). */
  kind: 'bin' | 'cli' | 'serve' | 'process';
  /** The test that ran it: file and name. */
  test?: string;
  argv: string[];
  /** Tokens the run was handed (TRADE_TOKEN, TRADE_SERVE_TOKEN, a token on stdin for login, a desk ledger's password). */
  secrets: string[];
  stdout: string;
  stderr: string;
}

/** The tokens a run was given through its environment or its stdin. */
export function secretsOf(argv: string[], env: Record<string, string | undefined>, stdin?: string): string[] {
  // A desk ledger's password (docs/desk-mode.md), in its URL or PGPASSWORD.
  const ledgerPassword = /^postgres(?:ql)?:\/\/[^:/@]*:([^@/]+)@/.exec(env.TRADE_GUARD_LEDGER ?? '')?.[1];
  const secrets = [env.TRADE_TOKEN, env.TRADE_SERVE_TOKEN, ledgerPassword, env.PGPASSWORD];
  if (argv.includes('login') && argv.includes('--token-stdin')) secrets.push(stdin?.trim());
  return secrets.filter((s): s is string => typeof s === 'string' && s.length > 0);
}

/** The test running now: its file and name. */
export function testName(): string {
  const state = expect.getState();
  return `${relative(process.cwd(), state.testPath ?? '?')} > ${state.currentTestName ?? '?'}`;
}

/** Adds a run to the record; `test` defaults to the test running now (a process that ends later says which started it). */
export function recordRun(run: RecordedRun): void {
  const dir = process.env[RUN_LOG_ENV];
  if (!dir) return; // a run outside the suite's global setup (a single file run by hand still has it)
  appendFileSync(join(dir, `runs-${process.pid}.jsonl`), `${JSON.stringify({ ...run, test: run.test ?? testName() })}\n`);
}

export function readRuns(dir: string): RecordedRun[] {
  return readdirSync(dir)
    .filter((name) => name.endsWith('.jsonl'))
    .flatMap((name) =>
      readFileSync(join(dir, name), 'utf8')
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as RecordedRun),
    );
}

/** Shorter strings could turn up in output by chance; no test token is this short. */
const MIN_SECRET_LENGTH = 8;

/**
 * Every place a token shows in the runs' output: the suite's own tokens (`known`) and each token a
 * run was handed. The one place a token may be printed is stdout of a run that asked for it
 * (`trade config get|list --show-token`).
 */
export function findLeaks(runs: RecordedRun[], known: string[]): string[] {
  const tokens = [...new Set([...known, ...runs.flatMap((r) => r.secrets)])].filter((t) => t.length >= MIN_SECRET_LENGTH);
  const leaks: string[] = [];
  for (const run of runs) {
    const shown = run.argv.includes('--show-token');
    const what = run.kind === 'process' ? run.argv.join(' ') : `trade ${run.argv.join(' ')}`;
    for (const token of tokens) {
      const where = [...(shown ? [] : [['stdout', run.stdout]]), ['stderr', run.stderr]].filter(([, text]) => text!.includes(token));
      for (const [stream] of where) leaks.push(`${run.test}: \`${what}\` (${run.kind}) printed a token on ${stream}`);
    }
  }
  return leaks;
}
