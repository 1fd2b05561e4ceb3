/** Runs the CLI in-process with fake streams, or the built bin as a real subprocess. */
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { run, type CliDeps } from '../../src/cli/main.js';
import type { Env } from '../../src/config/paths.js';
import { recordRun, secretsOf } from './run-log.js';
import { spawnRecorded } from './spawn.js';

export const BIN = fileURLToPath(new URL('../../bin/trade.js', import.meta.url));

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

class Capture {
  text = '';
  isTTY = false;
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

/** A temporary TRADE_HOME (and config dir), removed by the returned cleanup. */
export function tempHome(): { env: Env; dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'trade-test-'));
  const env: Env = { TRADE_HOME: join(dir, 'home'), TRADE_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1', HOME: dir };
  return { env, dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Temporary homes, each made by `home(extra)` with `extra` over its environment; `cleanup` removes them all. */
export function tempHomes(): { home(extra?: Env): Env; cleanup(): void } {
  const made: Array<() => void> = [];
  return {
    home(extra = {}) {
      const h = tempHome();
      made.push(h.cleanup);
      return { ...h.env, ...extra };
    },
    cleanup: () => made.splice(0).forEach((cleanup) => cleanup()),
  };
}

export async function runCli(argv: string[], env: Env, extra: Partial<CliDeps> = {}): Promise<CliResult> {
  const stdout = new Capture();
  const stderr = new Capture();
  const stdin = new PassThrough() as PassThrough & { isTTY?: boolean };
  stdin.end();
  const code = await run(argv, { stdin, stdout, stderr, env, ...extra });
  recordRun({ kind: 'cli', argv, secrets: secretsOf(argv, env), stdout: stdout.text, stderr: stderr.text });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

export function runBin(argv: string[], env: Env, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnRecorded(process.execPath, [BIN, ...argv], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
      record: { stdin: input },
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    // A command that never reads its input may exit before the write: EPIPE then is no failure.
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(input ?? '');
  });
}

export const ES_BUY = [
  '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1',
  '--order-type', 'MARKET', '--tif', 'DAY',
];

/** The order flags with some replaced: flags({ '--quantity': '2' }); a null value drops the flag. */
export function orderArgs(overrides: Record<string, string | null> = {}): string[] {
  const base: Record<string, string> = {
    '--account': 'Sim101', '--instrument': 'ES 09-25', '--action': 'BUY', '--quantity': '1',
    '--order-type': 'MARKET', '--tif': 'DAY',
  };
  const merged: Record<string, string | null> = { ...base, ...overrides };
  return Object.entries(merged).flatMap(([k, v]) => (v === null ? [] : [k, v]));
}



/** Rows from the embedded engine's store under env's TRADE_HOME (opened read-only). */
export function queryStore(env: Env, sql: string): unknown[] {
  const db = new Database(join(env.TRADE_HOME!, 'trade.db'), { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

export const ORDER_COLUMNS =
  'account, instrument, action, quantity, order_type, limit_price, stop_price, time_in_force, oco_id, strategy';
