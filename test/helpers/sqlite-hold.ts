/** A SQLite file held by another process, for the tests of opens that must wait for it. */
import { spawnRecorded } from './spawn.js';

/**
 * A child process that creates `file` in rollback mode and reads it inside a transaction for
 * `holdMs`: a shared lock, which a switch to WAL cannot get past, and for which SQLite does not
 * call the busy handler (the switch already holds a read transaction of its own).
 */
export function holdReading(file: string, holdMs: number): Promise<{ released: Promise<number | null> }> {
  const script = `
    const Database = require('better-sqlite3');
    const db = new Database(process.argv[1]);
    db.exec('CREATE TABLE held(x)');
    db.exec('BEGIN');
    db.prepare('SELECT * FROM held').all();
    process.stdout.write('held\\n');
    setTimeout(() => { db.exec('COMMIT'); db.close(); }, Number(process.argv[2]));
  `;
  const child = spawnRecorded(process.execPath, ['-e', script, file, String(holdMs)], { stdio: ['ignore', 'pipe', 'pipe'] });
  const released = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return new Promise((resolve, reject) => {
    child.stdout!.once('data', () => resolve({ released }));
    child.once('exit', (code) => reject(new Error(`the lock holder exited ${code} before holding`)));
  });
}
