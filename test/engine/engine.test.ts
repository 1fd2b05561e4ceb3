import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngine, nextPosition, type Engine } from '../../src/engine/engine.js';
import { JOURNAL_SIZE_LIMIT, MIGRATIONS, SCHEMA_VERSION } from '../../src/engine/store.js';
import { RejectedError } from '../../src/common/errors.js';
import { parseOrder, type Order } from '../../src/service/order.js';

let dir: string;
let engine: Engine;
const file = () => join(dir, 'trade.db');

function order(change: Partial<Record<keyof Order, unknown>> = {}): Order {
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

/** Sets a last price straight in the store (the engine reads it for market fills). */
function setPrice(instrument: string, price: number): void {
  const db = new Database(file());
  db.prepare('INSERT OR REPLACE INTO prices(instrument, price, updated_at) VALUES (?, ?, ?)').run(instrument, price, 'now');
  db.close();
}

function snapshot() {
  const db = new Database(file(), { readonly: true });
  const state = {
    orders: db.prepare('SELECT * FROM orders ORDER BY seq').all(),
    fills: db.prepare('SELECT * FROM fills ORDER BY seq').all(),
    positions: db.prepare('SELECT * FROM positions ORDER BY account, instrument').all(),
  };
  db.close();
  return state;
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trade-engine-'));
  engine = createEngine(file(), { now: () => new Date('2025-09-01T14:00:00Z') });
});
afterEach(() => {
  engine.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('store', () => {
  it('is a WAL database at the current schema version, with Sim101 from the start', () => {
    const db = new Database(file(), { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
    expect(engine.listAccounts()).toEqual(['Sim101']);
  });

  it('keeps its WAL bounded: a reader that held checkpoints off leaves no large file once it is gone', () => {
    const reader = new Database(file(), { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT COUNT(*) FROM orders').get();
    for (let i = 0; i < 1500; i++) engine.placeOrder(order({ action: i % 2 ? 'SELL' : 'BUY' }));
    const grown = statSync(`${file()}-wal`).size;
    expect(grown).toBeGreaterThan(JOURNAL_SIZE_LIMIT);
    reader.exec('COMMIT');
    reader.close();
    // Enough commits for a checkpoint with no reader in the way, then one more to restart the WAL.
    for (let i = 0; i < 400; i++) engine.placeOrder(order({ action: i % 2 ? 'SELL' : 'BUY' }));
    expect(statSync(`${file()}-wal`).size).toBeLessThanOrEqual(JOURNAL_SIZE_LIMIT);
  });

  it('reopens an existing store without migrating it again', () => {
    engine.placeOrder(order());
    engine.close();
    engine = createEngine(file());
    expect(engine.listOrders()).toHaveLength(1);
    expect(engine.listAccounts()).toEqual(['Sim101']);
  });

  it('refuses a store written by a newer version', () => {
    engine.close();
    const db = new Database(file());
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => createEngine(file())).toThrow(/newer trade/);
    engine = createEngine(':memory:');
  });
});

describe('accounts', () => {
  it('adds accounts and matches names in any case', () => {
    engine.addAccount('Sim102');
    expect(engine.listAccounts()).toEqual(['Sim101', 'Sim102']);
    const { order: placed } = engine.placeOrder(order({ account: 'SIM102' }));
    expect(placed.account).toBe('Sim102');
  });

  it('refuses a duplicate account in any case', () => {
    expect(() => engine.addAccount('sim101')).toThrow("Account 'Sim101' already exists");
  });

  it("rejects an order for an unknown account with Account 'X' not found, storing nothing", () => {
    const before = snapshot();
    const error = (() => {
      try {
        engine.placeOrder(order({ account: 'Nope' }));
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(RejectedError);
    expect((error as RejectedError).message).toBe('Account Nope not found');
    expect((error as RejectedError).status).toBe(404);
    expect(snapshot()).toEqual(before);
  });
});

describe('placing', () => {
  it('fills a MARKET order with no price known at its root\'s demo price, which becomes the last price (the default source)', () => {
    const outcome = engine.placeOrder(order());
    expect(outcome.orderId).toMatch(/^[0-9a-f]{32}$/);
    expect(outcome.order).toMatchObject({ state: 'FILLED', filledQuantity: 1, avgFillPrice: 6000, createdAt: '2025-09-01T14:00:00.000Z' });
    expect(outcome.demoPrices).toEqual([{ instrument: 'ES 09-25', price: 6000 }]);
    expect(engine.lastPrice('ES 09-25')).toBe(6000);
    expect(engine.listPositions()).toEqual([{ account: 'Sim101', instrument: 'ES 09-25', quantity: 1, avgPrice: 6000, realizedPnl: 0 }]);
    // The second order finds the price: no demo price is set again.
    expect(engine.placeOrder(order()).demoPrices).toBeUndefined();
  });

  it('refuses a MARKET order with no price known under the manual source, or for a root with no demo price, writing nothing', () => {
    engine.setPriceSource('ES', 'manual', {});
    const before = snapshot();
    for (const instrument of ['ES 09-25', 'FOO 09-25']) {
      const error = (() => {
        try {
          engine.placeOrder(order({ instrument }));
        } catch (e) {
          return e as RejectedError;
        }
      })();
      expect(error).toBeInstanceOf(RejectedError);
      expect(error!.message).toBe(`Invalid request: instrument: no last price for ${instrument} in the simulator`);
      expect(error!.hint).toMatch(/^Set one: trade price set /);
    }
    expect(snapshot()).toEqual(before);
    // A LIMIT order still works without a price, and fills on the first one that crosses it.
    expect(engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4500 })).order.state).toBe('WORKING');
  });

  it('closes a position opened at no price by an older trade at no price: getting flat is never blocked', () => {
    engine.setPriceSource('*', 'manual', {});
    const db = new Database(file());
    db.prepare(
      "INSERT INTO positions (account, instrument, quantity, avg_price, realized_pnl, pnl_known, updated_at) VALUES ('Sim101', 'ES 09-25', 2, NULL, 0, 0, '2025-09-01T13:00:00.000Z')",
    ).run();
    db.close();
    const outcome = engine.closePosition('Sim101', 'ES 09-25');
    expect(outcome.closingOrder).toMatchObject({ state: 'FILLED', avgFillPrice: null });
    expect(engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(0);
  });

  it('fills a MARKET order at the last known price', () => {
    setPrice('ES 09-25', 4500.25);
    const { order: placed } = engine.placeOrder(order({ quantity: 2 }));
    expect(placed).toMatchObject({ state: 'FILLED', avgFillPrice: 4500.25 });
    expect(engine.getPosition('Sim101', 'ES 09-25')).toMatchObject({ quantity: 2, avgPrice: 4500.25 });
  });

  it('stores LIMIT and STOP orders as working orders without touching the position', () => {
    engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4400 }));
    engine.placeOrder(order({ orderType: 'STOPMARKET', stopPrice: 4600, action: 'SELL' }));
    engine.placeOrder(order({ orderType: 'STOPLIMIT', stopPrice: 4600, limitPrice: 4601, timeInForce: 'GTC' }));
    expect(engine.listOrders().map((o) => [o.orderType, o.state, o.filledQuantity])).toEqual([
      ['LIMIT', 'WORKING', 0],
      ['STOPMARKET', 'WORKING', 0],
      ['STOPLIMIT', 'WORKING', 0],
    ]);
    expect(engine.listPositions()).toEqual([]);
    expect(snapshot().fills).toEqual([]);
  });

  it('keeps optional fields on the order', () => {
    engine.addAtmTemplate({ name: 'ATM1', stopLossTicks: 4, profitTargetTicks: 8, tickSize: 0.25 });
    const { order: placed } = engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 1, ocoId: 'g1', strategy: 'ATM1' }));
    expect(placed).toMatchObject({ ocoId: 'g1', strategy: 'ATM1', limitPrice: 1 });
  });

  it('nets positions per account and instrument', () => {
    engine.addAccount('Sim102');
    engine.placeOrder(order({ quantity: 3 }));
    engine.placeOrder(order({ action: 'SELL', quantity: 1 }));
    engine.placeOrder(order({ instrument: 'NQ 12-25', action: 'SELL', quantity: 2 }));
    engine.placeOrder(order({ account: 'Sim102', quantity: 5 }));
    expect(engine.listPositions().map((p) => [p.account, p.instrument, p.quantity])).toEqual([
      ['Sim101', 'ES 09-25', 2],
      ['Sim101', 'NQ 12-25', -2],
      ['Sim102', 'ES 09-25', 5],
    ]);
    expect(engine.listPositions({ account: 'sim102' })).toHaveLength(1);
    expect(engine.listPositions({ instrument: 'NQ 12-25' })).toHaveLength(1);
  });

  it('hides flat positions', () => {
    engine.placeOrder(order());
    engine.placeOrder(order({ action: 'SELL' }));
    expect(engine.listPositions()).toEqual([]);
  });

  it('gives distinct ids to many orders', () => {
    const ids = new Set(Array.from({ length: 200 }, () => engine.placeOrder(order()).orderId));
    expect(ids.size).toBe(200);
  });
});

