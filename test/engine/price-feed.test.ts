/** The price sources' pure parts: replay files, a bar's path, the tick grid, the seeded walk. */
import { describe, expect, it } from 'vitest';
import { barPath, checkTicks, nearestTicks, onTick, parseFeed, randomWalk, seededRandom } from '../../src/engine/price-feed.js';

const t = (iso: string) => Date.parse(iso);

describe('barPath', () => {
  it('a bar that closed at or above its open dips first: open, low, high, close', () => {
    expect(barPath(5000, 5003, 4999, 5002)).toEqual([5000, 4999, 5003, 5002]);
    expect(barPath(5000, 5001, 4999, 5000)).toEqual([5000, 4999, 5001, 5000]);
  });
  it('a bar that closed below its open rises first: open, high, low, close; equal neighbours once', () => {
    expect(barPath(5000, 5001, 4997, 4998)).toEqual([5000, 5001, 4997, 4998]);
    expect(barPath(5000, 5000, 4998, 4998)).toEqual([5000, 4998]);
    expect(barPath(5000, 5000, 5000, 5000)).toEqual([5000]);
  });
});

describe('parseFeed', () => {
  it('reads CSV bars and ticks by header name, in any case, with times in ISO, epoch seconds or ms', () => {
    const csv = 'Time,Open,High,Low,Close,Volume\n2026-03-18T14:30:00Z,5000,5001,4999.5,5000.75,1200\n1773844260,5000.75,5003,5000.5,5002.5,900\n\n# a comment\n1773844320000,5002.5,5002.5,5002.5,5002.5,0\n';
    expect(parseFeed('bars.csv', csv)).toEqual([
      { line: 2, time: t('2026-03-18T14:30:00Z'), instrument: undefined, prices: [5000, 4999.5, 5001, 5000.75], volume: 1200, kind: 'bar' },
      { line: 3, time: t('2026-03-18T14:31:00Z'), instrument: undefined, prices: [5000.75, 5000.5, 5003, 5002.5], volume: 900, kind: 'bar' },
      { line: 6, time: t('2026-03-18T14:32:00Z'), instrument: undefined, prices: [5002.5], volume: 0, kind: 'bar' },
    ]);
    const ticks = 'timestamp,price,instrument\n2026-03-18 14:30:00,5000.25,ES\n"2026-03-18 14:30:01","5000.5","ES 06-26"\n';
    expect(parseFeed('ticks.csv', ticks).map((r) => [r.time, r.prices, r.instrument, r.kind])).toEqual([
      [t('2026-03-18T14:30:00Z'), [5000.25], 'ES', 'tick'],
      [t('2026-03-18T14:30:01Z'), [5000.5], 'ES 06-26', 'tick'],
    ]);
  });

  it('reads NDJSON objects', () => {
    const text = '{"time":"2026-03-18T14:30:00Z","price":5000}\n{"time":1773844201,"open":5000,"high":5002,"low":5000,"close":5001.5,"instrument":"NQ"}\n';
    expect(parseFeed('f.ndjson', text).map((r) => [r.line, r.prices, r.instrument])).toEqual([
      [1, [5000], undefined],
      [2, [5000, 5002, 5001.5], 'NQ'],
    ]);
  });

  it('refuses, naming the file, line and field: times going back, a bar that does not hold together, missing or bad values', () => {
    const cases: Array<[string, string]> = [
      ['time,price\n2026-03-18T14:31:00Z,5000\n2026-03-18T14:30:00Z,5001\n', 'f.csv, line 3: time: goes back (2026-03-18T14:30:00.000Z after 2026-03-18T14:31:00.000Z)'],
      ['time,open,high,low,close\n2026-03-18T14:30:00Z,5000,4999,4998,5000\n', "f.csv, line 2: high: 4999 is below the bar's open, close or low"],
      ['time,open,high,low,close\n2026-03-18T14:30:00Z,5000,5002,5001,5000\n', "f.csv, line 2: low: 5001 is above the bar's open or close"],
      ['time,open,high,low,close\n2026-03-18T14:30:00Z,5000,5002,,5000\n', "f.csv, line 2: low: must be a positive number, got ''"],
      ['time,price\nyesterday,5000\n', "f.csv, line 2: time: not a time, got 'yesterday'"],
      ['time,price\n2026-03-18T14:30:00Z,-1\n', "f.csv, line 2: price: must be a positive number, got '-1'"],
      ['time,price\n2026-03-18T14:30:00Z,5000,1\n', 'f.csv, line 2: 3 fields, the header has 2'],
      ['price,volume\n5000,1\n', "f.csv, line 1: the header names no time column (time, timestamp, date, datetime); got 'price,volume'"],
      ['time,volume\n2026-03-18T14:30:00Z,1\n', 'f.csv, line 2: price: is required (or open, high, low and close for a bar)'],
      ['{"time":"2026-03-18T14:30:00Z","price":5000}\n{"time":\n', 'f.csv, line 2: not valid JSON'],
      ['time,price\n', 'f.csv holds no records, only a header'],
      ['\n\n', 'f.csv holds no records'],
    ];
    for (const [text, message] of cases) expect(() => parseFeed('f.csv', text), message).toThrow(message);
  });
});

