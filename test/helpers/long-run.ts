/**
 * The built bin as a long-running subprocess (`trade watch`): its stdout lines as they come, a
 * bounded wait for the next one that matches, and its exit after a signal. Its output joins the
 * record the secrets scan reads, like every other run.
 */
import type { ChildProcess } from 'node:child_process';
import type { Env } from '../../src/config/paths.js';
import { BIN } from './cli.js';
import { spawnRecorded } from './spawn.js';

export interface LongRun {
  child: ChildProcess;
  /** Every stdout line so far. */
  lines(): string[];
  stderr(): string;
  /** The first line from index `from` on that matches; fails after `ms` with everything printed so far. */
  line(match: RegExp, options?: { from?: number; ms?: number }): Promise<string>;
  /** Sends `signal` (default SIGINT) and resolves with how the process ended. */
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcess>();

export function startBin(argv: string[], env: Env): LongRun {
  const child = spawnRecorded(process.execPath, [BIN, ...argv], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  let stdout = '';
  let stderr = '';
  const wakers = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    stdout += d;
    for (const wake of [...wakers]) wake();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      for (const wake of [...wakers]) wake();
      resolve({ code, signal });
    }),
  );
  const lines = () => stdout.split('\n').slice(0, -1);
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    line(match, { from = 0, ms = 5_000 } = {}) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = lines().slice(from).find((l) => match.test(l));
          if (found !== undefined) return settle(() => resolve(found));
          if (child.exitCode !== null || child.signalCode !== null)
            settle(() => reject(new Error(`exited (${child.exitCode ?? child.signalCode}) before a line matching ${match}:\n${stdout}${stderr}`)));
        };
        const timer = setTimeout(() => settle(() => reject(new Error(`no line matching ${match} within ${ms} ms:\n${stdout}${stderr}`))), ms);
        const settle = (then: () => void) => {
          clearTimeout(timer);
          wakers.delete(check);
          then();
        };
        wakers.add(check);
        check();
      });
    },
    async stop(signal = 'SIGINT') {
      child.kill(signal);
      return exited;
    },
  };
}

/** SIGKILLs every run this module started that is still going (for afterEach). */
export async function killLongRuns(): Promise<void> {
  const left = [...running];
  for (const child of left) child.kill('SIGKILL');
  await Promise.all(left.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('close', resolve)))));
}