describe('position arithmetic', () => {
  const flat = { quantity: 0, avgPrice: null, realizedPnl: 0, pnlKnown: true };
  it('averages entries in the same direction', () => {
    const a = nextPosition(flat, 1, 100);
    const b = nextPosition(a, 3, 104);
    expect(b).toEqual({ quantity: 4, avgPrice: 103, realizedPnl: 0, pnlKnown: true });
  });
  it('realizes P&L when reducing, long and short', () => {
    expect(nextPosition({ ...flat, quantity: 4, avgPrice: 100 }, -1, 110)).toEqual({
      quantity: 3, avgPrice: 100, realizedPnl: 10, pnlKnown: true,
    });
    expect(nextPosition({ ...flat, quantity: -2, avgPrice: 100 }, 2, 90)).toEqual({
      quantity: 0, avgPrice: null, realizedPnl: 20, pnlKnown: true,
    });
  });
  it('opens the remainder at the fill price when crossing through flat', () => {
    expect(nextPosition({ ...flat, quantity: 2, avgPrice: 100 }, -5, 95)).toEqual({
      quantity: -3, avgPrice: 95, realizedPnl: -10, pnlKnown: true,
    });
  });
  it('never invents a price: unknown prices make the average and P&L unknown', () => {
    expect(nextPosition({ ...flat, quantity: 1, avgPrice: 100 }, 1, null).avgPrice).toBeNull();
    expect(nextPosition({ ...flat, quantity: 1, avgPrice: 100 }, -1, null).pnlKnown).toBe(false);
  });
});

