/**
 * A group commit reads the session clock's row once for the whole transaction (no other process
 * can write it while the group holds the write lock): the operations of the group that write the
 * clock themselves, or roll such a write back, must still see the clock as it is.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => {
  t = testEngine();
});
afterEach(() => t.cleanup());

const claim = { source: 'test.csv', startMs: Date.UTC(2025, 8, 2, 14, 30), speed: 1, total: 10, paused: true };

describe('the session clock inside a group', () => {
  it('an operation sees the replay its neighbour claimed in the same group, and the wall clock once it is released', () => {
    const settled = t.engine.group([
      () => t.engine.clockState().replay,
      () => t.engine.claimClock(claim),
      () => [t.engine.clockState().replay, t.engine.clockState().timeMs],
      () => t.engine.releaseClock(),
      () => t.engine.clockState().replay,
    ]);
    expect(settled).toEqual([
      { ok: true, value: false },
      { ok: true, value: undefined },
      { ok: true, value: [true, claim.startMs] },
      { ok: true, value: undefined },
      { ok: true, value: false },
    ]);
    expect(t.engine.clockState().replay).toBe(false);
  });

  it('a claim rolled back with its savepoint is not seen by the operations after it', () => {
    const settled = t.engine.group([
      () => {
        t.engine.claimClock(claim);
        // Read (and so held) after the write, then undone.
        expect(t.engine.clockState().replay).toBe(true);
        throw new Error('failed after claiming');
      },
      () => t.engine.clockState().replay,
    ]);
    expect(settled[0]!.ok).toBe(false);
    expect(settled[1]).toEqual({ ok: true, value: false });
    expect(t.engine.clockState().replay).toBe(false);
  });
});
