/** An engine on a temporary store, with a clock and ids the test controls. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { RejectedError } from '../../src/order/errors.js';
import { parseOrder, type Order } from '../../src/order/schema.js';

export interface TestEngine {
  engine: Engine;
  file: string;
  /** Sets the engine's clock. */
  setTime(iso: string): void;
  /** Order ids are 1, 2, 3… as 32 hex digits; `id(3)` is the third. */
  id(n: number): string;
  /** Every row of orders, fills, positions and prices: for "changed nothing" assertions. */
  snapshot(): Record<string, unknown[]>;
  reopen(): void;
  cleanup(): void;
}

export function testEngine(startAt = '2025-09-02T14:00:00Z'): TestEngine {
  const dir = mkdtempSync(join(tmpdir(), 'trade-engine-'));
  const file = join(dir, 'trade.db');
  let now = new Date(startAt);
  let next = 1;
  const id = (n: number) => n.toString(16).padStart(32, '0');
  const open = () => createEngine(file, { now: () => now, newOrderId: () => id(next++) });
  const t: TestEngine = {
    engine: open(),
    file,
    setTime: (iso) => void (now = new Date(iso)),
    id,
    snapshot() {
      const db = new Database(file, { readonly: true });
      const tables = ['orders', 'fills', 'positions', 'prices', 'atm_templates', 'accounts'];
      const state = Object.fromEntries(tables.map((table) => [table, db.prepare(`SELECT * FROM ${table} ORDER BY 1, 2`).all()]));
      db.close();
      return state;
    },
    reopen() {
      t.engine.close();
      t.engine = open();
    },
    cleanup() {
      t.engine.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return t;
}

/** A valid order: a BUY 1 ES 09-25 MARKET DAY in Sim101, with changes. */
export function order(change: Partial<Record<keyof Order, unknown>> = {}): Order {
  return parseOrder({
    account: 'Sim101',
    instrument: 'ES 09-25',
    action: 'BUY',
    quantity: 1,
    orderType: 'MARKET',
    timeInForce: 'DAY',
    ...change,
  });
}

/** The RejectedError `run` throws; fails the test when it throws nothing or something else. */
export function rejection(run: () => unknown): RejectedError {
  try {
    run();
  } catch (error) {
    if (error instanceof RejectedError) return error;
    throw error;
  }
  throw new Error('expected a RejectedError');
}
