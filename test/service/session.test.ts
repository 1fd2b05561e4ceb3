import { describe, expect, it } from 'vitest';
import { closeOf, otherCloses, sessionEnd } from '../../src/service/session.js';

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

describe("each contract's own close (§10)", () => {
  it('the grains close at 13:20 Chicago; everything else, and a root the table lacks, at 16:00', () => {
    expect(otherCloses()).toEqual({ '13:20': ['ZC', 'ZS'] });
    expect([closeOf('ZC 03-27'), closeOf('ZS 01-27'), closeOf('ES 03-27'), closeOf('CL 01-27'), closeOf('XYZ 01-27')]).toEqual(['13:20', '13:20', '16:00', '16:00', '16:00']);
    // 10:00 CDT Wednesday: the grain session ends at 13:20 (18:20 UTC), the equity one at 16:00.
    expect(sessionEnd(new Date('2025-09-03T15:00:00Z'), '13:20').toISOString()).toBe('2025-09-03T18:20:00.000Z');
    // Placed at 14:00, after the grains' close: the next day's.
    expect(sessionEnd(new Date('2025-09-03T19:00:00Z'), '13:20').toISOString()).toBe('2025-09-04T18:20:00.000Z');
    // Friday after 13:20: Monday's, under standard time in winter (19:20 UTC).
    expect(sessionEnd(new Date('2025-01-17T20:00:00Z'), '13:20').toISOString()).toBe('2025-01-20T19:20:00.000Z');
  });
});

