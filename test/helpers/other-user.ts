/**
 * Runs the built bin where file modes apply. Root ignores them (a chmod 0444 store is still
 * written), and the tests run as root here and in CI; so as root the bin runs as `nobody` (uid
 * and gid 65534), the test's files handed over to it first. As any other user it runs as that
 * user, whose own modes apply. Either way the read-only store, folder or directory is real: no
 * call is mocked.
 */
import { chmodSync, chownSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Env } from '../../src/config/paths.js';
import { BIN, type CliResult } from './cli.js';
import { spawnRecorded } from './spawn.js';

const NOBODY = 65534;
export const RUN_AS: { uid: number; gid: number } | undefined = process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : undefined;

/** Gives `path` and all under it to the user the bin runs as (nothing to do when that is us). */
export function handOver(path: string): void {
  if (!RUN_AS) return;
  chownSync(path, RUN_AS.uid, RUN_AS.gid);
  if (lstatSync(path).isDirectory()) for (const name of readdirSync(path)) handOver(join(path, name));
}

/** Makes everything under `path` removable again, for a cleanup that is not root's. */
export function restoreModes(path: string): void {
  try {
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) return;
    chmodSync(path, stat.isDirectory() ? 0o700 : 0o600);
    if (stat.isDirectory()) for (const name of readdirSync(path)) restoreModes(join(path, name));
  } catch {
    // Already gone.
  }
}

export function runBinAs(argv: string[], env: Env): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnRecorded(process.execPath, [BIN, ...argv], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...RUN_AS,
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
