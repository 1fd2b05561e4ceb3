/**
 * A desk ledger's TLS, as the URL's sslmode says (docs/desk-mode.md), against a real PostgreSQL
 * server with TLS on: a cluster of this file's own (test/helpers/postgres.ts) whose certificate,
 * for 127.0.0.1 only, is signed by a CA made here with openssl, and whose pg_hba.conf lets the
 * desk's role in only over TLS. verify-full checks the certificate and the host name, verify-ca
 * the certificate alone, require encrypts without checking; a URL without sslmode is plain, and
 * the server turns it away. Against a server without TLS (the run's shared cluster), require and
 * prefer fail closed rather than fall back to plain.
 */
import { spawnSyncRecorded } from '../helpers/spawn.js';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBin, tempHomes } from '../helpers/cli.js';
import { type Cluster, startCluster, stopOwnCluster, type TestDatabase, testDatabase } from '../helpers/postgres.js';

const PASSWORD = 'tls-desk-5f0c2a9e71';
const CERT_HINT =
  "  The server's TLS certificate was not accepted: give the CA that signed it as sslrootcert=FILE in guard.ledger, and name the host its certificate is for (docs/desk-mode.md). Exits and orders that only reduce a position still go through, journaled when it is back.";
const NO_TLS_HINT =
  "  The server does not offer TLS and the URL's sslmode asks for it: turn ssl on at the server, or remove sslmode from guard.ledger where plain connections are acceptable (docs/desk-mode.md). Exits and orders that only reduce a position still go through, journaled when it is back.";

const { home, cleanup } = tempHomes();
const certs = mkdtempSync(join(tmpdir(), 'trade-pg-certs-'));
const CA = join(certs, 'ca.crt');
const OTHER_CA = join(certs, 'other-ca.crt');
let cluster: Cluster;
let plain: TestDatabase;

