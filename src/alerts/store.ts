/**
 * What the webhook of `trade serve` keeps between requests (webhook-reference.md §3.14, §4.7,
 * §4.11, §4.14, §6.2): the kill switch, the rate limit's counts, the strategy locks, the timers
 * (limit-order timeouts and brackets held for their entry's fill) and the Alert History. Kept in
 * tables of the engine's own store file, through a connection of its own, so a sandbox snapshot
 * holds them, a restore brings them back and a reset empties them, with the orders they refer to.
 */
import Database from 'better-sqlite3';

/** Alert History keeps 7 days or 10,000 rows, whichever is fewer (§6.2 [decision]). */
export const HISTORY_DAYS = 7;
export const HISTORY_ROWS = 10_000;

export type HistoryStatus = 'success' | 'pending' | 'warning' | 'failed';

/** One Alert History row (§6.2). */
export interface HistoryRow {
  id: string;
  multiAccountId?: string;
  receivedAt: string;
  forwardedAt?: string;
  durationMs: number;
  status: HistoryStatus;
  command?: string;
  account?: string;
  instrument?: string;
  /** The message as received, its key replaced by `***`. */
  raw: string;
  /** The fields as parsed, the key left out. */
  fields: Record<string, string>;
  ignoredFields: string[];
  orderIds: string[];
  error?: string;
  detail?: string;
  notes?: string;
  warning?: string;
}

