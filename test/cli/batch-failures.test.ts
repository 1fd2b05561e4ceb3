/**
 * `trade batch` when something other than the request fails: a full disk under the embedded
 * store (SQLite's own size limit, PRAGMA max_page_count, so the test needs no tmpfs), another
 * process holding the store's write lock mid-batch, and a line whose handling throws an error
 * nobody typed. In each, every input line gets exactly one result line, in order, with its
 * true status and outcome; the exit code and the summary follow; the store holds exactly the
 * orders the results say were placed.
 */
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { embeddedBackendOn } from '../../src/backends/embedded.js';
import type { Backend } from '../../src/backends/types.js';
import { type BatchResult, runBatch } from '../../src/cli/commands/batch.js';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import type { Env } from '../../src/config/paths.js';
import { createEngine, createEngineOnDb } from '../../src/engine/engine.js';
import { openStore } from '../../src/engine/store.js';
import { IncompleteError } from '../../src/common/errors.js';
import { tempHome } from '../helpers/cli.js';

let env: Env;
let cleanup: () => void;
let file: string;
beforeEach(() => {
  ({ env, cleanup } = tempHome());
  file = join(env.TRADE_HOME!, 'trade.db');
});
afterEach(() => cleanup());

const ARGS = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
const place = (id: string) => JSON.stringify({ api: 'PlaceOrder', id, args: ARGS });
const read = (id: string) => JSON.stringify({ api: 'GetAllPositions', id, args: {} });

interface Run {
  code: number;
  results: BatchResult[];
  summary: string;
}

/** runBatch in-process with `backend`, `input` on stdin; `onLine` sees each result line as it is written. */
async function batch(backend: Backend, input: string[], options: { rate?: string; concurrency?: string } = {}, onLine?: (result: BatchResult) => void): Promise<Run> {
  const results: BatchResult[] = [];
  const stdin = new PassThrough();
  stdin.end(`${input.join('\n')}\n`);
  const stdout = {
    write(chunk: string) {
      const result = JSON.parse(chunk) as BatchResult;
      results.push(result);
      onLine?.(result);
      return true;
    },
  };
  const io = createIo({ stdin, stdout, stderr: { write: () => true } }, env);
  const ctx = { ...createContext(io, env), openBackend: async () => backend };
  try {
    await runBatch(ctx, '-', options);
    return { code: 0, results, summary: '' };
  } catch (error) {
    if (!(error instanceof IncompleteError)) throw error;
    return { code: error.exitCode, results, summary: error.message };
  }
}

/** The service order ids in the store, read by a connection of its own. */
function storedOrderIds(): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare<[], { order_id: string }>('SELECT order_id FROM orders ORDER BY seq').all().map((r) => r.order_id);
  } finally {
    db.close();
  }
}

