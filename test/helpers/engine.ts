/** An engine on a temporary store, with a clock and ids the test controls. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { simulate } from '../../src/engine/service.js';
import { RejectedError } from '../../src/common/errors.js';
import { parseOrder, type Order } from '../../src/service/order.js';
import { type OperationName, parseArgs } from '../../src/service/operations.js';
import type { OrderObject, PositionObject } from '../../src/service/shapes.js';

export interface TestEngine {
  engine: Engine;
  file: string;
  /** Sets the engine's clock. */
  setTime(iso: string): void;
  /** Order ids are 1, 2, 3… as 32 hex digits; `id(3)` is the third. */
  id(n: number): string;
  /** Every row of orders, fills, positions, prices, ticks, templates and accounts: for "changed nothing" assertions. */
  snapshot(): Record<string, unknown[]>;
  /**
   * Makes the id maker throw once, after `ids` more ids have been made: a failure injected in the
   * middle of an operation (every order it writes takes an id), to show that the operation's
   * transaction then leaves the store as it was.
   */
  failAfterIds(ids: number): void;
  reopen(): void;
  cleanup(): void;
}

export function testEngine(startAt = '2025-09-02T14:00:00Z'): TestEngine {
  const dir = mkdtempSync(join(tmpdir(), 'trade-engine-'));
  const file = join(dir, 'trade.db');
  let now = new Date(startAt);
  let next = 1;
  let failAt: number | undefined;
  const id = (n: number) => n.toString(16).padStart(32, '0');
  const makeId = () => {
    if (next === failAt) {
      failAt = undefined;
      throw new Error('injected failure');
    }
    return id(next++);
  };
  const open = () => createEngine(file, { now: () => now, newOrderId: makeId });
  const t: TestEngine = {
    engine: open(),
    file,
    setTime: (iso) => void (now = new Date(iso)),
    id,
    failAfterIds: (ids) => void (failAt = next + ids),
    snapshot() {
      const db = new Database(file, { readonly: true });
      const tables = ['orders', 'fills', 'positions', 'prices', 'ticks', 'atm_templates', 'accounts'];
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

/** What a service operation answers through the simulator: the body, or the refusal's status and body. */
export type Reply = { status: number; body: any };

/**
 * Runs one operation as `trade serve` does: the flat args through the operation table's schema
 * (unknown fields ignored), then the simulator. Answers the status and the exact body; a refusal
 * of the engine is its status and body, as the server sends them.
 */
export function serve(engine: Engine, name: OperationName, args: Record<string, unknown> = {}): Reply {
  const parsed = parseArgs(name, args, 'server');
  try {
    return { status: 200, body: simulate(engine, name, parsed).body };
  } catch (error) {
    if (error instanceof RejectedError) return { status: error.status, body: error.body };
    throw error;
  }
}

/** The success body of an operation; fails the test on a refusal, showing it. */
export function ok(engine: Engine, name: OperationName, args: Record<string, unknown> = {}): any {
  const reply = serve(engine, name, args);
  if (reply.status !== 200) throw new Error(`${name} was refused: ${reply.status} ${JSON.stringify(reply.body)}`);
  return reply.body;
}

/** The service's Order object (§4.1) of a Buy 1 ES 09-25 Market Day order in Sim101 placed at the helper's start, with changes. */
export function orderObject(fields: Partial<OrderObject> & { orderId: string }): OrderObject {
  return {
    account: 'Sim101',
    id: fields.orderId,
    instrument: 'ES 09-25',
    instrumentType: 'Future',
    orderType: 'Market',
    orderState: 'Working',
    quantity: 1,
    averageFillPrice: 0,
    filled: 0,
    fromEntrySignal: null,
    gtd: '2099-12-01T00:00:00.0000000',
    hasOverfill: false,
    isBacktestOrder: false,
    limitPrice: 0,
    limitPriceChanged: 0,
    name: '',
    oco: fields.ocoId ?? '',
    ocoId: '',
    orderAction: 'Buy',
    ownerStrategy: null,
    stopPrice: 0,
    stopPriceChanged: 0,
    time: '2025-09-02T09:00:00.0000000',
    timeInForce: 'Day',
    ...fields,
  };
}

/** The service's Position object (§4.2) of Sim101 in ES 09-25, with changes. */
export function positionObject(fields: Partial<PositionObject>): PositionObject {
  return {
    type: 'NinjaTrader.Cbi.Position',
    account: 'Sim101',
    instrument: 'ES 09-25',
    instrumentType: 'Future',
    marketPosition: 'Flat',
    quantity: 0,
    averagePrice: 0,
    marketPrice: 0,
    unrealizedProfitLoss: 0,
    tag: null,
    ...fields,
  };
}
