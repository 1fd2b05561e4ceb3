/**
 * Broken environments only the operating system can make, through the built bin: a read-only
 * store, data directory or config folder (run as a user file modes apply to:
 * test/helpers/other-user.ts), and a full disk (a 256 KiB tmpfs, mounted in a mount namespace of
 * our own by `unshare`, which needs no root). Each asserts the exit code, the message, and that
 * the store or config is unchanged.
 */
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { BIN, orderArgs, runCli, tempHome } from '../helpers/cli.js';
import { handOver, restoreModes, runBinAs } from '../helpers/other-user.js';
import { spawnSyncRecorded } from '../helpers/spawn.js';

let env: Env;
let dir: string;
let cleanup: () => void;
let file: string;
beforeEach(() => {
  ({ env, dir, cleanup } = tempHome());
  file = join(env.TRADE_HOME!, 'trade.db');
});
afterEach(() => {
  restoreModes(dir);
  cleanup();
});

const hash = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const mode = (path: string) => statSync(path).mode & 0o777;

/** A store with a price and an order in it, then everything given to the user the bin runs as. */
async function storeForOtherUser(): Promise<void> {
  expect((await runCli(['price', 'set', 'ES 09-25', '4500'], env)).code).toBe(0);
  expect((await runCli(['place', ...orderArgs({ '--order-type': 'LIMIT', '--limit-price': '4400', '--tif': 'GTC' })], env)).code).toBe(0);
  handOver(dir);
}

const WRITABLE_HINT = (home: string) => `  Make ${home} and the store's files writable by this user, or point TRADE_HOME at a writable directory.\n`;

