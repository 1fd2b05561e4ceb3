/** The engine's rows, their conversion to records, and its prepared statements. */
import type { Action, OrderType, TimeInForce } from '../service/order.js';
import { contractsGeneration } from '../service/contracts.js';
import { otherCloses } from '../service/session.js';
import type { RunResult } from 'better-sqlite3';
import type { Db } from './store.js';
import type { MinuteBar } from './minute-bars.js';
import type { AtmTemplate, FillRecord, OrderListFilter, OrderOrigin, OrderRecord, OrderState, Page, PositionRecord, PricedPosition } from './types.js';
import { lazily } from '../common/lazily.js';

export interface OrderRow {
  seq: number;
  id: string;
  /** The service's id: the client's own, or the row's id. */
  order_id: string;
  account: string;
  instrument: string;
  action: Action;
  quantity: number;
  order_type: OrderType;
  time_in_force: TimeInForce;
  limit_price: number | null;
  stop_price: number | null;
  limit_price_changed: number | null;
  stop_price_changed: number | null;
  oco_id: string | null;
  strategy: string | null;
  state: OrderState;
  filled_quantity: number;
  avg_fill_price: number | null;
  origin: OrderOrigin;
  parent_id: string | null;
  triggered: number;
  atm_stop_loss_ticks: number | null;
  atm_profit_target_ticks: number | null;
  atm_tick_size: number | null;
  created_at: string;
  updated_at: string;
  /** Set by a scenario's late reject (issue 22): WORKING with it is held, CANCELLED with it is Rejected. */
  reject_reason?: string | null;
}

export interface PositionRow {
  account: string;
  instrument: string;
  quantity: number;
  avg_price: number | null;
  realized_pnl: number;
  pnl_known: number;
}

export interface FillRow {
  seq: number;
  execution_id: string;
  /** The order's id for the service (orders.order_id). */
  order_id: string;
  account: string;
  instrument: string;
  action: Action;
  quantity: number;
  price: number | null;
  time: string;
  order_type: OrderType;
  origin: OrderOrigin;
  position_after: number | null;
  realized: number;
  commission: number;
}

export interface ContractSettingRow {
  root: string;
  commission: number;
  slippage_ticks: number;
  updated_at: string;
}

export interface TemplateRow {
  name: string;
  stop_loss_ticks: number;
  profit_target_ticks: number;
  tick_size: number;
}

/** What a new order row needs; the rest has defaults. */
export interface NewOrderRow {
  id: string;
  orderId: string;
  account: string;
  instrument: string;
  action: Action;
  quantity: number;
  orderType: OrderType;
  timeInForce: TimeInForce;
  limitPrice: number | null;
  stopPrice: number | null;
  ocoId: string | null;
  strategy: string | null;
  origin: OrderOrigin;
  parentId: string | null;
  atmStopLossTicks: number | null;
  atmProfitTargetTicks: number | null;
  atmTickSize: number | null;
  now: string;
}

/** The row the store holds for a new order, known without reading it back. */
export function newOrderRow(row: NewOrderRow, seq: number, state: OrderState, fillPrice: number | null): OrderRow {
  return {
    seq,
    id: row.id,
    order_id: row.orderId,
    account: row.account,
    instrument: row.instrument,
    action: row.action,
    quantity: row.quantity,
    order_type: row.orderType,
    time_in_force: row.timeInForce,
    limit_price: row.limitPrice,
    stop_price: row.stopPrice,
    limit_price_changed: null,
    stop_price_changed: null,
    oco_id: row.ocoId,
    strategy: row.strategy,
    state,
    filled_quantity: state === 'FILLED' ? row.quantity : 0,
    avg_fill_price: fillPrice,
    origin: row.origin,
    parent_id: row.parentId,
    triggered: 0,
    atm_stop_loss_ticks: row.atmStopLossTicks,
    atm_profit_target_ticks: row.atmProfitTargetTicks,
    atm_tick_size: row.atmTickSize,
    created_at: row.now,
    updated_at: row.now,
  };
}

