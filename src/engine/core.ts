/** What the engine's modules share inside one transaction: the statements and the id maker. */
import { randomBytes } from 'node:crypto';
import type { Queries } from './queries.js';
import type { Effects } from './types.js';

export interface Core {
  q: Queries;
  makeId: () => string;
}

export function newOrderId(): string {
  return randomBytes(16).toString('hex');
}

export function newEffects(): Effects {
  return { fills: [], cancelledOrderIds: [], triggeredOrderIds: [], bracketOrders: [] };
}

export function lastPrice(core: Core, instrument: string): number | undefined {
  return core.q.price.get(instrument)?.price;
}
