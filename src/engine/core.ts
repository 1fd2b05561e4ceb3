/** What the engine's modules share inside one transaction: the statements and the id maker. */
import { randomBytes } from 'node:crypto';
import type { Queries } from './queries.js';
import type { Effects } from './types.js';

export interface Core {
  q: Queries;
  makeId: () => string;
  /** Execution ids: random, never the order ids a test may script. */
  makeExecutionId: () => string;
}

/** Random bytes drawn 4 KiB at a time: one system call per 256 ids instead of one per id. */
let pool = Buffer.alloc(0);
let offset = 0;

export function newOrderId(): string {
  if (offset + 16 > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  offset += 16;
  return pool.toString('hex', offset - 16, offset);
}

export function newEffects(): Effects {
  return { fills: [], cancelledOrderIds: [], triggeredOrderIds: [], bracketOrders: [] };
}

export function lastPrice(core: Core, instrument: string): number | undefined {
  return core.q.price.get(instrument)?.price;
}
