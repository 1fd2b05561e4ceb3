/**
 * The simulator speaking the service: one handler per row of the operation table, answering
 * with exactly the body the service would (service-reference.md §3, §4), plus, for the CLI's
 * human output, details the service's body does not carry. The embedded backend and `trade
 * serve` both answer through here, so they cannot disagree. The engine's own records (`id`,
 * `state`, signed quantities) are turned into service shapes in this file and nowhere else.
 */
import { RejectedError } from '../order/errors.js';
import { serviceTime, tradingDayStart } from '../service/chicago.js';
import { contractSpec } from '../service/contracts.js';
import type { ArgsOf, OperationName } from '../service/operations.js';
import {
  ntSpelling,
  type NtOrderType,
  type NtTimeInForce,
  type OrderAction,
  type OrderObject,
  type OrderState,
  type PositionObject,
} from '../service/shapes.js';
import type { Engine, OrderRecord, PositionRecord } from './types.js';

/** What the CLI can tell beyond the service's body (the embedded backend only). */
export interface Detail {
  /** The order as it stands after the operation. */
  order?: OrderObject;
  /** The market order that closed the position (close, reverse). */
  closingOrder?: OrderObject;
  /** Orders cancelled along the way: the instrument's on a close, OCO siblings of a fill. */
  cancelledOrderIds?: string[];
  /** ATM brackets placed because an entry filled: stop-loss first, then profit-target. */
  bracketOrders?: OrderObject[];
}

export interface Answer<B extends object = object> {
  /** The success body, `success: true` included (§1.7). */
  body: B & { success: true };
  detail?: Detail;
}

const GTD = '2099-12-01T00:00:00.0000000';

const STATE: Record<OrderRecord['state'], OrderState> = {
  WORKING: 'Working',
  FILLED: 'Filled',
  // DAY expiry cancels the order, as NT8 does at the session end.
  CANCELLED: 'Cancelled',
  EXPIRED: 'Cancelled',
};

const NAME: Record<OrderRecord['origin'], string> = {
  client: '',
  close: 'Close',
  'reverse-close': 'Close',
  'atm-stop-loss': 'Stop1',
  'atm-profit-target': 'Target1',
};

/** Money per 1.0 of price (§10); 1 for a root the table does not know. */
export function pointValue(instrument: string): number {
  return contractSpec(instrument.split(' ')[0]!)?.pointValue ?? 1;
}

/** An engine record as the service's Order; `entry` is a bracket's ATM entry, which owns it. */
export function toOrderObject(order: OrderRecord, entry?: OrderRecord): OrderObject {
  const owner = order.strategy !== undefined ? order : entry;
  return {
    account: order.account,
    orderId: order.orderId,
    id: order.orderId,
    instrument: order.instrument,
    instrumentType: 'Future',
    orderType: ntSpelling(order.orderType) as NtOrderType,
    orderState: STATE[order.state],
    quantity: order.quantity,
    averageFillPrice: order.avgFillPrice ?? 0,
    filled: order.filledQuantity,
    fromEntrySignal: null,
    gtd: GTD,
    hasOverfill: false,
    isBacktestOrder: false,
    limitPrice: order.limitPrice ?? 0,
    limitPriceChanged: 0,
    name: order.strategy !== undefined ? 'Entry' : NAME[order.origin],
    oco: order.ocoId ?? '',
    ocoId: order.ocoId ?? '',
    orderAction: ntSpelling(order.action) as OrderAction,
    ownerStrategy:
      owner?.strategy === undefined ? null : { id: owner.orderId, name: owner.strategy, displayName: owner.strategy },
    stopPrice: order.stopPrice ?? 0,
    stopPriceChanged: 0,
    time: serviceTime(order.createdAt),
    timeInForce: ntSpelling(order.timeInForce) as NtTimeInForce,
  };
}

/** A position as the service's Position: the side, an unsigned size, prices and P&L in money. */
export function toPositionObject(position: PositionRecord, last: number | undefined): PositionObject {
  const { quantity, avgPrice } = position;
  const unrealized =
    quantity !== 0 && avgPrice !== null && last !== undefined ? (last - avgPrice) * quantity * pointValue(position.instrument) : 0;
  return {
    type: 'NinjaTrader.Cbi.Position',
    account: position.account,
    instrument: position.instrument,
    instrumentType: 'Future',
    marketPosition: quantity > 0 ? 'Long' : quantity < 0 ? 'Short' : 'Flat',
    quantity: Math.abs(quantity),
    averagePrice: quantity === 0 ? 0 : (avgPrice ?? 0),
    marketPrice: last ?? 0,
    unrealizedProfitLoss: unrealized,
    tag: null,
  };
}

