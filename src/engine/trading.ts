/**
 * The engine's operations beyond placing one order (service-reference.md §3, §8.5): closing in
 * part, flattening, the true reversal, close-then-place, changing and replacing an order, a
 * bracket around a position, cancelling many orders, closing an ATM strategy. Each runs inside
 * the one IMMEDIATE transaction the engine's `write` gives it, every check before the first write.
 */
import { RejectedError } from '../common/errors.js';
import { NEEDS_LIMIT, NEEDS_STOP, type Action, type Order } from '../service/order.js';
import type { BracketArgs, ChangeArgs, FlattenEverythingArgs } from '../service/operations.js';
import { type Core, lastPrice, newEffects } from './core.js';
import { work } from './fills.js';
import { stopIsTouched } from './matching.js';
import { cancelWithGroup } from './oco.js';
import { assertOnTick, checkMarketPosition, closeOpenPosition, placeOrder } from './orders.js';
import { type OrderRow, type PositionRow, toOrder, toPosition } from './queries.js';
import type { Effects, OrderRecord, PositionRecord } from './types.js';

/** What the engine lends these operations: its statements, account names and lookups. */
export interface TradingContext {
  core: Core;
  resolveAccount(name: string): string;
  openPosition(account: string, instrument: string): PositionRow | undefined;
  findRow(orderId: string, account: string | undefined): OrderRow | undefined;
}

export interface ClosePart {
  quantity?: number;
  percent?: number;
}

export interface Closed extends Effects {
  /** The position just before, with `quantity` the part that was closed (signed like the position). */
  closed: PositionRecord;
  closingOrder: OrderRecord;
}

export interface Flattened extends Effects {
  /** Each position as it was just before it was closed. */
  closed: PositionRecord[];
}

/** FlattenEverything's filters (§3.14): the positions meeting every one are closed. */
export type FlattenFilter = FlattenEverythingArgs;

/** Change's args without the order's address (§3.6): absent or 0 leaves a value as it is. */
export type OrderChange = Omit<ChangeArgs, 'account' | 'orderId'>;

/** CancelAndBracket's args without the account (§3.8). */
export type BracketRequest = Omit<BracketArgs, 'account'>;

export interface Bracketed extends Effects {
  orderIds: string[];
  /** The instrument's orders cancelled first. */
  cancelledOrderIds: string[];
  ocoId: string;
  quantity: number;
}

const notFound = (orderId: string) => new RejectedError(`Order linked to '${orderId}' not found or already terminal.`, { code: 'order_not_found' });
const invalid = (field: string, why: string) => new RejectedError(`Invalid request: ${field}: ${why}`, { code: 'invalid_request' });

/** How many contracts a partial close takes (§3.10): `quantity` wins; `percent` rounds up (0.3 × 10 is 3). */
export function partSize(size: number, part: ClosePart): number {
  if (part.quantity !== undefined) return Math.min(size, part.quantity);
  if (part.percent !== undefined) return Math.min(size, Math.ceil(part.percent * size - 1e-9));
  return size;
}

