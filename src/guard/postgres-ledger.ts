/**
 * The guard's ledger on PostgreSQL (desk mode, `guard.ledger postgres://…`; src/guard/ledger.ts has
 * the interface): one ledger for every machine that trades the same accounts, in the schema
 * `trade_guard` of the database the URL names, made by `trade guard init`.
 *
 * The same guarantees as the SQLite ledger, from the server's own locks:
 * - `exclusive` is a transaction that first takes one advisory transaction lock (the ledger's
 *   write lock, SQLite's BEGIN IMMEDIATE): pace counts and the duplicate window are exact across
 *   machines.
 * - `lockAccount` is a session advisory lock per account on a connection of its own, tried again
 *   every few milliseconds until the wait is over. A process that dies, or whose connection is
 *   lost, lets go of it with its connection.
 * - Each connection holds a session lock of its own too, named in the lines it journals: a `sent`
 *   line whose session lock is gone (the process died, or lost the server after sending) reads
 *   `unknown`, for `trade reconcile` on any machine.
 *
 * Every statement has a time limit (statement_timeout on the server, a read timeout here): a
 * server that is unreachable or too slow is a GuardError `guard_ledger` like a damaged SQLite file,
 * and the guard fails closed. The password comes from the URL, PGPASSWORD or ~/.pgpass (PGPASSFILE)
 * and is never printed: messages name the URL without it. TLS is as the URL's sslmode says, with
 * libpq's meaning (disable; require and prefer: encrypted; verify-ca, verify-full: the server's
 * certificate checked against sslrootcert or the system's CAs).
 */
import { createHash, randomInt } from 'node:crypto';
import type { Client as PgClient, ClientConfig, QueryResult, QueryResultRow } from 'pg';
import { GuardError } from '../common/errors.js';
import { type AccountHold, heldWhile } from './account-locks.js';
import { createSerial, hidePassword, type JournalLine, type Ledger, type LedgerOps, type LedgerSpec, type NewJournalLine } from './ledger.js';
import type { Halt, HaltMode } from './rules.js';
import { claimSpool, createSpool, type SpooledLine, type SpooledOutcome } from './spool.js';
import { monotonicMs } from '../common/monotonic.js';

type PostgresSpec = Extract<LedgerSpec, { kind: 'postgres' }>;

/** The schema's version; `trade guard init` brings a server's up to it. */
export const PG_SCHEMA_VERSION = 1;

/** The advisory lock spaces of trade (the first key of the two-key form): 'trd1', 'trd2', 'trd3'. */
const WRITE_SPACE = 0x74726431;
const ACCOUNT_SPACE = 0x74726432;
const SESSION_SPACE = 0x74726433;
/** Within WRITE_SPACE: the write lock, and the lock `trade guard init` migrates under. */
const WRITE_KEY = 0;
const INIT_KEY = 1;

const MIGRATIONS: Record<number, string> = {
  1: `
CREATE SCHEMA IF NOT EXISTS trade_guard;
CREATE TABLE IF NOT EXISTS trade_guard.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS trade_guard.halts (
  scope text PRIMARY KEY,
  mode text NOT NULL CHECK (mode IN ('halted', 'reducing')),
  reason text,
  at text NOT NULL
);
CREATE TABLE IF NOT EXISTS trade_guard.sends (
  account text NOT NULL,
  at bigint NOT NULL,
  fingerprint text NOT NULL
);
CREATE INDEX IF NOT EXISTS sends_by_account ON trade_guard.sends(account, at);
CREATE INDEX IF NOT EXISTS sends_by_fingerprint ON trade_guard.sends(fingerprint, at);
CREATE TABLE IF NOT EXISTS trade_guard.loss_days (
  account text NOT NULL,
  day text NOT NULL,
  state text NOT NULL CHECK (state IN ('latched', 'resumed')),
  PRIMARY KEY (account, day)
);
CREATE TABLE IF NOT EXISTS trade_guard.journal (
  id bigserial PRIMARY KEY,
  at text NOT NULL,
  profile text NOT NULL,
  backend text NOT NULL,
  source text NOT NULL,
  operation text NOT NULL,
  account text,
  instrument text,
  request text NOT NULL,
  client_order_id text,
  outcome text NOT NULL CHECK (outcome IN ('sent', 'accepted', 'rejected', 'refused', 'unknown')),
  order_id text,
  message text,
  rule text,
  pid integer NOT NULL,
  machine text,
  -- The session lock of the connection that journaled it (see above); null when spooled.
  session integer,
  -- The spool's key of a line sent while the server was unreachable: stored once.
  spool_key text UNIQUE,
  done_at text
);
CREATE INDEX IF NOT EXISTS journal_by_time ON trade_guard.journal(at);
`,
};

