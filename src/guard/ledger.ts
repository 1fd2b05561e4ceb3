/**
 * The guard's ledger: the halt states, the orders each account sent (for the pace and duplicate
 * rules), the daily-loss latches, and the journal (every money-moving request that passed the
 * guard, with its outcome, and every refusal). One interface, two implementations:
 *
 * - SQLite (src/guard/sqlite-ledger.ts, the default): `guard.db` beside the engine's store,
 *   shared by every trade process of one machine.
 * - PostgreSQL (src/guard/postgres-ledger.ts, `guard.ledger postgres://…`): one ledger for every
 *   machine of a desk, so that a limit counts every machine's orders, a halt stops them all and
 *   the journal lists what each sent.
 *
 * Both give the same guarantees, checked by one conformance suite (test/guard/ledger-conformance
 * .test.ts): `exclusive` runs its work holding the ledger's one write lock (pace counts are exact
 * across processes and machines), `lockAccount` is the per-account lock held across the check,
 * the send and the record of an order that may add to a position, and a process (or a
 * connection) that goes away lets go of its locks and leaves its `sent` lines unknown. Any
 * failure of the ledger is a GuardError `guard_ledger` naming it: the guard fails closed.
 */
import { dirname, join } from 'node:path';
import { GuardError } from '../common/errors.js';
import type { AccountHold } from './account-locks.js';
import type { Halt, HaltMode } from './rules.js';

export type Outcome = 'sent' | 'accepted' | 'rejected' | 'refused' | 'unknown';

export interface JournalLine {
  id: number;
  at: string;
  profile: string;
  backend: string;
  source: string;
  operation: string;
  account: string | null;
  instrument: string | null;
  request: string;
  client_order_id: string | null;
  /** As stored; `lines()` reads a `sent` line whose process (or connection) is gone as `unknown`. */
  outcome: Outcome;
  order_id: string | null;
  message: string | null;
  rule: string | null;
  pid: number;
  /** The machine that sent it (guard.machine, default the host name); null on lines from before desk mode. */
  machine: string | null;
  done_at: string | null;
}

/** A line as the guard writes it: the outcome is known later (settle). */
export type NewJournalLine = Omit<JournalLine, 'id' | 'done_at' | 'order_id' | 'message' | 'rule' | 'machine'> &
  Partial<Pick<JournalLine, 'order_id' | 'message' | 'rule' | 'machine'>>;

export interface SettleFields {
  orderId?: string;
  message?: string;
  at: string;
}

/** What a ledger stores and reads; inside `exclusive`, under its write lock. */
export interface LedgerOps {
  halts(account: string | undefined, profile: string): Promise<Halt | undefined>;
  allHalts(): Promise<Halt[]>;
  setHalt(scope: string, mode: HaltMode, reason: string | undefined, at: string): Promise<void>;
  clearHalt(scope: string): Promise<number>;
  paceCounts(account: string, windowsMs: number[], nowMs: number): Promise<number[]>;
  /** Orders sent per account since `sinceMs` (`trade guard show`). */
  sentByAccount(sinceMs: number): Promise<Record<string, number>>;
  lastSent(fingerprint: string, sinceMs: number): Promise<number | undefined>;
  recordSend(account: string, nowMs: number, fingerprint: string): Promise<void>;
  lossDay(account: string, day: string): Promise<'latched' | 'resumed' | undefined>;
  setLossDay(account: string, day: string, state: 'latched' | 'resumed'): Promise<void>;
  journal(line: NewJournalLine): Promise<number>;
  settle(id: number, outcome: Outcome, fields: SettleFields): Promise<void>;
}

export interface LineFilter {
  since?: string;
  account?: string;
  /** Outcomes as read (an orphaned `sent` line is `unknown`). */
  outcomes?: Outcome[];
}

