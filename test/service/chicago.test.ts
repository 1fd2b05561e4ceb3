/**
 * Chicago's wall clock is computed from the US rule (no Intl formatter at start-up); Intl, with
 * the tz database Node carries, is the judge. Every daylight-saving transition from 2007 to 2060
 * is checked minute by minute either side, and random instants across two centuries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chicagoOffset, chicagoWallClock, fromChicagoWallClock, quoteTime, serviceTime, tradingDayStart } from '../../src/service/chicago.js';

const DAY = 86_400_000;
const intl = new Intl.DateTimeFormat('en-US', {
  timeZone: 'America/Chicago',
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

/** Intl's reading of Chicago's wall clock, encoded as UTC like chicagoWallClock's. */
function byIntl(instant: number): number {
  const p = Object.fromEntries(intl.formatToParts(new Date(instant)).map((x) => [x.type, Number(x.value)]));
  return Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!) + (((instant % 1000) + 1000) % 1000);
}

/** The instants at which Intl says the offset changes in a year: a day at a time, then bisected. */
function transitionsOf(year: number): number[] {
  const found: number[] = [];
  const offset = (t: number) => byIntl(t) - t;
  for (let t = Date.UTC(year, 0, 1); t < Date.UTC(year + 1, 0, 1); t += DAY) {
    if (offset(t) === offset(t + DAY)) continue;
    let [lo, hi] = [t, t + DAY];
    while (hi - lo > 1000) {
      const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
      if (offset(mid) === offset(lo)) lo = mid;
      else hi = mid;
    }
    found.push(hi);
  }
  return found;
}

describe('chicagoWallClock', () => {
  it('agrees with Intl a minute either side of every transition, 2007 to 2060', () => {
    for (let year = 2007; year <= 2060; year++) {
      const transitions = transitionsOf(year);
      expect(transitions, `${year}`).toHaveLength(2);
      for (const at of transitions) {
        for (const t of [at - 60_000, at - 1000, at - 1, at, at + 1, at + 60_000]) {
          expect(chicagoWallClock(t), new Date(t).toISOString()).toBe(byIntl(t));
        }
      }
    }
  });

  it('switches on the second Sunday of March at 08:00 UTC and the first Sunday of November at 07:00 UTC', () => {
    expect(transitionsOf(2026).map((t) => new Date(t).toISOString())).toEqual(['2026-03-08T08:00:00.000Z', '2026-11-01T07:00:00.000Z']);
    expect(chicagoWallClock(Date.parse('2026-03-08T07:59:59.999Z'))).toBe(Date.parse('2026-03-08T01:59:59.999Z'));
    expect(chicagoWallClock(Date.parse('2026-03-08T08:00:00.000Z'))).toBe(Date.parse('2026-03-08T03:00:00.000Z'));
    expect(chicagoWallClock(Date.parse('2026-11-01T06:59:59.999Z'))).toBe(Date.parse('2026-11-01T01:59:59.999Z'));
    expect(chicagoWallClock(Date.parse('2026-11-01T07:00:00.000Z'))).toBe(Date.parse('2026-11-01T01:00:00.000Z'));
  });

  it('agrees with Intl at any instant from 1950 to 2150 (before 2007 it is Intl itself)', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1950, 0, 1), max: Date.UTC(2150, 0, 1) }), (t) => {
        expect(chicagoWallClock(t)).toBe(byIntl(t));
      }),
      { numRuns: 20_000 },
    );
  });

  it('serviceTime answers each time for its own input, asked again or in turn (it keeps its last answer)', () => {
    const instant = fc.integer({ min: Date.parse('2007-01-01'), max: Date.parse('2060-12-31') }).map((ms) => new Date(ms).toISOString());
    fc.assert(
      fc.property(fc.array(fc.oneof(instant, fc.constantFrom('2026-03-18T14:30:00.123Z', '2026-03-08T08:00:00.000Z')), { minLength: 1, maxLength: 12 }), (times) => {
        for (const iso of [...times, ...[...times].reverse()]) {
          const wall = new Date(chicagoWallClock(Date.parse(iso))).toISOString();
          expect(serviceTime(iso)).toBe(`${wall.slice(0, 23)}0000`);
        }
      }),
      { numRuns: 500 },
    );
    // A time it cannot read throws every time, and leaves the kept answer as it was.
    expect(serviceTime('2026-03-18T14:30:00.123Z')).toBe('2026-03-18T09:30:00.1230000');
    expect(() => serviceTime('not a time')).toThrow(RangeError);
    expect(() => serviceTime('not a time')).toThrow(RangeError);
    expect(serviceTime('2026-03-18T14:30:00.123Z')).toBe('2026-03-18T09:30:00.1230000');
  });

  it('keeps the formats built on it', () => {
    expect(serviceTime('2026-03-18T14:30:00.123Z')).toBe('2026-03-18T09:30:00.1230000');
    expect(serviceTime('2026-01-18T14:30:00Z')).toBe('2026-01-18T08:30:00.0000000');
    expect(chicagoOffset(Date.parse('2026-07-01T12:00:00Z'))).toBe('-05:00');
    expect(chicagoOffset(Date.parse('2026-12-01T12:00:00Z'))).toBe('-06:00');
    expect(quoteTime(Date.parse('2026-03-18T18:51:54Z'))).toBe('03/18/2026 01:51:54 PM');
    expect(tradingDayStart(new Date('2026-03-18T14:00:00Z')).toISOString()).toBe('2026-03-17T22:00:00.000Z');
    expect(tradingDayStart(new Date('2026-03-18T22:30:00Z')).toISOString()).toBe('2026-03-18T22:00:00.000Z');
    expect(new Date(fromChicagoWallClock(Date.UTC(2026, 0, 5, 17))).toISOString()).toBe('2026-01-05T23:00:00.000Z');
  });
});
