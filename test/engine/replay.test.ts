/**
 * A replay's groups in the engine (issue 29): the index of working orders and the grouped writes
 * change no fill (a replay fills exactly what one price set at a time fills, checked on random
 * books and walks); the minute history gives the quotes and bars the ticks give; the session clock
 * (claim, pause, steps, release) as every reader of the store sees it; DAY expiry at the replayed
 * session's close.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createEngine, type Engine, type ReplayRecord } from '../../src/engine/engine.js';
import { readSessionTime } from '../../src/engine/clock.js';
import { batchOf } from '../../src/engine/replay-batch.js';
import { simulate } from '../../src/engine/service.js';
import { parseOrder } from '../../src/service/order.js';
import { parseArgs } from '../../src/service/operations.js';

const ES = 'ES 06-26';
const NQ = 'NQ 06-26';
const T0 = Date.parse('2026-03-18T14:00:00Z');

const dirs: string[] = [];
const engines: Engine[] = [];
afterEach(() => {
  for (const engine of engines.splice(0)) engine.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** An engine on a new store, its order ids 1, 2, 3… and its clock `now()` (the replay's, once it has one). */
function open(now: () => Date = () => new Date(T0), sweepAll = false): { engine: Engine; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'trade-replay-'));
  dirs.push(dir);
  const file = join(dir, 'trade.db');
  let next = 1;
  let exec = 1;
  const engine = createEngine(file, { now, sweepAll, newOrderId: () => (next++).toString(16).padStart(32, '0'), newExecutionId: () => `e${exec++}` });
  engines.push(engine);
  return { engine, file };
}

const rows = (file: string, sql: string) => {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
};

/** Everything a replay decides: what became of each order, and each fill. */
const outcome = (file: string) => ({
  orders: rows(file, 'SELECT order_id, state, filled_quantity, avg_fill_price, triggered, updated_at, origin FROM orders ORDER BY seq'),
  fills: rows(file, 'SELECT execution_id, action, quantity, price, time, position_after, realized FROM fills ORDER BY seq'),
  positions: rows(file, 'SELECT account, instrument, quantity, avg_price, realized_pnl FROM positions ORDER BY 1, 2'),
  prices: rows(file, 'SELECT instrument, price, updated_at FROM prices ORDER BY 1'),
});

/** Records as a replay file gives them: one price each, a second apart. */
const records = (instrument: string, prices: number[], start = T0, stepMs = 1000): ReplayRecord[] =>
  prices.map((price, i) => ({ instrument, price, timeMs: start + i * stepMs }));

/** Replays records through the engine's groups at full speed, `size` records a batch. */
function replay(engine: Engine, batch: ReplayRecord[], size = 64): { fills: number; expired: number } {
  engine.claimClock({ source: 'test', startMs: batch[0]!.timeMs, speed: 0, total: batch.length });
  let fills = 0;
  let expired = 0;
  try {
    for (let at = 0; at < batch.length; ) {
      const slice = batchOf(batch.slice(at, at + size));
      const group = engine.replayGroup(slice, { eof: at + size >= batch.length });
      fills += group.fills;
      expired += group.expired;
      at += group.records;
    }
  } finally {
    engine.releaseClock();
  }
  return { fills, expired };
}

