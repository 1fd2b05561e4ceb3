/**
 * Placing and closing, inside a transaction the caller holds. Every check runs before the first
 * write, so a rejected order leaves nothing behind even before the transaction rolls back.
 */
import { RejectedError } from '../common/errors.js';
import { NEEDS_STOP, type Order } from '../service/order.js';
import { findTemplate } from './atm.js';
import { type Core, lastPrice, positionOf } from './core.js';
import { noteWorkingDay } from './expiry.js';
import { applyFill, fillTerms, work } from './fills.js';
import { recordPrice, sweepCrossed } from './prices.js';
import { missingPrice } from './sources.js';
import { limitFillPrice, stopIsTouched } from './matching.js';
import { rootOf } from '../service/contracts.js';
import { nearestTicks, onTick, tickSizeOf } from './price-feed.js';
import { assertOcoIdUsable, cancelWithGroup } from './oco.js';
import { newOrderRow, type NewOrderRow, type OrderRow, type PositionRow, toOrder } from './queries.js';
import type { Effects, OrderOrigin, OrderRecord } from './types.js';
import { extended } from '../common/extended.js';

/**
 * A price must be on its contract's tick grid (§3.1, §10); an instrument the contract table does
 * not have takes any price. The refusal names the nearest valid prices either side.
 */
export function assertOnTick(field: string, instrument: string, price: number | undefined | null): void {
  if (price === undefined || price === null || onTick(instrument, price)) return;
  const [below, above] = nearestTicks(instrument, price);
  throw new RejectedError(
    `Invalid request: ${field}: ${price} is not a multiple of the tick size ${tickSizeOf(instrument)} of ${rootOf(instrument)}; the nearest valid prices are ${below} and ${above}`,
    { code: 'off_tick' },
  );
}

/** `requireMarketPosition` (§3.1, §8.7): the account's position in the instrument must be one of the sides listed. */
export function checkMarketPosition(core: Core, order: Order): void {
  if (order.requireMarketPosition === undefined) return;
  const held = positionOf(core, order.account, order.instrument)?.quantity ?? 0;
  const side = held > 0 ? 'long' : held < 0 ? 'short' : 'flat';
  if (!order.requireMarketPosition.includes(side)) {
    throw new RejectedError(
      `Market position requirement not met: ${order.instrument} in account '${order.account}' is ${side[0]!.toUpperCase()}${side.slice(1)}; required ${order.requireMarketPosition.join(', ')}`,
      { code: 'market_position' },
    );
  }
}

/** PlaceOrder's guards (§3.1, §8.7): the position required, and the most open positions allowed. */
function checkGuards(core: Core, order: Order): void {
  checkMarketPosition(core, order);
  if (order.maxPositions === undefined) return;
  const held = positionOf(core, order.account, order.instrument)?.quantity ?? 0;
  if (held === 0) {
    const open = core.q.openPositionsOf.all(order.account).length;
    if (open >= order.maxPositions)
      throw new RejectedError(`Max positions reached: account '${order.account}' has ${open} open positions; maxPositions is ${order.maxPositions}`, {
        code: 'max_positions',
      });
  }
}

/** Checks an order (its account already canonical) and builds its row. Throws RejectedError. */
function prepare(core: Core, order: Order, origin: OrderOrigin, time: string, last: number | undefined, parentId: string | null): NewOrderRow {
  if (order.orderId !== undefined && core.q.orderByOrderId.get({ account: order.account, id: order.orderId })) {
    throw new RejectedError(`Invalid request: orderId: '${order.orderId}' is already used in account '${order.account}'`, {
      code: 'duplicate_order_id',
    });
  }
  assertOnTick('limitPrice', order.instrument, order.limitPrice);
  assertOnTick('stopPrice', order.instrument, order.stopPrice);
  checkGuards(core, order);
  const template = order.strategy === undefined ? undefined : findTemplate(core, order.strategy);
  if (order.ocoId !== undefined) assertOcoIdUsable(core, order.account, order.ocoId);
  if (template && order.orderType === 'MARKET' && last === undefined) {
    throw new RejectedError(
      `No price is known for ${order.instrument}, so a MARKET entry with ATM strategy '${template.name}' cannot be filled at a price its brackets can be set from`,
      { code: 'atm_no_price', hint: 'Set a price for the instrument first, or use a LIMIT or STOP entry.' },
    );
  }
  if (NEEDS_STOP.has(order.orderType) && last !== undefined && stopIsTouched(order.action, order.stopPrice!, last)) {
    const side = order.action === 'BUY' ? 'above' : 'below';
    throw new RejectedError(
      `Invalid request: stopPrice: a ${order.action} stop must be ${side} the last price ${last} of ${order.instrument}`,
      { code: 'stop_wrong_side' },
    );
  }
  // The service's id is the row's; a client's id has a row id of the store's own (core.ts).
  const id = order.orderId === undefined ? core.makeId() : core.makeRowId();
  return {
    id,
    orderId: order.orderId ?? id,
    account: order.account,
    instrument: order.instrument,
    action: order.action,
    quantity: order.quantity,
    orderType: order.orderType,
    timeInForce: order.timeInForce,
    limitPrice: order.limitPrice ?? null,
    stopPrice: order.stopPrice ?? null,
    ocoId: order.ocoId ?? null,
    strategy: template?.name ?? null,
    origin,
    parentId,
    atmStopLossTicks: template?.stop_loss_ticks ?? null,
    atmProfitTargetTicks: template?.profit_target_ticks ?? null,
    atmTickSize: template?.tick_size ?? null,
    now: time,
  };
}

