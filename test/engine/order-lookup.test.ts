/**
 * Orders found by the service's id without their account, and by an id's prefix (migration 12):
 * two indexed reads instead of every row of orders, with the answers the plain scans gave.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import { fillListQuery, orderListQuery, prepareQueries } from '../../src/engine/queries.js';
import { MIGRATIONS, SCHEMA_VERSION, TABLES_VERSION } from '../../src/engine/store.js';
import { RejectedError } from '../../src/common/errors.js';
import { parseOrder } from '../../src/service/order.js';

let dir: string;
const file = () => join(dir, 'trade.db');

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trade-lookup-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const NOW = () => new Date('2025-09-01T14:00:00Z');

function place(engine: Engine, account: string, orderId?: string) {
  return engine.placeOrder(
    parseOrder({ account, instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC', orderId }),
  );
}

/** What the plain scans answered: every row of orders, read whole. */
function scanned(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT order_id AS orderId, account FROM orders ORDER BY seq').all() as Array<{ orderId: string; account: string }>;
  } finally {
    db.close();
  }
}

/** The row ids of the orders with that id (orders.order_id). */
function queryIds(path: string, orderId: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT id FROM orders WHERE order_id = ? ORDER BY seq').pluck().all(orderId) as string[];
  } finally {
    db.close();
  }
}

/** The row ids of the orders whose client chose their id (orders.id, which no answer shows). */
function rowIdsOfClientOrders(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare('SELECT id FROM orders WHERE id <> order_id ORDER BY seq').pluck().all() as string[];
  } finally {
    db.close();
  }
}

/** What every page of a list holds, read from the first by its cursors (at most 100 pages). */
function everyPage<T>(read: (after: number | undefined) => { items: T[]; next?: number }, key: (item: T) => string): string[] {
  const keys: string[] = [];
  let after: number | undefined;
  for (let n = 0; n < 100; n++) {
    const { items, next } = read(after);
    keys.push(...items.map(key));
    if (next === undefined) return keys;
    after = next;
  }
  throw new Error('more than 100 pages');
}

const byIdThenAccount = (a: { orderId: string; account: string }, b: { orderId: string; account: string }) =>
  a.orderId < b.orderId ? -1 : a.orderId > b.orderId ? 1 : a.account < b.account ? -1 : a.account > b.account ? 1 : 0;