describe('a replay fills exactly what one price set at a time, every working order run against each move, fills', () => {
  const tick = 0.25;
  const orderArb = fc.record({
    instrument: fc.constantFrom(ES, NQ),
    action: fc.constantFrom('BUY' as const, 'SELL' as const),
    orderType: fc.constantFrom('LIMIT' as const, 'STOPMARKET' as const, 'STOPLIMIT' as const),
    offset: fc.integer({ min: -12, max: 12 }),
    limitOffset: fc.integer({ min: -3, max: 3 }),
    timeInForce: fc.constantFrom('DAY' as const, 'GTC' as const),
    oco: fc.option(fc.constantFrom('a', 'b'), { nil: undefined }),
    atm: fc.boolean(),
  });
  const walkArb = fc.array(fc.record({ instrument: fc.constantFrom(ES, NQ), step: fc.integer({ min: -4, max: 4 }).filter((n) => n !== 0) }), { minLength: 20, maxLength: 160 });

  it('on random books and walks (limits, stops, stop-limits, OCO groups, ATM brackets, DAY expiry)', () => {
    fc.assert(
      fc.property(fc.array(orderArb, { maxLength: 25 }), walkArb, (book, walk) => {
        // The walk runs into the session's close (21:00 UTC in March): DAY orders expire on the way.
        const start = Date.parse('2026-03-18T20:59:30Z');
        const ticks: ReplayRecord[] = [];
        const last = new Map([[ES, 5000], [NQ, 20000]]);
        walk.forEach(({ instrument, step }, i) => {
          const price = last.get(instrument)! + step * tick;
          last.set(instrument, price);
          ticks.push({ instrument, price, timeMs: start + i * 500 });
        });
        let now = new Date(start - 60_000);
        // The plain sweep: each price set on its own, every working order run against it.
        const one = open(() => now, true);
        const grouped = open(() => new Date(start - 60_000));
        for (const { engine } of [one, grouped]) {
          engine.addAtmTemplate({ name: 'A', stopLossTicks: 4, profitTargetTicks: 6, tickSize: tick });
          engine.setPrice(ES, 5000);
          engine.setPrice(NQ, 20000);
          for (const o of book) {
            const base = o.instrument === ES ? 5000 : 20000;
            const stop = base + o.offset * tick;
            const fields = o.orderType === 'LIMIT' ? { limitPrice: stop } : o.orderType === 'STOPMARKET' ? { stopPrice: stop } : { stopPrice: stop, limitPrice: stop + o.limitOffset * tick };
            try {
              engine.placeOrder(parseOrder({ account: 'Sim101', instrument: o.instrument, action: o.action, quantity: 1, orderType: o.orderType, timeInForce: o.timeInForce, ocoId: o.oco, strategy: o.atm ? 'A' : undefined, ...fields }));
            } catch {
              // A stop on the wrong side of the market is refused, in both alike.
            }
          }
        }
        for (const t of ticks) {
          now = new Date(t.timeMs);
          one.engine.setPrice(t.instrument, t.price);
        }
        replay(grouped.engine, ticks, 7);
        expect(outcome(grouped.file)).toEqual(outcome(one.file));
      }),
      { numRuns: 25 },
    );
  });
});

describe('the history a replay keeps', () => {
  it('is each minute\'s open, high, low and close at their times: quotes and bars read what the ticks give', () => {
    // Two and a half minutes of ticks 1.5 s apart, a saw that goes up and down.
    const prices = Array.from({ length: 100 }, (_, i) => 5000 + 0.25 * (i % 17 < 9 ? i % 17 : 17 - (i % 17)) + 0.25 * Math.floor(i / 30));
    const batch = records(ES, prices, Date.parse('2026-03-18T14:00:10Z'), 1500);
    let now = new Date(batch[0]!.timeMs);
    const one = open(() => now);
    const grouped = open();
    for (const t of batch) {
      now = new Date(t.timeMs);
      one.engine.setPrice(ES, t.price);
    }
    replay(grouped.engine, batch, 30);
    const history = rows(grouped.file, 'SELECT price, time FROM ticks ORDER BY seq') as Array<{ price: number; time: string }>;
    // At most four rows a minute per group (a group's end writes the minute so far).
    expect(history.length).toBeLessThanOrEqual(4 * 3 + 4 * 4);
    const bars = (engine: Engine) => simulate(engine, 'GetBars', parseArgs('GetBars', { instrument: ES, periodType: 'minute', period: 1, from: '2026-03-18T13:00:00Z', to: '2026-03-18T15:00:00Z' }, 'client')).body;
    expect(bars(grouped.engine)).toEqual(bars(one.engine));
    expect((bars(grouped.engine) as unknown as { count: number }).count).toBe(3);
    // The one-minute bars (issue 30's) are the same too, groups split across minutes or not.
    const minuteBars = (engine: Engine) => engine.minuteBars(ES, Date.parse('2026-03-18T13:00:00Z'), Date.parse('2026-03-18T15:00:00Z'));
    expect(minuteBars(grouped.engine)).toEqual(minuteBars(one.engine));
    expect(minuteBars(grouped.engine).map((b) => b.ticks)).toEqual([34, 40, 26]);
    expect(minuteBars(grouped.engine).map((b) => [b.open, b.high, b.low, b.close])).toEqual([[5000, 5002, 5000, 5000.5], [5000.25, 5002.5, 5000.25, 5001.75], [5002, 5002.75, 5000.5, 5001.5]]);
    // The day's quote at the same moment.
    now = new Date(batch.at(-1)!.timeMs);
    const { updatedAt, ...day } = one.engine.quoteDay(ES)!;
    expect(grouped.engine.quoteDay(ES)).toEqual({ ...day, updatedAt });
  });
});

