/**
 * Turns the order flags of `place` and `reverse` into a draft for the schema, and names the
 * flags that are still missing. The schema, not this file, decides what is valid.
 */
import { UsageError } from '../common/errors.js';
import { NEEDS_LIMIT, NEEDS_STOP, type Order, type OrderType } from '../service/order.js';

export interface OrderFlagValues {
  account?: string;
  instrument?: string;
  action?: string;
  quantity?: string;
  orderType?: string;
  tif?: string;
  timeInForce?: string;
  limitPrice?: string;
  stopPrice?: string;
  ocoId?: string;
  strategy?: string;
  orderId?: string;
  requirePosition?: string;
  maxPositions?: string;
}

export type OrderDraft = { [K in keyof Order]?: unknown };

/** The flag that sets each field, for messages. */
export const FLAG_FOR: Record<keyof Order, string> = {
  account: '--account',
  instrument: '--instrument',
  action: '--action',
  quantity: '--quantity',
  orderType: '--order-type',
  timeInForce: '--tif',
  limitPrice: '--limit-price',
  stopPrice: '--stop-price',
  ocoId: '--oco-id',
  strategy: '--strategy',
  orderId: '--order-id',
  requireMarketPosition: '--require-position',
  maxPositions: '--max-positions',
};

export const REQUIRED_FIELDS = ['account', 'instrument', 'action', 'quantity', 'orderType', 'timeInForce'] as const;

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/** A numeric-looking flag becomes a number; anything else stays a string for the schema to reject by name. */
export function numberOrText(raw: string | undefined): number | string | undefined {
  if (raw === undefined) return undefined;
  const trimmed = raw.trim();
  return NUMBER.test(trimmed) ? Number(trimmed) : raw;
}

export function draftFromFlags(flags: OrderFlagValues, defaults: { account?: string } = {}): OrderDraft {
  if (flags.tif !== undefined && flags.timeInForce !== undefined && flags.tif !== flags.timeInForce) {
    throw new UsageError(`--tif '${flags.tif}' and --time-in-force '${flags.timeInForce}' disagree; give one of them`);
  }
  const draft: OrderDraft = {
    account: flags.account ?? defaults.account,
    instrument: flags.instrument,
    action: flags.action,
    quantity: numberOrText(flags.quantity),
    orderType: flags.orderType,
    timeInForce: flags.tif ?? flags.timeInForce,
    limitPrice: numberOrText(flags.limitPrice),
    stopPrice: numberOrText(flags.stopPrice),
    ocoId: flags.ocoId,
    strategy: flags.strategy,
    orderId: flags.orderId,
    requireMarketPosition: flags.requirePosition,
    maxPositions: numberOrText(flags.maxPositions),
  };
  for (const key of Object.keys(draft) as Array<keyof Order>) if (draft[key] === undefined) delete draft[key];
  return draft;
}

/** Fields that must still be given, including the prices the order type needs. */
export function missingFields(draft: OrderDraft): Array<keyof Order> {
  const missing: Array<keyof Order> = REQUIRED_FIELDS.filter((f) => draft[f] === undefined);
  const type = typeof draft.orderType === 'string' ? (draft.orderType.toUpperCase() as OrderType) : undefined;
  if (type && NEEDS_LIMIT.has(type) && draft.limitPrice === undefined) missing.push('limitPrice');
  if (type && NEEDS_STOP.has(type) && draft.stopPrice === undefined) missing.push('stopPrice');
  return missing;
}