export function createTrading({ core, resolveAccount, openPosition, findRow }: TradingContext) {
  const { q } = core;

  /** Cancels the working orders of an account (all, or one instrument's); returns their ids. */
  function cancelWorking(account: string, instrument: string | undefined, time: string, effects: Effects): void {
    const rows = instrument === undefined ? q.workingOfAccount.all(account) : q.workingIn.all(account, instrument);
    for (const row of rows) cancelWithGroup(core, row, time, effects);
  }

  function noPositions(instrument: string): RejectedError {
    return new RejectedError(`No positions found for instrument '${instrument}'`, { code: 'no_position' });
  }

  return {
    /** ClosePosition (§3.10): all of it (cancelling the instrument's orders), or a part (cancelling none). */
    close(time: string, accountName: string, instrument: string, part: ClosePart = {}): Closed {
      const position = openPosition(resolveAccount(accountName), instrument);
      if (!position) throw noPositions(instrument);
      const size = Math.abs(position.quantity);
      const closing = partSize(size, part);
      const effects = newEffects();
      const closingOrder =
        closing === size
          ? closeOpenPosition(core, position, 'close', time, effects)
          : placeOrder(
              core,
              {
                account: position.account, instrument, action: position.quantity > 0 ? 'SELL' : 'BUY', quantity: closing,
                orderType: 'MARKET', timeInForce: 'DAY',
              },
              'close',
              time,
              effects,
            );
      const closed = toPosition(position);
      return { ...effects, closingOrder, closed: { ...closed, quantity: Math.sign(closed.quantity) * closing } };
    },

    /** Flatten (§3.13): the account's working orders cancelled, its positions (or one instrument's) closed. */
    flatten(time: string, accountName: string, instrument?: string): Flattened {
      const account = resolveAccount(accountName);
      const effects = newEffects();
      cancelWorking(account, instrument, time, effects);
      const positions = q.openPositionsOf.all(account).filter((p) => instrument === undefined || p.instrument === instrument);
      for (const position of positions) closeOpenPosition(core, position, 'close', time, effects);
      return { ...effects, closed: positions.map(toPosition) };
    },

    /**
     * The flatten of `POST /positions/flatten` (§3.14): the positions meeting every filter closed;
     * without a side filter, every working order matching the account and instrument filters
     * cancelled too, else only those of the positions closed. No filter at all is everything.
     */
    flattenEverything(time: string, filter: FlattenFilter): Flattened {
      const account = filter.account === undefined ? undefined : resolveAccount(filter.account);
      const side = filter.marketPosition === undefined ? 0 : filter.marketPosition === 'long' ? 1 : -1;
      const positions = q.openPositions
        .all()
        .filter((p) => (account === undefined || p.account === account) && (filter.instrument === undefined || p.instrument === filter.instrument))
        .filter((p) => side === 0 || Math.sign(p.quantity) === side);
      const effects = newEffects();
      if (side === 0) {
        for (const row of q.working.all()) {
          if ((account === undefined || row.account === account) && (filter.instrument === undefined || row.instrument === filter.instrument))
            cancelWithGroup(core, row, time, effects);
        }
      }
      for (const position of positions) closeOpenPosition(core, position, 'close', time, effects);
      return { ...effects, closed: positions.map(toPosition) };
    },

    /** Reverse (§3.11): long N becomes short N and back, with two MARKET orders; the opening one's id. */
    invert(time: string, accountName: string, instrument: string) {
      const account = resolveAccount(accountName);
      const position = openPosition(account, instrument);
      if (!position)
        throw new RejectedError(`No position found for instrument '${instrument}' in account '${accountName}'`, { code: 'no_position' });
      const effects = newEffects();
      const closingOrder = closeOpenPosition(core, position, 'reverse-close', time, effects);
      const opening: Order = {
        account, instrument, action: position.quantity > 0 ? 'SELL' : 'BUY', quantity: Math.abs(position.quantity), orderType: 'MARKET',
        timeInForce: 'DAY',
      };
      const order = placeOrder(core, opening, 'client', time, effects);
      return { ...effects, orderId: order.orderId, order, closingOrder, closed: toPosition(position) };
    },

    /**
     * FlatPlace (§3.2): the instrument's orders cancelled, any position closed, then the order
     * placed. `requireMarketPosition` is checked against the position as the request finds it
     * (after the close it is always flat, so `long` or `short` could never pass); `maxPositions`
     * when the order is placed, into the flat instrument.
     */
    flatPlace(time: string, order: Order) {
      const account = resolveAccount(order.account);
      const { requireMarketPosition: _checkedFirst, ...rest } = order;
      checkMarketPosition(core, { ...order, account });
      const effects = newEffects();
      cancelWorking(account, order.instrument, time, effects);
      const position = openPosition(account, order.instrument);
      const closingOrder = position ? closeOpenPosition(core, position, 'close', time, effects) : undefined;
      const record = placeOrder(core, { ...rest, account }, 'client', time, effects);
      return { ...effects, orderId: record.orderId, order: record, closingOrder };
    },

    /**
     * Change (§3.6, §8.6): quantity, limit and stop of a working order; absent or 0 leaves a value
     * as it is. The order keeps its id, and is run against the last price again: a limit made
     * marketable fills at once; a stop moved to the wrong side of the market is refused.
     */
    change(time: string, accountName: string, orderId: string, change: OrderChange) {
      const row = findRow(orderId, accountName);
      if (!row || row.state !== 'WORKING') throw notFound(orderId);
      if (change.strategyId) {
        const entry = row.parent_id === null ? row : q.orderById.get(row.parent_id);
        if (entry?.strategy === null || entry?.order_id !== change.strategyId) throw notFound(orderId);
      }
      const type = row.order_type;
      const set = (value: number | undefined) => (value === undefined || value === 0 ? undefined : value);
      const [quantity, limit, stop] = [set(change.quantity), set(change.limitPrice), set(change.stopPrice)];
      const spelled = { MARKET: 'Market', LIMIT: 'Limit', STOPMARKET: 'StopMarket', STOPLIMIT: 'StopLimit' }[type];
      if (limit !== undefined && !NEEDS_LIMIT.has(type)) throw invalid('limitPrice', `a ${spelled} order has no limit price`);
      if (stop !== undefined && !NEEDS_STOP.has(type)) throw invalid('stopPrice', `a ${spelled} order has no stop price`);
      assertOnTick('limitPrice', row.instrument, limit);
      assertOnTick('stopPrice', row.instrument, stop);
      const last = lastPrice(core, row.instrument);
      if (stop !== undefined && last !== undefined && !row.triggered && stopIsTouched(row.action, stop, last)) {
        throw invalid('stopPrice', `a ${row.action} stop must be ${row.action === 'BUY' ? 'above' : 'below'} the last price ${last} of ${row.instrument}`);
      }
      // Nothing to change is accepted and changes nothing (§3.6), not even the order's update time.
      if (quantity === undefined && limit === undefined && stop === undefined) return { ...newEffects(), orderId: row.order_id, order: toOrder(row) };
      q.changeOrder.run(quantity ?? row.quantity, limit ?? row.limit_price, stop ?? row.stop_price, limit ?? null, stop ?? null, time, row.id);
      const effects = newEffects();
      if (last !== undefined) work(core, [{ id: row.id, from: last }], last, time, effects);
      return { ...effects, orderId: row.order_id, order: toOrder(q.orderById.get(row.id)!) };
    },

    /** Replace (§3.7): the new order checked first; then the old one cancelled and the new one placed, or neither. */
    replace(time: string, accountName: string, orderId: string, order: Order) {
      const account = resolveAccount(accountName);
      const row = findRow(orderId, account);
      if (!row || row.state !== 'WORKING') throw notFound(orderId);
      const effects = newEffects();
      cancelWithGroup(core, row, time, effects);
      // Placing refuses an invalid order before it writes; the transaction then undoes the cancel.
      const record = placeOrder(core, { ...order, account }, 'client', time, effects);
      return { ...effects, orderId: record.orderId, order: record };
    },

    /** CancelOrders (§3.4) and CancelAllOrders (§3.5): every working order of an account, or of all. */
    cancelMany(time: string, accountName: string | undefined, instrument: string | undefined) {
      const account = accountName === undefined ? undefined : resolveAccount(accountName);
      const effects = newEffects();
      for (const row of q.working.all()) {
        if ((account === undefined || row.account === account) && (instrument === undefined || row.instrument === instrument))
          cancelWithGroup(core, row, time, effects);
      }
      return effects;
    },

    /**
     * CancelAndBracket (§3.8): the instrument's orders cancelled, then a take-profit (Limit) and a
     * stop-loss (StopMarket) on the other side, in one new OCO group, sized to the position
     * (`quantity` when there is none, clamped to the position when it is larger).
     */
    bracket(time: string, accountName: string, request: BracketRequest): Bracketed {
      const account = resolveAccount(accountName);
      const { instrument, action } = request;
      const position = openPosition(account, instrument);
      const side = action === 'BUY' ? 1 : -1;
      if (position && Math.sign(position.quantity) !== side) {
        const held = position.quantity > 0 ? 'Long' : 'Short';
        throw invalid('action', `${instrument} in account '${account}' is ${held}; a ${action} bracket protects a ${side > 0 ? 'long' : 'short'} position`);
      }
      if (request.takeProfit === undefined && request.stopLoss === undefined) throw invalid('takeProfit', 'give takeProfit, stopLoss or both');
      assertOnTick('takeProfit', instrument, request.takeProfit);
      assertOnTick('stopLoss', instrument, request.stopLoss);
      const last = lastPrice(core, instrument);
      if (last !== undefined) {
        if (request.takeProfit !== undefined && (request.takeProfit - last) * side <= 0)
          throw invalid('takeProfit', `must be ${side > 0 ? 'above' : 'below'} the last price ${last} of ${instrument}`);
        if (request.stopLoss !== undefined && (request.stopLoss - last) * side >= 0)
          throw invalid('stopLoss', `must be ${side > 0 ? 'below' : 'above'} the last price ${last} of ${instrument}`);
      }
      const quantity = position ? Math.min(request.quantity, Math.abs(position.quantity)) : request.quantity;
      const effects = newEffects();
      cancelWorking(account, instrument, time, effects);
      const cancelledOrderIds = [...effects.cancelledOrderIds];
      const ocoId = `BRACKET-${core.makeId()}`;
      const exit: Action = action === 'BUY' ? 'SELL' : 'BUY';
      const common = { account, instrument, action: exit, quantity, timeInForce: request.timeInForce ?? 'GTC', ocoId } as const;
      const orderIds: string[] = [];
      if (request.takeProfit !== undefined)
        orderIds.push(placeOrder(core, { ...common, orderType: 'LIMIT', limitPrice: request.takeProfit }, 'atm-profit-target', time, effects).orderId);
      if (request.stopLoss !== undefined)
        orderIds.push(placeOrder(core, { ...common, orderType: 'STOPMARKET', stopPrice: request.stopLoss }, 'atm-stop-loss', time, effects).orderId);
      return { ...effects, orderIds, cancelledOrderIds, ocoId, quantity };
    },

    /**
     * CloseStrategy (§3.20): an ATM instance, known by its entry's order id, closed: its working
     * orders cancelled and what is left of its position closed at market. The closing order
     * belongs to the strategy (as its brackets do), so a strategy once closed is finished. So is
     * one whose position is gone otherwise (a Flatten, a plain opposite order).
     */
    closeStrategy(time: string, accountName: string, strategyId: string) {
      const account = resolveAccount(accountName);
      const entry = q.orderByOrderId.get({ account, id: strategyId });
      const members = entry && entry.strategy !== null ? [entry, ...q.bracketsOf.all(entry.id)] : [];
      const working = members.filter((m) => m.state === 'WORKING');
      // Contracts the strategy still holds: its entry's fill less its exits' (brackets, an earlier close).
      const held = entry?.state === 'FILLED' ? entry.quantity - members.slice(1).filter((m) => m.state === 'FILLED').reduce((n, m) => n + m.quantity, 0) : 0;
      const position = entry && openPosition(account, entry.instrument);
      const sameSide = position !== undefined && Math.sign(position.quantity) === (entry!.action === 'BUY' ? 1 : -1);
      const closing = sameSide ? Math.min(held, Math.abs(position.quantity)) : 0;
      if (working.length === 0 && closing <= 0)
        throw invalid('strategyId', `no active strategy '${strategyId}' in account '${account}'`);
      const effects = newEffects();
      for (const row of working) cancelWithGroup(core, row, time, effects);
      if (closing > 0) {
        placeOrder(
          core,
          { account, instrument: entry!.instrument, action: entry!.action === 'BUY' ? 'SELL' : 'BUY', quantity: closing, orderType: 'MARKET', timeInForce: 'DAY' },
          'close',
          time,
          effects,
          entry!.id,
        );
      }
      return { ...effects, strategyId };
    },
  };
}

export type Trading = ReturnType<typeof createTrading>;
