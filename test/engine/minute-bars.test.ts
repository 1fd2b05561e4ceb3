/** The engine's price history as one-minute bars (issue 30): built as prices arrive, and from the ticks of an older store. */
import { rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/engine.js';
import { MIGRATIONS, SCHEMA_VERSION } from '../../src/engine/store.js';
import { order, testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
afterEach(() => t.cleanup());

const at = (iso: string) => Date.parse(iso);

describe('one-minute bars', () => {
  it('every price set joins the bar of its minute: open the first, close the last, high and low between', () => {
    t = testEngine('2025-09-02T14:00:05Z');
    const { engine } = t;
    engine.setPrice('ES 09-25', 6000);
    t.setTime('2025-09-02T14:00:30Z');
    engine.setPrice('ES 09-25', 6004.5);
    t.setTime('2025-09-02T14:00:59.999Z');
    engine.setPrice('ES 09-25', 5998.25);
    t.setTime('2025-09-02T14:00:59.999Z');
    engine.setPrice('ES 09-25', 6001);
    t.setTime('2025-09-02T14:03:00Z');
    engine.setPrice('ES 09-25', 6002);
    engine.setPrice('NQ 09-25', 21000);
    expect(engine.minuteBars('ES 09-25', at('2025-09-02T14:00:00Z'), at('2025-09-02T15:00:00Z'))).toEqual([
      { minute: at('2025-09-02T14:00:00Z'), open: 6000, high: 6004.5, low: 5998.25, close: 6001, ticks: 4 },
      { minute: at('2025-09-02T14:03:00Z'), open: 6002, high: 6002, low: 6002, close: 6002, ticks: 1 },
    ]);
    // A window that starts inside a minute takes that minute's bar; one that ends before a minute leaves it out.
    expect(engine.minuteBars('ES 09-25', at('2025-09-02T14:00:40Z'), at('2025-09-02T14:02:59Z')).map((b) => b.close)).toEqual([6001]);
    expect(engine.minuteBars('NQ 09-25', 0, at('2025-09-03T00:00:00Z'))).toEqual([
      { minute: at('2025-09-02T14:03:00Z'), open: 21000, high: 21000, low: 21000, close: 21000, ticks: 1 },
    ]);
  });

  it('a demo price taken by a MARKET order is a price set like any other', () => {
    t = testEngine('2025-09-02T14:00:05Z');
    t.engine.placeOrder(order());
    expect(t.engine.minuteBars('ES 09-25', 0, at('2025-09-03T00:00:00Z'))).toEqual([
      { minute: at('2025-09-02T14:00:00Z'), open: 6000, high: 6000, low: 6000, close: 6000, ticks: 1 },
    ]);
  });

  it('a price that fails its check (off the tick) leaves no bar', () => {
    t = testEngine();
    expect(() => t.engine.setPrice('ES 09-25', 6000.1)).toThrow();
    expect(t.engine.minuteBars('ES 09-25', 0, at('2030-01-01T00:00:00Z'))).toEqual([]);
  });

  it('a store of the version before gets the bars of the ticks it already holds when it is opened', () => {
    t = testEngine();
    t.engine.close();
    rmSync(t.file, { force: true });
    const db = new Database(t.file);
    // The version just before the bars' migration (later ones may follow it).
    const before = MIGRATIONS.findIndex((m) => m.includes('CREATE TABLE minute_bars'));
    for (const migration of MIGRATIONS.slice(0, before)) db.exec(migration);
    db.pragma(`user_version = ${before}`);
    const tick = db.prepare('INSERT INTO ticks (instrument, price, time) VALUES (?, ?, ?)');
    tick.run('ES 09-25', 6000, '2025-09-02T14:00:10.000Z');
    tick.run('ES 09-25', 5990, '2025-09-02T14:00:20.000Z');
    tick.run('ES 09-25', 6010, '2025-09-02T14:00:30.000Z');
    tick.run('ES 09-25', 6005, '2025-09-02T14:00:40.000Z');
    tick.run('ES 09-25', 6006, '2025-09-02T14:01:00.000Z');
    db.close();
    t.engine = createEngine(t.file, { now: () => new Date('2025-09-02T15:00:00Z') });
    expect(t.engine.minuteBars('ES 09-25', 0, at('2025-09-03T00:00:00Z'))).toEqual([
      { minute: at('2025-09-02T14:00:00Z'), open: 6000, high: 6010, low: 5990, close: 6005, ticks: 4 },
      { minute: at('2025-09-02T14:01:00Z'), open: 6006, high: 6006, low: 6006, close: 6006, ticks: 1 },
    ]);
    // New prices go on from there.
    t.engine.setPrice('ES 09-25', 6007);
    expect(t.engine.minuteBars('ES 09-25', at('2025-09-02T15:00:00Z'), at('2025-09-02T15:00:00Z'))).toEqual([
      { minute: at('2025-09-02T15:00:00Z'), open: 6007, high: 6007, low: 6007, close: 6007, ticks: 1 },
    ]);
  });
});
