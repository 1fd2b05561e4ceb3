import { describe, expect, it } from 'vitest';
import { sessionEnd } from '../../src/engine/session.js';

const end = (iso: string) => sessionEnd(new Date(iso)).toISOString();

describe('session end: 16:00 America/Chicago, weekdays', () => {
  it('is 21:00 UTC under daylight time (CDT, UTC-5)', () => {
    expect(end('2025-09-02T14:00:00Z')).toBe('2025-09-02T21:00:00.000Z');
  });

  it('is 22:00 UTC under standard time (CST, UTC-6)', () => {
    expect(end('2025-01-15T15:00:00Z')).toBe('2025-01-15T22:00:00.000Z');
  });

  it('after the close, is the next day', () => {
    expect(end('2025-09-02T21:00:00Z')).toBe('2025-09-03T21:00:00.000Z');
    expect(end('2025-09-02T20:59:59.999Z')).toBe('2025-09-02T21:00:00.000Z');
  });

  it('after Friday close or at the weekend, is Monday', () => {
    expect(end('2025-09-05T22:00:00Z')).toBe('2025-09-08T21:00:00.000Z');
    expect(end('2025-09-07T12:00:00Z')).toBe('2025-09-08T21:00:00.000Z');
  });

  it('follows the spring DST change (Sunday 9 March 2025)', () => {
    // Placed Friday under CST, the session ends Monday under CDT.
    expect(end('2025-03-07T23:00:00Z')).toBe('2025-03-10T21:00:00.000Z');
  });

  it('follows the autumn DST change (Sunday 2 November 2025)', () => {
    expect(end('2025-10-31T22:00:00Z')).toBe('2025-11-03T22:00:00.000Z');
    expect(end('2025-10-31T20:00:00Z')).toBe('2025-10-31T21:00:00.000Z');
  });

  it('uses the Chicago date, not the UTC date, near midnight UTC', () => {
    // 01:00 UTC Wednesday is 20:00 Tuesday in Chicago: after Tuesday's close.
    expect(end('2025-09-03T01:00:00Z')).toBe('2025-09-03T21:00:00.000Z');
  });
});