export function toOrder(row: OrderRow): OrderRecord {
  const order: OrderRecord = {
    id: row.id,
    orderId: row.order_id,
    account: row.account,
    instrument: row.instrument,
    action: row.action,
    quantity: row.quantity,
    orderType: row.order_type,
    timeInForce: row.time_in_force,
    state: row.state,
    filledQuantity: row.filled_quantity,
    avgFillPrice: row.avg_fill_price,
    origin: row.origin,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (row.limit_price !== null) order.limitPrice = row.limit_price;
  if (row.stop_price !== null) order.stopPrice = row.stop_price;
  if (row.limit_price_changed !== null) order.limitPriceChanged = row.limit_price_changed;
  if (row.stop_price_changed !== null) order.stopPriceChanged = row.stop_price_changed;
  if (row.oco_id !== null) order.ocoId = row.oco_id;
  if (row.strategy !== null) order.strategy = row.strategy;
  if (row.parent_id !== null) order.parentOrderId = row.parent_id;
  if (row.triggered) order.triggered = true;
  if (row.reject_reason != null) order.rejectReason = row.reject_reason;
  return order;
}

export function toPosition(row: PositionRow): PositionRecord {
  return {
    account: row.account,
    instrument: row.instrument,
    quantity: row.quantity,
    avgPrice: row.avg_price,
    realizedPnl: row.pnl_known ? row.realized_pnl : null,
  };
}

/** A position and its instrument's last price, as one row of the priced positions' read: an array, in this order. */
export type PricedPositionRow = [
  account: string,
  instrument: string,
  quantity: number,
  avgPrice: number | null,
  realizedPnl: number,
  pnlKnown: number,
  last: number | null,
];

export function toPricedPosition(row: PricedPositionRow): PricedPosition {
  return {
    position: toPosition({ account: row[0], instrument: row[1], quantity: row[2], avg_price: row[3], realized_pnl: row[4], pnl_known: row[5] }),
    last: row[6] ?? undefined,
  };
}

export function toFill(row: FillRow): FillRecord {
  return {
    executionId: row.execution_id,
    orderId: row.order_id,
    account: row.account,
    instrument: row.instrument,
    action: row.action,
    quantity: row.quantity,
    price: row.price,
    time: row.time,
    orderType: row.order_type,
    origin: row.origin,
    positionAfter: row.position_after ?? 0,
    realized: row.realized,
    commission: row.commission,
  };
}

export function toTemplate(row: TemplateRow): AtmTemplate {
  return {
    name: row.name,
    stopLossTicks: row.stop_loss_ticks,
    profitTargetTicks: row.profit_target_ticks,
    tickSize: row.tick_size,
  };
}

/** A user's contract (`trade contract add`); `months` as `3,6,9,12`. */
export interface CustomContractRow {
  root: string;
  name: string;
  exchange: string;
  tick_size: number;
  point_value: number;
  months: string;
  day_end: string;
  demo_price: number | null;
  updated_at: string;
}

/** Where an instrument's prices come from: `*`, a root (`ES`) or a contract (`ES 09-25`). */
export interface PriceSourceRow {
  target: string;
  source: string;
  /** JSON: the source's settings (a replay's file and speed, a walk's seed, ...). */
  params: string;
  updated_at: string;
}

/**
 * What the engine uses of a better-sqlite3 statement, under a name of ours: the library's
 * declarations (dist/types) cannot name the module's internal BetterSqlite3.Statement.
 */
export interface Prepared<P extends unknown[] = unknown[], R = unknown> {
  run(...params: P): RunResult;
  get(...params: P): R | undefined;
  all(...params: P): R[];
  iterate(...params: P): IterableIterator<R>;
}

export function prepareQueries(db: Db) {
  const prepare = <P extends unknown[] = unknown[], R = unknown>(sql: string): Prepared<P, R> => db.prepare<P, R>(sql);
  return lazily({
    account: () => prepare<[string], { name: string; id: number }>('SELECT name, rowid AS id FROM accounts WHERE name = ?'),
    accounts: () => prepare<[], { name: string }>('SELECT name FROM accounts ORDER BY name COLLATE NOCASE'),
    addAccount: () => prepare<[string, string]>('INSERT INTO accounts(name, created_at) VALUES (?, ?)'),
    insertOrder: () => prepare<[NewOrderRow]>(
      `INSERT INTO orders (id, order_id, account, instrument, action, quantity, order_type, time_in_force,
         limit_price, stop_price, oco_id, strategy, state, origin, parent_id,
         atm_stop_loss_ticks, atm_profit_target_ticks, atm_tick_size, created_at, updated_at)
       VALUES (@id, @orderId, @account, @instrument, @action, @quantity, @orderType, @timeInForce,
         @limitPrice, @stopPrice, @ocoId, @strategy, 'WORKING', @origin, @parentId,
         @atmStopLossTicks, @atmProfitTargetTicks, @atmTickSize, @now, @now)`,
    ),
    /** A market order, inserted already filled (no INSERT then UPDATE). */
    insertFilledOrder: () => prepare<[NewOrderRow & { fillPrice: number | null }]>(
      `INSERT INTO orders (id, order_id, account, instrument, action, quantity, order_type, time_in_force,
         limit_price, stop_price, oco_id, strategy, state, filled_quantity, avg_fill_price, origin, parent_id,
         atm_stop_loss_ticks, atm_profit_target_ticks, atm_tick_size, created_at, updated_at)
       VALUES (@id, @orderId, @account, @instrument, @action, @quantity, @orderType, @timeInForce,
         @limitPrice, @stopPrice, @ocoId, @strategy, 'FILLED', @quantity, @fillPrice, @origin, @parentId,
         @atmStopLossTicks, @atmProfitTargetTicks, @atmTickSize, @now, @now)`,
    ),
    orderById: () => prepare<[string], OrderRow>('SELECT * FROM orders WHERE id = ?'),
    /** By the service's id in one account (unique there). */
    orderByOrderId: () =>
      prepare<[{ account: string; id: string }], OrderRow>(
        `SELECT * FROM (SELECT * FROM orders WHERE id = @id AND order_id = @id AND account = @account
           UNION ALL SELECT * FROM orders WHERE order_id = @id AND account = @account AND order_id <> id) ORDER BY seq LIMIT 1`,
      ),
    /**
     * By the service's id in any account, the oldest. The rows with that order_id are the one the
     * service made (order_id = id, found by id's own index) and those whose client chose it
     * (orders_by_client_order_id): two indexed reads, never every row (migration 12).
     */
    ordersByOrderId: () =>
      prepare<[{ id: string }], OrderRow>(
        `SELECT * FROM (SELECT * FROM orders WHERE id = @id AND order_id = @id
           UNION ALL SELECT * FROM orders WHERE order_id = @id AND order_id <> id) ORDER BY seq LIMIT 1`,
      ),
    /** The ids in [from, to) and their accounts, from the same two indexes (prefix lookups). */
    orderIdsBetween: () =>
      prepare<[{ from: string; to: string }], { orderId: string; account: string }>(
        `SELECT order_id AS orderId, account FROM orders WHERE id >= @from AND id < @to AND order_id = id
         UNION SELECT order_id, account FROM orders WHERE order_id >= @from AND order_id < @to AND order_id <> id`,
      ),
    /** The same, in one account. */
    orderIdsBetweenIn: () =>
      prepare<[{ from: string; to: string; account: string }], { orderId: string; account: string }>(
        `SELECT order_id AS orderId, account FROM orders WHERE id >= @from AND id < @to AND order_id = id AND account = @account
         UNION SELECT order_id, account FROM orders WHERE order_id >= @from AND order_id < @to AND order_id <> id AND account = @account`,
      ),
    markFilled: () => prepare<[number | null, string, string]>(
      `UPDATE orders SET state = 'FILLED', filled_quantity = quantity, avg_fill_price = ?, updated_at = ?
       WHERE id = ? AND state = 'WORKING'`,
    ),
    markTriggered: () => prepare<[string, string]>(`UPDATE orders SET triggered = 1, updated_at = ? WHERE id = ?`),
    finish: () => prepare<[OrderState, string, string]>(
      // A held order (a late reject to come) that is cancelled first is cancelled, not rejected.
      `UPDATE orders SET state = ?, updated_at = ?, reject_reason = NULL WHERE id = ? AND state = 'WORKING'`,
    ),
    hold: () => prepare<[string, string]>(`UPDATE orders SET reject_reason = ? WHERE id = ?`),
    rejectHeld: () => prepare<[string, string]>(
      `UPDATE orders SET state = 'CANCELLED', updated_at = ? WHERE id = ? AND state = 'WORKING' AND reject_reason IS NOT NULL`,
    ),
    markPartFilled: () => prepare<[number, number | null, string, string]>(
      `UPDATE orders SET filled_quantity = ?, avg_fill_price = ?, updated_at = ? WHERE id = ? AND state = 'WORKING'`,
    ),
    insertFill: () => prepare<[string, string, string, Action, number, number | null, string, string, number, number, number]>(
      `INSERT INTO fills (order_id, account, instrument, action, quantity, price, time, execution_id, position_after, realized, commission)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    customContracts: () => prepare<[], CustomContractRow>('SELECT * FROM custom_contracts ORDER BY root'),
    addCustomContract: () => prepare<[CustomContractRow]>(
      `INSERT INTO custom_contracts (root, name, exchange, tick_size, point_value, months, day_end, demo_price, updated_at)
       VALUES (@root, @name, @exchange, @tick_size, @point_value, @months, @day_end, @demo_price, @updated_at)
       ON CONFLICT(root) DO UPDATE SET name = excluded.name, exchange = excluded.exchange, tick_size = excluded.tick_size,
         point_value = excluded.point_value, months = excluded.months, day_end = excluded.day_end,
         demo_price = excluded.demo_price, updated_at = excluded.updated_at`,
    ),
    removeCustomContract: () => prepare<[string]>('DELETE FROM custom_contracts WHERE root = ?'),
    priceSources: () => prepare<[], PriceSourceRow>('SELECT * FROM price_sources ORDER BY target'),
    priceSource: () => prepare<[string], PriceSourceRow>('SELECT * FROM price_sources WHERE target = ?'),
    setPriceSource: () => prepare<[string, string, string, string]>(
      `INSERT INTO price_sources (target, source, params, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(target) DO UPDATE SET source = excluded.source, params = excluded.params, updated_at = excluded.updated_at`,
    ),
    removePriceSource: () => prepare<[string]>('DELETE FROM price_sources WHERE target = ?'),
    contractSetting: () => prepare<[string], ContractSettingRow>('SELECT * FROM contract_settings WHERE root = ?'),
    contractSettings: () => prepare<[], ContractSettingRow>('SELECT * FROM contract_settings ORDER BY root'),
    setContractSetting: () => prepare<[string, number, number, string]>(
      `INSERT INTO contract_settings (root, commission, slippage_ticks, updated_at) VALUES (?, ?, ?, ?)
       ON CONFLICT(root) DO UPDATE SET commission = excluded.commission, slippage_ticks = excluded.slippage_ticks, updated_at = excluded.updated_at`,
    ),
    insertTick: () => prepare<[string, number, string]>('INSERT INTO ticks (instrument, price, time) VALUES (?, ?, ?)'),
    /** minute-bars.ts: a price joins its minute's bar (the first opens it, each one closes it). */
    upsertMinuteBar: () => prepare<[{ instrument: string; minute: number; price: number }]>(
      `INSERT INTO minute_bars (instrument, minute, open, high, low, close, ticks) VALUES (@instrument, @minute, @price, @price, @price, @price, 1)
       ON CONFLICT(instrument, minute) DO UPDATE SET high = max(high, excluded.close), low = min(low, excluded.close),
         close = excluded.close, ticks = ticks + 1`,
    ),
    /** A replay group's part of a minute (prices.ts): the bar opens with it or takes it in. */
    mergeMinuteBar: () => prepare<[{ instrument: string; minute: number; open: number; high: number; low: number; close: number; ticks: number }]>(
      `INSERT INTO minute_bars (instrument, minute, open, high, low, close, ticks) VALUES (@instrument, @minute, @open, @high, @low, @close, @ticks)
       ON CONFLICT(instrument, minute) DO UPDATE SET high = max(high, excluded.high), low = min(low, excluded.low),
         close = excluded.close, ticks = ticks + excluded.ticks`,
    ),
    minuteBars: () => prepare<[string, number, number], MinuteBar>(
      'SELECT minute, open, high, low, close, ticks FROM minute_bars WHERE instrument = ? AND minute >= ? AND minute <= ? ORDER BY minute',
    ),
    position: () => prepare<[string, string], PositionRow>('SELECT * FROM positions WHERE account = ? AND instrument = ?'),
    upsertPosition: () => prepare(
      `INSERT INTO positions (account, instrument, quantity, avg_price, realized_pnl, pnl_known, updated_at)
       VALUES (@account, @instrument, @quantity, @avgPrice, @realizedPnl, @pnlKnown, @now)
       ON CONFLICT(account, instrument) DO UPDATE SET quantity = excluded.quantity, avg_price = excluded.avg_price,
         realized_pnl = excluded.realized_pnl, pnl_known = excluded.pnl_known, updated_at = excluded.updated_at`,
    ),
    /** Working orders in one account and instrument, oldest first. */
    workingIn: () => prepare<[string, string], OrderRow>(
      `SELECT * FROM orders WHERE account = ? AND instrument = ? AND state = 'WORKING' ORDER BY seq`,
    ),
    /** Working orders of an account, oldest first. */
    workingOfAccount: () => prepare<[string], OrderRow>(`SELECT * FROM orders INDEXED BY orders_working_by_account WHERE account = ? AND state = 'WORKING' ORDER BY seq`),
    /** Every working order, oldest first. */
    // INDEXED BY: with no statistics, SQLite reads the whole table in seq order rather than the
    // index of working orders then sorts them; on a store of a million orders that is ~150 ms in
    // every Flatten and CancelOrders, against ~0.01 ms (issue 34). It is also a check: a statement
    // whose index cannot serve it fails when it is prepared.
    working: () => prepare<[], OrderRow>(`SELECT * FROM orders INDEXED BY orders_working WHERE state = 'WORKING' ORDER BY seq`),
    /** An ATM entry's brackets (orders_by_parent, migration 12). */
    bracketsOf: () => prepare<[string], OrderRow>('SELECT * FROM orders INDEXED BY orders_by_parent WHERE parent_id = ? ORDER BY seq'),
    changeOrder: () => prepare<[number, number | null, number | null, number | null, number | null, string, string]>(
      `UPDATE orders SET quantity = ?, limit_price = ?, stop_price = ?,
         limit_price_changed = coalesce(?, limit_price_changed), stop_price_changed = coalesce(?, stop_price_changed), updated_at = ?
       WHERE id = ? AND state = 'WORKING'`,
    ),
    openPositions: () => prepare<[], PositionRow>('SELECT * FROM positions WHERE quantity != 0 ORDER BY account COLLATE NOCASE, instrument'),
    openPositionsOf: () => prepare<[string], PositionRow>('SELECT * FROM positions WHERE account = ? AND quantity != 0 ORDER BY instrument'),
    /** Working orders in an instrument across accounts, in time priority. */
    workingForInstrument: () => prepare<[string], OrderRow>(
      `SELECT * FROM orders WHERE instrument = ? AND state = 'WORKING' ORDER BY seq`,
    ),
    /** When the oldest working DAY order was placed: its session ends first. */
    oldestWorkingDay: () => prepare<[], { oldest: string | null }>(
      `SELECT MIN(created_at) AS oldest FROM orders WHERE state = 'WORKING' AND time_in_force = 'DAY'`,
    ),
    /**
     * When the oldest working DAY order of the roots with the default close was placed: the
     * index of working DAY orders walked from the oldest, to the first not of another close.
     */
    oldestWorkingDayDefault: () => {
      // Prepared again when the user's contracts change the roots of other closes (roots are
      // checked to be letters and digits before they are stored, so they are safe in the text).
      let prepared: { generation: number; statement: Prepared<[], { oldest: string }> } | undefined;
      return {
        get(): { oldest: string } | undefined {
          if (prepared?.generation !== contractsGeneration()) {
            const others = Object.values(otherCloses()).flat();
            const notOther = others.map((root) => `NOT (instrument >= '${root} ' AND instrument < '${root}!')`).join(' AND ') || '1';
            prepared = {
              generation: contractsGeneration(),
              statement: prepare<[], { oldest: string }>(
                `SELECT created_at AS oldest FROM orders INDEXED BY orders_day_working WHERE state = 'WORKING' AND time_in_force = 'DAY' AND ${notOther} ORDER BY created_at LIMIT 1`,
              ),
            };
          }
          return prepared.statement.get();
        },
      };
    },
    /** The same for one root: its working orders by the instrument index, usually none. */
    oldestWorkingDayOfRoot: () => prepare<[string, string], { oldest: string | null }>(
      `SELECT MIN(created_at) AS oldest FROM orders WHERE state = 'WORKING' AND instrument >= ? AND instrument < ? AND time_in_force = 'DAY'`,
    ),
    workingDay: () => prepare<[], OrderRow>(
      `SELECT * FROM orders INDEXED BY orders_day_working WHERE state = 'WORKING' AND time_in_force = 'DAY' ORDER BY seq`,
    ),
    ocoGroup: () => prepare<[string, string], OrderRow>('SELECT * FROM orders WHERE account = ? AND oco_id = ? ORDER BY seq'),
    price: () => prepare<[string], { price: number }>('SELECT price FROM prices WHERE instrument = ?'),
    prices: () => prepare<[], { instrument: string; price: number; updatedAt: string }>(
      'SELECT instrument, price, updated_at AS updatedAt FROM prices ORDER BY instrument',
    ),
    upsertPrice: () => prepare<[string, number, string]>(
      `INSERT INTO prices (instrument, price, updated_at) VALUES (?, ?, ?)
       ON CONFLICT(instrument) DO UPDATE SET price = excluded.price, updated_at = excluded.updated_at`,
    ),
    template: () => prepare<[string], TemplateRow>('SELECT * FROM atm_templates WHERE name = ?'),
    templates: () => prepare<[], TemplateRow>('SELECT * FROM atm_templates ORDER BY name COLLATE NOCASE'),
    addTemplate: () => prepare<[string, number, number, number, string]>(
      `INSERT INTO atm_templates (name, stop_loss_ticks, profit_target_ticks, tick_size, created_at) VALUES (?, ?, ?, ?, ?)`,
    ),
    removeTemplate: () => prepare<[string]>('DELETE FROM atm_templates WHERE name = ?'),
  });
}

export type Queries = ReturnType<typeof prepareQueries>;

/**
 * ` WHERE …` of `clauses` and a filter's account (already canonical) and instrument, whose values
 * go after those of `clauses` in `params`; nothing when there is no clause. `prefix` is the
 * table's alias and a dot, or nothing.
 */
export function whereOf(prefix: string, clauses: string[], params: string[], filter: { account?: string; instrument?: string }): string {
  if (filter.account !== undefined) {
    clauses.push(`${prefix}account = ?`);
    params.push(filter.account);
  }
  if (filter.instrument !== undefined) {
    clauses.push(`${prefix}instrument = ?`);
    params.push(filter.instrument);
  }
  return clauses.length > 0 ? ` WHERE ${clauses.join(' AND ')}` : '';
}

/**
 * What every list adds to its own clauses: the filter's (whereOf), the page's `seq >`, and ORDER
 * BY seq with the page's LIMIT (one row more than the page, to know whether more remain).
 */
function listed(prefix: string, clauses: string[], params: string[], filter: { account?: string; instrument?: string }, page: Page | undefined): string {
  if (page?.after !== undefined) clauses.push(`${prefix}seq > ${Math.trunc(page.after)}`);
  return `${whereOf(prefix, clauses, params, filter)} ORDER BY ${prefix}seq${page ? ` LIMIT ${Math.trunc(page.limit) + 1}` : ''}`;
}

/**
 * The statement of a list of fills (its account already canonical), in seq order, with each fill's
 * order id, type and origin, and its values. The fills since a time are their seqs from
 * fills_by_time (migration 12), then the rows of those seqs in order, up to the page's end, by the
 * rowid only (a look-back of 320 s read every fill of the account, ~60 ms for 300,000); any other
 * list is the table in seq order (NOT INDEXED).
 */
export function fillListQuery(filter: { account?: string; instrument?: string; since?: string }, page?: Page): { text: string; params: string[] } {
  const clauses: string[] = [];
  const params: string[] = [];
  if (filter.since !== undefined) {
    clauses.push('f.seq IN (SELECT seq FROM fills INDEXED BY fills_by_time WHERE time >= ?)');
    params.push(filter.since);
  }
  const rest = listed('f.', clauses, params, filter, page);
  const columns =
    'f.seq, f.execution_id, o.order_id, f.account, f.instrument, f.action, f.quantity, f.price, f.time, o.order_type, o.origin, f.position_after, f.realized, f.commission';
  return { text: `SELECT ${columns} FROM fills f NOT INDEXED JOIN orders o ON o.id = f.order_id${rest}`, params };
}

/**
 * The statement of a list of orders (its account already canonical), in seq order, and its
 * values. Each form names how it reads: with no statistics, SQLite walked the account prefix of
 * orders_by_order_id (dropped by migration 13), a random read of every order of the account
 * whatever the filter (~1 s for 300,000), or read the whole table for the working orders alone
 * (issue 34).
 * - The working orders: their partial index.
 * - Any other list (GetOrders' working orders and those changed in the trading day, every order of
 *   an account): the table in seq order (NOT INDEXED; the rowid serves the page's `seq >`), up to
 *   the page's end. An index of the orders by their last change would make the trading day's a
 *   range; every order would write it, so it is not built (docs/performance.md, ninth round).
 */
export function orderListQuery(filter: OrderListFilter, page?: Page): { text: string; params: string[] } {
  const clauses: string[] = [];
  const params: string[] = [];
  if (filter.activeOnly) clauses.push("state = 'WORKING'");
  else if (filter.activeOrSince !== undefined) {
    clauses.push("(state = 'WORKING' OR updated_at >= ?)");
    params.push(filter.activeOrSince);
  }
  const rest = listed('', clauses, params, filter, page);
  return { text: `SELECT * FROM orders ${filter.activeOnly ? 'INDEXED BY orders_working' : 'NOT INDEXED'}${rest}`, params };
}