describe('an order by its id without the account', () => {
  it("finds the oldest of a service id and a client's choice of the same id in another account", () => {
    const made = 'c0ffee' + '0'.repeat(26);
    const engine = createEngine(file(), { now: NOW, newOrderId: (() => { let n = 0; return () => (n++ === 0 ? made : `${n}`.padStart(32, 'f')); })() });
    try {
      engine.addAccount('Sim102');
      place(engine, 'Sim101');
      place(engine, 'Sim102', made);
      place(engine, 'Sim102', 'ex-1');
      place(engine, 'Sim101', 'ex-1');
      expect(engine.getOrder(made)).toMatchObject({ orderId: made, account: 'Sim101' });
      expect(engine.getOrder('ex-1')).toMatchObject({ orderId: 'ex-1', account: 'Sim102' });
      expect(engine.getOrder('ex-1', 'Sim101')).toMatchObject({ orderId: 'ex-1', account: 'Sim101' });
      expect(engine.getOrder('ex-2')).toBeUndefined();
      expect(engine.orderIdsByPrefix(['c0ff'])).toEqual([
        { orderId: made, account: 'Sim101' },
        { orderId: made, account: 'Sim102' },
      ]);
      expect(engine.orderIdsByPrefix(['c0ff'], 'sim102')).toEqual([{ orderId: made, account: 'Sim102' }]);
      expect(engine.orderIdsByPrefix(['ex-', 'c0ffee'])).toEqual([
        { orderId: made, account: 'Sim101' },
        { orderId: made, account: 'Sim102' },
        { orderId: 'ex-1', account: 'Sim101' },
        { orderId: 'ex-1', account: 'Sim102' },
      ]);
      // No id in the store starts with anything but printable ASCII.
      expect(engine.orderIdsByPrefix(['', 'é', 'c0 f'])).toEqual([]);
    } finally {
      engine.close();
    }
  });

  it('answers as a scan of every row would, on random stores of service and client ids', () => {
    const hex = fc.array(fc.constantFrom('a', 'b', '0', '1'), { minLength: 32, maxLength: 32 }).map((c) => c.join(''));
    const placement = fc.record({
      account: fc.constantFrom('Sim101', 'Sim102'),
      // undefined: the service makes the id; an index: a client takes the id the service made for
      // an earlier order; else a client id of its own.
      client: fc.option(fc.oneof(fc.nat(20), fc.constantFrom('ex-1', 'ex-2', 'a.b', 'ab01', 'ab:0', 'b_', 'b-')), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(hex, { minLength: 40, maxLength: 40 }), fc.array(placement, { maxLength: 30 }), fc.array(fc.string({ maxLength: 5 }), { maxLength: 4 }), (made, placements, strays) => {
        rmSync(file(), { force: true });
        const ids = [...made];
        const engine = createEngine(file(), { now: NOW, newOrderId: () => ids.shift()! });
        try {
          engine.addAccount('Sim102');
          const service: string[] = [];
          const used = new Set<string>();
          let byClient = 0;
          for (const p of placements) {
            const orderId = typeof p.client === 'number' ? service[p.client % Math.max(service.length, 1)] : p.client;
            // A client id already used in that account, by a client or as the id the service made
            // there: refused, nothing placed. Any other is placed.
            const taken = orderId !== undefined && used.has(`${p.account}\n${orderId}`);
            try {
              const placed = place(engine, p.account, orderId);
              expect(taken).toBe(false);
              used.add(`${p.account}\n${placed.orderId}`);
              if (orderId === undefined) service.push(placed.orderId);
              else byClient++;
            } catch (error) {
              if (!(error instanceof RejectedError)) throw error;
              expect([taken, error.code]).toEqual([true, 'duplicate_order_id']);
            }
          }
          const rows = scanned(file());
          expect(new Set(rows.map((r) => `${r.account}\n${r.orderId}`)).size).toBe(rows.length);
          // The store's own row ids of the orders whose client chose their id: found by no lookup,
          // whole or by a prefix (and no order's id starts with one).
          const rowIds = rowIdsOfClientOrders(file());
          expect(rowIds).toHaveLength(byClient);
          const asked = [...new Set([...rows.map((r) => r.orderId), ...made.slice(-3), ...strays, ...rowIds])];
          for (const id of asked) {
            const oldest = rows.find((r) => r.orderId === id);
            const found = engine.getOrder(id);
            expect(found && { orderId: found.orderId, account: found.account }).toEqual(oldest);
            for (const account of ['Sim101', 'Sim102']) {
              const inAccount = engine.getOrder(id, account);
              expect(inAccount && { orderId: inAccount.orderId, account: inAccount.account }).toEqual(rows.find((r) => r.orderId === id && r.account === account));
            }
          }
          const prefixes = [...new Set([...asked.flatMap((id) => [1, 2, 4, 6].map((n) => id.slice(0, n))), ...strays])];
          for (const account of [undefined, 'Sim101', 'Sim102']) {
            for (const some of [prefixes, prefixes.slice(0, 3)]) {
              const expected = [
                ...new Map(
                  rows
                    .filter((r) => (account === undefined || r.account === account) && some.some((p) => /^[\x21-\x7e]+$/.test(p) && r.orderId.startsWith(p)))
                    .map((r) => [`${r.orderId}\n${r.account}`, r]),
                ).values(),
              ].sort(byIdThenAccount);
              expect(engine.orderIdsByPrefix(some, account)).toEqual(expected);
            }
          }
        } finally {
          engine.close();
        }
      }),
      { seed: 20261128, numRuns: 40 },
    );
  });

  it('reads through indexes, never every row of orders', () => {
    createEngine(file(), { now: NOW }).close();
    const db = new Database(file());
    try {
      const q = prepareQueries(db);
      const plans = [
        [q.ordersByOrderId, { id: 'x' }],
        [q.orderIdsBetween, { from: 'ab', to: 'ac' }],
        [q.orderIdsBetweenIn, { from: 'ab', to: 'ac', account: 'Sim101' }],
      ] as const;
      for (const [statement, params] of plans) {
        const source = (statement as unknown as { source: string }).source;
        const details = (db.prepare(`EXPLAIN QUERY PLAN ${source}`).all(params) as Array<{ detail: string }>).map((r) => r.detail);
        expect(details.join(' | ')).toMatch(/USING (COVERING )?INDEX/);
      }
      // An order placed without a client id or a parent adds nothing to these two indexes.
      const partial = db.prepare("SELECT name, sql FROM sqlite_master WHERE name IN ('orders_by_client_order_id', 'orders_by_parent') ORDER BY name").all();
      expect(partial).toEqual([
        { name: 'orders_by_client_order_id', sql: expect.stringMatching(/^CREATE UNIQUE INDEX .*\(order_id, account\) WHERE order_id <> id$/) },
        { name: 'orders_by_parent', sql: expect.stringMatching(/WHERE parent_id IS NOT NULL$/) },
      ]);
      // Migration 13: a filled order the service names writes one index of orders, its id's own (a
      // random key, each insert another leaf page); every other index of orders is partial.
      const full = (db.prepare("SELECT name FROM pragma_index_list('orders') WHERE partial = 0").all() as Array<{ name: string }>).map((r) => r.name);
      expect(full).toEqual([expect.stringMatching(/^sqlite_autoindex_orders/)]);
      expect(db.prepare(`SELECT name FROM pragma_index_info('${full[0]}')`).pluck().all()).toEqual(['id']);
    } finally {
      db.close();
    }
  });

  it("gives an order whose client chose its id a row id of the store's own: time-ordered, in no client's or service's alphabet", async () => {
    const engine = createEngine(file(), { now: NOW });
    try {
      const service = place(engine, 'Sim101');
      const ids: string[] = [];
      for (const orderId of ['z-1', 'a-2', 'm-3']) {
        place(engine, 'Sim101', orderId);
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
      ids.push(...rowIdsOfClientOrders(file()));
      expect(ids).toEqual([expect.stringMatching(/^~[0-9a-f]{28}$/), expect.stringMatching(/^~[0-9a-f]{28}$/), expect.stringMatching(/^~[0-9a-f]{28}$/)]);
      // In the order placed (each a few milliseconds after the last), whatever the client's ids.
      expect([...ids].sort()).toEqual(ids);
      expect(new Set(ids.map((id) => id.slice(1, 13))).size).toBe(3);
      // The service's own id is the row's, as before.
      expect(queryIds(file(), service.orderId)).toEqual([service.orderId]);
      for (const id of ids) {
        expect(engine.getOrder(id)).toBeUndefined();
        expect(engine.getOrder(id, 'Sim101')).toBeUndefined();
      }
      expect(engine.orderIdsByPrefix(['~', ids[0]!.slice(0, 6)])).toEqual([]);
      expect(engine.getOrder('z-1')).toMatchObject({ orderId: 'z-1', account: 'Sim101' });
    } finally {
      engine.close();
    }
  });

  it("writes one page of the id column's index for a group of orders with their client's ids, not a page each", () => {
    const engine = createEngine(file(), { now: NOW });
    const db = new Database(file());
    try {
      // A store of 6,000 orders: the id column's index spans many pages.
      for (let g = 0; g < 60; g++) engine.group(Array.from({ length: 100 }, () => () => place(engine, 'Sim101')));
      /** Pages written to the log by one group of 50 orders (the log emptied first: its frame count from the WAL index). */
      const pagesWritten = (orderId: (i: number) => string | undefined) => {
        db.pragma('wal_checkpoint(TRUNCATE)');
        engine.group(Array.from({ length: 50 }, (_, i) => () => place(engine, 'Sim101', orderId(i))));
        const shm = readFileSync(`${file()}-shm`);
        return shm.readUInt32LE(16);
      };
      const byService = pagesWritten(() => undefined);
      // Client ids in order (as a bot numbers its orders): their own index is written in order too.
      const byClient = pagesWritten((i) => `bot-${String(i).padStart(5, '0')}`);
      expect(byService).toBeGreaterThan(30);
      expect(byClient).toBeLessThan(byService / 2);
    } finally {
      db.close();
      engine.close();
    }
  });

  it("no statement of the engine's queries reads every row of orders or fills", () => {
    createEngine(file(), { now: NOW }).close();
    const db = new Database(file());
    try {
      const q = prepareQueries(db) as unknown as Record<string, { source: string }>;
      const scans: string[] = [];
      let planned = 0;
      for (const key of Object.keys(q)) {
        // A few entries make statements rather than being one (a text per shape).
        const source = q[key]!.source;
        if (typeof source !== 'string') continue;
        const explain = db.prepare(`EXPLAIN QUERY PLAN ${source}`);
        const names = [...new Set([...source.matchAll(/@([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!))];
        // Anonymous parameters: as many as the statement takes (SQLite says when it is too few).
        let rows: Array<{ detail: string }> | undefined;
        for (let n = 0; n <= 24 && rows === undefined; n++) {
          const args: unknown[] = Array.from({ length: n }, () => 'x');
          if (names.length > 0) args.push(Object.fromEntries(names.map((name) => [name, 'x'])));
          try {
            rows = explain.all(...args) as Array<{ detail: string }>;
          } catch (error) {
            if (!(error instanceof RangeError)) throw error;
          }
        }
        expect(rows, key).toBeDefined();
        planned++;
        for (const { detail } of rows!) if (/^SCAN (orders|fills|o|f)$/.test(detail)) scans.push(`${key}: ${detail}`);
      }
      expect(planned).toBeGreaterThan(40);
      expect(scans).toEqual([]);
    } finally {
      db.close();
    }
  });
});

describe('lists of orders', () => {
  const FORMS = [
    {},
    { account: 'Sim101' },
    { instrument: 'ES 09-25' },
    { account: 'Sim101', activeOnly: true },
    { activeOnly: true, instrument: 'NQ 09-25' },
    { account: 'Sim101', activeOrSince: '2025-09-02T00:00:00.000Z' },
    { activeOrSince: '2025-09-02T00:00:00.000Z', instrument: 'ES 09-25' },
  ];

  it('read the working orders through their index, any other list in seq order', () => {
    createEngine(file(), { now: NOW }).close();
    const db = new Database(file());
    try {
      for (const filter of FORMS) {
        for (const page of [undefined, { limit: 10 }, { limit: 10, after: 7 }]) {
          const { text, params } = orderListQuery(filter, page);
          const details = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
          // The working orders are few, and sorted; any other list comes in seq order, read up to the page's end.
          if (filter.activeOnly) expect(details, text).toMatch(/^(SCAN|SEARCH) orders USING INDEX orders_working/);
          else expect(details, text).not.toContain('TEMP B-TREE FOR ORDER BY');
          if (!filter.activeOnly) expect(details, text).toMatch(/^(SCAN orders|SEARCH orders USING INTEGER PRIMARY KEY \(rowid>\?\))$/);
        }
      }
    } finally {
      db.close();
    }
  });

  it('answer as a filter of every row would, page by page, on random days of orders', () => {
    const step = fc.record({
      account: fc.constantFrom('Sim101', 'sim102'),
      instrument: fc.constantFrom('ES 09-25', 'NQ 09-25'),
      kind: fc.constantFrom('market', 'limit', 'limit', 'cancel'),
      hours: fc.nat(30),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.integer({ min: 1, max: 7 }), (steps, limit) => {
        rmSync(file(), { force: true });
        let now = Date.parse('2025-09-01T14:00:00Z');
        const engine = createEngine(file(), { now: () => new Date(now) });
        try {
          engine.addAccount('Sim102');
          engine.setPrice('ES 09-25', 5000);
          engine.setPrice('NQ 09-25', 20000);
          for (const s of steps) {
            now += s.hours * 3_600_000;
            if (s.kind === 'cancel') {
              const working = engine.listOrders({ account: s.account, activeOnly: true });
              if (working.length > 0) engine.cancelOrder(s.account, working[0]!.orderId);
              continue;
            }
            engine.placeOrder(
              parseOrder({ account: s.account, instrument: s.instrument, action: 'BUY', quantity: 1, orderType: s.kind === 'market' ? 'MARKET' : 'LIMIT', limitPrice: s.kind === 'market' ? undefined : 100, timeInForce: 'GTC' }),
            );
          }
          const db = new Database(file(), { readonly: true });
          const rows = db.prepare('SELECT order_id AS orderId, account, instrument, state, updated_at FROM orders ORDER BY seq').all() as Array<{ orderId: string; account: string; instrument: string; state: string; updated_at: string }>;
          db.close();
          // A time some order was changed at exactly: that order is one of those since it.
          const since = rows[rows.length >> 1]?.updated_at ?? new Date(now).toISOString();
          for (const form of FORMS) {
            const filter = form.activeOrSince === undefined ? form : { ...form, activeOrSince: since };
            const expected = rows
              .filter((r) => filter.account === undefined || r.account === 'Sim101')
              .filter((r) => filter.instrument === undefined || r.instrument === filter.instrument)
              .filter((r) => !filter.activeOnly || r.state === 'WORKING')
              .filter((r) => filter.activeOrSince === undefined || r.state === 'WORKING' || r.updated_at >= filter.activeOrSince)
              .map((r) => r.orderId);
            expect(engine.listOrders(filter).map((o) => o.orderId)).toEqual(expected);
            expect(everyPage((after) => engine.pageOrders(filter, { limit, after }), (o) => o.orderId)).toEqual(expected);
          }
        } finally {
          engine.close();
        }
      }),
      { seed: 20261128, numRuns: 30 },
    );
  });
});

describe("lists of fills, and the day's money", () => {
  /** A store whose fills span several days: MARKET orders in two accounts and instruments, the clock moving on by hours. */
  function tradedDays(steps: Array<{ account: string; instrument: string; sell: boolean; hours: number }>) {
    rmSync(file(), { force: true });
    let now = Date.parse('2025-09-01T14:00:00Z');
    const engine = createEngine(file(), { now: () => new Date(now) });
    engine.addAccount('Sim102');
    engine.setPrice('ES 09-25', 5000);
    engine.setPrice('NQ 09-25', 20000);
    steps.forEach((s, i) => {
      now += s.hours * 3_600_000;
      engine.setPrice(s.instrument, (s.instrument === 'ES 09-25' ? 5000 : 20000) + (i % 7) - 3);
      engine.placeOrder(parseOrder({ account: s.account, instrument: s.instrument, action: s.sell ? 'SELL' : 'BUY', quantity: 1 + (i % 3), orderType: 'MARKET', timeInForce: 'DAY' }));
    });
    return { engine, now: () => now, later: (hours: number) => (now += hours * 3_600_000) };
  }
  const trade = fc.record({
    account: fc.constantFrom('Sim101', 'Sim102'),
    instrument: fc.constantFrom('ES 09-25', 'NQ 09-25'),
    sell: fc.boolean(),
    hours: fc.constantFrom(0, 1, 5, 20),
  });

  it('read the fills since a time through fills_by_time, and any other list in seq order', () => {
    createEngine(file(), { now: NOW }).close();
    const db = new Database(file());
    try {
      for (const filter of [{}, { account: 'Sim101' }, { instrument: 'ES 09-25' }, { since: '2025-09-01' }, { account: 'Sim101', since: '2025-09-01' }, { account: 'Sim101', instrument: 'NQ 09-25', since: '2025-09-01' }]) {
        for (const page of [undefined, { limit: 10, after: 3 }]) {
          const { text, params } = fillListQuery(filter, page);
          const details = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');
          expect(details, text).not.toContain('TEMP B-TREE');
          if (filter.since !== undefined) expect(details, text).toContain('COVERING INDEX fills_by_time (time>?)');
          else expect(details, text).toMatch(/^(SCAN f|SEARCH f USING INTEGER PRIMARY KEY \(rowid>\?\)) \| SEARCH o USING INDEX sqlite_autoindex_orders_1 \(id=\?\)$/);
        }
      }
    } finally {
      db.close();
    }
  });

  it('answer as a filter of every fill would, page by page; the day\'s money is the whole read\'s, either read first', () => {
    fc.assert(
      fc.property(fc.array(trade, { minLength: 1, maxLength: 30 }), fc.integer({ min: 1, max: 5 }), fc.boolean(), (steps, limit, todayFirst) => {
        const { engine } = tradedDays(steps);
        try {
          const db = new Database(file(), { readonly: true });
          const fills = db.prepare('SELECT execution_id AS executionId, account, instrument, time FROM fills ORDER BY seq').all() as Array<{ executionId: string; account: string; instrument: string; time: string }>;
          db.close();
          const since = fills[fills.length >> 1]!.time;
          for (const filter of [{}, { account: 'sim102' }, { since }, { account: 'Sim101', since }, { account: 'Sim102', instrument: 'NQ 09-25', since }]) {
            const expected = fills
              .filter((f) => filter.account === undefined || f.account === filter.account.replace('sim', 'Sim'))
              .filter((f) => !('instrument' in filter) || f.instrument === filter.instrument)
              .filter((f) => filter.since === undefined || f.time >= filter.since)
              .map((f) => f.executionId);
            expect(engine.listFills(filter).map((f) => f.executionId)).toEqual(expected);
            expect(everyPage((after) => engine.pageFills(filter, { limit, after }), (f) => f.executionId)).toEqual(expected);
          }
          for (const account of ['Sim101', 'Sim102']) {
            const today = todayFirst ? engine.accountMoneyToday(account) : undefined;
            const whole = engine.accountMoney(account);
            const after = engine.accountMoneyToday(account);
            expect(Number.isFinite(whole.realizedTotal) && Number.isFinite(whole.commissionTotal)).toBe(true);
            for (const day of today ? [today, after] : [after]) {
              expect(day.realizedToday).toBeCloseTo(whole.realizedToday, 6);
              expect(day.commissionToday).toBeCloseTo(whole.commissionToday, 6);
            }
          }
        } finally {
          engine.close();
        }
      }),
      { seed: 20261128, numRuns: 30 },
    );
  });

  it("the day's money read first follows this process's next fills, and a new trading day", () => {
    const { engine, now, later } = tradedDays([
      { account: 'Sim101', instrument: 'ES 09-25', sell: false, hours: 0 },
      { account: 'Sim101', instrument: 'ES 09-25', sell: false, hours: 1 },
    ]);
    try {
      const before = engine.accountMoneyToday('Sim101');
      engine.setPrice('ES 09-25', 5010);
      engine.placeOrder(parseOrder({ account: 'Sim101', instrument: 'ES 09-25', action: 'SELL', quantity: 3, orderType: 'MARKET', timeInForce: 'DAY' }));
      const day = engine.accountMoneyToday('Sim101');
      // What another process reads from the store, whole.
      const other = createEngine(file(), { now: () => new Date(now()) });
      try {
        const whole = other.accountMoney('Sim101');
        expect(day.realizedToday).toBeCloseTo(whole.realizedToday, 6);
        expect(day.commissionToday).toBeCloseTo(whole.commissionToday, 6);
      } finally {
        other.close();
      }
      // Bought 1 at 4997 and 2 at 4998, sold 3 at 5010: 37 points, $50 each.
      expect(day.realizedToday - before.realizedToday).toBeCloseTo(37 * 50, 6);
      later(48);
      expect(engine.accountMoneyToday('Sim101')).toEqual({ realizedToday: 0, commissionToday: 0 });
    } finally {
      engine.close();
    }
  });
});

describe('migrations after TABLES_VERSION', () => {
  it('only add or drop indexes, so a snapshot from TABLES_VERSION on has the same tables', () => {
    expect(TABLES_VERSION).toBeLessThanOrEqual(SCHEMA_VERSION);
    for (const migration of MIGRATIONS.slice(TABLES_VERSION)) {
      const statements = migration.split(';').map((s) => s.trim()).filter(Boolean);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) expect(statement).toMatch(/^(CREATE (UNIQUE )?INDEX|DROP INDEX) /);
    }
  });

  it('a snapshot saved by schema 11 or 12 restores; one before TABLES_VERSION is refused', () => {
    // What a trade of those versions saved: the same tables, with the indexes of its time.
    const INDEXES: Record<number, string> = {
      11: 'CREATE UNIQUE INDEX orders_by_order_id ON orders(account, order_id)',
      12: `CREATE UNIQUE INDEX orders_by_order_id ON orders(account, order_id);
           CREATE INDEX orders_by_client_order_id ON orders(order_id) WHERE order_id <> id`,
    };
    const engine = createEngine(file(), { now: NOW });
    try {
      place(engine, 'Sim101', 'ex-1');
      for (const version of [11, 12]) {
        const old = join(dir, `v${version}.db`);
        engine.snapshotTo(old);
        const db = new Database(old);
        db.exec(`DROP INDEX orders_by_client_order_id; ${INDEXES[version]}`);
        db.pragma(`user_version = ${version}`);
        db.close();
        place(engine, 'Sim101', 'ex-2');
        engine.restoreFrom(old);
        expect(engine.getOrder('ex-1')).toMatchObject({ orderId: 'ex-1', account: 'Sim101' });
        expect(engine.getOrder('ex-2')).toBeUndefined();
        // The store's own indexes hold after the restore: a client id used is refused.
        expect(() => place(engine, 'Sim101', 'ex-1')).toThrow("orderId: 'ex-1' is already used in account 'Sim101'");
      }
      expect(TABLES_VERSION).toBe(11);
      const older = new Database(join(dir, 'v11.db'));
      older.pragma(`user_version = ${TABLES_VERSION - 1}`);
      older.close();
      expect(() => engine.restoreFrom(join(dir, 'v11.db'))).toThrow(`has schema ${TABLES_VERSION - 1}; this store has ${SCHEMA_VERSION}`);
      expect(engine.getOrder('ex-1')).toMatchObject({ orderId: 'ex-1' });
    } finally {
      engine.close();
    }
  });

  it('migrates a store of version 11: its orders are found by id, a client id among them', () => {
    const db = new Database(file());
    for (const migration of MIGRATIONS.slice(0, 11)) db.exec(migration);
    db.pragma('user_version = 11');
    db.prepare("INSERT OR IGNORE INTO accounts (name, created_at) VALUES ('Sim101', '2025-08-01T14:00:00.000Z')").run();
    const insert = db.prepare(
      `INSERT INTO orders (id, order_id, account, instrument, action, quantity, order_type, time_in_force, state, created_at, updated_at)
       VALUES (?, ?, 'Sim101', 'ES 09-25', 'BUY', 1, 'MARKET', 'DAY', 'FILLED', '2025-08-01T14:00:00.000Z', '2025-08-01T14:00:00.000Z')`,
    );
    insert.run('a'.repeat(32), 'mine-1');
    insert.run('b'.repeat(32), 'b'.repeat(32));
    db.close();
    const engine = createEngine(file(), { now: NOW });
    try {
      expect(engine.getOrder('mine-1')).toMatchObject({ orderId: 'mine-1' });
      expect(engine.getOrder('b'.repeat(32))).toMatchObject({ orderId: 'b'.repeat(32) });
      expect(engine.getOrder('a'.repeat(32))).toBeUndefined();
      expect(engine.orderIdsByPrefix(['mine', 'bbbb'])).toEqual([
        { orderId: 'b'.repeat(32), account: 'Sim101' },
        { orderId: 'mine-1', account: 'Sim101' },
      ]);
    } finally {
      engine.close();
    }
  });
});
