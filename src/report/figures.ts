/**
 * The figures of a set of closed trades (issue 30), in money after commission, as the usual
 * strategy reports print them (TradingView's Performance Summary, NinjaTrader's Trade Performance,
 * LEAN's backtest report). Definitions, in docs/reports.md:
 *
 * - a trade wins when its net P&L is above 0 and loses when below; 0 is neither;
 * - gross profit and gross loss are the sums of the winners' and the losers' net P&L;
 * - the equity curve is `capital` plus the net P&L of the trades in the order they closed;
 *   the drawdown at a point is how far it is below the highest point before it, in money and as a
 *   percent of that highest point; the maximum of each is reported (they may be at two points);
 * - the longest losing streak counts losers closed one after another (a win or an even trade ends it);
 * - the Sharpe ratio is the mean of the daily returns over their sample standard deviation, times
 *   √252 (annualized, no risk-free rate), where a day's return is its net P&L over the equity at
 *   its start; only trading days on which a trade closed count, and it needs two of them.
 *
 * Money is rounded to the cent, percentages to a hundredth, ratios to four decimals.
 */
import { maxOf, minOf } from '../common/arrays.js';
import type { Trade } from './round-trips.js';
import { tradingDayOf } from './trading-days.js';

export interface Figures {
  netProfit: number;
  grossProfit: number;
  grossLoss: number;
  commission: number;
  trades: number;
  winners: number;
  losers: number;
  /** Percent of trades that won; null with no trade. */
  winRate: number | null;
  /** Gross profit over the gross loss's size; null when nothing was lost. */
  profitFactor: number | null;
  averageTrade: number | null;
  averageWin: number | null;
  averageLoss: number | null;
  largestWin: number | null;
  largestLoss: number | null;
  /** Milliseconds from entry to exit, on average; null with no trade whose entry is known. */
  averageDurationMs: number | null;
  maxDrawdown: number;
  /** Percent of the peak it fell from; null with no trade. */
  maxDrawdownPercent: number | null;
  longestLosingStreak: number;
  /** Trading days on which a trade closed. */
  days: number;
  sharpeRatio: number | null;
}

/** A closed trade whose P&L is known: the trades the figures are made of. */
export type KnownTrade = Trade & { grossProfit: number; netProfit: number };

export const isKnown = (trade: Trade): trade is KnownTrade => trade.netProfit !== null;

export const money = (value: number): number => Math.round(value * 100) / 100 + 0;
const percent = (value: number): number => Math.round(value * 100) / 100 + 0;
const ratio = (value: number): number => Math.round(value * 10_000) / 10_000 + 0;
const sum = (values: number[]): number => values.reduce((total, v) => total + v, 0);

export interface EquityPoint {
  time: number;
  /** Net P&L so far (the curve without its capital). */
  equity: number;
  /** Below the highest point so far: 0 or less. */
  drawdown: number;
}

/** The equity curve of trades (in the order they closed), from 0 at `start`. */
export function equityCurve(trades: KnownTrade[], start: number): EquityPoint[] {
  const points: EquityPoint[] = [{ time: start, equity: 0, drawdown: 0 }];
  let equity = 0;
  let peak = 0;
  for (const trade of trades) {
    equity += trade.netProfit;
    peak = Math.max(peak, equity);
    points.push({ time: trade.exitTime, equity, drawdown: equity - peak });
  }
  return points;
}

/** Sharpe ratio of daily returns (see the file's head); null with fewer than two days or no spread. */
function sharpeOf(trades: KnownTrade[], capital: number): number | null {
  const days = new Map<string, number>();
  for (const trade of trades) {
    const day = tradingDayOf(trade.exitTime);
    days.set(day, (days.get(day) ?? 0) + trade.netProfit);
  }
  if (days.size < 2) return null;
  let equity = capital;
  const returns: number[] = [];
  for (const day of [...days.keys()].sort()) {
    const net = days.get(day)!;
    returns.push(net / equity);
    equity += net;
  }
  const mean = sum(returns) / returns.length;
  const deviation = Math.sqrt(sum(returns.map((r) => (r - mean) ** 2)) / (returns.length - 1));
  if (!(deviation > 0)) return null;
  return (mean / deviation) * Math.sqrt(252);
}

/** The figures of trades (in the order they closed); `capital` is the equity before the first. */
export function figuresOf(trades: KnownTrade[], capital: number): Figures {
  const nets = trades.map((t) => t.netProfit);
  const wins = nets.filter((n) => n > 0);
  const losses = nets.filter((n) => n < 0);
  const grossProfit = sum(wins);
  const grossLoss = sum(losses);
  let equity = 0;
  let peak = 0;
  let maxDrawdown = 0;
  let maxDrawdownPercent = 0;
  let streak = 0;
  let longest = 0;
  for (const net of nets) {
    equity += net;
    peak = Math.max(peak, equity);
    maxDrawdown = Math.max(maxDrawdown, peak - equity);
    if (capital + peak > 0) maxDrawdownPercent = Math.max(maxDrawdownPercent, ((peak - equity) / (capital + peak)) * 100);
    streak = net < 0 ? streak + 1 : 0;
    longest = Math.max(longest, streak);
  }
  const timed = trades.filter((t) => t.entryTime !== null);
  const n = trades.length;
  const sharpe = sharpeOf(trades, capital);
  return {
    netProfit: money(sum(nets)),
    grossProfit: money(grossProfit),
    grossLoss: money(grossLoss),
    commission: money(sum(trades.map((t) => t.commission))),
    trades: n,
    winners: wins.length,
    losers: losses.length,
    winRate: n === 0 ? null : percent((wins.length / n) * 100),
    profitFactor: losses.length === 0 ? null : ratio(grossProfit / -grossLoss),
    averageTrade: n === 0 ? null : money(sum(nets) / n),
    averageWin: wins.length === 0 ? null : money(grossProfit / wins.length),
    averageLoss: losses.length === 0 ? null : money(grossLoss / losses.length),
    largestWin: wins.length === 0 ? null : money(maxOf(wins)),
    largestLoss: losses.length === 0 ? null : money(minOf(losses)),
    averageDurationMs: timed.length === 0 ? null : Math.round(sum(timed.map((t) => t.exitTime - t.entryTime!)) / timed.length),
    maxDrawdown: money(maxDrawdown),
    maxDrawdownPercent: n === 0 ? null : percent(maxDrawdownPercent),
    longestLosingStreak: longest,
    days: new Set(trades.map((t) => tradingDayOf(t.exitTime))).size,
    sharpeRatio: sharpe === null ? null : ratio(sharpe),
  };
}
