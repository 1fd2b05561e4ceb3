/**
 * The one way the suite starts a process: `spawnRecorded` and `spawnSyncRecorded` start it as
 * node:child_process does, and add what it printed (stdout and stderr, whole) to the record of
 * runs that test/secrets.scan.ts reads once every other file has finished (test/helpers/run-log.ts).
 * A stream the caller would ignore or inherit is piped instead, so nothing a process prints escapes
 * the scan. test/secrets-coverage.test.ts fails if a file of the suite starts a process another way.
 */
import { type ChildProcess, spawn, type SpawnOptions, spawnSync, type SpawnSyncOptions, type SpawnSyncReturns } from 'node:child_process';
import { basename } from 'node:path';
import type { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { type RecordedRun, recordRun, secretsOf, testName } from './run-log.js';

export interface RecordOptions {
  /** What kind of run this is, for the scan's report (default: `bin` for the built bin, else `process`). */
  kind?: RecordedRun['kind'];
  /** The CLI's argv when the process runs it some other way (inside `script`, a shell). */
  argv?: string[];
  /** What the process was given on stdin, when a token may be in it (`trade login --token-stdin`). */
  stdin?: string;
}

const BIN_PATH = fileURLToPath(new URL('../../bin/trade.js', import.meta.url));

/** The argv the record shows: the CLI's own for the built bin, else the command's name and its args. */
function argvOf(command: string, args: readonly string[], record: RecordOptions): { argv: string[]; bin: boolean } {
  if (record.argv) return { argv: record.argv, bin: true };
  const at = args.indexOf(BIN_PATH);
  if (at >= 0) return { argv: args.slice(at + 1), bin: true };
  return { argv: [basename(command), ...args], bin: false };
}

const piped = (stdio: SpawnOptions['stdio']): SpawnOptions['stdio'] => {
  const list = typeof stdio === 'string' ? [stdio, stdio, stdio] : [...(stdio ?? ['pipe', 'pipe', 'pipe'])];
  // stdout and stderr always come to us; stdin stays as asked.
  return [list[0] ?? 'pipe', 'pipe', 'pipe', ...list.slice(3)];
};

/** A child whose stdout and stderr are there: they are always piped, to be recorded. */
export type RecordedChild = ChildProcess & { stdout: Readable; stderr: Readable };

export function spawnRecorded(command: string, args: readonly string[], options: SpawnOptions & { record?: RecordOptions } = {}): RecordedChild {
  const { record = {}, ...spawnOptions } = options;
  const child = spawn(command, args, { ...spawnOptions, stdio: piped(spawnOptions.stdio) }) as RecordedChild;
  const test = testName();
  const output = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
  for (const stream of ['stdout', 'stderr'] as const)
    child[stream].on('data', (chunk: Buffer | string) => output[stream].push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk));
  child.on('close', () => {
    const { argv, bin } = argvOf(command, args, record);
    recordRun({
      kind: record.kind ?? (bin ? 'bin' : 'process'),
      test,
      argv,
      secrets: secretsOf(argv, spawnOptions.env ?? process.env, record.stdin),
      stdout: Buffer.concat(output.stdout).toString('utf8'),
      stderr: Buffer.concat(output.stderr).toString('utf8'),
    });
  });
  return child;
}

export function spawnSyncRecorded(
  command: string,
  args: readonly string[],
  options: SpawnSyncOptions & { encoding: BufferEncoding; record?: RecordOptions },
): SpawnSyncReturns<string> {
  const { record = {}, ...spawnOptions } = options;
  const result = spawnSync(command, args, { ...spawnOptions, stdio: piped(spawnOptions.stdio) as SpawnSyncOptions['stdio'] });
  const { argv, bin } = argvOf(command, args, record);
  recordRun({
    kind: record.kind ?? (bin ? 'bin' : 'process'),
    argv,
    secrets: secretsOf(argv, spawnOptions.env ?? process.env, record.stdin ?? (typeof spawnOptions.input === 'string' ? spawnOptions.input : undefined)),
    stdout: result.stdout ?? '',
    stderr: result.stderr ?? '',
  });
  return result;
}
