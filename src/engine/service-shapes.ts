/**
 * The engine's records in the service's shapes (service-reference.md §4): Order, Position,
 * Account, Quote, Execution. The one place where the engine's own names (`id`, `state`, signed
 * quantities, P&L in points) become what a client sees.
 */
import { chicagoWallClock, quoteTime, serviceTime } from '../service/chicago.js';
import { contractSpec, expirationOf, isMarketOpen, tickValue } from '../service/contracts.js';
import {
  type AccountObject,
  type ExecutionObject,
  ntSpelling,
  type NtOrderType,
  type NtTimeInForce,
  type OrderAction,
  type OrderObject,
  type OrderState,
  type PositionObject,
  type QuoteObject,
} from '../service/shapes.js';
import { type AccountMoney, pointValue, type QuoteDay, STARTING_CASH } from './market.js';
import type { Engine, FillRecord, OrderRecord, PositionRecord } from './types.js';

export { pointValue };

const GTD = '2099-12-01T00:00:00.0000000';

export const STATE: Record<OrderRecord['state'], OrderState> = {
  WORKING: 'Working',
  FILLED: 'Filled',
  // DAY expiry cancels the order, as NT8 does at the session end.
  CANCELLED: 'Cancelled',
  EXPIRED: 'Cancelled',
};

/**
 * The service's state of an order: the engine's, except for what only a scenario rule of `trade
 * serve` makes (issue 22): an order held for a late reject is `Accepted`, then `Rejected`; one
 * part-filled while the rest works is `PartFilled`.
 */
export function stateOf(order: Pick<OrderRecord, 'state' | 'rejectReason' | 'filledQuantity'>): OrderState {
  if (order.rejectReason !== undefined) return order.state === 'WORKING' ? 'Accepted' : 'Rejected';
  if (order.state === 'WORKING' && order.filledQuantity > 0) return 'PartFilled';
  return STATE[order.state];
}

const NAME: Record<OrderRecord['origin'], string> = {
  client: '',
  close: 'Close',
  'reverse-close': 'Close',
  'atm-stop-loss': 'Stop1',
  'atm-profit-target': 'Target1',
};

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
    orderState: stateOf(order),
    quantity: order.quantity,
    averageFillPrice: order.avgFillPrice ?? 0,
    filled: order.filledQuantity,
    fromEntrySignal: null,
    gtd: GTD,
    hasOverfill: false,
    isBacktestOrder: false,
    limitPrice: order.limitPrice ?? 0,
    limitPriceChanged: order.limitPriceChanged ?? 0,
    name: order.strategy !== undefined ? 'Entry' : NAME[order.origin],
    oco: order.ocoId ?? '',
    ocoId: order.ocoId ?? '',
    orderAction: ntSpelling(order.action) as OrderAction,
    ownerStrategy:
      owner?.strategy === undefined ? null : { id: owner.orderId, name: owner.strategy, displayName: owner.strategy },
    stopPrice: order.stopPrice ?? 0,
    stopPriceChanged: order.stopPriceChanged ?? 0,
    time: serviceTime(order.createdAt),
    timeInForce: ntSpelling(order.timeInForce) as NtTimeInForce,
    // Only an order a scenario rule rejected has it (docs/serve.md "Differences from the real service").
    ...(order.rejectReason !== undefined && order.state !== 'WORKING' ? { rejectReason: order.rejectReason } : {}),
  };
}