describe('trade batch on the embedded engine when the store fails', () => {
  it('on a full disk: one line per input line; each write that fails gets its error, reads go on, exit 1', async () => {
    const db = openStore(file);
    // A few pages of room: the first orders fit, then every write fails with SQLITE_FULL.
    const pages = db.pragma('page_count', { simple: true }) as number;
    db.pragma(`max_page_count = ${pages + 4}`);
    const input = Array.from({ length: 500 }, (_, i) => (i % 50 === 49 ? read(`r${i + 1}`) : place(`p${i + 1}`)));
    const run = await batch(embeddedBackendOn(createEngineOnDb(db, file)), input);

    expect(run.results.map((r) => [r.line, r.id])).toEqual(input.map((l, i) => [i + 1, JSON.parse(l).id]));
    const first = run.results.findIndex((r) => r.status !== 200);
    expect(first).toBeGreaterThan(2);
    expect(first).toBeLessThan(400);
    for (const r of run.results.slice(0, first)) expect(r.status).toBe(200);
    const placesAfter = run.results.slice(first).filter((r) => String(r.id).startsWith('p'));
    // A full store is a typed refusal (StoreError, 503): nothing of that line was written.
    for (const r of placesAfter) {
      expect(r).toEqual({
        line: r.line,
        id: r.id,
        status: 503,
        data: { error: `The store ${file} cannot grow: the disk is full. Nothing was written.` },
      });
    }
    // A full disk stops writes only: every read is answered.
    for (const r of run.results.filter((x) => String(x.id).startsWith('r'))) expect(r.status).toBe(200);

    const placed = run.results.filter((r) => r.status === 200 && String(r.id).startsWith('p')).map((r) => (r.data as { orderId: string }).orderId);
    // Every place before the first failure (the reads among them are not orders).
    expect(placed).toHaveLength(run.results.slice(0, first).filter((r) => String(r.id).startsWith('p')).length);
    expect(storedOrderIds()).toEqual(placed);
    expect(run.code).toBe(1);
    const succeeded = run.results.filter((r) => r.status === 200).length;
    expect(run.summary).toBe(`Batch of 500 lines: ${succeeded} succeeded, ${placesAfter.length} rejected.`);
  });

  it('with the write lock held by another process mid-batch: those lines are refused (503), the rest placed, exit 1', async () => {
    const backend = embeddedBackendOn(createEngine(file, { busyTimeoutMs: 50 }));
    const holder = new Database(file);
    const input = Array.from({ length: 10 }, (_, i) => place(`p${i + 1}`));
    // Another writer takes the lock once line 3 is written and lets go once line 6 is: one line
    // at a time, so that the lock falls between lines.
    const run = await batch(backend, input, { concurrency: '1' }, (result) => {
      if (result.line === 3) holder.exec('BEGIN IMMEDIATE');
      if (result.line === 6) holder.exec('COMMIT');
    });
    holder.close();

    expect(run.results.map((r) => [r.line, r.status])).toEqual(input.map((_, i) => [i + 1, i >= 3 && i < 6 ? 503 : 200]));
    expect(run.results[3]!.data).toEqual({
      error: 'The store is busy: another trade process held its write lock too long. Nothing was written; try again.',
    });
    expect(run.results.every((r) => r.outcome === undefined)).toBe(true);
    expect(storedOrderIds()).toEqual(run.results.filter((r) => r.status === 200).map((r) => (r.data as { orderId: string }).orderId));
    expect(run.code).toBe(1);
    expect(run.summary).toBe('Batch of 10 lines: 7 succeeded, 3 rejected.');
  });
});

describe('trade batch when one line\'s handling crashes', () => {
  it('that line gets a 500 line (outcome unknown when it moves money), the others are answered, exit 4', async () => {
    let calls = 0;
    const backend: Backend = {
      name: 'http',
      label: 'http (test)',
      async call(name, args) {
        calls += 1;
        const id = (args as { orderId?: string }).orderId;
        if (id === 'boom' || name === 'GetAllPositions') throw new TypeError("Cannot read properties of undefined (reading 'orderId')");
        return { body: { orderId: id, success: true }, value: { orderId: id } as never };
      },
      close: async () => undefined,
    };
    const order = (id: string) => JSON.stringify({ api: 'PlaceOrder', id, args: { ...ARGS, orderId: id } });
    const run = await batch(backend, [order('a'), order('boom'), read('r'), order('b')], { rate: '0' });

    const detail = "Unexpected error: Cannot read properties of undefined (reading 'orderId')";
    expect(run.results).toEqual([
      { line: 1, id: 'a', status: 200, data: { orderId: 'a', success: true } },
      { line: 2, id: 'boom', status: 500, data: { success: false, error: 'internal_error', detail }, outcome: 'unknown' },
      // A read changes nothing, so its fate needs no checking.
      { line: 3, id: 'r', status: 500, data: { success: false, error: 'internal_error', detail } },
      { line: 4, id: 'b', status: 200, data: { orderId: 'b', success: true } },
    ]);
    expect(calls).toBe(4);
    expect(run.code).toBe(4);
    expect(run.summary).toBe(
      `Batch of 4 lines: 2 succeeded, 0 rejected, 2 failed unexpectedly, 1 outcome unknown (check with \`trade orders\`). First unexpected failure, line 2: ${detail}`,
    );
  });
});
