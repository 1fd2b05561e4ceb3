/**
 * The report's fixture (issue 30): thirteen executions in Sim101, with every figure computed by
 * hand below (never by the code under test). ES 09-25 (50 per point, commission set to 2.00 a
 * contract) and NQ 09-25 (20 per point, 1.00 a contract). Times are UTC; 2025-09-02 is in Chicago
 * daylight time (UTC-5), so a trading day ends at 22:00Z.
 *
 *  #  time (UTC)         instrument  fill          position after   trade closed (FIFO)
 *  1  09-02 14:00        ES          BUY 2 @ 6000  long 2
 *  2  09-02 14:30        ES          SELL 1 @ 6010 long 1           T1 long 1 6000→6010   (a partial close)
 *  3  09-02 15:00        ES          SELL 1 @ 5990 flat             T2 long 1 6000→5990
 *  4  09-02 15:30        NQ          SELL 2 @ 21000 short 2
 *  5  09-02 16:00        NQ          BUY 3 @ 20950 long 1           T3 short 2 21000→20950 (a reverse: opens long 1)
 *  6  09-02 16:30        NQ          SELL 1 @ 20940 flat            T4 long 1 20950→20940
 *  7  09-02 21:30 (16:30 Chicago)  ES  BUY 1 @ 6005  long 1
 *  8  09-02 23:00 (18:00 Chicago)  ES  SELL 1 @ 6020 flat           T5 long 1 6005→6020 (crosses 17:00: trading day 09-03)
 *  9  09-03 14:00        ES          SELL 1 @ 6030 short 1
 * 10  09-03 14:10        ES          BUY 1 @ 6040  flat             T6 short 1 6030→6040
 * 11  09-03 15:00        NQ          BUY 1 @ 21000 long 1
 * 12  09-03 15:20        NQ          SELL 1 @ 21025 flat            T7 long 1 21000→21025
 * 13  09-03 16:00        ES          BUY 1 @ 6050  long 1 (open; ES is then set to 6060 at 16:10)
 *
 * Each trade: gross = price change × quantity × point value (negated short); commission = its
 * share of the entry fill's commission + its share of the exit fill's, by quantity.
 *  T1: (6010−6000)×1×50 = 500;      commission 4×1/2 + 2 = 4;          net 496
 *  T2: (5990−6000)×1×50 = −500;     commission 4×1/2 + 2 = 4;          net −504
 *  T3: (21000−20950)×2×20 = 2000;   commission 2 + 3×2/3 = 4;          net 1996
 *  T4: (20940−20950)×1×20 = −200;   commission 3×1/3 + 1 = 2;          net −202
 *  T5: (6020−6005)×1×50 = 750;      commission 2 + 2 = 4;              net 746
 *  T6: (6030−6040)×1×50 = −500;     commission 2 + 2 = 4;              net −504
 *  T7: (21025−21000)×1×20 = 500;    commission 1 + 1 = 2;              net 498
 */

import { expect } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import { order, type TestEngine } from '../helpers/engine.js';

export const ES = 'ES 09-25';
export const NQ = 'NQ 09-25';
export const COMMISSION = { ES: 2, NQ: 1 };

export interface Step {
  at: string;
  instrument: string;
  price: number;
  action: 'BUY' | 'SELL';
  quantity: number;
}