const STILL_PASS = 'Exits and orders that only reduce a position still go through, journaled when it is back.';

/** What to do about it: a TLS refusal is the URL's or the server's to fix, anything else the server's reachability. */
function hintFor(cause: unknown): string {
  const e = cause as { code?: string; message?: string } | undefined;
  if (/does not support SSL/i.test(e?.message ?? ''))
    return `The server does not offer TLS and the URL's sslmode asks for it: turn ssl on at the server, or remove sslmode from guard.ledger where plain connections are acceptable (docs/desk-mode.md). ${STILL_PASS}`;
  if (/CERT|SELF_SIGNED|UNABLE_TO_(VERIFY|GET)/.test(e?.code ?? ''))
    return `The server's TLS certificate was not accepted: give the CA that signed it as sslrootcert=FILE in guard.ledger, and name the host its certificate is for (docs/desk-mode.md). ${STILL_PASS}`;
  return `Check that the desk's PostgreSQL server is up and reachable from this machine (trade doctor checks it). ${STILL_PASS}`;
}

/** The message and hint of a ledger that cannot be used: fail closed. */
export function failClosed(where: string, why: string, cause?: unknown): GuardError {
  return new GuardError(`The guard's ledger ${where} cannot be used (${why}); nothing was sent.`, { code: 'guard_ledger', hint: hintFor(cause), cause });
}

/** What went wrong, in words, without the password (pg's messages never hold it; the URL does). */
function why(error: unknown, timeoutMs: number): string {
  const e = error as { code?: string; message?: string };
  if (e.code === '57014' || /timeout|timed out/i.test(e.message ?? '')) return `no answer within ${timeoutMs / 1000} s`;
  if (e.code === 'ECONNREFUSED') return 'connection refused';
  if (e.code === 'ENOTFOUND' || e.code === 'EAI_AGAIN') return 'host not found';
  if (e.code === '28P01' || e.code === '28000') return `authentication failed: ${e.message}`;
  if (/password must be a string|SASL/i.test(e.message ?? '')) return 'the server asks for a password and none was found in the URL, PGPASSWORD or ~/.pgpass';
  return e.message ?? String(error);
}

/** pg's client config from the URL: libpq's sslmode meanings, the password looked up as libpq does, time limits. */
async function clientConfig(spec: PostgresSpec, purpose: string): Promise<ClientConfig> {
  const { parse } = (await import('pg-connection-string')).default;
  const parsed = parse(spec.url, { useLibpqCompat: true }) as Record<string, unknown>;
  const fromUrl = typeof parsed.password === 'string' && parsed.password !== '' ? parsed.password : undefined;
  delete parsed.password;
  const config: ClientConfig = {
    ...(parsed as ClientConfig),
    port: parsed.port ? Number(parsed.port) : undefined,
    // None found: undefined, and the server's request for one fails (pg reads no ~/.pgpass of its own then).
    password: (async () => fromUrl ?? process.env.PGPASSWORD ?? (await fromPgpass(parsed))) as () => Promise<string>,
    application_name: `trade ${purpose} (${spec.machine})`.slice(0, 63),
    connectionTimeoutMillis: spec.timeoutMs,
    statement_timeout: spec.timeoutMs,
    // A server that stops answering mid-statement: given up here (a black hole sends no reset).
    query_timeout: spec.timeoutMs + 1000,
    // A process stopped in a transaction (the ledger's write lock held) is let go by the server.
    idle_in_transaction_session_timeout: Math.max(2 * spec.timeoutMs, 10_000),
    keepAlive: true,
  };
  return config;
}