/**
 * Places an order in an account already resolved. A MARKET order fills at once at the last
 * price — with none, at its root's demo price when the instrument's price source is `demo`, else
 * it is refused (sources.ts); a LIMIT order marketable at the last price fills at once at that
 * price; anything else works until a price crosses it.
 */
export function placeOrder(
  core: Core,
  order: Order,
  origin: OrderOrigin,
  time: string,
  effects: Effects,
  /** The ATM entry (its row id) that owns the order, as its brackets are owned: CloseStrategy's close. */
  parentId: string | null = null,
  /** What a `trade serve` scenario rule does to the placement (issue 22); nothing when absent. */
  injected: PlaceInjection = {},
): OrderRecord {
  let last = lastPrice(core, order.instrument);
  const missing =
    order.orderType === 'MARKET' && last === undefined
      ? missingPrice(core, order.account, order.instrument, order.action === 'BUY' ? order.quantity : -order.quantity)
      : undefined;
  const row = prepare(core, order, origin, time, missing?.demo ?? last, parentId);
  if (missing?.demo !== undefined) {
    // Every check passed: the demo price becomes the instrument's last price, as a price set would.
    last = missing.demo;
    recordPrice(core, order.instrument, last, time);
    (effects.demoPrices ??= []).push({ instrument: order.instrument, price: last });
    sweepCrossed(core, order.instrument, null, last, time, effects);
  }
  if (injected.holdForReject !== undefined) return placeHeld(core, row, injected.holdForReject);
  const fillsAtOnce =
    last !== undefined && (order.orderType === 'MARKET' || (order.orderType === 'LIMIT' && limitFillPrice(order.action, order.limitPrice!, last, last) !== null));
  if (injected.fillCap !== undefined && injected.fillCap < row.quantity && fillsAtOnce) return placePartFilled(core, row, injected.fillCap, last!, time, effects);
  if (order.orderType === 'MARKET') {
    // Inserted already filled, and not read back: the engine knows what it wrote.
    const { price, commission } = fillTerms(core, { instrument: row.instrument, order_type: row.orderType, action: row.action, quantity: row.quantity }, last ?? null);
    const seq = Number(core.q.insertFilledOrder.run(extended(row, { fillPrice: price })).lastInsertRowid);
    const filled = newOrderRow(row, seq, 'FILLED', price);
    const brackets = applyFill(core, filled, commission, time, effects);
    if (last !== undefined && brackets.length > 0) work(core, brackets.map((b) => ({ id: b.id, from: last })), last, time, effects);
    return toOrder(filled);
  }
  const seq = Number(core.q.insertOrder.run(row).lastInsertRowid);
  noteWorkingDay(core, row);
  if (last === undefined) return toOrder(newOrderRow(row, seq, 'WORKING', null));
  const before = effects.fills.length + effects.triggeredOrderIds.length;
  work(core, [{ id: row.id, from: last }], last, time, effects);
  // Unchanged unless the move filled or triggered it.
  return effects.fills.length + effects.triggeredOrderIds.length === before ? toOrder(newOrderRow(row, seq, 'WORKING', null)) : toOrder(core.q.orderById.get(row.id)!);
}

/** What a scenario rule of `trade serve` does to one placement (issue 22). */
export interface PlaceInjection {
  /** Accept the order, but hold it (it never fills) until it is rejected with this reason. */
  holdForReject?: string;
  /** Of an order that fills at once, only this many contracts fill; the rest keeps working. */
  fillCap?: number;
}

/** Accepted and held: WORKING, never matched (fills.ts skips it), until rejectHeld turns it Rejected. */
function placeHeld(core: Core, row: NewOrderRow, reason: string): OrderRecord {
  const seq = Number(core.q.insertOrder.run(row).lastInsertRowid);
  core.q.hold.run(reason, row.id);
  noteWorkingDay(core, row);
  return toOrder({ ...newOrderRow(row, seq, 'WORKING', null), reject_reason: reason });
}

/** `cap` contracts fill at once at the last price; the order keeps working for the rest (the service's PartFilled). */
function placePartFilled(core: Core, row: NewOrderRow, cap: number, last: number, time: string, effects: Effects): OrderRecord {
  const seq = Number(core.q.insertOrder.run(row).lastInsertRowid);
  noteWorkingDay(core, row);
  const { price, commission } = fillTerms(core, { instrument: row.instrument, order_type: row.orderType, action: row.action, quantity: cap }, last);
  core.q.markPartFilled.run(cap, price, time, row.id);
  const part = { ...newOrderRow(row, seq, 'WORKING', price), quantity: cap, filled_quantity: cap };
  // The position and the execution move by the part that filled; the order keeps its quantity.
  applyFill(core, part, commission, time, effects);
  return toOrder(core.q.orderById.get(row.id)!);
}

/**
 * Closes a position known to be open: cancels the instrument's working orders in the account
 * (with their OCO groups), then flattens with a MARKET order. Close Position and Reverse
 * Position both go through here.
 */
export function closeOpenPosition(
  core: Core,
  position: PositionRow,
  origin: OrderOrigin,
  time: string,
  effects: Effects,
): OrderRecord {
  const working: OrderRow[] = core.q.workingIn.all(position.account, position.instrument);
  for (const row of working) cancelWithGroup(core, row, time, effects);
  return placeOrder(
    core,
    {
      account: position.account,
      instrument: position.instrument,
      action: position.quantity > 0 ? 'SELL' : 'BUY',
      quantity: Math.abs(position.quantity),
      orderType: 'MARKET',
      timeInForce: 'DAY',
    },
    origin,
    time,
    effects,
  );
}