export const STEPS: Step[] = [
  { at: '2025-09-02T14:00:00Z', instrument: ES, price: 6000, action: 'BUY', quantity: 2 },
  { at: '2025-09-02T14:30:00Z', instrument: ES, price: 6010, action: 'SELL', quantity: 1 },
  { at: '2025-09-02T15:00:00Z', instrument: ES, price: 5990, action: 'SELL', quantity: 1 },
  { at: '2025-09-02T15:30:00Z', instrument: NQ, price: 21000, action: 'SELL', quantity: 2 },
  { at: '2025-09-02T16:00:00Z', instrument: NQ, price: 20950, action: 'BUY', quantity: 3 },
  { at: '2025-09-02T16:30:00Z', instrument: NQ, price: 20940, action: 'SELL', quantity: 1 },
  { at: '2025-09-02T21:30:00Z', instrument: ES, price: 6005, action: 'BUY', quantity: 1 },
  { at: '2025-09-02T23:00:00Z', instrument: ES, price: 6020, action: 'SELL', quantity: 1 },
  { at: '2025-09-03T14:00:00Z', instrument: ES, price: 6030, action: 'SELL', quantity: 1 },
  { at: '2025-09-03T14:10:00Z', instrument: ES, price: 6040, action: 'BUY', quantity: 1 },
  { at: '2025-09-03T15:00:00Z', instrument: NQ, price: 21000, action: 'BUY', quantity: 1 },
  { at: '2025-09-03T15:20:00Z', instrument: NQ, price: 21025, action: 'SELL', quantity: 1 },
  { at: '2025-09-03T16:00:00Z', instrument: ES, price: 6050, action: 'BUY', quantity: 1 },
];
/** After the last fill ES is set to 6060 (at 16:10), and the report is made at 16:30 (11:30 Chicago). */
export const LAST_PRICE = { at: '2025-09-03T16:10:00Z', instrument: ES, price: 6060 };
export const NOW = '2025-09-03T16:30:00Z';

/** The window of both trading days: from 17:00 Chicago on 09-01 (22:00Z) to 17:00 Chicago on 09-03. */
export const WINDOW = { from: '2025-09-01T22:00:00.000Z', to: '2025-09-03T22:00:00.000Z' };

const MIN = 60_000;

/** The seven trades, by hand (above), in the order they closed. */
export const TRADES = [
  { instrument: ES, side: 'Long', quantity: 1, entryTime: '2025-09-02T14:00:00.000Z', entryPrice: 6000, exitTime: '2025-09-02T14:30:00.000Z', exitPrice: 6010, grossProfit: 500, commission: 4, netProfit: 496, durationMs: 30 * MIN },
  { instrument: ES, side: 'Long', quantity: 1, entryTime: '2025-09-02T14:00:00.000Z', entryPrice: 6000, exitTime: '2025-09-02T15:00:00.000Z', exitPrice: 5990, grossProfit: -500, commission: 4, netProfit: -504, durationMs: 60 * MIN },
  { instrument: NQ, side: 'Short', quantity: 2, entryTime: '2025-09-02T15:30:00.000Z', entryPrice: 21000, exitTime: '2025-09-02T16:00:00.000Z', exitPrice: 20950, grossProfit: 2000, commission: 4, netProfit: 1996, durationMs: 30 * MIN },
  { instrument: NQ, side: 'Long', quantity: 1, entryTime: '2025-09-02T16:00:00.000Z', entryPrice: 20950, exitTime: '2025-09-02T16:30:00.000Z', exitPrice: 20940, grossProfit: -200, commission: 2, netProfit: -202, durationMs: 30 * MIN },
  { instrument: ES, side: 'Long', quantity: 1, entryTime: '2025-09-02T21:30:00.000Z', entryPrice: 6005, exitTime: '2025-09-02T23:00:00.000Z', exitPrice: 6020, grossProfit: 750, commission: 4, netProfit: 746, durationMs: 90 * MIN },
  { instrument: ES, side: 'Short', quantity: 1, entryTime: '2025-09-03T14:00:00.000Z', entryPrice: 6030, exitTime: '2025-09-03T14:10:00.000Z', exitPrice: 6040, grossProfit: -500, commission: 4, netProfit: -504, durationMs: 10 * MIN },
  { instrument: NQ, side: 'Long', quantity: 1, entryTime: '2025-09-03T15:00:00.000Z', entryPrice: 21000, exitTime: '2025-09-03T15:20:00.000Z', exitPrice: 21025, grossProfit: 500, commission: 2, netProfit: 498, durationMs: 20 * MIN },
];

const round2 = (x: number) => Math.round(x * 100) / 100;
const round4 = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * Sharpe ratio of two daily returns a and b: mean (a+b)/2 over the sample deviation |a−b|/√2,
 * times √252. Written out here, not taken from the code.
 */