async function fromPgpass(parsed: Record<string, unknown>): Promise<string | undefined> {
  // pgpass (pg's own reader of ~/.pgpass) ships no types.
  type PgPass = (info: Record<string, string | undefined>, callback: (password: string | undefined) => void) => void;
  const { default: pgpass } = (await import('pgpass' as string)) as { default: PgPass };
  const info = {
    host: (parsed.host as string | undefined) ?? 'localhost',
    port: String(parsed.port ?? 5432),
    database: (parsed.database as string | undefined) ?? (parsed.user as string | undefined),
    user: (parsed.user as string | undefined) ?? process.env.USER,
  };
  return new Promise((resolve) => pgpass(info, (password: string | undefined) => resolve(password)));
}

async function connect(spec: PostgresSpec, purpose: string): Promise<PgClient> {
  const { Client } = (await import('pg')).default;
  const client = new Client(await clientConfig(spec, purpose));
  // A connection lost while idle is an 'error' event: noted by the next query, never a crash.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
  return client;
}

/** The schema's version on the server: 0 when `trade guard init` never ran there. */
async function versionOn(client: PgClient): Promise<number> {
  const found = await client.query<{ exists: boolean }>("SELECT to_regclass('trade_guard.meta') IS NOT NULL AS exists");
  if (!found.rows[0]!.exists) return 0;
  const row = await client.query<{ value: string }>("SELECT value FROM trade_guard.meta WHERE key = 'schema_version'");
  return Number(row.rows[0]?.value ?? 0);
}

/** `trade guard init`: the schema made or brought up to date, under a lock (two machines at once: one migrates, the other finds it done). */
export async function initPostgresLedger(spec: PostgresSpec): Promise<{ where: string; version: number; from: number }> {
  const where = hidePassword(spec.url);
  let client: PgClient | undefined;
  try {
    client = await connect(spec, 'guard init');
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [WRITE_SPACE, INIT_KEY]);
    const from = await versionOn(client);
    if (from > PG_SCHEMA_VERSION) throw new Error(`it was made by a newer trade (ledger schema ${from})`);
    for (let v = from + 1; v <= PG_SCHEMA_VERSION; v++) await client.query(MIGRATIONS[v]!);
    await client.query(
      "INSERT INTO trade_guard.meta(key, value) VALUES ('schema_version', $1) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
      [String(PG_SCHEMA_VERSION)],
    );
    await client.query('COMMIT');
    return { where, version: PG_SCHEMA_VERSION, from };
  } catch (error) {
    await client?.query('ROLLBACK').catch(() => undefined);
    throw failClosed(where, why(error, spec.timeoutMs), error);
  } finally {
    await client?.end().catch(() => undefined);
  }
}

/** `trade doctor`: reachable, the schema's version, and the server's clock against this machine's. */
export async function probePostgresLedger(spec: PostgresSpec): Promise<{ version: number; current: number; skewMs: number }> {
  const where = hidePassword(spec.url);
  let client: PgClient | undefined;
  try {
    client = await connect(spec, 'doctor');
    const version = await versionOn(client);
    const before = Date.now();
    const row = await client.query<{ now: string }>("SELECT (extract(epoch from clock_timestamp()) * 1000)::text AS now");
    const after = Date.now();
    const skewMs = Number(row.rows[0]!.now) - (before + after) / 2;
    return { version, current: PG_SCHEMA_VERSION, skewMs };
  } catch (error) {
    throw failClosed(where, why(error, spec.timeoutMs), error);
  } finally {
    await client?.end().catch(() => undefined);
  }
}

type HaltRow = { scope: string; mode: HaltMode; reason: string | null; at: string };
const toHalt = (row: HaltRow): Halt => ({ scope: row.scope, mode: row.mode, reason: row.reason ?? undefined, at: row.at });

/** ASCII case folded, as the SQLite ledger's locks: one lock serves both spellings of an account. */
const lockKey = (account: string) => account.replace(/[A-Z]+/g, (l) => l.toLowerCase());
/** An account's key in ACCOUNT_SPACE: 31 bits of a hash of its name. */
const accountKey = (account: string) => createHash('sha256').update(lockKey(account)).digest().readUInt32BE(0) & 0x7fffffff;

