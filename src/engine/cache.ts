/**
 * What the write path reads on every order, kept in memory (issue 16: a lean write per order):
 * last prices, the commission and slippage per root, positions, and when the next working DAY
 * order expires. The store stays the truth: the cache mirrors what this connection wrote, and is
 * dropped whole whenever another connection has committed (SQLite's `data_version`, read once
 * per transaction after the write lock is held, so nothing can change under it) and whenever a
 * transaction fails (its writes were rolled back, the mirror of them must go too).
 */
import type { Db } from './store.js';
import type { ContractSettingRow, PositionRow } from './queries.js';
import type { Triggers } from './prices.js';

export interface WriteCache {
  /** null: known to have no row. */
  prices: Map<string, number | null>;
  settings: Map<string, Pick<ContractSettingRow, 'commission' | 'slippage_ticks'> | null>;
  /** Keyed `account\u0000instrument`. */
  positions: Map<string, PositionRow | null>;
  /**
   * Per account: realized P&L (points) and commissions per instrument since `dayStart`, and in
   * total when `whole` (else only the day's were read, and the totals mean nothing).
   */
  money: Map<string, { dayStart: string; whole: boolean; rows: Map<string, MoneyRow> }>;
  /** The earliest session end (ms) of the working DAY orders, Infinity with none; undefined: not known. */
  dayExpiry: number | undefined;
  /** Per instrument, what price moves reach its working orders (prices.ts); dropped by any other write. */
  triggers: Map<string, Triggers>;
  /**
   * Checks `data_version` (inside a transaction) and drops everything if another connection
   * committed. Answers the version read, which a read outside a transaction may key a result by.
   */
  sync(): number;
  /** Forgets everything (a rolled-back transaction, a change the cache does not follow). */
  reset(): void;
}

export function createWriteCache(db: Db): WriteCache {
  // The pragma itself, not its table-valued function pragma_data_version(): the same number in
  // 3.4 µs instead of 5.4 (issue 34), on every read `trade serve` answers.
  const version = db.prepare<[], { data_version: number }>('PRAGMA data_version').pluck();
  let seen: number | undefined;
  const cache: WriteCache = {
    prices: new Map(),
    settings: new Map(),
    positions: new Map(),
    money: new Map(),
    dayExpiry: undefined,
    triggers: new Map(),
    sync() {
      const now = version.get() as unknown as number;
      if (now !== seen) {
        cache.reset();
        seen = now;
      }
      return now;
    },
    reset() {
      cache.prices.clear();
      cache.settings.clear();
      cache.positions.clear();
      cache.money.clear();
      cache.dayExpiry = undefined;
      cache.triggers.clear();
    },
  };
  return cache;
}

export interface MoneyRow {
  total: number;
  today: number;
  commission: number;
  commissionToday: number;
}

/** A fill written by this connection, added to its account's money sums when they are kept. */
export function addToMoney(cache: WriteCache, account: string, instrument: string, realized: number, commission: number, time: string): void {
  const kept = cache.money.get(account);
  if (!kept) return;
  let row = kept.rows.get(instrument);
  if (!row) kept.rows.set(instrument, (row = { total: 0, today: 0, commission: 0, commissionToday: 0 }));
  row.total += realized;
  row.commission += commission;
  if (time >= kept.dayStart) {
    row.today += realized;
    row.commissionToday += commission;
  }
}

export const positionKey = (account: string, instrument: string) => `${account}\u0000${instrument}`;
