/**
 * `trade serve` as a real subprocess of the built bin, for tests that kill it (SIGKILL) or run
 * several at once on one store; and the checks a store must pass after whatever happened to it.
 */
import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Env } from '../../src/config/paths.js';
import { BIN } from './cli.js';
import { spawnRecorded } from './spawn.js';

const LISTENING = /^trade serve listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

export interface ServeProcess {
  child: ChildProcess;
  url: string;
  wsUrl: string;
  /** Resolves when the process has exited, with its code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

const running = new Set<ChildProcess>();

export interface StartOptions {
  /** Flags for node itself, before the bin (e.g. --require a test fixture). */
  nodeArgs?: string[];
  extraEnv?: Env;
  /** More flags for `trade serve` (e.g. --log). */
  args?: string[];
}

/** Starts `trade serve --port 0` on env's store; resolves once it says where it listens. */
export function startServe(env: Env, token: string, options: StartOptions = {}): Promise<ServeProcess> {
  const child = spawnRecorded(process.execPath, [...(options.nodeArgs ?? []), BIN, 'serve', '--port', '0', ...(options.args ?? [])], {
    env: { PATH: process.env.PATH, ...env, ...options.extraEnv, TRADE_SERVE_TOKEN: token },
    stdio: ['ignore', 'pipe', 'pipe'],
    record: { kind: 'serve' },
  });
  running.add(child);
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const match = LISTENING.exec(stderr);
      if (!match || !stderr.includes('stops it.\n')) return;
      const url = match[1]!;
      resolve({ child, url, wsUrl: `${url.replace(/^http/, 'ws')}/ws/stream`, exited, stderr: () => stderr });
    });
    void exited.then(({ code, signal }) => reject(new Error(`serve exited (${code ?? signal}) before listening:\n${stderr}`)));
  });
}

/** SIGKILLs every serve this module started that is still running (for afterEach). */
export async function killServes(): Promise<void> {
  const left = [...running];
  for (const child of left) child.kill('SIGKILL');
  await Promise.all(left.map((child) => new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('close', resolve)))));
}

export const storeFile = (env: Env) => join(env.TRADE_HOME!, 'trade.db');

export interface StoreCheck {
  integrity: string;
  foreignKeyProblems: number;
  orderIds: string[];
  /** Orders whose state disagrees with their fills: FILLED needs exactly one fill of its quantity. */
  fillMismatches: number;
  /** Per account and instrument: the position's quantity and the signed sum of its fills. */
  positions: Array<{ account: string; instrument: string; position: number; fills: number }>;
}

/**
 * What a store holds after a crash or a race, read through SQLite itself. Opened read-write so
 * a WAL left by a killed process is recovered, as the next `trade` run would.
 */
export function checkStore(file: string): StoreCheck {
  const db = new Database(file);
  try {
    const net = `SELECT account, instrument, SUM(CASE action WHEN 'BUY' THEN quantity ELSE -quantity END) AS q FROM fills GROUP BY account, instrument`;
    return {
      integrity: (db.pragma('integrity_check') as Array<{ integrity_check: string }>).map((r) => r.integrity_check).join('; '),
      foreignKeyProblems: (db.pragma('foreign_key_check') as unknown[]).length,
      orderIds: db.prepare<[], { id: string }>('SELECT order_id AS id FROM orders ORDER BY seq').all().map((r) => r.id),
      fillMismatches: db
        .prepare<[], { n: number }>(
          `SELECT COUNT(*) AS n FROM orders o
           WHERE (o.state = 'FILLED') <> ((SELECT COUNT(*) FROM fills f WHERE f.order_id = o.id AND f.quantity = o.quantity) = 1)
              OR (SELECT COUNT(*) FROM fills f WHERE f.order_id = o.id) > 1`,
        )
        .get()!.n,
      positions: db
        .prepare<[], { account: string; instrument: string; position: number; fills: number }>(
          `SELECT p.account, p.instrument, p.quantity AS position, COALESCE(n.q, 0) AS fills
             FROM positions p LEFT JOIN (${net}) n ON n.account = p.account AND n.instrument = p.instrument
           UNION ALL
           SELECT n.account, n.instrument, 0, n.q FROM (${net}) n
             WHERE NOT EXISTS (SELECT 1 FROM positions p WHERE p.account = n.account AND p.instrument = n.instrument)
           ORDER BY 1, 2`,
        )
        .all(),
    };
  } finally {
    db.close();
  }
}
