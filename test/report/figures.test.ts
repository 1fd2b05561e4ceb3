/**
 * The report's figures against the fixture computed by hand (fixture.ts): the fills made by the
 * real engine on a real store, read as `trade report` reads them on embedded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport, type Report } from '../../src/report/report.js';
import { embeddedData } from '../../src/report/sources.js';
import { reportWindow } from '../../src/report/trading-days.js';
import { testEngine, type TestEngine } from '../helpers/engine.js';
import { BY_DAY, BY_INSTRUMENT, EQUITY, NOW, OPEN, playFixture, STEPS, SUMMARY, TRADES, WINDOW } from './fixture.js';

let t: TestEngine;
let report: Report;

function reportOf(flags: { from?: string; to?: string; days?: string; instrument?: string }, capital = 100_000): Report {
  const window = reportWindow(flags, t.engine.now().getTime());
  const data = embeddedData(t.engine, ['Sim101'], window);
  return buildReport({ ...data, window, capital, instrument: flags.instrument });
}

beforeAll(() => {
  t = testEngine(STEPS[0]!.at);
  playFixture(t);
  report = reportOf({ from: '2025-09-02', to: '2025-09-03' });
});
afterAll(() => t.cleanup());

describe('the fixture, figure by figure (overall)', () => {
  it.each(Object.entries(SUMMARY))('%s', (name, value) => {
    expect(report.summary[name as keyof Report['summary']]).toBe(value);
  });
});

describe('per instrument', () => {
  it.each(BY_INSTRUMENT.map((f) => [f.instrument, f] as const))('%s', (_name, figures) => {
    expect(report.byInstrument.find((i) => i.instrument === figures.instrument)).toEqual(figures);
  });
});

describe('per trading day (17:00 Chicago)', () => {
  it.each(BY_DAY.map((f) => [f.day, f] as const))('%s', (_day, figures) => {
    expect(report.byDay.find((d) => d.day === figures.day)).toEqual(figures);
  });
});

describe('the report', () => {
  it('covers the window asked for, in Chicago trading days', () => {
    expect({ from: report.from, to: report.to, timeZone: report.timeZone, accounts: report.accounts, capital: report.capital }).toEqual({
      ...WINDOW, timeZone: 'America/Chicago', accounts: ['Sim101'], capital: 100_000,
    });
  });

  it('lists the seven trades, FIFO: a partial close, a reverse, a trade across 17:00', () => {
    expect(report.trades.map(({ number: _n, account: _a, entryExecutionId: _e, exitExecutionId: _x, ...trade }) => trade)).toEqual(TRADES);
    expect(report.trades.map((t) => t.number)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    // T1 and T2 share their entry (fill #1, BUY 2); T3 and T4 share fill #5 (the reverse).
    expect(report.trades[0]!.entryExecutionId).toBe(report.trades[1]!.entryExecutionId);
    expect(report.trades[2]!.exitExecutionId).toBe(report.trades[3]!.entryExecutionId);
  });

  it('shows the open position with its unrealized P&L, outside the figures', () => {
    expect(report.openPositions).toEqual(OPEN);
    expect(report.summary.netProfit).toBe(2526);
  });

  it("draws the equity curve from 0, its last point the net profit, and the drawdown beneath", () => {
    expect(report.equity.map((p) => p.equity)).toEqual(EQUITY);
    expect(report.equity.at(-1)!.equity).toBe(report.summary.netProfit);
    expect(report.equity.map((p) => p.drawdown)).toEqual([0, 0, -504, 0, -202, 0, -504, -6]);
    expect(report.equity[0]!.time).toBe(WINDOW.from);
    expect(report.notes).toEqual([]);
  });

  it('by default reports the current trading day: the trade closed at 18:00 Chicago on 09-02 is 09-03s', () => {
    const today = reportOf({});
    expect({ from: today.from, to: today.to }).toEqual({ from: '2025-09-02T22:00:00.000Z', to: NOW.replace('Z', '.000Z') });
    // T5 (746), T6 (−504), T7 (498): 740, as 09-03's day above.
    expect(today.trades.map((t) => t.netProfit)).toEqual([746, -504, 498]);
    expect(today.summary.netProfit).toBe(740);
    // T5 was entered the day before: the trade is whole, from its entry.
    expect(today.trades[0]!.entryTime).toBe('2025-09-02T21:30:00.000Z');
  });

  it('--days 2 is both days; --instrument keeps one instrument, its trades and its open position', () => {
    expect(reportOf({ days: '2' }).summary).toEqual(SUMMARY);
    const nq = reportOf({ days: '2', instrument: 'NQ 09-25' });
    expect(nq.summary).toEqual(Object.fromEntries(Object.entries(BY_INSTRUMENT[1]!).filter(([k]) => k !== 'instrument')));
    expect(nq.openPositions).toEqual([]);
    expect(nq.instrument).toBe('NQ 09-25');
  });

  it('--capital changes only what is relative to it: the drawdown percent and the Sharpe ratio', () => {
    const small = reportOf({ from: '2025-09-02', to: '2025-09-03' }, 10_000);
    // 504 from a peak of 10,000 + 496; returns 1786/10,000 and 740/11,786.
    expect(small.summary.maxDrawdownPercent).toBe(Math.round((504 / 10_496) * 100 * 100) / 100);
    const a = 1786 / 10_000;
    const b = 740 / 11_786;
    expect(small.summary.sharpeRatio).toBe(Math.round(((a + b) / 2 / (Math.abs(a - b) / Math.SQRT2)) * Math.sqrt(252) * 10_000) / 10_000);
    expect(small.summary.netProfit).toBe(2526);
  });

  it('a window of no trade has zeros and no ratios', () => {
    const empty = reportOf({ from: '2025-08-01', to: '2025-08-29' });
    expect(empty.summary).toEqual({
      netProfit: 0, grossProfit: 0, grossLoss: 0, commission: 0, trades: 0, winners: 0, losers: 0, winRate: null, profitFactor: null,
      averageTrade: null, averageWin: null, averageLoss: null, largestWin: null, largestLoss: null, averageDurationMs: null,
      maxDrawdown: 0, maxDrawdownPercent: null, longestLosingStreak: 0, days: 0, sharpeRatio: null,
    });
    expect(empty.trades).toEqual([]);
    expect(empty.openPositions).toEqual([]);
    expect(empty.equity).toEqual([{ time: '2025-07-31T22:00:00.000Z', equity: 0, drawdown: 0 }]);
  });
});
