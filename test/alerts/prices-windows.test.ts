/** Relative prices (webhook-reference.md §4.6) and alert-level trading windows (§4.8). */
import { describe, expect, test } from 'vitest';
import { parsePrice, resolvePrice } from '../../src/alerts/prices.js';
import { easternMinute, parseTimeOfDay, windowAt } from '../../src/alerts/windows.js';

const ES = { tickSize: 0.25, pointValue: 50 };

describe('§4.6 price grammar', () => {
  test.each([
    ['1212.25', { kind: 'absolute', value: 1212.25 }],
    ['+1212', { kind: 'absolute', value: 1212 }],
    ['5%', { kind: 'relative', amount: 5, unit: 'percent' }],
    ['5 %', { kind: 'relative', amount: 5, unit: 'percent' }],
    ['-3.3129%', { kind: 'relative', amount: -3.3129, unit: 'percent' }],
    ['1 tick', { kind: 'relative', amount: 1, unit: 'ticks' }],
    ['12ticks', { kind: 'relative', amount: 12, unit: 'ticks' }],
    ['7.5 TICKS', { kind: 'relative', amount: 7.5, unit: 'ticks' }],
    ['15 points', { kind: 'relative', amount: 15, unit: 'points' }],
    ['-1 point', { kind: 'relative', amount: -1, unit: 'points' }],
    ['250 dollars', { kind: 'relative', amount: 250, unit: 'dollars' }],
    ['$250', { kind: 'relative', amount: 250, unit: 'dollars' }],
    ['-$250', { kind: 'relative', amount: -250, unit: 'dollars' }],
    ['+250$', { kind: 'relative', amount: 250, unit: 'dollars' }],
  ])('%s', (text, expected) => {
    expect(parsePrice(text)).toMatchObject(expected);
  });

  test.each(['1212,25', '-10', 'ten ticks', '$250 dollars', '5%%', '0', ''])('%s is not a price', (text) => {
    expect(typeof parsePrice(text)).toBe('string');
  });
});

describe('§4.6 resolution', () => {
  const at = (text: string, reference = 6000) => {
    const spec = parsePrice(text);
    if (typeof spec === 'string') throw new Error(spec);
    return resolvePrice(spec, reference, ES);
  };
  test('ticks, points, dollars (÷ point value per contract) and percent, from the reference', () => {
    expect(at('-10 ticks')).toBe(5997.5);
    expect(at('15 points')).toBe(6015);
    expect(at('250 dollars')).toBe(6005);
    expect(at('-$250')).toBe(5995);
    expect(at('5%')).toBe(6300);
    expect(at('6010.5')).toBe(6010.5);
  });
  test('rounded to the nearest tick, halves away from the reference', () => {
    expect(at('0.5 ticks')).toBe(6000.25);
    expect(at('-0.5 ticks')).toBe(5999.75);
    expect(at('0.4 ticks')).toBe(6000);
    expect(at('0.01%')).toBe(6000.5);
    expect(resolvePrice({ kind: 'relative', amount: 3, unit: 'ticks', text: '3 ticks' }, 2300.1, { tickSize: 0.1, pointValue: 50 })).toBe(2300.4);
  });
  test('a result at or below zero is no price', () => {
    expect(at('-100%')).toBeUndefined();
    expect(at('-30000 ticks')).toBeUndefined();
  });
});

describe('§4.8 times and windows', () => {
  test.each([
    ['01:30', 90],
    ['1:30', 90],
    ['1:30 AM', 90],
    ['1:30AM', 90],
    ['13:30', 810],
    ['1:30 PM', 810],
    ['12:00 AM', 0],
    ['12:15 pm', 735],
  ])('%s is minute %i', (text, minute) => {
    expect(parseTimeOfDay(text)).toBe(minute);
  });
  test.each(['24:00', '13:30 PM', '0:30 AM', '9', '9:60', 'noon'])('%s is not a time', (text) => {
    expect(typeof parseTimeOfDay(text)).toBe('string');
  });

  test('start inclusive, end exclusive; start after end wraps past midnight', () => {
    const day = { start: 570, end: 960 };
    expect(windowAt(day, 569)).toEqual({ open: false, detail: 'Outside trading window 09:30–16:00 ET' });
    expect(windowAt(day, 570)).toEqual({ open: true });
    expect(windowAt(day, 959)).toEqual({ open: true });
    expect(windowAt(day, 960).open).toBe(false);
    const night = { start: 18 * 60, end: 2 * 60 };
    expect([windowAt(night, 23 * 60).open, windowAt(night, 60).open, windowAt(night, 12 * 60).open]).toEqual([true, true, false]);
    expect(windowAt({ start: 600 }, 599)).toEqual({ open: false, detail: 'Outside trading window from 10:00 ET' });
    expect(windowAt({ end: 600 }, 600)).toEqual({ open: false, detail: 'Outside trading window until 10:00 ET' });
  });

  test('closing only after a time, inside the window', () => {
    const w = { start: 570, end: 960, closingOnlyAfter: 945 };
    expect(windowAt(w, 944)).toEqual({ open: true });
    expect(windowAt(w, 945)).toEqual({ open: 'closing-only', detail: 'Closing only after 15:45 ET: opening orders blocked' });
  });

  test('the minute is read in US/Eastern, daylight saving included', () => {
    expect(easternMinute(new Date('2026-07-01T13:30:00Z'))).toBe(9 * 60 + 30);
    expect(easternMinute(new Date('2026-01-15T14:30:00Z'))).toBe(9 * 60 + 30);
  });
});
