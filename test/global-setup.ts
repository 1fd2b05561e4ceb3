/**
 * One directory per `vitest run` for the record of every CLI run (test/helpers/run-log.ts), made
 * before any worker starts so that all of them inherit it. Vitest runs this once per project in
 * one process, so the first call makes the directory and the others reuse it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Where test/helpers/run-log.ts writes; set here, inherited by every worker. */
export const RUN_LOG_ENV = 'TRADE_TEST_RUN_LOG';

export default function setup(): () => void {
  const dir = (process.env[RUN_LOG_ENV] ??= mkdtempSync(join(tmpdir(), 'trade-test-runs-')));
  return () => rmSync(dir, { recursive: true, force: true });
}
