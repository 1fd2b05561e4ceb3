/**
 * A real PostgreSQL server for the desk ledger's tests (src/guard/postgres-ledger.ts): Debian's
 * `postgresql` package (installed by the global setup when missing, test/helpers/debian.ts), one
 * throwaway cluster per `vitest run` in a temporary directory, on a free loopback port, run as an
 * unprivileged user (`nobody` when the suite runs as root, since initdb refuses root; else the
 * user running it), password authentication only (scram-sha-256). The global setup starts it and
 * hands its admin URL to every worker in TRADE_TEST_POSTGRES; each test file makes a database of
 * its own (`testDatabase`). A file run alone, outside the global setup, starts its own cluster.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { closedPort } from './ports.js';

export const POSTGRES_ENV = 'TRADE_TEST_POSTGRES';
const NOBODY = 65534;
const ADMIN = 'trade_admin';

/** The directory of the newest installed PostgreSQL's programs (initdb, pg_ctl), if any. */
export function postgresBin(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

export interface Cluster {
  /** postgres://trade_admin:…@127.0.0.1:PORT/postgres */
  adminUrl: string;
  port: number;
  /** The data directory. */
  dir: string;
  /** pg_ctl stop (fast), or start again: a test stops the server in the middle of a run. */
  stop(): void;
  start(): void;
  /** Stops it and removes its directory. */
  destroy(): void;
}

/** The user the server runs as: `nobody` under root (initdb refuses root), else ourselves. */
const runAs = () => (process.getuid?.() === 0 ? { uid: NOBODY, gid: NOBODY } : {});

function run(bin: string, args: string[], cwd: string): void {
  const result = spawnSync(bin, args, { cwd, encoding: 'utf8', ...runAs(), env: { PATH: process.env.PATH, LANG: 'C', LC_ALL: 'C' } });
  if (result.status !== 0) throw new Error(`${bin} ${args.join(' ')} failed (${result.status}): ${result.stderr || result.stdout || result.error?.message}`);
}

export interface ClusterOptions {
  /** More server settings (`ssl=on`, ...), each passed as `-c NAME=VALUE`. */
  settings?: string[];
  /** pg_hba.conf lines put before initdb's (the first that matches decides). */
  hba?: string[];
  /** Files to write into the cluster's directory before it starts, owned by the server's user, mode 0600 (a TLS key and certificate). */
  files?: Record<string, string>;
}

/** initdb and start a cluster in a new temporary directory, on a free loopback port. */
export async function startCluster(options: ClusterOptions = {}): Promise<Cluster> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL is not installed: apt-get install postgresql (the global setup does it when run as root on Debian).');
  const dir = mkdtempSync(join(tmpdir(), 'trade-pg-'));
  chmodSync(dir, 0o755);
  const password = randomBytes(12).toString('hex');
  const pwfile = join(dir, 'pwfile');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  const data = join(dir, 'data');
  mkdirSync(data, { mode: 0o700 });
  const as = runAs();
  if (as.uid !== undefined) {
    chownSync(dir, as.uid, as.gid);
    chownSync(pwfile, as.uid, as.gid);
    chownSync(data, as.uid, as.gid);
  }
  run(join(bin, 'initdb'), ['-D', data, '-U', ADMIN, `--pwfile=${pwfile}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale', '--no-sync'], dir);
  if (options.hba?.length) {
    const hba = join(data, 'pg_hba.conf');
    writeFileSync(hba, `${options.hba.join('\n')}\n${readFileSync(hba, 'utf8')}`);
  }
  for (const [name, text] of Object.entries(options.files ?? {})) {
    writeFileSync(join(dir, name), text, { mode: 0o600 });
    if (as.uid !== undefined) chownSync(join(dir, name), as.uid, as.gid);
  }
  const settings = (options.settings ?? []).map((setting) => ` -c ${setting}`).join('');
  let port = 0;
  const start = () =>
    run(join(bin, 'pg_ctl'), ['-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '30', '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories= -c max_connections=300${settings}`, 'start'], dir);
  for (let attempt = 0; ; attempt++) {
    port = await closedPort();
    try {
      start();
      break;
    } catch (error) {
      // Another process took the port between its choice and the server's bind: another one.
      if (attempt >= 4) throw error;
    }
  }
  const stop = () => {
    try {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'], dir);
    } catch {
      // Already stopped.
    }
  };
  return {
    adminUrl: `postgres://${ADMIN}:${password}@127.0.0.1:${port}/postgres`,
    port,
    dir,
    stop,
    start,
    destroy() {
      stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let own: Promise<Cluster> | undefined;

/** The run's cluster (the global setup's), or one of this file's own. */
async function adminUrl(): Promise<string> {
  const shared = process.env[POSTGRES_ENV];
  if (shared) return shared;
  own ??= startCluster();
  return (await own).adminUrl;
}

/** Stops the cluster this file started itself, if it did (afterAll). */
export async function stopOwnCluster(): Promise<void> {
  if (own) (await own).destroy();
  own = undefined;
}

export interface TestDatabase {
  /** postgres://trade_admin:…@127.0.0.1:PORT/NAME */
  url: string;
  name: string;
  /** Runs one statement as the admin, on the test's database. */
  query<T extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<T[]>;
  drop(): Promise<void>;
}

/** A new, empty database for a test file (or a test), on the run's cluster. */
export async function testDatabase(prefix = 't'): Promise<TestDatabase> {
  const admin = await adminUrl();
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = admin.replace(/\/postgres$/, `/${name}`);
  return {
    url,
    name,
    async query(sql, params) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        return (await c.query(sql, params)).rows;
      } finally {
        await c.end();
      }
    },
    async drop() {
      const c = new pg.Client({ connectionString: admin });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}
