/**
 * The report as a person reads it at a terminal: a headline, then tables (the figures overall and
 * per instrument, per trading day, the trades, the open positions) and notes. Times are Chicago's,
 * as the service writes them. The CLI fits each table to the terminal (src/cli/io.ts's fitTable)
 * with the columns named optional left out first.
 */
import { chicagoWallClock } from '../service/chicago.js';
import type { Figures } from './figures.js';
import type { Report } from './report.js';

export interface Section {
  title: string;
  header: string[];
  rows: string[][];
  /** Columns left out first at a narrow terminal, the least needed first. */
  optional: string[];
}

const DASH = '—';
export const money = (value: number | null | undefined) => (value === null || value === undefined ? DASH : value.toFixed(2));
const percent = (value: number | null) => (value === null ? DASH : `${value.toFixed(2)}%`);
const plain = (value: number | null) => (value === null ? DASH : String(value));
const price = (value: number | null) => (value === null ? DASH : String(Number(value.toFixed(8))));

/** `2025-09-02 09:30`: an instant on Chicago's clock. */
export function chicagoMinute(iso: string | null): string {
  if (iso === null) return DASH;
  return new Date(chicagoWallClock(Date.parse(iso))).toISOString().slice(0, 16).replace('T', ' ');
}

/** `1h 30m`, `38m 34s`, `2d 3h`: a duration as a person reads it. */
export function duration(ms: number | null): string {
  if (ms === null) return DASH;
  const s = Math.round(ms / 1000);
  const [d, h, m] = [Math.floor(s / 86400), Math.floor((s % 86400) / 3600), Math.floor((s % 3600) / 60)];
  if (d > 0) return `${d}d ${h}h`;
  if (h > 0) return `${h}h ${m}m`;
  if (m > 0) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

const FIGURE_ROWS: Array<[string, (f: Figures) => string]> = [
  ['Net profit', (f) => money(f.netProfit)],
  ['Gross profit', (f) => money(f.grossProfit)],
  ['Gross loss', (f) => money(f.grossLoss)],
  ['Commission', (f) => money(f.commission)],
  ['Trades', (f) => String(f.trades)],
  ['Winners / losers', (f) => `${f.winners} / ${f.losers}`],
  ['Win rate', (f) => percent(f.winRate)],
  ['Profit factor', (f) => plain(f.profitFactor)],
  ['Average trade', (f) => money(f.averageTrade)],
  ['Average win', (f) => money(f.averageWin)],
  ['Average loss', (f) => money(f.averageLoss)],
  ['Largest win', (f) => money(f.largestWin)],
  ['Largest loss', (f) => money(f.largestLoss)],
  ['Average duration', (f) => duration(f.averageDurationMs)],
  ['Max drawdown', (f) => (f.maxDrawdownPercent === null ? money(f.maxDrawdown) : `${money(f.maxDrawdown)} (${percent(f.maxDrawdownPercent)})`)],
  ['Longest losing streak', (f) => String(f.longestLosingStreak)],
  ['Sharpe ratio (daily)', (f) => plain(f.sharpeRatio)],
];

/** `Sim101, 2025-09-02 17:00 to 2025-09-03 11:30 Chicago time (embedded /path/trade.db)`. */
export function headline(report: Report): string {
  const where = report.source.backend === 'embedded' ? `embedded ${report.source.store}` : `${report.source.backend} ${report.source.service}, execution history ${report.source.history}`;
  const what = report.accounts.length === 0 ? 'no account' : report.accounts.join(', ');
  return `Report of ${what}${report.instrument === null ? '' : ` in ${report.instrument}`}, ${chicagoMinute(report.from)} to ${chicagoMinute(report.to)} Chicago time (${where})`;
}

export function sections(report: Report): Section[] {
  const out: Section[] = [];
  const instruments = report.byInstrument.map((i) => i.instrument);
  out.push({
    title: 'Performance',
    header: ['', 'ALL', ...instruments],
    rows: FIGURE_ROWS.map(([name, value]) => [name, value(report.summary), ...report.byInstrument.map((f) => value(f))]),
    optional: [...instruments].reverse(),
  });
  if (report.byDay.length > 0)
    out.push({
      title: 'By trading day',
      header: ['DAY', 'TRADES', 'WIN RATE', 'NET PROFIT', 'GROSS PROFIT', 'GROSS LOSS', 'COMMISSION', 'MAX DRAWDOWN'],
      rows: report.byDay.map((d) => [d.day, String(d.trades), percent(d.winRate), money(d.netProfit), money(d.grossProfit), money(d.grossLoss), money(d.commission), money(d.maxDrawdown)]),
      optional: ['COMMISSION', 'GROSS PROFIT', 'GROSS LOSS', 'MAX DRAWDOWN'],
    });
  const several = report.accounts.length > 1;
  out.push({
    title: 'Trades',
    header: ['#', ...(several ? ['ACCOUNT'] : []), 'INSTRUMENT', 'SIDE', 'QTY', 'ENTRY TIME', 'ENTRY', 'EXIT TIME', 'EXIT', 'DURATION', 'COMMISSION', 'NET P&L'],
    rows: report.trades.map((t) => [
      String(t.number),
      ...(several ? [t.account] : []),
      t.instrument,
      t.side,
      String(t.quantity),
      chicagoMinute(t.entryTime),
      price(t.entryPrice),
      chicagoMinute(t.exitTime),
      price(t.exitPrice),
      duration(t.durationMs),
      money(t.commission),
      money(t.netProfit),
    ]),
    optional: ['ENTRY TIME', 'DURATION', 'COMMISSION', 'EXIT TIME', 'ACCOUNT'],
  });
  if (report.openPositions.length > 0)
    out.push({
      title: 'Open positions (not in the figures)',
      header: ['ACCOUNT', 'INSTRUMENT', 'POSITION', 'QTY', 'AVG PRICE', 'MARKET', 'UNREALIZED P&L', 'SINCE'],
      rows: report.openPositions.map((p) => [
        p.account, p.instrument, p.marketPosition, String(p.quantity), price(p.averagePrice), price(p.marketPrice), money(p.unrealizedProfitLoss), chicagoMinute(p.openedAt),
      ]),
      optional: ['SINCE', 'ACCOUNT', 'MARKET'],
    });
  return out;
}

const MAX_STRETCHES = 10;

/** What the report's data covers and leaves out, one line each. */
export function noteLines(report: Report): string[] {
  const lines: string[] = [];
  if (report.source.backend !== 'embedded') {
    const seen = report.source.seen.filter((s) => Date.parse(s.to) >= Date.parse(report.from) && Date.parse(s.from) <= Date.parse(report.to));
    if (seen.length === 0) lines.push('The execution history has seen no stretch of this window whole: it holds only the executions it was shown.');
    // The latest stretches; a long window of short sessions would list dozens.
    if (seen.length > MAX_STRETCHES) lines.push(`Seen whole: ${seen.length - MAX_STRETCHES} earlier stretches of this window (--json lists every one).`);
    for (const s of seen.slice(-MAX_STRETCHES)) lines.push(`Seen whole: ${s.account} from ${chicagoMinute(s.from)} to ${chicagoMinute(s.to)} (every execution of that stretch is in the history).`);
  }
  return [...lines, ...report.notes];
}