describe('the session clock', () => {
  it('is the replayed time for every reader of the store while a replay holds it, and the wall clock after', async () => {
    const wall = new Date('2026-11-27T10:00:00Z');
    const { engine, file } = open(() => wall);
    const reader = createEngine(file, { now: () => wall });
    engines.push(reader);
    expect(engine.clockState().replay).toBe(false);
    expect(reader.now()).toEqual(wall);
    const batch = batchOf(records(ES, [5000, 5000.25, 5000.5, 5000.75, 5001], T0, 60_000));
    engine.claimClock({ source: 'es.csv', startMs: T0, speed: 0, total: 5, paused: true });
    // Another connection (another process's engine), and a process that only reads the store.
    expect(reader.now().toISOString()).toBe('2026-03-18T14:00:00.000Z');
    expect((await readSessionTime(file)).toISOString()).toBe('2026-03-18T14:00:00.000Z');
    // Paused: nothing is set.
    expect(engine.replayGroup(batch, { eof: true }).records).toBe(0);
    // A step of two records sets two and stays paused at the second's time.
    engine.controlClock({ action: 'step', records: 2 });
    const stepped = engine.replayGroup(batch, { eof: true });
    expect(stepped).toMatchObject({ records: 2, prices: 2, clock: { paused: true, stepRecords: null, timeMs: T0 + 60_000, done: 2 } });
    expect(reader.now().toISOString()).toBe('2026-03-18T14:01:00.000Z');
    expect(reader.lastPrice(ES)).toBe(5000.25);
    // A step of 90 s of replayed time: the records up to it, and the clock exactly 90 s on.
    engine.controlClock({ action: 'step', ms: 90_000 });
    expect(engine.replayGroup(batch, { from: 2, eof: true })).toMatchObject({ records: 1, clock: { timeMs: T0 + 150_000, paused: true } });
    expect(reader.now().toISOString()).toBe('2026-03-18T14:02:30.000Z');
    // A second replay is refused while this one holds the clock.
    expect(() => reader.claimClock({ source: 'other.csv', startMs: T0, speed: 0, total: 1 })).toThrow(/A replay already drives this store's clock \(es\.csv, process \d+\)/);
    engine.releaseClock();
    expect(reader.now()).toEqual(wall);
    expect(() => reader.controlClock({ action: 'pause' })).toThrow('No replay is running: the clock is the wall clock');
  });

  it('a replay whose process is gone drives nothing: its clock reads as the wall clock and the next replay takes it', () => {
    const wall = new Date('2026-11-27T10:00:00Z');
    const { engine, file } = open(() => wall);
    // The row a killed replay leaves: a process that no longer exists.
    const db = new Database(file);
    db.prepare("UPDATE session_clock SET replay = 1, owner_pid = 2147483646, owner_host = ?, time_ms = ?, wall_ms = ?, source = 'killed.csv'").run(
      hostname(),
      T0,
      Date.now(),
    );
    db.close();
    expect(engine.clockState().replay).toBe(false);
    expect(engine.now()).toEqual(wall);
    engine.claimClock({ source: 'next.csv', startMs: T0, speed: 0, total: 1 });
    expect(engine.clockState()).toMatchObject({ replay: true, source: 'next.csv', ownerPid: process.pid });
  });

  it('a DAY order placed during a replay expires at the replayed session\'s close', () => {
    const { engine, file } = open(() => new Date('2026-11-27T10:00:00Z'));
    engine.setPrice(ES, 5000);
    // 14:00 to 21:30 UTC on 2026-03-18, a record a minute: the close is 16:00 Chicago, 21:00 UTC (CDT).
    const batch = batchOf(records(ES, Array.from({ length: 451 }, (_, i) => 5000 + 0.25 * (i % 2)), T0, 60_000));
    engine.claimClock({ source: 'day.csv', startMs: T0, speed: 0, total: batch.length, paused: true });
    engine.controlClock({ action: 'step', records: 1 });
    engine.replayGroup(batch, { eof: false });
    const day = engine.placeOrder(parseOrder({ account: 'Sim101', instrument: ES, action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4990, timeInForce: 'DAY' }));
    const gtc = engine.placeOrder(parseOrder({ account: 'Sim101', instrument: ES, action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4990, timeInForce: 'GTC' }));
    expect(day.order.createdAt).toBe('2026-03-18T14:00:00.000Z');
    engine.controlClock({ action: 'resume' });
    let expired = 0;
    for (let at = 1; at < batch.length; ) {
      const group = engine.replayGroup(batch, { from: at, eof: true, budgetMs: 1 });
      expired += group.expired;
      at += group.records;
    }
    engine.releaseClock();
    expect(expired).toBe(1);
    expect(rows(file, 'SELECT order_id, time_in_force, state, updated_at FROM orders ORDER BY seq')).toEqual([
      { order_id: day.orderId, time_in_force: 'DAY', state: 'EXPIRED', updated_at: '2026-03-18T21:00:00.000Z' },
      { order_id: gtc.orderId, time_in_force: 'GTC', state: 'WORKING', updated_at: '2026-03-18T14:00:00.000Z' },
    ]);
  });
});
