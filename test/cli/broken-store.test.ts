/**
 * A store the engine cannot use, through the CLI: each ends in exit 1 with a message naming the
 * file and what to do (never "Unexpected error"), `trade doctor` fails on it, and the file is
 * byte for byte what it was. Permissions and a full disk need other processes:
 * test/cli/broken-env-os.test.ts.
 */
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { SCHEMA_VERSION } from '../../src/engine/store.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';

let env: Env;
let dir: string;
let cleanup: () => void;
let file: string;
beforeEach(() => {
  ({ env, dir, cleanup } = tempHome());
  file = join(env.TRADE_HOME!, 'trade.db');
});
afterEach(() => cleanup());

const cli = (argv: string[]) => runCli(argv, env);
const hash = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** A store with orders, prices and ticks in it, closed (so all of it is in the main file). */
async function usedStore(): Promise<void> {
  expect((await cli(['price', 'set', 'ES 09-25', '4500'])).code).toBe(0);
  for (let i = 0; i < 40; i++) expect((await cli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400', '--tif': 'GTC' })])).code).toBe(0);
  expect(existsSync(`${file}-wal`)).toBe(false);
}

const MOVE_ASIDE = '  Move it aside (trade then starts a new, empty store there) or point TRADE_HOME at another directory.\n';
const damaged = (f: string) =>
  `Error: The store ${f} is damaged (SQLite: database disk image is malformed). Nothing was written.\n` +
  `  Restore it from a backup, or move it aside (trade then starts a new, empty store); \`sqlite3 ${f} .recover\` may save what it holds.\n`;

/** Runs a reading and a writing command and doctor; each must fail with exit 1, the store unchanged. */
async function expectRefused(stderr: string, doctorLine: string): Promise<void> {
  const isFile = existsSync(file) && statSync(file).isFile();
  const before = isFile ? hash(file) : undefined;
  for (const argv of [['positions'], ['place', ...orderArgs()]]) {
    const result = await cli(argv);
    expect(result, argv.join(' ')).toEqual({ code: 1, stdout: '', stderr });
  }
  const doctor = await cli(['doctor']);
  expect(doctor.code).toBe(1);
  expect(doctor.stdout).toContain(`✖ store    ${doctorLine}\n`);
  expect(doctor.stdout).not.toContain('All checks passed');
  expect(doctor.stderr).toBe('Error: 1 check failed: store\n');
  if (isFile) expect(hash(file)).toBe(before);
}

describe('a store the engine cannot use', () => {
  it('garbage in the place of the store: not a SQLite database', async () => {
    mkdirSync(env.TRADE_HOME!, { recursive: true });
    writeFileSync(file, 'these are not the bytes of a database\n'.repeat(200));
    await expectRefused(
      `Error: ${file} is not a trade store: it is not a SQLite database. Nothing was written.\n${MOVE_ASIDE}`,
      `${file} is not a trade store: it is not a SQLite database.`,
    );
  });

  it('a few bytes of garbage, which SQLite would take for an empty database and overwrite', async () => {
    mkdirSync(env.TRADE_HOME!, { recursive: true });
    writeFileSync(file, 'x');
    await expectRefused(
      `Error: ${file} is not a trade store: it is not a SQLite database. Nothing was written.\n${MOVE_ASIDE}`,
      `${file} is not a trade store: it is not a SQLite database.`,
    );
    expect(readFileSync(file, 'utf8')).toBe('x');
  });

  it('a directory in the place of the store', async () => {
    mkdirSync(file, { recursive: true });
    await expectRefused(
      `Error: ${file} is not a trade store: it is a directory. Nothing was written.\n${MOVE_ASIDE}`,
      `${file} is not a trade store: it is a directory.`,
    );
  });

  it('a truncated store: damaged, refused before any write', async () => {
    await usedStore();
    truncateSync(file, Math.floor(statSync(file).size / 2));
    await expectRefused(damaged(file), `The store ${file} is damaged (SQLite: database disk image is malformed).`);
  });

  it('a store damaged in the middle: the command that reads the page says so', async () => {
    await usedStore();
    const bytes = readFileSync(file);
    // Pages past the schema: the open succeeds, and the damage shows when an order is written.
    bytes.fill(0xa5, 4096 * 3, bytes.length - 4096);
    writeFileSync(file, bytes);
    const before = hash(file);
    const place = await cli(['place', ...orderArgs()]);
    expect(place).toEqual({ code: 1, stdout: '', stderr: damaged(file) });
    expect(hash(file)).toBe(before);
    const doctor = await cli(['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/✖ store {4}The store .* is damaged \(SQLite: /);
    expect(hash(file)).toBe(before);
  });

  it('a store written by a newer trade: refused before its journal mode or anything else changes', async () => {
    mkdirSync(env.TRADE_HOME!, { recursive: true });
    const db = new Database(file);
    db.exec('CREATE TABLE from_the_future (x)');
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    const before = hash(file);
    for (const argv of [['positions'], ['place', ...orderArgs()], ['serve', '--port', '0']]) {
      expect(await cli(argv), argv.join(' ')).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `Error: The store ${file} was written by a newer trade (schema ${SCHEMA_VERSION + 1}; this one knows ${SCHEMA_VERSION}). Nothing was written.\n` +
          '  Update trade (npm install -g trade), or point TRADE_HOME at another directory.\n',
      });
    }
    expect(hash(file)).toBe(before);
    expect(existsSync(`${file}-wal`)).toBe(false);
    const check = new Database(file, { readonly: true });
    expect(check.pragma('journal_mode', { simple: true })).toBe('delete');
    check.close();
    expect((await cli(['doctor'])).code).toBe(1);
  });

  it('trade serve does not start on a store it cannot use, and says why', async () => {
    mkdirSync(env.TRADE_HOME!, { recursive: true });
    writeFileSync(file, 'not a database '.repeat(100));
    const before = hash(file);
    const result = await cli(['serve', '--port', '0']);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `Error: ${file} is not a trade store: it is not a SQLite database. Nothing was written.\n${MOVE_ASIDE}`,
    });
    expect(hash(file)).toBe(before);
  });
});

