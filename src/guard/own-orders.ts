/**
 * This process's own orders, per account, instrument and side, in contracts: those the guard passed
 * (counted in the verdict's own turn of the ledger) and those whose send has ended (answered or
 * failed). An order passed and not ended is in neither the backend's position nor its working
 * orders; one that ended before the backend was read is in them. So what a verdict adds to what
 * was read is every order passed, less those that had ended when the read began: one that lands
 * in between is counted twice, never missed. A batch's lines in flight are judged one after the
 * other in the ledger's turn, each seeing the verdicts before it.
 */
import type { Intent } from './rules.js';

export type Sides = { BUY: number; SELL: number };

export interface OwnOrders {
  /** What has ended so far on the account and instrument: taken before the backend is read. */
  endedNow(account: string, instrument: string): Sides;
  /** The orders passed and not ended when `endedAtRead` was taken: in flight then, or passed since. */
  flying(account: string, instrument: string, endedAtRead: Sides): Sides;
  /** The guard passed this order. */
  passed(intent: Intent): void;
  /** Its send is over, answered or not. */
  ended(intent: Intent): void;
}

export function createOwnOrders(): OwnOrders {
  const passed = new Map<string, Sides>();
  const ended = new Map<string, Sides>();
  const keyOf = (account: string, instrument: string) => `${account}\u0000${instrument}`;
  const sidesOf = (map: Map<string, Sides>, key: string): Sides => map.get(key) ?? { BUY: 0, SELL: 0 };
  function add(map: Map<string, Sides>, intent: Intent): void {
    if (intent.kind !== 'order' || !intent.account || !intent.instrument || !intent.action || !intent.quantity) return;
    const key = keyOf(intent.account, intent.instrument);
    const sides = { ...sidesOf(map, key) };
    sides[intent.action] += intent.quantity;
    map.set(key, sides);
  }
  return {
    endedNow: (account, instrument) => ({ ...sidesOf(ended, keyOf(account, instrument)) }),
    flying(account, instrument, endedAtRead) {
      const sent = sidesOf(passed, keyOf(account, instrument));
      return { BUY: sent.BUY - endedAtRead.BUY, SELL: sent.SELL - endedAtRead.SELL };
    },
    passed: (intent) => add(passed, intent),
    ended: (intent) => add(ended, intent),
  };
}
