/**
 * The execution history (issue 30): the service keeps executions for 900 seconds only
 * (GetExecutions' `lookbackTime`, §3.19), so `trade` keeps every execution it sees on a remote
 * backend in `executions.db` in the data directory, once by its id, per service (the host it
 * talks to: http and ws to one service share a history). Beside them, the stretches of time whose
 * every execution was seen (a GetExecutions answer of L seconds at time T covers [T − L, T]), so a
 * report can say what it has seen. Many trade processes may write it at once (WAL, a busy
 * timeout, INSERT OR IGNORE). No token is ever written: executions carry none.
 */
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { toStoreError } from '../engine/store-errors.js';
import { fromChicagoWallClock } from '../service/chicago.js';
import type { ReportFill } from './round-trips.js';

export const historyPath = (storeFile: string): string => join(dirname(storeFile), 'executions.db');

/** The service a remote backend talks to, as the history keys it: its host (and port). */
export function historyService(backend: string, url: string | undefined): string {
  if (!url) return backend;
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return url;
  }
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS executions (
  service TEXT NOT NULL,
  id TEXT NOT NULL,
  account TEXT NOT NULL COLLATE NOCASE,
  instrument TEXT NOT NULL,
  action TEXT NOT NULL CHECK (action IN ('BUY', 'SELL')),
  quantity INTEGER NOT NULL CHECK (quantity > 0),
  price REAL NOT NULL,
  epoch INTEGER NOT NULL,
  commission REAL NOT NULL,
  order_id TEXT,
  position INTEGER,
  body TEXT NOT NULL,
  seen_at INTEGER NOT NULL,
  PRIMARY KEY (service, id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS executions_by_time ON executions(service, account, epoch);
CREATE TABLE IF NOT EXISTS seen (
  service TEXT NOT NULL,
  account TEXT NOT NULL COLLATE NOCASE,
  from_ms INTEGER NOT NULL,
  to_ms INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS seen_by_account ON seen(service, account, from_ms);
`;

/** An Execution object (§4.5) as the history keeps it; undefined when it lacks what a report needs. */
export function executionFill(raw: unknown, fallbackAccount: string | undefined): (ReportFill & { body: string }) | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const e = raw as Record<string, unknown>;
  const account = typeof e.account === 'string' && e.account !== '' ? e.account : fallbackAccount;
  const side = e.marketPosition === 'Long' ? 'BUY' : e.marketPosition === 'Short' ? 'SELL' : undefined;
  const time = typeof e.epoch === 'number' && Number.isFinite(e.epoch) ? Math.trunc(e.epoch) : serviceTimeMs(e.time);
  if (typeof e.id !== 'string' || e.id === '' || account === undefined || typeof e.instrument !== 'string' || side === undefined) return undefined;
  if (typeof e.quantity !== 'number' || !(e.quantity > 0) || !Number.isInteger(e.quantity)) return undefined;
  if (typeof e.price !== 'number' || !Number.isFinite(e.price) || time === undefined) return undefined;
  return {
    id: e.id,
    account,
    instrument: e.instrument,
    action: side,
    quantity: e.quantity,
    price: e.price,
    time,
    commission: typeof e.commission === 'number' && Number.isFinite(e.commission) ? e.commission : 0,
    ...(typeof e.orderId === 'string' ? { orderId: e.orderId } : {}),
    ...(typeof e.position === 'number' && Number.isInteger(e.position) && e.position >= 0 ? { positionAfter: e.position } : {}),
    body: JSON.stringify(raw),
  };
}

/** `2025-09-26T18:09:38.3736787`: the service's time (Chicago, no offset) as epoch ms. */
function serviceTimeMs(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d{1,3})?\d*$/.exec(value);
  if (!match) return undefined;
  const wall = Date.parse(`${match[1]}${match[2] ?? ''}Z`);
  return Number.isNaN(wall) ? undefined : fromChicagoWallClock(wall);
}

export interface Stretch {
  account: string;
  from: number;
  to: number;
}

export interface History {
  readonly file: string;
  /** Records executions (new ids only); returns how many were new. */
  record(service: string, executions: unknown[], seenAt: number, fallbackAccount?: string): number;
  /** Every execution of the account from `from` to `to` (epoch ms) has been seen. */
  cover(service: string, account: string, from: number, to: number): void;
  /** The accounts' fills up to `to`, oldest first. */
  fills(service: string, accounts: string[], to: number): ReportFill[];
  /** The Execution objects as the service sent them, of the accounts, after `since` (epoch ms), oldest first. */
  bodies(service: string, accounts: string[] | undefined, since: number): Array<{ id: string; body: unknown }>;
  /** The stretches seen for the accounts, oldest first. */
  seen(service: string, accounts: string[]): Stretch[];
  close(): void;
}

/** Opens (creating when missing) the history; a file that cannot be used throws a typed error naming it. */
export function openHistory(file: string): History {
  let db: Database.Database;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    db = new Database(file);
    db.pragma('busy_timeout = 15000');
    if (db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec(SCHEMA);
  } catch (error) {
    throw toStoreError(error, file);
  }
  const insert = db.prepare(
    `INSERT OR IGNORE INTO executions (service, id, account, instrument, action, quantity, price, epoch, commission, order_id, position, body, seen_at)
     VALUES (@service, @id, @account, @instrument, @action, @quantity, @price, @time, @commission, @orderId, @positionAfter, @body, @seenAt)`,
  );
  const overlapping = db.prepare<[string, string, number, number], { rowid: number; from_ms: number; to_ms: number }>(
    'SELECT rowid, from_ms, to_ms FROM seen WHERE service = ? AND account = ? AND from_ms <= ? AND to_ms >= ?',
  );
  const removeSeen = db.prepare<[number]>('DELETE FROM seen WHERE rowid = ?');
  const addSeen = db.prepare<[string, string, number, number]>('INSERT INTO seen (service, account, from_ms, to_ms) VALUES (?, ?, ?, ?)');
  const guarded = <T>(work: () => T): T => {
    try {
      return work();
    } catch (error) {
      throw toStoreError(error, file);
    }
  };
  const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');
  return {
    file,
    record(service, executions, seenAt, fallbackAccount) {
      const rows = executions.map((e) => executionFill(e, fallbackAccount)).filter((e) => e !== undefined);
      if (rows.length === 0) return 0;
      return guarded(() =>
        db.transaction(() => rows.reduce((added, row) => added + insert.run({ orderId: null, positionAfter: null, ...row, service, seenAt }).changes, 0)).immediate(),
      );
    },
    cover(service, account, from, to) {
      guarded(() =>
        db.transaction(() => {
          let start = from;
          let end = to;
          for (const row of overlapping.all(service, account, to, from)) {
            start = Math.min(start, row.from_ms);
            end = Math.max(end, row.to_ms);
            removeSeen.run(row.rowid);
          }
          addSeen.run(service, account, start, end);
        }).immediate(),
      );
    },
    fills(service, accounts, to) {
      if (accounts.length === 0) return [];
      return guarded(() =>
        db
          .prepare<unknown[], { id: string; account: string; instrument: string; action: 'BUY' | 'SELL'; quantity: number; price: number; time: number; commission: number; orderId: string | null; position: number | null }>(
            `SELECT id, account, instrument, action, quantity, price, epoch AS time, commission, order_id AS orderId, position FROM executions
             WHERE service = ? AND account IN (${placeholders(accounts.length)}) AND epoch <= ? ORDER BY epoch, seen_at, id`,
          )
          .all(service, ...accounts, to)
          .map(({ orderId, position, ...row }) => ({ ...row, ...(orderId === null ? {} : { orderId }), ...(position === null ? {} : { positionAfter: position }) })),
      );
    },
    bodies(service, accounts, since) {
      const filter = accounts === undefined ? '' : ` AND account IN (${placeholders(accounts.length)})`;
      return guarded(() =>
        db
          .prepare<unknown[], { id: string; body: string }>(`SELECT id, body FROM executions WHERE service = ?${filter} AND epoch > ? ORDER BY epoch, seen_at, id`)
          .all(service, ...(accounts ?? []), since)
          .map((row) => ({ id: row.id, body: JSON.parse(row.body) as unknown })),
      );
    },
    seen(service, accounts) {
      if (accounts.length === 0) return [];
      return guarded(() =>
        db
          .prepare<unknown[], Stretch>(
            `SELECT account, from_ms AS "from", to_ms AS "to" FROM seen WHERE service = ? AND account IN (${placeholders(accounts.length)}) ORDER BY from_ms, account`,
          )
          .all(service, ...accounts),
      );
    },
    close: () => db.close(),
  };
}
