/**
 * Opening a store that another process holds: setting WAL on a new file needs the file to
 * itself, and SQLite does not run the busy handler for it, so the open must wait on its own.
 * (Two `trade serve` started at once on a new store once failed with "database is locked".)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import { RejectedError } from '../../src/order/errors.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A child process that creates `file` in rollback mode and reads it inside a transaction for
 * `holdMs`: a shared lock, which a switch to WAL cannot get past, and for which SQLite does not
 * call the busy handler (the switch already holds a read transaction of its own).
 */
function holdReading(file: string, holdMs: number): Promise<{ released: Promise<number | null> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('CREATE TABLE held(x)');
    db.exec('BEGIN');
    db.prepare('SELECT * FROM held').all();
    process.stdout.write('held\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, Number(process.argv[2]));
  `;
  const child = spawn(process.execPath, ['-e', script, file, String(holdMs)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const released = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve({ released }));
    child.once('exit', (code) => reject(new Error(`the lock holder exited ${code} before holding`)));
  });
}

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