function openssl(args: string[]): void {
  const run = spawnSyncRecorded('openssl', args, { cwd: certs, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`openssl ${args.join(' ')}: ${run.stderr}`);
}

beforeAll(async () => {
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.crt', '-days', '2', '-subj', '/CN=trade test desk CA']);
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'other-ca.key', '-out', 'other-ca.crt', '-days', '2', '-subj', '/CN=another CA']);
  openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1']);
  writeFileSync(join(certs, 'san.cnf'), 'subjectAltName = IP:127.0.0.1\n');
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'server.crt', '-days', '2', '-extfile', 'san.cnf']);
  [cluster, plain] = await Promise.all([
    startCluster({
      settings: ['ssl=on', 'ssl_cert_file=../server.crt', 'ssl_key_file=../server.key'],
      hba: ['hostnossl all desk_tls 127.0.0.1/32 reject', 'hostssl all desk_tls 127.0.0.1/32 scram-sha-256'],
      files: { 'server.crt': readFileSync(join(certs, 'server.crt'), 'utf8'), 'server.key': readFileSync(join(certs, 'server.key'), 'utf8') },
    }),
    testDatabase('plain'),
  ]);
  const admin = new pg.Client({ connectionString: cluster.adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE desk_tls LOGIN PASSWORD '${PASSWORD}'`);
    await admin.query('CREATE DATABASE desk OWNER desk_tls');
  } finally {
    await admin.end();
  }
}, 60_000);
afterAll(async () => {
  cluster?.destroy();
  await plain?.drop();
  await stopOwnCluster();
  rmSync(certs, { recursive: true, force: true });
  cleanup();
});

/** `trade guard init` with guard.ledger = the TLS server's desk database on `host`, `query` its parameters. */
function init(host: string, query: string) {
  const url = `postgres://desk_tls@${host}:${cluster.port}/desk${query}`;
  return runBin(['guard', 'init'], home({ TRADE_GUARD_LEDGER: url, PGPASSWORD: PASSWORD }));
}

describe('a desk ledger over TLS', () => {
  it('verify-full checks the certificate against sslrootcert and the host name against it', async () => {
    const made = await init('127.0.0.1', `?sslmode=verify-full&sslrootcert=${CA}`);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toBe(`The guard's ledger postgres://desk_tls@127.0.0.1:${cluster.port}/desk?sslmode=verify-full&sslrootcert=${CA} was created (schema 1).\n`);

    const otherName = await init('localhost', `?sslmode=verify-full&sslrootcert=${CA}`);
    expect(otherName.code).toBe(6);
    expect(otherName.stderr.split('\n')[1]).toBe(CERT_HINT);
    expect(otherName.stderr.split('\n')[0]).toBe(
      `Error: The guard's ledger postgres://desk_tls@localhost:${cluster.port}/desk?sslmode=verify-full&sslrootcert=${CA} cannot be used (Hostname/IP does not match certificate's altnames: Host: localhost. is not cert's CN: 127.0.0.1); nothing was sent.`,
    );
    // Without sslrootcert, the system's CAs: ours is not one of them.
    const unknownCa = await init('127.0.0.1', '?sslmode=verify-full');
    expect(unknownCa.code).toBe(6);
    expect(unknownCa.stderr.split('\n')[1]).toBe(CERT_HINT);
    expect(unknownCa.stderr.split('\n')[0]).toMatch(/^Error: The guard's ledger \S+ cannot be used \(unable to verify the first certificate\); nothing was sent\.$/);
  }, 60_000);

  it("README's setup as written, but for the server's address: config set, then guard init; the CA among the system's, the password from ~/.pgpass", async () => {
    const env = home({ NODE_EXTRA_CA_CERTS: CA });
    writeFileSync(join(env.HOME!, '.pgpass'), `127.0.0.1:${cluster.port}:desk:desk_tls:${PASSWORD}\n`, { mode: 0o600 });
    const url = `postgres://desk_tls@127.0.0.1:${cluster.port}/desk?sslmode=verify-full`;
    const set = await runBin(['config', 'set', 'guard.ledger', url], env);
    expect(set.code, set.stderr).toBe(0);
    const made = await runBin(['guard', 'init'], env);
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(new RegExp(`^The guard's ledger ${url.replace(/[?.]/g, '\\$&')} was (created \\(schema 1\\)|already at schema 1)\\.\n$`));
    const doctor = await runBin(['doctor'], env);
    expect(doctor.stdout).toMatch(new RegExp(`\n✔ ledger +${url.replace(/[?.]/g, '\\$&')}: reachable, schema 1, clock [+-]\\d+ ms against the server\n`));
  }, 60_000);

  it('verify-ca checks the certificate and not the name; require encrypts without checking', async () => {
    const ca = await init('localhost', `?sslmode=verify-ca&sslrootcert=${CA}`);
    expect(ca.code, ca.stderr).toBe(0);
    const otherCa = await init('localhost', `?sslmode=verify-ca&sslrootcert=${OTHER_CA}`);
    expect(otherCa.code).toBe(6);
    expect(otherCa.stderr.split('\n')[1]).toBe(CERT_HINT);
    expect(otherCa.stderr.split('\n')[0]).toMatch(/^Error: The guard's ledger \S+ cannot be used \(unable to verify the first certificate\); nothing was sent\.$/);
    expect(ca.stdout).toMatch(/ was (created \(schema 1\)|already at schema 1)\.\n$/);
    const encrypted = await init('127.0.0.1', '?sslmode=require');
    expect(encrypted.code, encrypted.stderr).toBe(0);
    expect(encrypted.stdout).toMatch(/ was (created \(schema 1\)|already at schema 1)\.\n$/);
  }, 60_000);

  it('a URL without sslmode is plain: a server that takes the role only over TLS turns it away', async () => {
    const cleartext = await init('127.0.0.1', '');
    expect(cleartext.code).toBe(6);
    expect(cleartext.stderr.split('\n')[0]).toMatch(
      /^Error: The guard's ledger postgres:\/\/desk_tls@127\.0\.0\.1:\d+\/desk cannot be used \(authentication failed: pg_hba\.conf rejects connection for host "127\.0\.0\.1", user "desk_tls", database "desk", no encryption\); nothing was sent\.$/,
    );
  }, 60_000);

  it('require and prefer never fall back to plain: a server without TLS fails closed', async () => {
    for (const mode of ['require', 'prefer']) {
      const url = `${plain.url}?sslmode=${mode}`;
      const run = await runBin(['guard', 'init'], home({ TRADE_GUARD_LEDGER: url }));
      expect(run.code).toBe(6);
      expect(run.stderr.split('\n')[1]).toBe(NO_TLS_HINT);
      expect(run.stderr.split('\n')[0]).toBe(
        `Error: The guard's ledger ${url.replace(/:[^:@/]+@/, '@')} cannot be used (The server does not support SSL connections); nothing was sent.`,
      );
    }
  }, 60_000);
});
