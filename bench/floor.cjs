// The floor of an embedded `trade place`: what any process that records one order must do, and
// nothing more. Opens the SQLite store with the engine's pragmas (src/engine/store.ts: busy
// timeout, WAL, synchronous=NORMAL, foreign keys) and commits one row in an IMMEDIATE
// transaction, using better-sqlite3 directly. CommonJS, so no ES module loader starts.
// Usage: node bench/floor.cjs <file>
'use strict';
const Database = require('better-sqlite3');

const db = new Database(process.argv[2]);
db.pragma('busy_timeout = 15000');
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.pragma('foreign_keys = ON');
db.exec('CREATE TABLE IF NOT EXISTS floor (id INTEGER PRIMARY KEY, placed_at TEXT NOT NULL)');
db.prepare('BEGIN IMMEDIATE').run();
db.prepare('INSERT INTO floor (placed_at) VALUES (?)').run(new Date().toISOString());
db.prepare('COMMIT').run();
db.close();
