/** What the engine's modules share inside one transaction: the statements and the id maker. */
import { randomBytes } from '../common/random.js';
import type { WriteCache } from './cache.js';
import { positionKey } from './cache.js';
import type { PositionRow, Queries } from './queries.js';
import type { Effects } from './types.js';

export interface Core {
  q: Queries;
  makeId: () => string;
  /** The row id of an order whose client chose its id (rowIdOfClientOrder). */
  makeRowId: () => string;
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

/** `size` bytes of the pool in hexadecimal, no two calls sharing a byte. */
function randomHex(size: number): string {
  if (offset + size > pool.length) {
    pool = randomBytes(4096);
    offset = 0;
  }
  offset += size;
  return pool.toString('hex', offset - size, offset);
}

export function newOrderId(): string {
  return randomHex(16);
}

/**
 * The row id (`orders.id`) of an order whose client chose its id: `~`, the milliseconds since
 * 1970 in 12 hex digits, then 8 random bytes in hex. The order's id is the client's (`order_id`);
 * this one is the store's own: fills and brackets point at it, and no answer shows it. A service
 * id is random (reference §1.6), so each one lands on its own page of the id column's index;
 * these land on its last page, one page for all the orders of a commit (issue 34, eleventh
 * round). The `~` is no character of a client id (§1.6) nor of a service id: no lookup of an id a
 * client or the service gave (queries.ts, orderByOrderId) can find one, nor can any prefix.
 */
export function rowIdOfClientOrder(): string {
  return `~${Date.now().toString(16).padStart(12, '0')}${randomHex(8)}`;
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
