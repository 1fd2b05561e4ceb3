/**
 * Opening a store that another process holds: setting WAL on a new file needs the file to
 * itself, and SQLite does not run the busy handler for it, so the open must wait on its own.
 * (Two `trade serve` started at once on a new store once failed with "database is locked".)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import { RejectedError } from '../../src/common/errors.js';
import { holdReading } from '../helpers/sqlite-hold.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('opening a store another process holds', () => {
  it('waits for the lock and then opens, in WAL mode, with the schema', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trade-open-'));
    dirs.push(dir);
    const file = join(dir, 'trade.db');
    const holder = await holdReading(file, 400);
    const started = Date.now();
    const engine = createEngine(file);
    const waited = Date.now() - started;
    expect(await holder.released).toBe(0);
    expect(waited).toBeGreaterThanOrEqual(200);
    expect(engine.listAccounts()).toEqual(['Sim101']);
    engine.close();
    const db = new Database(file, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('past its busy timeout, says the store is busy (a typed refusal, nothing written)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trade-open-'));
    dirs.push(dir);
    const file = join(dir, 'trade.db');
    const holder = await holdReading(file, 1500);
    let error: unknown;
    try {
      createEngine(file, { busyTimeoutMs: 200 }).close();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RejectedError);
    expect(error).toMatchObject({ code: 'store_busy', status: 503 });
    expect(await holder.released).toBe(0);
  });
});