/** A position as the service's Position: the side, an unsigned size, prices and P&L in money. */
export function toPositionObject(position: PositionRecord, last: number | undefined): PositionObject {
  const { quantity, avgPrice } = position;
  // `+ 0` turns the -0 of a short at its own price into 0, which is what JSON shows anyway.
  const unrealized =
    quantity !== 0 && avgPrice !== null && last !== undefined ? (last - avgPrice) * quantity * pointValue(position.instrument) + 0 : 0;
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

export function positionObject(engine: Engine, record: PositionRecord): PositionObject {
  return toPositionObject(record, engine.lastPrice(record.instrument));
}

/** The item fields of §4.3 the simulator has no value for: 0.0, as the reference decides. */
const ZERO_ITEM = [
  'buyingPower', 'commission', 'dailyLossLimit', 'dailyProfitTrigger', 'excessInitialMargin', 'excessIntradayMargin',
  'excessMaintenanceMargin', 'excessPositionMargin', 'fee', 'grossRealizedProfitLoss', 'initialMargin', 'intradayMargin',
  'longOptionValue', 'longStockValue', 'lookAheadMaintenanceMargin', 'maintenanceMargin', 'netLiquidationByCurrency',
  'positionMargin', 'shortOptionValue', 'shortStockValue', 'sodCashValue', 'sodLiquidatingValue', 'totalCashBalance',
  'trailingMaxDrawdown', 'weeklyLossLimit', 'weeklyProfitLoss', 'weeklyProfitTrigger',
] as const;

/**
 * An account as the service's Account (§4.3): cash = starting cash + realized P&L − commissions,
 * unrealized = the open positions', net liquidation = their sum; `commission` the current trading
 * day's; buying power 0.0, as NT8's simulation accounts report it.
 */
export function toAccountObject(id: number, name: string, money: AccountMoney, positions: PositionObject[]): AccountObject {
  const unrealized = positions.reduce((sum, p) => sum + p.unrealizedProfitLoss, 0);
  const cash = Number((STARTING_CASH + money.realizedTotal - money.commissionTotal).toFixed(8));
  const item: Record<string, number> = Object.fromEntries(ZERO_ITEM.map((k) => [k, 0]));
  Object.assign(item, {
    commission: Number(money.commissionToday.toFixed(8)),
    cashValue: cash,
    netLiquidation: cash + unrealized,
    realizedProfitLoss: money.realizedToday,
    unrealizedProfitLoss: unrealized,
  });
  return {
    type: 'NinjaTrader.Cbi.Account', id, name, displayName: name, primaryUser: null, provider: 'Simulator', denomination: 'UsDollar',
    status: 'Enabled', dailyLossLimit: 0, minCashValue: 0, maxOrderSize: 0, maxPositionSize: 0, connection: 'NinjaTrader.Cbi.Connection',
    connectionStatus: 'Connected', lastTransactionSum: 0, isAccountFlat: positions.every((p) => p.quantity === 0), item,
  };
}

/** A quote (§4.4): bid = ask = last (no spread is modelled), the day from the store's ticks. */
export function toQuoteObject(instrument: string, day: QuoteDay, now: Date): QuoteObject {
  const spec = contractSpec(instrument.split(' ')[0]!);
  const at = Date.parse(day.updatedAt);
  return {
    description: spec ? `${spec.name} Futures` : instrument,
    type: 'Future',
    tickSize: spec?.tickSize ?? 0.01,
    pointValue: pointValue(instrument),
    tickValue: spec ? tickValue(spec) : 0.01,
    exchange: spec ? 'Globex' : '',
    expiration: expirationOf(instrument),
    tradingHours: spec?.tradingHours ?? '',
    instrument,
    bid: day.last,
    ask: day.last,
    last: day.last,
    open: day.open,
    high: day.high,
    low: day.low,
    close: day.close,
    volume: day.volume,
    quoteTime: quoteTime(at),
    quoteTimeUtc: new Date(at).toISOString().slice(0, 19).replace('T', ' '),
    epoch: Math.floor(at / 1000),
    dataSource: { status: 'Simulated', connectedFeeds: ['Simulated'] },
    isMarketOpen: isMarketOpen(spec, chicagoWallClock(now.getTime())),
  };
}

/** A fill as the service's Execution (§4.5): an entry opens or adds, an exit reduces. */
export function toExecutionObject(fill: FillRecord): ExecutionObject {
  const signed = fill.action === 'BUY' ? fill.quantity : -fill.quantity;
  const before = fill.positionAfter - signed;
  const isExit = before !== 0 && Math.sign(signed) !== Math.sign(before);
  const isEntry = fill.positionAfter !== 0 && (before === 0 || Math.sign(fill.positionAfter) === Math.sign(signed));
  return {
    id: fill.executionId,
    type: 'NinjaTrader.Cbi.Execution',
    time: serviceTime(fill.time),
    epoch: Date.parse(fill.time),
    name: isEntry && !isExit ? 'Entry' : 'Exit',
    orderId: fill.orderId,
    account: fill.account,
    serverName: 'trade-serve',
    instrument: fill.instrument,
    instrumentType: 'Future',
    position: Math.abs(fill.positionAfter),
    marketPosition: fill.action === 'BUY' ? 'Long' : 'Short',
    positionStrategy: 0,
    price: fill.price ?? 0,
    quantity: fill.quantity,
    commission: fill.commission,
    isEntry,
    isExit,
  };
}