const sharpe2 = (a: number, b: number) => round4((((a + b) / 2) / (Math.abs(a - b) / Math.SQRT2)) * Math.sqrt(252));

/**
 * Overall (capital 100,000). Nets in order: 496, −504, 1996, −202, 746, −504, 498.
 * - net 2526; winners 496+1996+746+498 = 3736; losers −504−202−504 = −1210; commission 24
 * - win rate 4/7 = 57.14%; profit factor 3736/1210 = 3.0876; average trade 2526/7 = 360.86
 * - average win 3736/4 = 934; average loss −1210/3 = −403.33; largest 1996 and −504
 * - durations 30+60+30+30+90+10+20 = 270 minutes / 7 = 2,314,285.7 ms
 * - equity 496, −8, 1988, 1786, 2532, 2028, 2526: peaks 496 then 1988 then 2532; the deepest
 *   drops are 496 → −8 and 2532 → 2028, both 504; as a percent of the peak fallen from,
 *   504/100,496 = 0.50% (504/102,532 = 0.49% is less)
 * - losing streak: W L W L W L W → 1
 * - days: 09-02 (T1–T4) nets 1786; 09-03 (T5–T7) nets 740. Returns 1786/100,000 and
 *   740/101,786.
 */
export const SUMMARY = {
  netProfit: 2526,
  grossProfit: 3736,
  grossLoss: -1210,
  commission: 24,
  trades: 7,
  winners: 4,
  losers: 3,
  winRate: round2((4 / 7) * 100),
  profitFactor: round4(3736 / 1210),
  averageTrade: round2(2526 / 7),
  averageWin: 934,
  averageLoss: round2(-1210 / 3),
  largestWin: 1996,
  largestLoss: -504,
  averageDurationMs: Math.round((270 * MIN) / 7),
  maxDrawdown: 504,
  maxDrawdownPercent: round2((504 / 100_496) * 100),
  longestLosingStreak: 1,
  days: 2,
  sharpeRatio: sharpe2(1786 / 100_000, 740 / 101_786),
};

/**
 * Per instrument (each from capital 100,000):
 * ES: T1 496, T2 −504, T5 746, T6 −504: net 234; wins 1242, losses −1008; 50%; PF 1242/1008;
 *     durations 30+60+90+10 = 190 min / 4; equity 496, −8, 738, 234: drawdowns 504 and 504,
 *     504/100,496; days 09-02 nets −8, 09-03 nets 242: returns −8/100,000 and 242/99,992.
 * NQ: T3 1996, T4 −202, T7 498: net 2292; wins 2494, losses −202; 2/3; PF 2494/202; durations
 *     30+30+20 = 80 min / 3; equity 1996, 1794, 2292: drawdown 202, 202/101,996; days 09-02 nets
 *     1794, 09-03 nets 498: returns 1794/100,000 and 498/101,794.
 */
export const BY_INSTRUMENT = [
  {
    instrument: ES, netProfit: 234, grossProfit: 1242, grossLoss: -1008, commission: 16, trades: 4, winners: 2, losers: 2, winRate: 50,
    profitFactor: round4(1242 / 1008), averageTrade: 58.5, averageWin: 621, averageLoss: -504, largestWin: 746, largestLoss: -504,
    averageDurationMs: (190 * MIN) / 4, maxDrawdown: 504, maxDrawdownPercent: round2((504 / 100_496) * 100), longestLosingStreak: 1, days: 2,
    sharpeRatio: sharpe2(-8 / 100_000, 242 / 99_992),
  },
  {
    instrument: NQ, netProfit: 2292, grossProfit: 2494, grossLoss: -202, commission: 8, trades: 3, winners: 2, losers: 1, winRate: round2((2 / 3) * 100),
    profitFactor: round4(2494 / 202), averageTrade: 764, averageWin: 1247, averageLoss: -202, largestWin: 1996, largestLoss: -202,
    averageDurationMs: Math.round((80 * MIN) / 3), maxDrawdown: 202, maxDrawdownPercent: round2((202 / 101_996) * 100), longestLosingStreak: 1, days: 2,
    sharpeRatio: sharpe2(1794 / 100_000, 498 / 101_794),
  },
];

