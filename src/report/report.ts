/**
 * A report (issue 30) made from fills: the trades closed in the window (paired over every fill
 * known up to its end, so a trade opened before it is whole), their figures overall, per
 * instrument and per trading day, the positions open at its end with their unrealized P&L (kept
 * out of the figures), the equity curve, and what the data leaves unknown. Pure: the fills, the
 * prices and what was seen come from sources.ts. `--json` prints this object.
 */
import { equityCurve, type Figures, figuresOf, isKnown, type KnownTrade, money } from './figures.js';
import { knownPointValue, pairFills, type ReportFill, type Side } from './round-trips.js';
import { tradingDayOf, type Window } from './trading-days.js';

export const TIME_ZONE = 'America/Chicago';

/** Where the fills came from, and what of the window they cover. */
export type ReportSource =
  | { backend: 'embedded'; store: string }
  | {
      backend: 'http' | 'ws';
      /** The service the history is kept for (its host). */
      service: string;
      history: string;
      /** Stretches of time whose every execution the history has seen, per account (GetExecutions answers). */
      seen: Array<{ account: string; from: string; to: string }>;
      /** False when the history could not be brought up to date (GetExecutions of the last 900 s) before the report. */
      refreshed: boolean;
    };

export interface TradeRow {
  number: number;
  account: string;
  instrument: string;
  side: Side;
  quantity: number;
  entryTime: string | null;
  entryPrice: number | null;
  exitTime: string;
  exitPrice: number;
  durationMs: number | null;
  grossProfit: number | null;
  commission: number;
  netProfit: number | null;
  entryExecutionId: string | null;
  exitExecutionId: string;
}

export interface OpenPositionRow {
  account: string;
  instrument: string;
  marketPosition: Side;
  quantity: number;
  /** Average entry of the open lots whose entry is known; null when none is. */
  averagePrice: number | null;
  /** The price it is marked at; null when none is known. */
  marketPrice: number | null;
  unrealizedProfitLoss: number | null;
  openedAt: string | null;
}

export interface Report {
  from: string;
  to: string;
  timeZone: typeof TIME_ZONE;
  accounts: string[];
  instrument: string | null;
  capital: number;
  source: ReportSource;
  summary: Figures;
  byInstrument: Array<{ instrument: string } & Figures>;
  byDay: Array<{ day: string } & Figures>;
  trades: TradeRow[];
  openPositions: OpenPositionRow[];
  /** The equity curve without its capital, from 0 at `from`; its last point is the net profit. */
  equity: Array<{ time: string; equity: number; drawdown: number }>;
  notes: string[];
}

export interface ReportInput {
  /** The accounts' fills up to the window's end at least; earlier ones make trades opened before it whole. */
  fills: ReportFill[];
  window: Window;
  accounts: string[];
  instrument?: string;
  capital: number;
  /** The price an open position is marked at, by instrument. */
  marks: Map<string, number | undefined>;
  source: ReportSource;
  notes?: string[];
}

const iso = (ms: number) => new Date(ms).toISOString();

export function buildReport(input: ReportInput): Report {
  const { window } = input;
  // Account names match in any case (§1.4), as the service matches them.
  const lower = (name: string) => name.replace(/[A-Z]+/g, (c) => c.toLowerCase());
  const accounts = new Set(input.accounts.map(lower));
  const fills = input.fills.filter(
    (f) => accounts.has(lower(f.account)) && f.time <= window.to && (input.instrument === undefined || f.instrument === input.instrument),
  );
  const paired = pairFills(fills);
  const closed = paired.trades.filter((t) => t.exitTime >= window.from);
  const known = closed.filter(isKnown);
  const notes = [...(input.notes ?? [])];
  const unknown = closed.length - known.length;
  if (unknown > 0) notes.push(`${unknown} trade${unknown === 1 ? '' : 's'} closed a position whose entry was not seen: shown without P&L, left out of the figures.`);
  for (const gap of paired.gaps)
    notes.push(
      `Fills are missing before ${iso(gap.time)} in ${gap.account} ${gap.instrument}: the service said ${gap.reported} after execution ${gap.executionId}, the fills seen make ${gap.counted}.`,
    );
  const instruments = [...new Set(closed.map((t) => t.instrument))].sort();
  for (const instrument of new Set(fills.map((f) => f.instrument)))
    if (knownPointValue(instrument) === undefined) notes.push(`${instrument}: no point value is known for its root, so its P&L is in points (1 per point).`);
  const byDay = new Map<string, KnownTrade[]>();
  for (const trade of known) byDay.set(tradingDayOf(trade.exitTime), [...(byDay.get(tradingDayOf(trade.exitTime)) ?? []), trade]);
  let dayCapital = input.capital;
  const days = [...byDay.keys()].sort().map((day) => {
    const figures = figuresOf(byDay.get(day)!, dayCapital);
    dayCapital += figures.netProfit;
    return { day, ...figures };
  });
  return {
    from: iso(window.from),
    to: iso(window.to),
    timeZone: TIME_ZONE,
    accounts: input.accounts,
    instrument: input.instrument ?? null,
    capital: input.capital,
    source: input.source,
    summary: figuresOf(known, input.capital),
    byInstrument: instruments.map((instrument) => ({ instrument, ...figuresOf(known.filter((t) => t.instrument === instrument), input.capital) })),
    byDay: days,
    trades: closed.map((t, i) => ({
      number: i + 1,
      account: t.account,
      instrument: t.instrument,
      side: t.side,
      quantity: t.quantity,
      entryTime: t.entryTime === null ? null : iso(t.entryTime),
      entryPrice: t.entryPrice,
      exitTime: iso(t.exitTime),
      exitPrice: t.exitPrice,
      durationMs: t.entryTime === null ? null : t.exitTime - t.entryTime,
      grossProfit: t.grossProfit === null ? null : money(t.grossProfit),
      commission: money(t.commission),
      netProfit: t.netProfit === null ? null : money(t.netProfit),
      entryExecutionId: t.entryExecutionId,
      exitExecutionId: t.exitExecutionId,
    })),
    openPositions: paired.open.map((open) => {
      const quantity = open.lots.reduce((total, lot) => total + lot.quantity, 0);
      const priced = open.lots.filter((lot) => lot.price !== null);
      const pricedQuantity = priced.reduce((total, lot) => total + lot.quantity, 0);
      const averagePrice = pricedQuantity === 0 ? null : Number((priced.reduce((total, lot) => total + lot.price! * lot.quantity, 0) / pricedQuantity).toFixed(10));
      const marketPrice = input.marks.get(open.instrument) ?? null;
      const direction = open.side === 'Long' ? 1 : -1;
      const complete = pricedQuantity === quantity && averagePrice !== null && marketPrice !== null;
      return {
        account: open.account,
        instrument: open.instrument,
        marketPosition: open.side,
        quantity,
        averagePrice,
        marketPrice,
        unrealizedProfitLoss: complete ? money((marketPrice - averagePrice) * quantity * (knownPointValue(open.instrument) ?? 1) * direction) : null,
        openedAt: open.lots[0]!.time === null ? null : iso(open.lots[0]!.time),
      };
    }),
    equity: equityCurve(known, window.from).map((p) => ({ time: iso(p.time), equity: money(p.equity), drawdown: money(p.drawdown) })),
    notes,
  };
}
