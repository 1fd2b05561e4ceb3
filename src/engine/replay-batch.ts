/**
 * Records of a replay in columns (types.ts ReplayBatch): a file of millions of ticks is read,
 * merged and set without one object per tick, so a replay makes next to no garbage and its
 * memory stays flat. A bar's path (its 1-4 prices in order) is the only thing kept per record.
 */
import type { ReplayBatch, ReplayRecord } from './types.js';

export function createBatch(capacity = 1024): ReplayBatch {
  return { length: 0, instruments: [], times: new Float64Array(capacity), prices: new Float64Array(capacity), paths: new Map() };
}

/** Room for `more` records after the batch's last. */
function reserve(batch: ReplayBatch, more: number): void {
  const need = batch.length + more;
  if (need <= batch.times.length) return;
  const size = Math.max(need, batch.times.length * 2);
  const times = new Float64Array(size);
  const prices = new Float64Array(size);
  times.set(batch.times.subarray(0, batch.length));
  prices.set(batch.prices.subarray(0, batch.length));
  batch.times = times;
  batch.prices = prices;
}

/** Adds one record: a tick's price, or a bar's path (its first price is its `price`). */
export function pushRecord(batch: ReplayBatch, instrument: string, timeMs: number, price: number, path?: readonly number[]): void {
  reserve(batch, 1);
  const i = batch.length++;
  batch.instruments[i] = instrument;
  batch.times[i] = timeMs;
  batch.prices[i] = price;
  if (path !== undefined && path.length > 1) batch.paths.set(i, [...path]);
}

/** Adds `b`'s records from `from` on to `a` (which may be a new batch). */
export function appendFrom(a: ReplayBatch, b: ReplayBatch, from = 0): ReplayBatch {
  const count = b.length - from;
  if (count <= 0) return a;
  reserve(a, count);
  a.times.set(b.times.subarray(from, b.length), a.length);
  a.prices.set(b.prices.subarray(from, b.length), a.length);
  for (let i = from; i < b.length; i++) a.instruments[a.length + i - from] = b.instruments[i]!;
  for (const [i, path] of b.paths) if (i >= from) a.paths.set(a.length + i - from, path);
  a.length += count;
  return a;
}

/** The record at `i` as an object (tests, and people reading a batch). */
export function recordAt(batch: ReplayBatch, i: number): ReplayRecord {
  const path = batch.paths.get(i);
  return { instrument: batch.instruments[i]!, timeMs: batch.times[i]!, price: batch.prices[i]!, ...(path ? { path } : {}) };
}

/** A batch of records given as objects. */
export function batchOf(records: readonly ReplayRecord[]): ReplayBatch {
  const batch = createBatch(Math.max(1, records.length));
  for (const r of records) pushRecord(batch, r.instrument, r.timeMs, r.price, r.path);
  return batch;
}