/**
 * Per trading day. 09-02: T1–T4: 496, −504, 1996, −202: net 1786; wins 2492, losses −706;
 * commission 14; drawdown 504 (496 → −8), 504/100,496. 09-03: T5–T7: 746, −504, 498: net 740;
 * wins 1244, losses −504; commission 10; drawdown 504 (746 → 242), from the day's equity at its
 * start 101,786: 504/(101,786 + 746). One day has no Sharpe ratio.
 */
export const BY_DAY = [
  {
    day: '2025-09-02', netProfit: 1786, grossProfit: 2492, grossLoss: -706, commission: 14, trades: 4, winners: 2, losers: 2, winRate: 50,
    profitFactor: round4(2492 / 706), averageTrade: 446.5, averageWin: 1246, averageLoss: -353, largestWin: 1996, largestLoss: -504,
    averageDurationMs: (150 * MIN) / 4, maxDrawdown: 504, maxDrawdownPercent: round2((504 / 100_496) * 100), longestLosingStreak: 1, days: 1, sharpeRatio: null,
  },
  {
    day: '2025-09-03', netProfit: 740, grossProfit: 1244, grossLoss: -504, commission: 10, trades: 3, winners: 2, losers: 1, winRate: round2((2 / 3) * 100),
    profitFactor: round4(1244 / 504), averageTrade: round2(740 / 3), averageWin: 622, averageLoss: -504, largestWin: 746, largestLoss: -504,
    averageDurationMs: (120 * MIN) / 3, maxDrawdown: 504, maxDrawdownPercent: round2((504 / 102_532) * 100), longestLosingStreak: 1, days: 1, sharpeRatio: null,
  },
];

/** #13 is open: long 1 ES at 6050, marked at 6060: (6060 − 6050) × 1 × 50 = 500. */
export const OPEN = [{ account: 'Sim101', instrument: ES, marketPosition: 'Long', quantity: 1, averagePrice: 6050, marketPrice: 6060, unrealizedProfitLoss: 500, openedAt: '2025-09-03T16:00:00.000Z' }];

/** The equity curve: 0 at the window's start, then each trade's net added as it closed. */
export const EQUITY = [0, 496, -8, 1988, 1786, 2532, 2028, 2526];

/** The fixture's fills in a real engine, each at its time. */
export function playFixture(e: TestEngine): void {
  e.engine.setContractSettings('ES', { commission: COMMISSION.ES });
  e.engine.setContractSettings('NQ', { commission: COMMISSION.NQ });
  for (const step of STEPS) {
    e.setTime(step.at);
    e.engine.setPrice(step.instrument, step.price);
    e.engine.placeOrder(order({ instrument: step.instrument, action: step.action, quantity: step.quantity }));
  }
  e.setTime(LAST_PRICE.at);
  e.engine.setPrice(LAST_PRICE.instrument, LAST_PRICE.price);
  e.setTime(NOW);
}


/** The fixture played into the store at `file` (a new one), by an engine on the fixture's clock, then closed. */
export function fixtureStore(file: string): void {
  let now = new Date(STEPS[0]!.at);
  const engine = createEngine(file, { now: () => now });
  try {
    playFixture({ engine, setTime: (iso: string) => void (now = new Date(iso)) } as TestEngine);
  } finally {
    engine.close();
  }
}

/** A report's JSON (`trade report --json` of both days) holds every hand-computed number above. */
export function expectHandComputed(report: Record<string, any>): void {
  expect(report.summary).toEqual(SUMMARY);
  expect(report.byInstrument).toEqual(BY_INSTRUMENT);
  expect(report.byDay).toEqual(BY_DAY);
  expect(report.trades.map(({ number: _n, account: _a, entryExecutionId: _e, exitExecutionId: _x, ...t }: Record<string, unknown>) => t)).toEqual(TRADES);
  expect(report.openPositions).toEqual(OPEN);
  expect(report.equity.map((p: { equity: number }) => p.equity)).toEqual(EQUITY);
}