describe('reverse position', () => {
  it('from long: closes the position and places the new order, returning its id', () => {
    setPrice('ES 09-25', 100);
    engine.placeOrder(order({ quantity: 2 }));
    setPrice('ES 09-25', 105);
    const outcome = engine.reversePosition(order({ action: 'SELL', quantity: 3 }));
    expect(outcome.closingOrder).toMatchObject({ action: 'SELL', quantity: 2, orderType: 'MARKET', state: 'FILLED', origin: 'reverse-close' });
    expect(outcome.order).toMatchObject({ id: outcome.orderId, action: 'SELL', quantity: 3, state: 'FILLED', origin: 'client' });
    expect(engine.getPosition('Sim101', 'ES 09-25')).toEqual({
      account: 'Sim101', instrument: 'ES 09-25', quantity: -3, avgPrice: 105, realizedPnl: 10,
    });
  });

  it('from short: buys to flatten, then places the new order', () => {
    engine.placeOrder(order({ action: 'SELL', quantity: 4 }));
    const outcome = engine.reversePosition(order({ action: 'BUY', quantity: 1 }));
    expect(outcome.closingOrder).toMatchObject({ action: 'BUY', quantity: 4 });
    expect(engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(1);
  });

  it('with a working new order: the position is flat and the new order works', () => {
    setPrice('ES 09-25', 4500);
    engine.placeOrder(order({ quantity: 1 }));
    engine.reversePosition(order({ action: 'SELL', orderType: 'LIMIT', limitPrice: 4600 }));
    expect(engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(0);
    expect(engine.listOrders().at(-1)).toMatchObject({ orderType: 'LIMIT', state: 'WORKING' });
  });

  it("cancels the instrument's working orders in that account only", () => {
    engine.addAccount('Sim102');
    engine.placeOrder(order());
    const sameInstrument = engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 1 })).orderId;
    const otherInstrument = engine.placeOrder(order({ instrument: 'NQ 12-25', orderType: 'LIMIT', limitPrice: 1 })).orderId;
    const otherAccount = engine.placeOrder(order({ account: 'Sim102', orderType: 'LIMIT', limitPrice: 1 })).orderId;
    const outcome = engine.reversePosition(order({ action: 'SELL' }));
    expect(outcome.cancelledOrderIds).toEqual([sameInstrument]);
    const states = Object.fromEntries(engine.listOrders().map((o) => [o.id, o.state]));
    expect(states[sameInstrument]).toBe('CANCELLED');
    expect(states[otherInstrument]).toBe('WORKING');
    expect(states[otherAccount]).toBe('WORKING');
  });

  it('with no position fails with the exact message and changes nothing', () => {
    engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 1 }));
    const before = snapshot();
    expect(() => engine.reversePosition(order({ instrument: 'NQ 12-25', account: 'sim101' }))).toThrow(
      "No position found for instrument 'NQ 12-25' in account 'sim101'",
    );
    expect(snapshot()).toEqual(before);
  });

  it('with a flat (closed) position fails the same way', () => {
    engine.placeOrder(order());
    engine.placeOrder(order({ action: 'SELL' }));
    expect(() => engine.reversePosition(order())).toThrow("No position found for instrument 'ES 09-25' in account 'Sim101'");
  });

  it('rolls back the close when placing the new order fails inside the transaction', () => {
    engine.close();
    let calls = 0;
    engine = createEngine(file(), {
      newOrderId: () => {
        calls += 1;
        if (calls === 3) throw new Error('disk full');
        return String(calls).padStart(32, '0');
      },
    });
    engine.placeOrder(order({ quantity: 2 }));
    const before = snapshot();
    expect(() => engine.reversePosition(order({ action: 'SELL' }))).toThrow('disk full');
    expect(snapshot()).toEqual(before);
    expect(engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(2);
  });
});

