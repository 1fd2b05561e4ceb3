/**
 * Opening the guard's ledger that another process holds (several `trade place` started at once on
 * a fresh machine): the open waits for the holder and ends in WAL mode with its schema, instead of
 * refusing the order with "database is locked". The switch to WAL is tried again on SQLITE_BUSY as
 * the store's is (src/engine/sqlite.ts); a suite run under heavy load once saw a fresh ledger,
 * opened by six processes at once, refuse two of them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { openLedger } from '../../src/guard/ledger.js';
import { holdReading } from '../helpers/sqlite-hold.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

it('a ledger another process holds is waited for, then opened in WAL mode with its schema', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'trade-ledger-open-'));
  dirs.push(dir);
  const file = join(dir, 'guard.db');
  const holder = await holdReading(file, 400);
  const started = Date.now();
  const ledger = await openLedger(file);
  const waited = Date.now() - started;
  expect(await holder.released).toBe(0);
  expect(waited).toBeGreaterThanOrEqual(200);
  expect(await ledger.halts('Sim101', 'default')).toBeUndefined();
  await ledger.close();
  const db = new Database(file, { readonly: true });
  expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
  db.close();
});
