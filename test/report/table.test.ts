/** The terminal rendering's own rules: durations, Chicago times, and how much of the history's coverage is listed. */
import { describe, expect, it } from 'vitest';
import type { Report } from '../../src/report/report.js';
import { chicagoMinute, duration, noteLines } from '../../src/report/table.js';

describe('the report at a terminal', () => {
  it('writes durations as a person reads them', () => {
    expect([duration(null), duration(4_400), duration(2_314_286), duration(5_400_000), duration(183_600_000)]).toEqual(['—', '4s', '38m 34s', '1h 30m', '2d 3h']);
  });

  it("writes times on Chicago's clock, daylight or standard", () => {
    expect(chicagoMinute('2025-09-02T23:00:00.000Z')).toBe('2025-09-02 18:00');
    expect(chicagoMinute('2025-12-02T23:00:00.000Z')).toBe('2025-12-02 17:00');
    expect(chicagoMinute(null)).toBe('—');
  });

  it('lists the last ten stretches the history has seen in the window, and how many earlier ones there are', () => {
    const hour = 3_600_000;
    const start = Date.parse('2025-09-02T13:00:00Z');
    const seen = Array.from({ length: 13 }, (_, i) => ({
      account: 'Sim101',
      from: new Date(start + i * hour).toISOString(),
      to: new Date(start + i * hour + 900_000).toISOString(),
    }));
    const report = {
      from: new Date(start + hour).toISOString(), to: new Date(start + 20 * hour).toISOString(), notes: ['a note'],
      source: { backend: 'http', service: 'h', history: 'f', seen, refreshed: true },
    } as unknown as Report;
    const lines = noteLines(report);
    // The first stretch ends before the window: 12 in it, the 2 earliest summed up.
    expect(lines[0]).toBe('Seen whole: 2 earlier stretches of this window (--json lists every one).');
    expect(lines.slice(1, -1)).toHaveLength(10);
    expect(lines[1]).toBe('Seen whole: Sim101 from 2025-09-02 11:00 to 2025-09-02 11:15 (every execution of that stretch is in the history).');
    expect(lines.at(-1)).toBe('a note');
  });
});