describe('migration to the lean tables of version 8', () => {
  it('keeps every order and fill with its seq, the references between them, and goes on numbering after them', () => {
    engine.close();
    rmSync(file(), { force: true });
    const db = new Database(file());
    db.pragma('foreign_keys = ON');
    for (const migration of MIGRATIONS.slice(0, 7)) db.exec(migration);
    db.pragma('user_version = 7');
    db.prepare("INSERT OR IGNORE INTO accounts (name, created_at) VALUES ('Sim101', '2025-08-01T14:00:00.000Z')").run();
    const insertOrder = db.prepare(
      `INSERT INTO orders (seq, id, order_id, account, instrument, action, quantity, order_type, time_in_force, limit_price, state, filled_quantity, avg_fill_price, created_at, updated_at)
       VALUES (?, ?, ?, 'Sim101', 'ES 09-25', 'BUY', 1, ?, 'GTC', ?, ?, ?, ?, '2025-08-01T14:00:00.000Z', '2025-08-01T14:00:00.000Z')`,
    );
    insertOrder.run(5, 'a'.repeat(32), 'mine-1', 'MARKET', null, 'FILLED', 1, 4500);
    insertOrder.run(9, 'b'.repeat(32), 'b'.repeat(32), 'LIMIT', 4400, 'WORKING', 0, null);
    db.prepare(
      `INSERT INTO fills (seq, order_id, execution_id, account, instrument, action, quantity, price, time, position_after, realized, commission)
       VALUES (3, ?, 'e1', 'Sim101', 'ES 09-25', 'BUY', 1, 4500, '2025-08-01T14:00:00.000Z', 1, 0, 2.25)`,
    ).run('a'.repeat(32));
    db.close();
    engine = createEngine(file(), { now: () => new Date('2025-09-01T14:00:00Z') });
    const after = new Database(file(), { readonly: true });
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      expect(after.prepare('SELECT seq, order_id, state FROM orders ORDER BY seq').all()).toEqual([
        { seq: 5, order_id: 'mine-1', state: 'FILLED' },
        { seq: 9, order_id: 'b'.repeat(32), state: 'WORKING' },
      ]);
      expect(after.pragma('foreign_key_check')).toEqual([]);
      const sql = (after.prepare("SELECT group_concat(sql, ';') AS s FROM sqlite_master WHERE tbl_name IN ('orders', 'fills')").get() as { s: string }).s;
      expect(sql).not.toContain('AUTOINCREMENT');
      expect(sql).not.toContain('orders_by_account');
      expect(sql).toContain('orders_working_by_account');
    } finally {
      after.close();
    }
    expect(engine.getOrder('mine-1', 'Sim101')).toMatchObject({ state: 'FILLED', avgFillPrice: 4500 });
    expect(engine.listFills()).toEqual([expect.objectContaining({ executionId: 'e1', orderId: 'mine-1', commission: 2.25 })]);
    // The LIMIT kept working through the rebuild and still fills; a new order is numbered after the rest.
    expect(engine.setPrice('ES 09-25', 4400).fills).toEqual([expect.objectContaining({ orderId: 'b'.repeat(32), price: 4400 })]);
    expect(engine.placeOrder(order()).order).toMatchObject({ state: 'FILLED', avgFillPrice: 4400 });
    expect(snapshot().orders.map((o) => (o as { seq: number }).seq)).toEqual([5, 9, 10]);
    expect(snapshot().fills.map((f) => (f as { seq: number }).seq)).toEqual([3, 4, 5]);
  });
});

