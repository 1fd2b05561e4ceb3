/** FIFO pairing on its own: gaps in what was seen, and how a fill's commission is shared. */
import { describe, expect, it } from 'vitest';
import { pairFills, type ReportFill } from '../../src/report/round-trips.js';

let n = 0;
const fill = (action: 'BUY' | 'SELL', quantity: number, price: number, minute: number, extra: Partial<ReportFill> = {}): ReportFill => ({
  id: `e${++n}`, account: 'Sim101', instrument: 'ES 09-25', action, quantity, price, time: Date.UTC(2025, 8, 2, 14, minute), commission: 0, ...extra,
});

describe('pairing', () => {
  it('a close larger than the oldest lot closes it and goes on to the next: two trades, each with its entry', () => {
    const second = fill('BUY', 2, 6004, 1);
    const { trades, open } = pairFills([fill('BUY', 1, 6000, 0), second, fill('SELL', 2, 6010, 2)]);
    expect(trades.map((t) => [t.quantity, t.entryPrice, t.grossProfit])).toEqual([
      [1, 6000, 500],
      [1, 6004, 300],
    ]);
    expect(open).toEqual([{ account: 'Sim101', instrument: 'ES 09-25', side: 'Long', lots: [{ quantity: 1, price: 6004, time: second.time, executionId: second.id }] }]);
  });

  it("shares each fill's commission among its trades by quantity: 3.00 on BUY 3, 1.00 on SELL 1, 2.00 on SELL 2", () => {
    const { trades } = pairFills([fill('BUY', 3, 6000, 0, { commission: 3 }), fill('SELL', 1, 6001, 1, { commission: 1 }), fill('SELL', 2, 6002, 2, { commission: 2 })]);
    // 1 + 1; then 2 (two of the entry's three) + 2.
    expect(trades.map((t) => [t.quantity, t.commission, t.netProfit])).toEqual([
      [1, 2, 48],
      [2, 4, 196],
    ]);
  });

  it('keeps accounts and instruments apart, and orders fills by time whatever order they come in', () => {
    const late = fill('SELL', 1, 6010, 5);
    const other = fill('BUY', 1, 100, 1, { account: 'Sim102' });
    const { trades, open } = pairFills([late, other, fill('BUY', 1, 6000, 0)]);
    expect(trades.map((t) => [t.account, t.grossProfit])).toEqual([['Sim101', 500]]);
    expect(open.map((o) => o.account)).toEqual(['Sim102']);
  });

  it('a root the contract table does not know counts 1 per point', () => {
    const { trades } = pairFills([fill('BUY', 1, 10, 0, { instrument: 'XYZ 03-26' }), fill('SELL', 1, 12.5, 1, { instrument: 'XYZ 03-26' })]);
    expect(trades[0]!.grossProfit).toBe(2.5);
  });
});

describe('gaps: fills missing from what was seen', () => {
  it('an exit whose entry was not seen (the service says flat after it) makes no trade and is said', () => {
    const exit = fill('SELL', 1, 6010, 5, { positionAfter: 0 });
    const { trades, open, gaps } = pairFills([exit]);
    expect(trades).toEqual([]);
    expect(open).toEqual([]);
    expect(gaps).toEqual([{ account: 'Sim101', instrument: 'ES 09-25', time: exit.time, executionId: exit.id, reported: 0, counted: 1 }]);
  });

  it('a part of the position closed by fills not seen: the oldest lots go, the rest pair on', () => {
    const { trades, gaps } = pairFills([
      fill('BUY', 1, 6000, 0, { positionAfter: 1 }),
      // A SELL 1 is missing here: flat, then this BUY opens long 1 (the service says 1; the fills seen make 2).
      fill('BUY', 1, 6004, 2, { positionAfter: 1 }),
      fill('SELL', 1, 6010, 3, { positionAfter: 0 }),
    ]);
    expect(trades.map((t) => [t.entryPrice, t.exitPrice, t.grossProfit])).toEqual([[6004, 6010, 300]]);
    expect(gaps.map((g) => [g.reported, g.counted])).toEqual([[1, 2]]);
  });

  it('a position opened by fills not seen: an older lot of unknown entry, whose trade has no P&L', () => {
    // Long 2 bought before the history began; this BUY 1 makes 3 (the service says so).
    const { trades, gaps } = pairFills([fill('BUY', 1, 6000, 5, { positionAfter: 3 }), fill('SELL', 3, 6010, 6, { positionAfter: 0 })]);
    expect(gaps[0]).toMatchObject({ reported: 3, counted: 1 });
    expect(trades.map((t) => [t.quantity, t.entryPrice, t.grossProfit])).toEqual([
      [2, null, null],
      [1, 6000, 500],
    ]);
  });
});
