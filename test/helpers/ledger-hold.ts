/** A guard ledger's account lock held by another process (the built library), for the tests of the lock across processes. */
import type { ChildProcess } from 'node:child_process';
import { spawnRecorded } from './spawn.js';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { LedgerSpec } from '../../src/guard/ledger.js';

export const LIB = fileURLToPath(new URL('../../dist/lib.js', import.meta.url));

/** A child process that opens the ledger, takes `account`'s lock, says `held`, then waits to be killed (`cleanups` kills it). */
export async function holderProcess(spec: LedgerSpec | string, account: string, cleanups: Array<() => unknown>): Promise<ChildProcess> {
  const script = `
    const { openLedger } = await import(${JSON.stringify(LIB)});
    const hold = await (await openLedger(${JSON.stringify(spec)})).lockAccount(${JSON.stringify(account)}, 5000);
    process.stdout.write(hold ? 'held\\n' : 'busy\\n');
    setInterval(() => undefined, 1000);
  `;
  const child = spawnRecorded(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(() => child.kill('SIGKILL'));
  const said = await new Promise<string>((resolve) => child.stdout!.setEncoding('utf8').once('data', resolve));
  expect(said).toBe('held\n');
  return child;
}
