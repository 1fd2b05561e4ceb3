/** What the engine's modules share inside one transaction: the statements and the id maker. */
import { randomBytes } from '../common/random.js';
import type { WriteCache } from './cache.js';
import { positionKey } from './cache.js';
import type { PositionRow, Queries } from './queries.js';
import type { Effects } from './types.js';

export interface Core {
  q: Queries;
  makeId: () => string;
  /** Execution ids: random, never the order ids a test may script. */
  makeExecutionId: () => string;
  /** What the write path reads on every order, mirrored in memory (cache.ts); valid inside a write. */
  cache: WriteCache;
  /** Every price move runs every working order, without the index of what moves reach (prices.ts): the plain sweep tests hold the index to. */
  sweepAll?: boolean;
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

/** The last price, inside a write (from the cache). */
export function lastPrice(core: Core, instrument: string): number | undefined {
  const { prices } = core.cache;
  let price = prices.get(instrument);
  if (price === undefined) {
    price = core.q.price.get(instrument)?.price ?? null;
    prices.set(instrument, price);
  }
  return price ?? undefined;
}

/** The position row of an account in an instrument, inside a write (from the cache). */
export function positionOf(core: Core, account: string, instrument: string): PositionRow | undefined {
  const key = positionKey(account, instrument);
  let row = core.cache.positions.get(key);
  if (row === undefined) {
    row = core.q.position.get(account, instrument) ?? null;
    core.cache.positions.set(key, row);
  }
  return row ?? undefined;
}

/** The commission and slippage of a root, inside a write (from the cache). */
export function settingsOf(core: Core, root: string): { commission: number; slippage_ticks: number } | undefined {
  let row = core.cache.settings.get(root);
  if (row === undefined) {
    const found = core.q.contractSetting.get(root);
    row = found ? { commission: found.commission, slippage_ticks: found.slippage_ticks } : null;
    core.cache.settings.set(root, row);
  }
  return row ?? undefined;
}