describe('the tick grid', () => {
  it('knows a price on or off the root tick, and the nearest valid prices', () => {
    expect(onTick('ES 06-26', 5000.25)).toBe(true);
    expect(onTick('ES 06-26', 5000.1)).toBe(false);
    expect(nearestTicks('ES 06-26', 5000.1)).toEqual([5000, 5000.25]);
    expect(onTick('ZN 06-26', 110.015625)).toBe(true);
    expect(onTick('6E 06-26', 1.08505)).toBe(true);
    expect(onTick('6E 06-26', 1.08502)).toBe(false);
    expect(nearestTicks('CL 06-26', 70.005)).toEqual([70, 70.01]);
    expect(onTick('XYZ 06-26', 1.2345)).toBe(true); // not in the table: any price
  });

  it('checkTicks names the first record off the grid and the prices around it', () => {
    const records = parseFeed('f.csv', 'time,price\n2026-03-18T14:30:00Z,5000\n2026-03-18T14:30:01Z,5000.3\n');
    expect(() => checkTicks('f.csv', records, () => 'ES 06-26')).toThrow(
      'f.csv, line 3: 5000.3 is not a multiple of the tick size 0.25 of ES; the nearest valid prices are 5000.25 and 5000.5',
    );
  });
});

describe('the seeded random walk', () => {
  it('is the same for the same seed, different for another, on the grid, never at or below zero', () => {
    const walk = (seed: number) => {
      const next = randomWalk({ seed, start: 5000, tickSize: 0.25, maxTicks: 4 });
      return Array.from({ length: 500 }, () => next());
    };
    expect(walk(7)).toEqual(walk(7));
    expect(walk(7)).not.toEqual(walk(8));
    for (const price of walk(7)) {
      expect(onTick('ES 06-26', price)).toBe(true);
      expect(price).toBeGreaterThan(0);
    }
    const steps = walk(7).map((p, i, all) => Math.abs(p - (i === 0 ? 5000 : all[i - 1]!)) / 0.25);
    expect(Math.max(...steps)).toBeLessThanOrEqual(4);
    const low = randomWalk({ seed: 1, start: 0.5, tickSize: 0.25, maxTicks: 4 });
    for (let i = 0; i < 200; i++) expect(low()).toBeGreaterThanOrEqual(0.25);
  });

  it('seededRandom gives numbers in [0, 1) and repeats by seed', () => {
    const a = seededRandom(42);
    const b = seededRandom(42);
    for (let i = 0; i < 100; i++) {
      const x = a();
      expect(x).toBe(b());
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });
});