export interface Ledger extends LedgerOps {
  readonly kind: 'sqlite' | 'postgres';
  /** Where it is, for messages: the file, or the URL without its password. */
  readonly where: string;
  /** Runs `work` holding the ledger's write lock, in one transaction: all of it is stored, or none. */
  exclusive<T>(work: (tx: LedgerOps) => Promise<T>): Promise<T>;
  lines(filter: LineFilter): Promise<JournalLine[]>;
  /**
   * The account's lock, held across the check, the send and the record of an order that may add
   * to a position. Another ledger (another process or machine, or another ledger of this one)
   * holding it is waited for, at most `waitMs` (0: not at all): undefined when it was not let go
   * in that time. Calls through this ledger share one hold (the guard counts its own orders in
   * flight), let go when the last of them releases it. A process that exits or crashes lets go
   * of its holds with it: nothing is left to clean up.
   */
  lockAccount(account: string, waitMs: number): Promise<AccountHold | undefined>;
  /** Runs `work` holding the account's lock; a GuardError (`guard_account_lock`) when it is not free within `waitMs`. */
  withAccountLock<T>(account: string, work: () => Promise<T>, waitMs?: number): Promise<T>;
  close(): Promise<void>;
}

/** Which ledger to open: the machine's SQLite file, or a desk's PostgreSQL server. */
export type LedgerSpec =
  | { kind: 'sqlite'; file: string }
  | {
      kind: 'postgres';
      url: string;
      /** This machine's name in the journal. */
      machine: string;
      /** The data directory: what was sent while the server was unreachable waits there to be journaled. */
      dataDir: string;
      /** How long a statement (or a connection) may take before the ledger counts as unreachable. */
      timeoutMs: number;
    };

/** The machine's own ledger file beside the engine's store. */
export const ledgerPath = (storeFile: string): string => join(dirname(storeFile), 'guard.db');

/** The ledger a SQLite file is, or a spec as it is. */
export const specOf = (spec: LedgerSpec | string): LedgerSpec => (typeof spec === 'string' ? { kind: 'sqlite', file: spec } : spec);

/** Where a spec's ledger is, for messages: a URL is shown without its password. */
export function ledgerWhere(spec: LedgerSpec | string): string {
  const s = specOf(spec);
  return s.kind === 'sqlite' ? s.file : hidePassword(s.url);
}

/** `postgres://trade:secret@db/desk` → `postgres://trade@db/desk`: a password is never shown. */
export function hidePassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password) return url;
    parsed.password = '';
    return parsed.href;
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1@');
  }
}

/**
 * Opens the ledger (creating a SQLite one when missing; a PostgreSQL one must have been made by
 * `trade guard init`). Any failure is a GuardError `guard_ledger` (fail closed).
 */
export async function openLedger(spec: LedgerSpec | string): Promise<Ledger> {
  const s = specOf(spec);
  if (s.kind === 'sqlite') return (await import('./sqlite-ledger.js')).openSqliteLedger(s.file);
  return (await import('./postgres-ledger.js')).openPostgresLedger(s);
}

/** Creates or migrates the ledger's schema (`trade guard init`): safe to run twice, and from two machines at once. */
export async function initLedger(spec: LedgerSpec | string): Promise<{ where: string; version: number; from: number }> {
  const s = specOf(spec);
  if (s.kind === 'sqlite') return (await import('./sqlite-ledger.js')).initSqliteLedger(s.file);
  return (await import('./postgres-ledger.js')).initPostgresLedger(s);
}

/**
 * One thing at a time on the connection: a transaction awaits its work between its BEGIN and its
 * COMMIT, and nothing else of this process may run on the connection meanwhile (it would join the
 * transaction, or try to BEGIN inside it).
 */
export function createSerial() {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(work: () => Promise<T> | T): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => undefined);
    return run;
  };
}

/** Was this error the ledger failing (unreachable, too slow, damaged), rather than a rule or the lock? */
export const isLedgerFailure = (error: unknown): error is GuardError => error instanceof GuardError && error.code === 'guard_ledger';