export interface Timer {
  seq: number;
  kind: 'cancel_after' | 'bracket';
  dueMs: number;
  account: string;
  orderId: string;
  /** A held bracket's legs, as JSON. */
  data?: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS alert_history (
  seq INTEGER PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  received_at TEXT NOT NULL,
  status TEXT NOT NULL,
  row TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS alert_state (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS alert_rate (id TEXT NOT NULL, at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS alert_rate_by_id ON alert_rate(id, at);
CREATE TABLE IF NOT EXISTS alert_locks (account TEXT NOT NULL, instrument TEXT NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (account, instrument));
CREATE TABLE IF NOT EXISTS alert_timers (
  seq INTEGER PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('cancel_after', 'bracket')),
  due INTEGER NOT NULL,
  account TEXT NOT NULL,
  order_id TEXT NOT NULL,
  data TEXT
);
`;

export interface AlertStore {
  killSwitch(): boolean;
  setKillSwitch(on: boolean): void;
  /** Counts an alert of `id` unless `count` passed within `windowMs` before `nowMs` (a sliding window). */
  takeRate(id: string, count: number, windowMs: number, nowMs: number): boolean;
  lockOwner(account: string, instrument: string): string | undefined;
  claimLock(account: string, instrument: string, tag: string): void;
  releaseLock(account: string, instrument: string): void;
  addTimer(timer: Omit<Timer, 'seq'>): void;
  /** The timers due at `nowMs` (kind `bracket` is always due: it waits on a fill, not a time). */
  dueTimers(nowMs: number): Timer[];
  removeTimer(seq: number): void;
  /** Adds or replaces a row (by id); old rows beyond the retention go. */
  putHistory(row: HistoryRow): void;
  history(filter?: { status?: HistoryStatus; limit?: number }): HistoryRow[];
  close(): void;
}

/**
 * Opens the webhook's tables in the engine's store file (`:memory:`: a memory database of their
 * own, which snapshots then do not hold).
 */
export function openAlertStore(file: string, now: () => Date = () => new Date()): AlertStore {
  const db = new Database(file);
  db.pragma('busy_timeout = 15000');
  if (file !== ':memory:' && db.pragma('journal_mode', { simple: true }) !== 'wal') db.pragma('journal_mode = WAL');
  db.exec(SCHEMA);
  const q = {
    state: db.prepare<[string], { value: string }>('SELECT value FROM alert_state WHERE name = ?'),
    setState: db.prepare<[string, string]>('INSERT OR REPLACE INTO alert_state(name, value) VALUES (?, ?)'),
    rateCount: db.prepare<[string, number], { n: number }>('SELECT count(*) AS n FROM alert_rate WHERE id = ? AND at > ?'),
    rateAdd: db.prepare<[string, number]>('INSERT INTO alert_rate(id, at) VALUES (?, ?)'),
    ratePrune: db.prepare<[number]>('DELETE FROM alert_rate WHERE at <= ?'),
    lock: db.prepare<[string, string], { tag: string }>('SELECT tag FROM alert_locks WHERE account = ? AND instrument = ?'),
    claim: db.prepare<[string, string, string]>('INSERT OR REPLACE INTO alert_locks(account, instrument, tag) VALUES (?, ?, ?)'),
    release: db.prepare<[string, string]>('DELETE FROM alert_locks WHERE account = ? AND instrument = ?'),
    addTimer: db.prepare<[string, number, string, string, string | null]>('INSERT INTO alert_timers(kind, due, account, order_id, data) VALUES (?, ?, ?, ?, ?)'),
    due: db.prepare<[number], { seq: number; kind: Timer['kind']; due: number; account: string; order_id: string; data: string | null }>(
      "SELECT * FROM alert_timers WHERE due <= ? OR kind = 'bracket' ORDER BY seq",
    ),
    removeTimer: db.prepare<[number]>('DELETE FROM alert_timers WHERE seq = ?'),
    putHistory: db.prepare<[string, string, string, string]>(
      `INSERT INTO alert_history(id, received_at, status, row) VALUES (?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET status = excluded.status, row = excluded.row`,
    ),
    pruneAge: db.prepare<[string]>('DELETE FROM alert_history WHERE received_at < ?'),
    pruneCount: db.prepare<[number]>('DELETE FROM alert_history WHERE seq <= (SELECT max(seq) FROM alert_history) - ?'),
  };
  // A rate limit's window is at most a day (§4.11): counts older than that are of no use.
  const DAY_MS = 86_400_000;
  let sincePrune = 0;
  const takeRate = db.transaction((id: string, count: number, windowMs: number, nowMs: number): boolean => {
    if (q.rateCount.get(id, nowMs - windowMs)!.n >= count) return false;
    q.rateAdd.run(id, nowMs);
    if (++sincePrune >= 1000) {
      sincePrune = 0;
      q.ratePrune.run(nowMs - DAY_MS);
    }
    return true;
  });
  return {
    killSwitch: () => q.state.get('kill_switch')?.value === 'on',
    setKillSwitch: (on) => void q.setState.run('kill_switch', on ? 'on' : 'off'),
    takeRate: (id, count, windowMs, nowMs) => takeRate.immediate(id, count, windowMs, nowMs) as boolean,
    lockOwner: (account, instrument) => q.lock.get(account, instrument)?.tag,
    claimLock: (account, instrument, tag) => void q.claim.run(account, instrument, tag),
    releaseLock: (account, instrument) => void q.release.run(account, instrument),
    addTimer: (timer) => void q.addTimer.run(timer.kind, timer.dueMs, timer.account, timer.orderId, timer.data ?? null),
    dueTimers: (nowMs) =>
      q.due.all(nowMs).map((r) => ({ seq: r.seq, kind: r.kind, dueMs: r.due, account: r.account, orderId: r.order_id, ...(r.data === null ? {} : { data: r.data }) })),
    removeTimer: (seq) => void q.removeTimer.run(seq),
    putHistory(row) {
      q.putHistory.run(row.id, row.receivedAt, row.status, JSON.stringify(row));
      q.pruneAge.run(new Date(now().getTime() - HISTORY_DAYS * DAY_MS).toISOString());
      q.pruneCount.run(HISTORY_ROWS);
    },
    history(filter = {}) {
      const limit = Math.max(1, Math.min(filter.limit ?? HISTORY_ROWS, HISTORY_ROWS));
      const rows = filter.status
        ? db.prepare<[string, number], { row: string }>('SELECT row FROM alert_history WHERE status = ? ORDER BY seq DESC LIMIT ?').all(filter.status, limit)
        : db.prepare<[number], { row: string }>('SELECT row FROM alert_history ORDER BY seq DESC LIMIT ?').all(limit);
      return rows.map((r) => JSON.parse(r.row) as HistoryRow).reverse();
    },
    close: () => db.close(),
  };
}
