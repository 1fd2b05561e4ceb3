/**
 * Before any worker starts: the Debian commands some tests drive are there (test/helpers/debian.ts,
 * installed when missing and possible), and one directory per `vitest run` holds the record of
 * every CLI run (test/helpers/run-log.ts), which all workers inherit. Vitest runs this once per
 * project in one process, so the first call makes the directory and the others reuse it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianCommands } from './helpers/debian.js';

/** Where test/helpers/run-log.ts writes; set here, inherited by every worker. */
export const RUN_LOG_ENV = 'TRADE_TEST_RUN_LOG';

export default function setup(): () => void {
  ensureDebianCommands();
  const dir = (process.env[RUN_LOG_ENV] ??= mkdtempSync(join(tmpdir(), 'trade-test-runs-')));
  return () => rmSync(dir, { recursive: true, force: true });
}