describe('migration from the first schema', () => {
  it('keeps orders and positions of a version-1 store and adds the new columns and tables', () => {
    engine.close();
    rmSync(file(), { force: true });
    const db = new Database(file());
    db.exec(MIGRATIONS[0]!);
    db.pragma('user_version = 1');
    db.prepare(
      `INSERT INTO orders (id, account, instrument, action, quantity, order_type, time_in_force, limit_price, state, created_at, updated_at)
       VALUES ('old', 'Sim101', 'ES 09-25', 'BUY', 1, 'LIMIT', 'GTC', 4400, 'WORKING', '2025-08-01T14:00:00.000Z', '2025-08-01T14:00:00.000Z')`,
    ).run();
    db.close();
    engine = createEngine(file(), { now: () => new Date('2025-09-01T14:00:00Z') });
    expect(engine.listOrders()).toEqual([expect.objectContaining({ id: 'old', state: 'WORKING', origin: 'client' })]);
    expect(engine.listOrders()[0]).not.toHaveProperty('triggered');
    expect(engine.listAtmTemplates()).toEqual([]);
    expect(engine.setPrice('ES 09-25', 4399).fills).toEqual([expect.objectContaining({ orderId: 'old', price: 4399 })]);
  });

  it('keeps positions and DAY expiry working across the index and table changes of version 3', () => {
    engine.close();
    rmSync(file(), { force: true });
    const db = new Database(file());
    db.exec(MIGRATIONS[0]!);
    db.exec(MIGRATIONS[1]!);
    db.pragma('user_version = 2');
    db.prepare(
      `INSERT INTO positions (account, instrument, quantity, avg_price, realized_pnl, pnl_known, updated_at)
       VALUES ('Sim101', 'ES 09-25', -3, 4500.5, 12.5, 1, '2025-08-29T14:00:00.000Z')`,
    ).run();
    db.prepare(
      `INSERT INTO orders (id, account, instrument, action, quantity, order_type, time_in_force, limit_price, state, created_at, updated_at)
       VALUES ('day', 'Sim101', 'ES 09-25', 'BUY', 1, 'LIMIT', 'DAY', 4400, 'WORKING', '2025-08-29T14:00:00.000Z', '2025-08-29T14:00:00.000Z')`,
    ).run();
    db.close();
    engine = createEngine(file(), { now: () => new Date('2025-09-01T14:00:00Z') });
    expect(engine.listPositions()).toEqual([
      { account: 'Sim101', instrument: 'ES 09-25', quantity: -3, avgPrice: 4500.5, realizedPnl: 12.5 },
    ]);
    // Placed on Friday 29 August, the DAY order expired at that session's end.
    expect(engine.listOrders()).toEqual([expect.objectContaining({ id: 'day', state: 'EXPIRED' })]);
    const check = new Database(file(), { readonly: true });
    expect(check.prepare(`SELECT sql FROM sqlite_schema WHERE name = 'positions'`).get()).toEqual({
      sql: expect.stringContaining('WITHOUT ROWID'),
    });
    check.close();
  });
});

describe('a store held by another process', () => {
  it('refuses a write after the busy timeout with a clear message, writing nothing', () => {
    engine.placeOrder(order());
    engine.close();
    engine = createEngine(file(), { busyTimeoutMs: 50 });
    const holder = new Database(file());
    holder.exec('BEGIN IMMEDIATE');
    try {
      let error: unknown;
      try {
        engine.placeOrder(order({ quantity: 2 }));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(RejectedError);
      expect(error).toMatchObject({
        status: 503,
        code: 'store_busy',
        message: 'The store is busy: another trade process held its write lock too long. Nothing was written; try again.',
      });
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    expect(engine.listOrders()).toHaveLength(1);
    expect(engine.placeOrder(order()).order.state).toBe('FILLED');
  });
});
