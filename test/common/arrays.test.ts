/** Lists longer than a call's arguments may be (issue 34): a day of prices, a report's trades, a server's page. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { appendAll, maxOf, minOf } from '../../src/common/arrays.js';
import { createEngine } from '../../src/engine/engine.js';
import { simulate } from '../../src/engine/service.js';
import { figuresOf } from '../../src/report/figures.js';

const LONG = 200_000;
const T0 = Date.parse('2025-09-02T14:00:00Z');

describe('maxOf, minOf, appendAll', () => {
  it('answer as Math.max, Math.min and push do, for any list', () => {
    fc.assert(
      fc.property(fc.array(fc.double()), (values) => {
        expect(maxOf(values)).toBe(Math.max(...values));
        expect(minOf(values)).toBe(Math.min(...values));
        expect(appendAll([1, 2], values)).toEqual([1, 2, ...values]);
      }),
      { seed: 20261128, numRuns: 300 },
    );
  });

  it(`take ${LONG.toLocaleString('en-US')} values, where spreading them into a call throws`, () => {
    const values = Array.from({ length: LONG }, (_, i) => (i * 7919) % 100_003);
    expect(() => Math.max(...values)).toThrow(RangeError);
    expect(() => [].push(...(values as never[]))).toThrow(RangeError);
    expect(maxOf(values)).toBe(100_002);
    expect(minOf(values)).toBe(0);
    expect(appendAll([-1], values)).toHaveLength(LONG + 1);
  });
});

describe('long days', () => {
  it(`GetQuote answers for a day of ${LONG.toLocaleString('en-US')} prices`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'trade-long-'));
    try {
      const file = join(dir, 'trade.db');
      const now = new Date('2025-09-02T15:00:00Z');
      let engine = createEngine(file, { now: () => now });
      engine.setPrice('ES 09-25', 5000);
      engine.close();
      const db = new Database(file);
      db.prepare(
        `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ?)
         INSERT INTO ticks (instrument, price, time) SELECT 'ES 09-25', 4900 + (i * 37 % 200), strftime('%Y-%m-%dT%H:%M:%fZ', '2025-09-02T14:00:00Z', '+' || (i / 1000.0) || ' seconds') FROM n`,
      ).run(LONG);
      db.close();
      engine = createEngine(file, { now: () => now });
      try {
        const { body } = simulate(engine, 'GetQuote', { instrument: ['ES 09-25'] });
        expect(JSON.stringify(body)).toContain('"high":5099');
        expect(JSON.stringify(body)).toContain('"low":4900');
      } finally {
        engine.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it(`a report's figures take ${LONG.toLocaleString('en-US')} trades`, () => {
    const trades = Array.from({ length: LONG }, (_, i) => ({ netProfit: i % 3 === 0 ? -(i % 101) - 1 : (i % 97) + 1, exitTime: T0 + i * 1000, entryTime: T0 + i * 1000 - 500, commission: 0 }));
    const figures = figuresOf(trades as unknown as Parameters<typeof figuresOf>[0], 100_000);
    expect(figures.largestWin).toBe(97);
    expect(figures.largestLoss).toBe(-101);
    expect(figures.trades).toBe(LONG);
  });
});