/** Orders in service shape; a bracket's ATM template is read from its entry. */
export function ordersOf(engine: Engine, records: OrderRecord[]): OrderObject[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  return records.map((r) => {
    if (r.parentOrderId === undefined) return toOrderObject(r);
    return toOrderObject(r, byId.get(r.parentOrderId) ?? engine.orderRecord(r.parentOrderId));
  });
}

function orderObject(engine: Engine, record: OrderRecord): OrderObject {
  return ordersOf(engine, [record])[0]!;
}

function positionObject(engine: Engine, record: PositionRecord): PositionObject {
  return toPositionObject(record, engine.lastPrice(record.instrument));
}

const ok = <B extends object>(body: B, detail?: Detail): Answer<B> => ({ body: { ...body, success: true }, ...(detail ? { detail } : {}) });

function orderNotFound(orderId: string, account: string): RejectedError {
  return new RejectedError(`Invalid request: orderId: order '${orderId}' not found in account '${account}'`, { code: 'order_not_found' });
}

function findOrder(engine: Engine, args: { account: string; orderId: string }): OrderRecord {
  const account = engine.resolveAccount(args.account);
  const order = engine.getOrder(args.orderId, account);
  if (!order) throw orderNotFound(args.orderId, account);
  return order;
}

type Handler<K extends OperationName> = (engine: Engine, args: ArgsOf<K>) => Answer;

function placed(engine: Engine, outcome: ReturnType<Engine['placeOrder']>, closingOrder?: OrderRecord): Answer<{ orderId: string }> {
  return ok(
    { orderId: outcome.orderId },
    {
      order: orderObject(engine, outcome.order),
      ...(closingOrder ? { closingOrder: orderObject(engine, closingOrder) } : {}),
      cancelledOrderIds: outcome.cancelledOrderIds,
      bracketOrders: ordersOf(engine, outcome.bracketOrders),
    },
  );
}

/** Every operation of the table, answered by the simulator. */
export const SIMULATOR: { [K in OperationName]: Handler<K> } = {
  PlaceOrder: (engine, order) => placed(engine, engine.placeOrder(order)),
  ReversePosition(engine, order) {
    const outcome = engine.reversePosition(order);
    return placed(engine, outcome, outcome.closingOrder);
  },
  Cancel(engine, { account, orderId }) {
    const outcome = engine.cancelOrder(account, orderId);
    return ok({ orderId: outcome.orderId }, { order: orderObject(engine, outcome.order), cancelledOrderIds: outcome.cancelledOrderIds });
  },
  ClosePosition(engine, { account, instrument }) {
    const last = engine.lastPrice(instrument);
    const outcome = engine.closePosition(account, instrument);
    return ok(
      { closedPositions: [toPositionObject(outcome.closed, last)] },
      { closingOrder: orderObject(engine, outcome.closingOrder), cancelledOrderIds: outcome.cancelledOrderIds },
    );
  },
  GetOrder: (engine, args) => ok(orderObject(engine, findOrder(engine, args))),
  GetOrders(engine, { account, activeOnly }) {
    const name = engine.resolveAccount(account);
    const since = tradingDayStart(engine.now()).toISOString();
    const orders = ordersOf(engine, engine.listOrders(activeOnly ? { account: name, activeOnly } : { account: name, activeOrSince: since }));
    return ok({ orders, count: orders.length });
  },
  GetOrderStatus(engine, args) {
    const order = findOrder(engine, args);
    return ok({ status: STATE[order.state], orderId: order.orderId });
  },
  GetPosition(engine, { account, instrument }) {
    const name = engine.resolveAccount(account);
    const record = engine.getPosition(name, instrument) ?? { account: name, instrument, quantity: 0, avgPrice: null, realizedPnl: 0 };
    return ok(positionObject(engine, record));
  },
  GetAllPositions(engine, { includeFlat }) {
    const positions = engine.listPositions({ includeFlat }).map((p) => positionObject(engine, p));
    return ok({ positions, count: positions.length });
  },
  GetPositions(engine, { account, includeFlat }) {
    const positions = engine.listPositions({ account: engine.resolveAccount(account), includeFlat }).map((p) => positionObject(engine, p));
    return ok({ positions, count: positions.length });
  },
};

/** Runs one operation on the engine; throws the typed error the service's refusal maps to. */
export function simulate<K extends OperationName>(engine: Engine, name: K, args: ArgsOf<K>): Answer {
  return (SIMULATOR[name] as Handler<K>)(engine, args);
}
