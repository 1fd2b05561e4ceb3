/**
 * The simulation engine: accounts, orders, fills and net positions over the SQLite store.
 * It trusts its input to have passed the order schema (src/order/schema.ts); callers validate.
 * Every operation runs in one IMMEDIATE transaction, so a failure changes nothing.
 */
import { randomBytes } from 'node:crypto';
import type { Action, Order, OrderType, TimeInForce } from '../order/schema.js';
import { RejectedError } from '../order/errors.js';
import { type Db, openStore } from './store.js';

export type OrderState = 'WORKING' | 'FILLED' | 'CANCELLED' | 'EXPIRED';
/** Who created the order: the client, or the engine while reversing. */
export type OrderOrigin = 'client' | 'reverse-close';

export interface OrderRecord {
  id: string;
  account: string;
  instrument: string;
  action: Action;
  quantity: number;
  orderType: OrderType;
  timeInForce: TimeInForce;
  limitPrice?: number;
  stopPrice?: number;
  ocoId?: string;
  strategy?: string;
  state: OrderState;
  filledQuantity: number;
  /** Average fill price; null while unfilled or when filled with no known price. */
  avgFillPrice: number | null;
  origin: OrderOrigin;
  createdAt: string;
  updatedAt: string;
}

export interface PositionRecord {
  account: string;
  instrument: string;
  /** Signed: positive long, negative short. */
  quantity: number;
  /** Null when flat or when a fill had no known price. */
  avgPrice: number | null;
  /** In price points times contracts; null when a closing fill had no known price. */
  realizedPnl: number | null;
}

export interface PlaceOutcome {
  orderId: string;
  order: OrderRecord;
}

export interface ReverseOutcome extends PlaceOutcome {
  /** The market order that flattened the old position. */
  closingOrder: OrderRecord;
  /** Working orders in the instrument that were cancelled first. */
  cancelledOrderIds: string[];
}

export interface OrderFilter {
  account?: string;
  instrument?: string;
}

export interface EngineOptions {
  now?: () => Date;
  newOrderId?: () => string;
}

export interface Engine {
  readonly file: string;
  placeOrder(order: Order): PlaceOutcome;
  reversePosition(order: Order): ReverseOutcome;
  listOrders(filter?: OrderFilter): OrderRecord[];
  listPositions(filter?: OrderFilter): PositionRecord[];
  getPosition(account: string, instrument: string): PositionRecord | undefined;
  lastPrice(instrument: string): number | undefined;
  listAccounts(): string[];
  addAccount(name: string): string;
  /** The canonical name of an account (names match in any case), or a 404 rejection. */
  resolveAccount(name: string): string;
  close(): void;
}

interface OrderRow {
  seq: number;
  id: string;
  account: string;
  instrument: string;
  action: Action;
  quantity: number;
  order_type: OrderType;
  time_in_force: TimeInForce;
  limit_price: number | null;
  stop_price: number | null;
  oco_id: string | null;
  strategy: string | null;
  state: OrderState;
  filled_quantity: number;
  avg_fill_price: number | null;
  origin: OrderOrigin;
  created_at: string;
  updated_at: string;
}

interface PositionRow {
  account: string;
  instrument: string;
  quantity: number;
  avg_price: number | null;
  realized_pnl: number;
  pnl_known: number;
}

export function newOrderId(): string {
  return randomBytes(16).toString('hex');
}

