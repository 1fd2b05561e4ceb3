/**
 * Before any worker starts: the Debian commands some tests drive are there (test/helpers/debian.ts,
 * installed when missing and possible), and one directory per `vitest run` holds the record of
 * every CLI run (test/helpers/run-log.ts), which all workers inherit. Vitest runs this once per
 * project in one process, so the first call makes the directory and the others reuse it. One
 * PostgreSQL cluster per run too (test/helpers/postgres.ts), for the desk ledger's tests: each
 * file makes a database of its own on it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureDebianCommands } from './helpers/debian.js';
import { type Cluster, POSTGRES_ENV, startCluster } from './helpers/postgres.js';

/** Where test/helpers/run-log.ts writes; set here, inherited by every worker. */
export const RUN_LOG_ENV = 'TRADE_TEST_RUN_LOG';

let cluster: Promise<Cluster> | undefined;

export default async function setup(): Promise<() => Promise<void>> {
  ensureDebianCommands();
  const dir = (process.env[RUN_LOG_ENV] ??= mkdtempSync(join(tmpdir(), 'trade-test-runs-')));
  const mine = !process.env[POSTGRES_ENV];
  if (mine) {
    cluster ??= startCluster();
    process.env[POSTGRES_ENV] = (await cluster).adminUrl;
  }
  return async () => {
    rmSync(dir, { recursive: true, force: true });
    if (mine && cluster) {
      (await cluster).destroy();
      cluster = undefined;
    }
  };
}
