/**
 * A record of every CLI run of the suite (runBin, runCli, `trade serve` subprocesses): argv, the
 * secrets the run was given, and all it printed. test/secrets.scan.ts reads it once every other
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
  kind: 'bin' | 'cli' | 'serve';
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

export function recordRun(run: RecordedRun): void {
  const dir = process.env[RUN_LOG_ENV];
  if (!dir) return; // a run outside the suite's global setup (a single file run by hand still has it)
  const state = expect.getState();
  const test = `${relative(process.cwd(), state.testPath ?? '?')} > ${state.currentTestName ?? '?'}`;
  appendFileSync(join(dir, `runs-${process.pid}.jsonl`), `${JSON.stringify({ ...run, test })}\n`);
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