const JOURNAL_COLUMNS = ['at', 'profile', 'backend', 'source', 'operation', 'account', 'instrument', 'request', 'client_order_id', 'outcome', 'order_id', 'message', 'rule', 'pid', 'machine'] as const;

/** Opens the desk's ledger: connects, checks the schema, and journals what this machine spooled while it was away. */
export async function openPostgresLedger(spec: PostgresSpec): Promise<Ledger> {
  const where = hidePassword(spec.url);
  const fail = (error: unknown) => (error instanceof GuardError ? error : failClosed(where, why(error, spec.timeoutMs), error));

  /** The connection for statements, and its session lock's key; made again after it is lost. */
  let main: { client: PgClient; session: number } | undefined;
  async function mainClient() {
    if (main) return main;
    const client = await connect(spec, 'guard');
    try {
      const version = await versionOn(client);
      if (version === 0) throw new GuardError(`The guard's ledger ${where} has no schema yet; nothing was sent.`, { code: 'guard_ledger', hint: 'Run `trade guard init` once (from any machine of the desk).' });
      if (version > PG_SCHEMA_VERSION)
        throw new GuardError(`The guard's ledger ${where} was made by a newer trade (schema ${version}); nothing was sent.`, { code: 'guard_ledger', hint: 'Update trade on this machine.' });
      if (version < PG_SCHEMA_VERSION)
        throw new GuardError(`The guard's ledger ${where} has schema ${version}, this trade needs ${PG_SCHEMA_VERSION}; nothing was sent.`, { code: 'guard_ledger', hint: 'Run `trade guard init` to migrate it.' });
      let session: number;
      // A key no other connection holds (a clash is one in two billion: tried again).
      do session = randomInt(1, 0x7fffffff);
      while (!(await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS ok', [SESSION_SPACE, session])).rows[0]!.ok);
      main = { client, session };
      return main;
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
  }
  /** A connection that failed is let go: the next statement connects again (its `sent` lines read unknown meanwhile). */
  async function drop() {
    const lost = main;
    main = undefined;
    await lost?.client.end().catch(() => undefined);
  }

  /** The connection failed (or a statement did): it is let go after the call, and made again at the next. */
  let broken = false;
  /** One statement; a failure of it is the ledger's (GuardError guard_ledger), and the connection is made again. */
  async function q<R extends QueryResultRow>(client: PgClient, sql: string, params?: unknown[]): Promise<QueryResult<R>> {
    try {
      return await client.query<R>(sql, params);
    } catch (error) {
      broken = true;
      throw fail(error);
    }
  }

  const opsOn = (client: PgClient, session: number): LedgerOps => ({
    async halts(account, profile) {
      const scopes = account !== undefined ? [`account:${account}`, `profile:${profile}`] : [`profile:${profile}`];
      const rows = (await q<HaltRow>(client, 'SELECT * FROM trade_guard.halts WHERE scope = ANY($1)', [scopes])).rows;
      // The account's own state first, then the profile's.
      const row = scopes.map((scope) => rows.find((r) => r.scope === scope)).find((r) => r !== undefined);
      return row ? toHalt(row) : undefined;
    },
    allHalts: async () => (await q<HaltRow>(client, 'SELECT * FROM trade_guard.halts ORDER BY scope')).rows.map(toHalt),
    async setHalt(scope, mode, reason, at) {
      await q(client, 
        'INSERT INTO trade_guard.halts(scope, mode, reason, at) VALUES ($1, $2, $3, $4) ON CONFLICT (scope) DO UPDATE SET mode = excluded.mode, reason = excluded.reason, at = excluded.at',
        [scope, mode, reason ?? null, at],
      );
    },
    clearHalt: async (scope) => (await q(client, 'DELETE FROM trade_guard.halts WHERE scope = $1', [scope])).rowCount ?? 0,
    async paceCounts(account, windowsMs, nowMs) {
      if (windowsMs.length === 0) return [];
      const counts = windowsMs.map((_, i) => `count(*) FILTER (WHERE at > $${i + 2})::int AS n${i}`).join(', ');
      const row = (await q<Record<string, number>>(client, `SELECT ${counts} FROM trade_guard.sends WHERE account = $1`, [account, ...windowsMs.map((ms) => nowMs - ms)])).rows[0]!;
      return windowsMs.map((_, i) => row[`n${i}`]!);
    },
    async sentByAccount(sinceMs) {
      const rows = (await q<{ account: string; n: number }>(client, 'SELECT account, count(*)::int AS n FROM trade_guard.sends WHERE at > $1 GROUP BY account ORDER BY account', [sinceMs])).rows;
      return Object.fromEntries(rows.map((row) => [row.account, row.n]));
    },
    async lastSent(fp, sinceMs) {
      const at = (await q<{ at: string | null }>(client, 'SELECT max(at)::text AS at FROM trade_guard.sends WHERE fingerprint = $1 AND at > $2', [fp, sinceMs])).rows[0]?.at;
      return at === null || at === undefined ? undefined : Number(at);
    },
    async recordSend(account, nowMs, fp) {
      await q(client, 'INSERT INTO trade_guard.sends(account, at, fingerprint) VALUES ($1, $2, $3)', [account, nowMs, fp]);
      // Sends older than the longest window any rule may have (7 days) are of no use.
      if (Math.random() < 0.001) await q(client, 'DELETE FROM trade_guard.sends WHERE at < $1', [nowMs - 8 * 86_400_000]);
    },
    lossDay: async (account, day) =>
      (await q<{ state: 'latched' | 'resumed' }>(client, 'SELECT state FROM trade_guard.loss_days WHERE account = $1 AND day = $2', [account, day])).rows[0]?.state,
    async setLossDay(account, day, state) {
      await q(client, 
        'INSERT INTO trade_guard.loss_days(account, day, state) VALUES ($1, $2, $3) ON CONFLICT (account, day) DO UPDATE SET state = excluded.state',
        [account, day, state],
      );
    },
    journal: async (line) => insertLine((sql, params) => q(client, sql, params), line, session, null),
    async settle(id, outcome, fields) {
      await q(client, 'UPDATE trade_guard.journal SET outcome = $1, order_id = coalesce($2, order_id), message = $3, done_at = $4 WHERE id = $5', [
        outcome,
        fields.orderId ?? null,
        fields.message ?? null,
        fields.at,
        id,
      ]);
    },
  });

  const serial = createSerial();
  /** Runs `work` on the connection (one at a time); a failure of the server is the ledger's, and the connection is made again. */
  const use = <T>(work: (client: PgClient, session: number) => Promise<T>): Promise<T> =>
    serial(async () => {
      let opened;
      try {
        opened = await mainClient();
      } catch (error) {
        throw fail(error);
      }
      try {
        return await work(opened.client, opened.session);
      } finally {
        if (broken) {
          broken = false;
          await drop();
        }
      }
    });
  const outside = Object.fromEntries(
    Object.keys(opsOn(undefined as unknown as PgClient, 0)).map((name) => [
      name,
      (...args: unknown[]) => use((client, session) => (opsOn(client, session) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>)[name]!(...args)),
    ]),
  ) as unknown as LedgerOps;

  async function exclusive<T>(work: (tx: LedgerOps) => Promise<T>): Promise<T> {
    return use(async (client, session) => {
      await q(client, 'BEGIN');
      try {
        await q(client, 'SELECT pg_advisory_xact_lock($1, $2)', [WRITE_SPACE, WRITE_KEY]);
        const result = await work(opsOn(client, session));
        await q(client, 'COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  // Connected and checked now: a ledger that cannot be used refuses at once (fail closed).
  await use(async () => undefined);
  await drain(spec, (work) => use((client) => work((sql, params) => q(client, sql, params))));

  const locks = createPgAccountLocks(spec, fail);
  return {
    kind: 'postgres',
    where,
    ...outside,
    exclusive,
    lines: (filter) =>
      use(async (client) => {
        const where: string[] = [];
        const params: unknown[] = [];
        if (filter.since) where.push(`at >= $${params.push(filter.since)}`);
        if (filter.account) where.push(`account = $${params.push(filter.account)}`);
        const wanted = filter.outcomes;
        if (wanted) where.push(`outcome = ANY($${params.push([...new Set(wanted.flatMap((o) => (o === 'unknown' ? ['unknown', 'sent'] : [o])))])})`);
        const rows = (await q<JournalLine & { session: number | null; id: string }>(client, 
          `SELECT id, ${JOURNAL_COLUMNS.join(', ')}, done_at, session FROM trade_guard.journal ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id`,
          params,
        )).rows;
        // A `sent` line whose connection's session lock is gone: its process died or lost the server after sending.
        const live = new Set(
          rows.some((r) => r.outcome === 'sent')
            ? (await q<{ objid: number }>(client, 
                "SELECT objid::int AS objid FROM pg_locks WHERE locktype = 'advisory' AND classid::int = $1 AND objsubid = 2 AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                [SESSION_SPACE],
              )).rows.map((r) => r.objid)
            : [],
        );
        return rows
          .map(({ session, ...line }) => ({
            ...line,
            id: Number(line.id),
            outcome: line.outcome === 'sent' && (session === null || !live.has(session)) ? ('unknown' as const) : line.outcome,
          }))
          .filter((line) => !wanted || wanted.includes(line.outcome));
      }),
    lockAccount: (account, waitMs) => locks.lock(account, waitMs),
    withAccountLock: (account, work, waitMs) => heldWhile(locks.lock, account, work, waitMs),
    close: () =>
      serial(async () => {
        await locks.close();
        await drop();
      }),
  };
}

type Query = <R extends QueryResultRow>(sql: string, params?: unknown[]) => Promise<QueryResult<R>>;

async function insertLine(query: Query, line: NewJournalLine, session: number | null, spoolKey: string | null): Promise<number> {
  const full: Record<string, unknown> = { order_id: null, message: null, rule: null, machine: null, ...line };
  const values = JOURNAL_COLUMNS.map((c) => full[c] ?? null);
  const row = await query<{ id: string }>(
    `INSERT INTO trade_guard.journal(${JOURNAL_COLUMNS.join(', ')}, session, spool_key)
     VALUES (${JOURNAL_COLUMNS.map((_, i) => `$${i + 1}`).join(', ')}, $${JOURNAL_COLUMNS.length + 1}, $${JOURNAL_COLUMNS.length + 2})
     ON CONFLICT (spool_key) DO NOTHING RETURNING id`,
    [...values, session, spoolKey],
  );
  if (row.rows[0]) return Number(row.rows[0].id);
  // Stored by an earlier drain that was cut short.
  return Number((await query<{ id: string }>('SELECT id FROM trade_guard.journal WHERE spool_key = $1', [spoolKey])).rows[0]!.id);
}

/**
 * What this machine sent while the server was unreachable (src/guard/spool.ts), journaled now:
 * each spool file in one transaction, then removed. An outcome whose line is in a file not yet
 * drained (another process's, claimed at the same time) waits in the spool for the next drain.
 */
async function drain(spec: PostgresSpec, use: <T>(work: (query: Query) => Promise<T>) => Promise<T>): Promise<void> {
  const dir = `${spec.dataDir}/guard-spool`;
  for (const claimed of claimSpool(dir)) {
    const later: SpooledOutcome[] = [];
    try {
      await use(async (query) => {
        await query('BEGIN');
        try {
          await query('SELECT pg_advisory_xact_lock($1, $2)', [WRITE_SPACE, WRITE_KEY]);
          const ids = new Map<string, number>();
          for (const entry of claimed.entries.filter((e): e is SpooledLine => e.type === 'line')) ids.set(entry.key, await insertLine(query, entry.line, null, entry.key));
          for (const entry of claimed.entries.filter((e): e is SpooledOutcome => e.type === 'settle')) {
            let id = 'id' in entry.ref ? entry.ref.id : ids.get(entry.ref.key);
            if (id === undefined && 'key' in entry.ref)
              id = Number((await query<{ id: string }>('SELECT id FROM trade_guard.journal WHERE spool_key = $1', [entry.ref.key])).rows[0]?.id ?? NaN) || undefined;
            if (id === undefined) {
              later.push(entry);
              continue;
            }
            await query('UPDATE trade_guard.journal SET outcome = $1, order_id = coalesce($2, order_id), message = $3, done_at = $4 WHERE id = $5', [
              entry.outcome,
              entry.fields.orderId ?? null,
              entry.fields.message ?? null,
              entry.fields.at,
              Number(id),
            ]);
          }
          await query('COMMIT');
        } catch (error) {
          await query('ROLLBACK').catch(() => undefined);
          throw error;
        }
      });
    } catch (error) {
      claimed.giveBack();
      throw error;
    }
    claimed.done();
    if (later.length > 0) {
      const again = createSpool(dir, spec.machine);
      for (const entry of later) again.settle(entry.ref, entry.outcome, entry.fields);
    }
  }
}

/**
 * The per-account locks on PostgreSQL: a session advisory lock per account (ACCOUNT_SPACE, a hash
 * of its name), on a connection of their own so that a wait never holds up the ledger's
 * statements. As on SQLite: calls of this ledger share a hold, a busy lock is tried again every
 * few milliseconds until the wait is over, and the last release lets it go.
 */
function createPgAccountLocks(spec: PostgresSpec, fail: (error: unknown) => GuardError) {
  type Entry = { key: number; holders: number; held: boolean; taking?: Promise<boolean> };
  const entries = new Map<string, Entry>();
  let client: Promise<PgClient> | undefined;
  const serial = createSerial();
  const lockClient = () =>
    (client ??= connect(spec, 'guard locks').catch((error: unknown) => {
      client = undefined;
      throw error;
    }));
  async function query(sql: string, key: number): Promise<boolean> {
    return serial(async () => {
      try {
        const c = await lockClient();
        return (await c.query<{ ok: boolean }>(sql, [ACCOUNT_SPACE, key])).rows[0]!.ok;
      } catch (error) {
        // The connection is gone, and every hold of it with it.
        const lost = client;
        client = undefined;
        for (const entry of entries.values()) entry.held = false;
        await lost?.then((c) => c.end()).catch(() => undefined);
        throw fail(error);
      }
    });
  }
  const tryTake = async (entry: Entry) => (entry.held = await query('SELECT pg_try_advisory_lock($1, $2) AS ok', entry.key));
  async function take(entry: Entry, waitMs: number): Promise<boolean> {
    const deadline = monotonicMs() + waitMs;
    for (let pause = 2; ; pause = Math.min(pause * 2, 25)) {
      if (await tryTake(entry)) return true;
      const left = deadline - monotonicMs();
      if (left <= 0) return false;
      await new Promise((resolve) => setTimeout(resolve, Math.min(pause, left)));
    }
  }
  const holdOf = (entry: Entry): AccountHold => {
    let released = false;
    return {
      release() {
        if (released) return;
        released = true;
        if (--entry.holders > 0 || !entry.held) return;
        entry.held = false;
        void query('SELECT pg_advisory_unlock($1, $2) AS ok', entry.key).catch(() => undefined);
      },
    };
  };
  return {
    async lock(account: string, waitMs: number): Promise<AccountHold | undefined> {
      const name = lockKey(account);
      let entry = entries.get(name);
      if (!entry) entries.set(name, (entry = { key: accountKey(account), holders: 0, held: false }));
      // Held by this ledger (or just taken, its taker not yet back): shared.
      if (entry.holders > 0 && entry.held) {
        entry.holders++;
        return holdOf(entry);
      }
      if (entry.taking === undefined) {
        const first = entry;
        entry.taking = (async () => (await tryTake(first)) || (waitMs > 0 && (await take(first, waitMs))))().finally(() => (first.taking = undefined));
      } else if (waitMs <= 0) return undefined;
      // A call of this ledger already taking it: this one waits with it, and shares what it gets.
      if (!(await entry.taking)) return undefined;
      entry.holders++;
      return holdOf(entry);
    },
    async close() {
      const c = client;
      client = undefined;
      await c?.then((open) => open.end()).catch(() => undefined);
    },
  };
}