describe('a data directory that cannot be made', () => {
  it('TRADE_HOME is a file', async () => {
    writeFileSync(env.TRADE_HOME!, 'my notes\n');
    const before = hash(env.TRADE_HOME!);
    const stderr = `Error: The data directory ${env.TRADE_HOME} is a file, not a directory.\n  Point TRADE_HOME at a directory, or move ${env.TRADE_HOME} aside.\n`;
    for (const argv of [['positions'], ['place', ...orderArgs()], ['serve', '--port', '0']])
      expect(await cli(argv), argv.join(' ')).toEqual({ code: 1, stdout: '', stderr });
    const doctor = await cli(['doctor']);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`✖ store    The data directory ${env.TRADE_HOME} is a file, not a directory.\n`);
    expect(doctor.stdout).not.toContain('All checks passed');
    expect(hash(env.TRADE_HOME!)).toBe(before);
  });

  it('a file where one of its parents should be', async () => {
    const blocking = join(dir, 'blocking');
    writeFileSync(blocking, 'x');
    env.TRADE_HOME = join(blocking, 'trade-home');
    const result = await cli(['positions']);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `Error: The data directory ${env.TRADE_HOME} cannot be created: ${blocking} is a file, not a directory.\n  Point TRADE_HOME at a directory, or move ${blocking} aside.\n`,
    });
    const doctor = await cli(['doctor', '--json']);
    expect(doctor.code).toBe(1);
    expect(JSON.parse(doctor.stdout)).toMatchObject({
      ok: false,
      checks: [{ name: 'config', status: 'pass' }, { name: 'store', status: 'fail', message: `The data directory ${env.TRADE_HOME} cannot be created: ${blocking} is a file, not a directory.` }],
    });
    expect(readFileSync(blocking, 'utf8')).toBe('x');
  });
});