function toOrder(row: OrderRow): OrderRecord {
  const order: OrderRecord = {
    id: row.id,
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
  if (row.oco_id !== null) order.ocoId = row.oco_id;
  if (row.strategy !== null) order.strategy = row.strategy;
  return order;
}

function toPosition(row: PositionRow): PositionRecord {
  return {
    account: row.account,
    instrument: row.instrument,
    quantity: row.quantity,
    avgPrice: row.avg_price,
    realizedPnl: row.pnl_known ? row.realized_pnl : null,
  };
}

/** The position after one fill: netting, average price and realized P&L. */
export function nextPosition(
  pos: { quantity: number; avgPrice: number | null; realizedPnl: number; pnlKnown: boolean },
  signedQty: number,
  price: number | null,
): { quantity: number; avgPrice: number | null; realizedPnl: number; pnlKnown: boolean } {
  const quantity = pos.quantity + signedQty;
  if (pos.quantity === 0) return { ...pos, quantity, avgPrice: price };
  if (Math.sign(pos.quantity) === Math.sign(signedQty)) {
    const avgPrice =
      pos.avgPrice !== null && price !== null
        ? (pos.avgPrice * Math.abs(pos.quantity) + price * Math.abs(signedQty)) / Math.abs(quantity)
        : null;
    return { ...pos, quantity, avgPrice };
  }
  const closed = Math.min(Math.abs(pos.quantity), Math.abs(signedQty));
  let { realizedPnl, pnlKnown } = pos;
  if (price !== null && pos.avgPrice !== null) realizedPnl += (price - pos.avgPrice) * closed * Math.sign(pos.quantity);
  else pnlKnown = false;
  let avgPrice: number | null;
  if (quantity === 0) avgPrice = null;
  else if (Math.sign(quantity) === Math.sign(pos.quantity)) avgPrice = pos.avgPrice;
  else avgPrice = price;
  return { quantity, avgPrice, realizedPnl, pnlKnown };
}

export function createEngine(file: string, options: EngineOptions = {}): Engine {
  const db = openStore(file);
  return createEngineOnDb(db, file, options);
}

export function createEngineOnDb(db: Db, file: string, options: EngineOptions = {}): Engine {
  const now = () => (options.now ? options.now() : new Date()).toISOString();
  const makeId = options.newOrderId ?? newOrderId;

  const q = {
    account: db.prepare<[string], { name: string }>('SELECT name FROM accounts WHERE name = ?'),
    accounts: db.prepare<[], { name: string }>('SELECT name FROM accounts ORDER BY name COLLATE NOCASE'),
    addAccount: db.prepare('INSERT INTO accounts(name, created_at) VALUES (?, ?)'),
    insertOrder: db.prepare(
      `INSERT INTO orders (id, account, instrument, action, quantity, order_type, time_in_force,
         limit_price, stop_price, oco_id, strategy, state, origin, created_at, updated_at)
       VALUES (@id, @account, @instrument, @action, @quantity, @orderType, @timeInForce,
         @limitPrice, @stopPrice, @ocoId, @strategy, 'WORKING', @origin, @now, @now)`,
    ),
    orderById: db.prepare<[string], OrderRow>('SELECT * FROM orders WHERE id = ?'),
    markFilled: db.prepare(
      `UPDATE orders SET state = 'FILLED', filled_quantity = quantity, avg_fill_price = ?, updated_at = ? WHERE id = ?`,
    ),
    insertFill: db.prepare(
      'INSERT INTO fills (order_id, account, instrument, action, quantity, price, time) VALUES (?, ?, ?, ?, ?, ?, ?)',
    ),
    position: db.prepare<[string, string], PositionRow>('SELECT * FROM positions WHERE account = ? AND instrument = ?'),
    upsertPosition: db.prepare(
      `INSERT INTO positions (account, instrument, quantity, avg_price, realized_pnl, pnl_known, updated_at)
       VALUES (@account, @instrument, @quantity, @avgPrice, @realizedPnl, @pnlKnown, @now)
       ON CONFLICT(account, instrument) DO UPDATE SET quantity = excluded.quantity, avg_price = excluded.avg_price,
         realized_pnl = excluded.realized_pnl, pnl_known = excluded.pnl_known, updated_at = excluded.updated_at`,
    ),
    workingIn: db.prepare<[string, string], { id: string }>(
      `SELECT id FROM orders WHERE account = ? AND instrument = ? AND state = 'WORKING' ORDER BY seq`,
    ),
    cancel: db.prepare(`UPDATE orders SET state = 'CANCELLED', updated_at = ? WHERE id = ? AND state = 'WORKING'`),
    price: db.prepare<[string], { price: number }>('SELECT price FROM prices WHERE instrument = ?'),
  };

  function resolveAccount(name: string): string {
    const row = q.account.get(name);
    if (!row) throw new RejectedError(`Account '${name}' not found`, { status: 404, code: 'account_not_found' });
    return row.name;
  }

  function lastPrice(instrument: string): number | undefined {
    return q.price.get(instrument)?.price;
  }

  function applyFill(order: OrderRow | OrderRecordInsert, price: number | null, time: string): void {
    q.insertFill.run(order.id, order.account, order.instrument, order.action, order.quantity, price, time);
    q.markFilled.run(price, time, order.id);
    const row = q.position.get(order.account, order.instrument);
    const current = row
      ? { quantity: row.quantity, avgPrice: row.avg_price, realizedPnl: row.realized_pnl, pnlKnown: row.pnl_known === 1 }
      : { quantity: 0, avgPrice: null, realizedPnl: 0, pnlKnown: true };
    const signed = order.action === 'BUY' ? order.quantity : -order.quantity;
    const next = nextPosition(current, signed, price);
    q.upsertPosition.run({
      account: order.account,
      instrument: order.instrument,
      quantity: next.quantity,
      avgPrice: next.avgPrice,
      realizedPnl: next.realizedPnl,
      pnlKnown: next.pnlKnown ? 1 : 0,
      now: time,
    });
  }

  interface OrderRecordInsert {
    id: string;
    account: string;
    instrument: string;
    action: Action;
    quantity: number;
  }

  /** Inserts an order in an account already resolved; MARKET orders fill at once. */
  function insertOrder(order: Order, origin: OrderOrigin, time: string): OrderRecord {
    const id = makeId();
    q.insertOrder.run({
      id,
      account: order.account,
      instrument: order.instrument,
      action: order.action,
      quantity: order.quantity,
      orderType: order.orderType,
      timeInForce: order.timeInForce,
      limitPrice: order.limitPrice ?? null,
      stopPrice: order.stopPrice ?? null,
      ocoId: order.ocoId ?? null,
      strategy: order.strategy ?? null,
      origin,
      now: time,
    });
    if (order.orderType === 'MARKET') applyFill({ ...order, id }, lastPrice(order.instrument) ?? null, time);
    return toOrder(q.orderById.get(id)!);
  }

  const place = db.transaction((order: Order): PlaceOutcome => {
    const account = resolveAccount(order.account);
    const record = insertOrder({ ...order, account }, 'client', now());
    return { orderId: record.id, order: record };
  });

  const reverse = db.transaction((order: Order): ReverseOutcome => {
    const account = resolveAccount(order.account);
    const position = q.position.get(account, order.instrument);
    if (!position || position.quantity === 0) {
      throw new RejectedError(
        `No position found for instrument '${order.instrument}' in account '${order.account}'`,
        { code: 'no_position' },
      );
    }
    const time = now();
    const cancelledOrderIds = q.workingIn.all(account, order.instrument).map((r) => r.id);
    for (const id of cancelledOrderIds) q.cancel.run(time, id);
    const closingOrder = insertOrder(
      {
        account,
        instrument: order.instrument,
        action: position.quantity > 0 ? 'SELL' : 'BUY',
        quantity: Math.abs(position.quantity),
        orderType: 'MARKET',
        timeInForce: 'DAY',
      },
      'reverse-close',
      time,
    );
    const record = insertOrder({ ...order, account }, 'client', time);
    return { orderId: record.id, order: record, closingOrder, cancelledOrderIds };
  });

  const addAccount = db.transaction((name: string): string => {
    const existing = q.account.get(name);
    if (existing) throw new RejectedError(`Account '${existing.name}' already exists`, { code: 'account_exists' });
    q.addAccount.run(name, now());
    return name;
  });

  function where(filter: OrderFilter, extra: string[] = []): { sql: string; params: string[] } {
    const clauses = [...extra];
    const params: string[] = [];
    if (filter.account !== undefined) {
      clauses.push('account = ?');
      params.push(resolveAccount(filter.account));
    }
    if (filter.instrument !== undefined) {
      clauses.push('instrument = ?');
      params.push(filter.instrument);
    }
    return { sql: clauses.length ? ` WHERE ${clauses.join(' AND ')}` : '', params };
  }

  return {
    file,
    placeOrder: (order) => place.immediate(order),
    reversePosition: (order) => reverse.immediate(order),
    listOrders(filter = {}) {
      const { sql, params } = where(filter);
      return db.prepare<string[], OrderRow>(`SELECT * FROM orders${sql} ORDER BY seq`).all(...params).map(toOrder);
    },
    listPositions(filter = {}) {
      const { sql, params } = where(filter, ['quantity != 0']);
      return db
        .prepare<string[], PositionRow>(`SELECT * FROM positions${sql} ORDER BY account COLLATE NOCASE, instrument`)
        .all(...params)
        .map(toPosition);
    },
    getPosition(account, instrument) {
      const row = q.position.get(resolveAccount(account), instrument);
      return row ? toPosition(row) : undefined;
    },
    lastPrice,
    listAccounts: () => q.accounts.all().map((r) => r.name),
    addAccount: (name) => addAccount.immediate(name),
    resolveAccount,
    close: () => db.close(),
  };
}
