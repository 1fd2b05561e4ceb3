/**
 * What the simulator knows of a market and an account's money, read from its store: a quote's
 * day (open, high, low, volume from the prices set and the fills of the current trading day),
 * bars built from the same ticks, and an account's cash and P&L in money (point values of §10).
 */
import { tradingDayStart } from '../service/chicago.js';
import type { MoneyRow, WriteCache } from './cache.js';
import { contractSpec } from '../service/contracts.js';
import type { Db } from './store.js';
import { lazily } from '../common/lazily.js';
import { maxOf, minOf } from '../common/arrays.js';

/** Every simulation account starts with this much cash (the service's Account reports it as cash value). */
export const STARTING_CASH = 100_000;

/** Money per 1.0 of price (§10); 1 for a root the table does not know. */
export function pointValue(instrument: string): number {
  return contractSpec(instrument.split(' ')[0]!)?.pointValue ?? 1;
}

export interface Tick {
  time: string;
  price: number;
  volume: number;
}

export interface QuoteDay {
  last: number;
  /** When the last price was set. */
  updatedAt: string;
  open: number;
  high: number;
  low: number;
  /** The last price before the trading day began; the last price when there is none. */
  close: number;
  volume: number;
}

export interface AccountMoney {
  /** Realized P&L since the account began, in money. */
  realizedTotal: number;
  /** Realized P&L of the current trading day, in money. */
  realizedToday: number;
  /** Commissions charged since the account began, and in the current trading day. */
  commissionTotal: number;
  commissionToday: number;
}

export function createMarket(db: Db) {
  // Each prepared on first use (src/common/lazily.ts): an order reads none of them.
  const q = lazily({
    // The fills since a time through fills_by_time (migration 12): a quote's day read every fill
    // of the store (~80 ms for 300,000 of past days, issue 34).
    ticksSince: () => db.prepare<[string, string, string, string], Tick>(
      `SELECT time, price, 0 AS volume FROM ticks WHERE instrument = ? AND time >= ?
       UNION ALL SELECT time, price, quantity AS volume FROM fills INDEXED BY fills_by_time WHERE instrument = ? AND time >= ? AND price IS NOT NULL
       ORDER BY time`,
    ),
    lastBefore: () => db.prepare<[string, string], { price: number }>(
      'SELECT price FROM ticks WHERE instrument = ? AND time < ? ORDER BY time DESC, seq DESC LIMIT 1',
    ),
    priceRow: () => db.prepare<[string], { price: number; updatedAt: string }>('SELECT price, updated_at AS updatedAt FROM prices WHERE instrument = ?'),
    // Every fill of the account: the table read in order.
    realized: () => db.prepare<[string, string, string], { instrument: string; total: number; today: number; commission: number; commissionToday: number }>(
      `SELECT instrument, sum(realized) AS total, sum(CASE WHEN time >= ? THEN realized ELSE 0 END) AS today,
         sum(commission) AS commission, sum(CASE WHEN time >= ? THEN commission ELSE 0 END) AS commissionToday
       FROM fills NOT INDEXED WHERE account = ? GROUP BY instrument`,
    ),
    /** The fills of the trading day only (fills_by_time, migration 12). */
    realizedToday: () => db.prepare<[string, string], { instrument: string; today: number; commissionToday: number }>(
      `SELECT instrument, sum(realized) AS today, sum(commission) AS commissionToday
       FROM fills INDEXED BY fills_by_time WHERE account = ? AND time >= ? GROUP BY instrument`,
    ),
  });

  return {
    /** The day of a quote, or undefined when the instrument has no price. */
    quoteDay(instrument: string, now: Date): QuoteDay | undefined {
      const last = q.priceRow.get(instrument);
      if (!last) return undefined;
      const start = tradingDayStart(now).toISOString();
      const ticks = q.ticksSince.all(instrument, start, instrument, start);
      const prices = ticks.map((t) => t.price);
      return {
        last: last.price,
        updatedAt: last.updatedAt,
        open: prices[0] ?? last.price,
        high: prices.length ? maxOf(prices) : last.price,
        low: prices.length ? minOf(prices) : last.price,
        close: q.lastBefore.get(instrument, start)?.price ?? last.price,
        volume: ticks.reduce((sum, t) => sum + t.volume, 0),
      };
    },

    /** Ticks in a time range, oldest first: prices set (volume 0) and fills (their quantity). */
    ticks(instrument: string, from: string, to: string): Tick[] {
      return q.ticksSince.all(instrument, from, instrument, from).filter((t) => t.time <= to);
    },

    /**
     * An account's realized P&L in money, in total and since the trading day began. The sums per
     * instrument are kept in the write cache after the first read (every fill this connection
     * writes adds to them, in fills.ts; another connection's commit drops them), so a read per
     * order (the guard's daily-loss) costs nothing like a scan of every fill.
     */
    money(account: string, now: Date, cache: WriteCache): AccountMoney {
      const dayStart = tradingDayStart(now).toISOString();
      cache.sync();
      let kept = cache.money.get(account);
      if (kept?.dayStart !== dayStart || !kept.whole) {
        kept = { dayStart, whole: true, rows: new Map(q.realized.all(dayStart, dayStart, account).map((r) => [r.instrument, { ...r }])) };
        cache.money.set(account, kept);
      }
      return sumMoney([...kept.rows.entries()]);
    },

    /**
     * An account's realized P&L and commissions of the current trading day, in money: what the
     * guard's daily-loss rule reads before each order. From what is kept when it is, else from the
     * day's fills alone (an index range), never every fill of the account's history: a `trade
     * place` with the rule on a store of 300,000 fills read them all (~250 ms, issue 34).
     */
    moneyToday(account: string, now: Date, cache: WriteCache): Pick<AccountMoney, 'realizedToday' | 'commissionToday'> {
      const dayStart = tradingDayStart(now).toISOString();
      cache.sync();
      let kept = cache.money.get(account);
      if (kept?.dayStart !== dayStart) {
        const rows = q.realizedToday.all(account, dayStart).map((r): [string, MoneyRow] => [r.instrument, { total: Number.NaN, today: r.today, commission: Number.NaN, commissionToday: r.commissionToday }]);
        kept = { dayStart, whole: false, rows: new Map(rows) };
        cache.money.set(account, kept);
      }
      const { realizedToday, commissionToday } = sumMoney([...kept.rows.entries()]);
      return { realizedToday, commissionToday };
    },
  };
}

export type Market = ReturnType<typeof createMarket>;

function sumMoney(rows: Array<[string, MoneyRow]>): AccountMoney {
  return {
    realizedTotal: rows.reduce((sum, [instrument, r]) => sum + r.total * pointValue(instrument), 0),
    realizedToday: rows.reduce((sum, [instrument, r]) => sum + r.today * pointValue(instrument), 0),
    commissionTotal: rows.reduce((sum, [, r]) => sum + r.commission, 0),
    commissionToday: rows.reduce((sum, [, r]) => sum + r.commissionToday, 0),
  };
}