describe('a store that cannot be written', () => {
  it('a read-only store file: writes fail with exit 1 naming the file; reads still work; doctor fails', async () => {
    await storeForOtherUser();
    chmodSync(file, 0o444);
    const before = hash(file);
    expect(await runBinAs(['place', ...orderArgs()], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: `Error: The store ${file} cannot be written: the file is read-only. Nothing was written.\n${WRITABLE_HINT(env.TRADE_HOME!)}`,
    });
    const orders = await runBinAs(['orders', '--account', 'Sim101', '--json'], env);
    expect(orders.code).toBe(0);
    expect(JSON.parse(orders.stdout).orders).toHaveLength(1);
    const doctor = await runBinAs(['doctor'], env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`✖ store    The store ${file} cannot be written: the file is read-only.\n`);
    expect(hash(file)).toBe(before);
    expect(mode(file)).toBe(0o444);
  });

  it('a read-only data directory: SQLite cannot make the -wal and -shm beside the store', async () => {
    await storeForOtherUser();
    chmodSync(env.TRADE_HOME!, 0o555);
    const before = hash(file);
    const message = `The store ${file} cannot be written: its directory ${env.TRADE_HOME} is not writable, and SQLite keeps trade.db-wal and trade.db-shm beside it.`;
    for (const argv of [['place', ...orderArgs()], ['positions']])
      expect(await runBinAs(argv, env), argv.join(' ')).toEqual({
        code: 1,
        stdout: '',
        stderr: `Error: ${message} Nothing was written.\n${WRITABLE_HINT(env.TRADE_HOME!)}`,
      });
    const doctor = await runBinAs(['doctor'], env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`✖ store    ${message}\n`);
    expect(hash(file)).toBe(before);
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it('a data directory that cannot be created under a read-only one', async () => {
    const parent = join(dir, 'read-only');
    mkdirSync(parent);
    handOver(dir);
    chmodSync(parent, 0o555);
    env.TRADE_HOME = join(parent, 'home');
    const message = `The data directory ${env.TRADE_HOME} cannot be created: ${parent} is not writable.`;
    expect(await runBinAs(['positions'], env)).toEqual({
      code: 1,
      stdout: '',
      stderr: `Error: ${message}\n  Create ${env.TRADE_HOME} yourself, or point TRADE_HOME at a directory this user can write.\n`,
    });
    const doctor = await runBinAs(['doctor'], env);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`✖ store    ${message}\n`);
  });
});

describe('a config folder', () => {
  const folder = () => env.TRADE_CONFIG_DIR!;

  it('that its owner made read-only is refused with exit 3 naming it, and never chmod-ed', async () => {
    mkdirSync(folder(), { recursive: true });
    writeFileSync(join(folder(), 'config.json'), '{"profiles":{"default":{"account":"Sim101"}}}');
    handOver(dir);
    chmodSync(folder(), 0o555);
    const before = readFileSync(join(folder(), 'config.json'), 'utf8');
    const result = await runBinAs(['config', 'set', 'backend', 'http'], env);
    expect(result).toEqual({
      code: 3,
      stdout: '',
      stderr:
        `Error: Cannot write the config in ${folder()}: the folder is not writable by this user (EACCES). Nothing was changed.\n` +
        `  Make the folder writable (chmod u+w ${folder()}), or set TRADE_CONFIG_DIR to a folder you can write.\n`,
    });
    expect(mode(folder())).toBe(0o555);
    expect(readFileSync(join(folder(), 'config.json'), 'utf8')).toBe(before);
    // Reading it is still fine.
    expect(await runBinAs(['config', 'get', 'account'], env)).toMatchObject({ code: 0, stdout: 'Sim101\n' });
  });

  it('that cannot be read: config list and doctor say so (exit 3), and change nothing', async () => {
    mkdirSync(folder(), { recursive: true });
    writeFileSync(join(folder(), 'config.json'), '{}');
    handOver(dir);
    chmodSync(folder(), 0o000);
    const message = `Cannot read the config file ${join(folder(), 'config.json')}: permission denied (EACCES)`;
    const list = await runBinAs(['config', 'list'], env);
    expect(list.code).toBe(3);
    expect(list.stderr).toBe(`profile default (${join(folder(), 'config.json')})\nError: ${message}\n`);
    expect(list.stdout).toMatch(/^backend +unreadable +config$/m);
    const doctor = await runBinAs(['doctor'], env);
    expect(doctor.code).toBe(3);
    expect(doctor.stdout).toContain(`✖ config   ${message}\n`);
    expect(doctor.stdout).not.toContain('All checks passed');
    expect(mode(folder())).toBe(0o000);
    // A command needs the backend, which the file would say: it cannot know, so it fails the same way.
    const positions = await runBinAs(['positions'], env);
    expect(positions).toMatchObject({ code: 3, stdout: '' });
    expect(positions.stderr).toContain(`Error: ${message}\n`);
  });
});

describe('a full disk', () => {
  it("an order is refused by the guard's ledger (exit 6), a price by the store (exit 1), and the store file is unchanged", () => {
    const mount = join(dir, 'disk');
    const out = join(dir, 'out');
    mkdirSync(mount);
    mkdirSync(out);
    const home = join(mount, 'home');
    const script = [
      'set -u',
      'mount -t tmpfs -o size=256k tmpfs "$MNT" || exit 90',
      'node "$BIN" price set "ES 09-25" 4500 > /dev/null || exit 91',
      // Fill what is left; head fails when the disk is full, which is the point.
      'head -c 100000000 /dev/zero > "$MNT/filler" 2> /dev/null',
      'cp "$TRADE_HOME/trade.db" "$OUT/before.db"',
      'node "$BIN" place --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --order-type MARKET --tif DAY > "$OUT/stdout" 2> "$OUT/stderr"',
      'echo $? > "$OUT/code"',
      'node "$BIN" price set "ES 09-25" 4501 > "$OUT/price-stdout" 2> "$OUT/price-stderr"',
      'echo $? > "$OUT/price-code"',
      'cp "$TRADE_HOME/trade.db" "$OUT/after.db"',
    ].join('\n');
    const run = spawnSyncRecorded('unshare', ['-rm', 'sh', '-c', script], {
      env: { PATH: process.env.PATH, HOME: dir, NO_COLOR: '1', MNT: mount, OUT: out, BIN, TRADE_HOME: home, TRADE_CONFIG_DIR: env.TRADE_CONFIG_DIR },
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    // The guard journals an order before it is sent: on a full disk it cannot, so nothing is sent.
    expect(readFileSync(join(out, 'code'), 'utf8')).toBe('6\n');
    expect(readFileSync(join(out, 'stdout'), 'utf8')).toBe('');
    expect(readFileSync(join(out, 'stderr'), 'utf8')).toBe(
      `Error: The guard's ledger ${join(home, 'guard.db')} cannot be used: the disk is full; nothing was sent.\n  Free space on the disk that holds ${home}, then try again.\n`,
    );
    expect(readFileSync(join(out, 'price-code'), 'utf8')).toBe('1\n');
    expect(readFileSync(join(out, 'price-stdout'), 'utf8')).toBe('');
    expect(readFileSync(join(out, 'price-stderr'), 'utf8')).toBe(
      `Error: The store ${join(home, 'trade.db')} cannot grow: the disk is full. Nothing was written.\n  Free space on the disk that holds ${home}, then try again.\n`,
    );
    expect(hash(join(out, 'after.db'))).toBe(hash(join(out, 'before.db')));
  });
});
