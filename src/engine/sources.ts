/**
 * Where the simulator's prices come from, and the price a MARKET order fills at when none was ever
 * set (docs/paper-trading.md). Each instrument has a price source — its own, its root's, or the
 * one for every instrument (`*`), the most specific first; with none chosen, `demo`:
 *
 * - `manual`: only `trade price set`. A MARKET order with no last price is refused, as the
 *   reference's simulator refuses it (service-reference.md §3.1, §8.1).
 * - `demo`: as manual, but the first MARKET order for an instrument with no price sets the root's
 *   demo price (the contract table's, or the user's) and fills there, saying so.
 * - `random`, `remote`, `replay`: prices set by a process that drives them (`trade price run`,
 *   `trade serve`); until one has, a MARKET order with no price is refused, naming the source.
 *
 * Also the user's contracts (`trade contract add`), kept in the store and handed to the contract
 * table when the engine opens.
 */
import { RejectedError } from '../common/errors.js';
import { contractSpec, type ContractSpec, rootOf, setCustomContracts, userContract } from '../service/contracts.js';
import { type Core, positionOf } from './core.js';
import type { CustomContractRow, PriceSourceRow } from './queries.js';

export const PRICE_SOURCES = ['manual', 'demo', 'random', 'remote', 'replay'] as const;
export type PriceSourceKind = (typeof PRICE_SOURCES)[number];

/** A source's own settings; each source reads the ones it has. */
export interface PriceSourceParams {
  /** replay: the file, as an absolute path. */
  file?: string;
  /** replay: times real time; 0 as fast as possible. */
  speed?: number;
  /** random: the walk's seed, its step interval (ms) and its largest step (ticks). */
  seed?: number;
  interval?: number;
  maxTicks?: number;
  /** remote: the service's stream (ws) or its quote route polled (http). */
  from?: 'http' | 'ws';
}

export interface PriceSourceRecord {
  /** `*` (every instrument), a root (`ES`) or one contract (`ES 09-25`). */
  target: string;
  source: PriceSourceKind;
  params: PriceSourceParams;
  /** Absent for the default (nothing chosen). */
  updatedAt?: string;
}

/** What every instrument has when nothing was chosen. */
export const DEFAULT_SOURCE: PriceSourceRecord = { target: '*', source: 'demo', params: {} };

export const toSourceRecord = (row: PriceSourceRow): PriceSourceRecord => ({
  target: row.target,
  source: row.source as PriceSourceKind,
  params: JSON.parse(row.params) as PriceSourceParams,
  updatedAt: row.updated_at,
});

/** An instrument's source: its own, else its root's, else every instrument's, else the default. */
export function sourceOf(core: Core, instrument: string): PriceSourceRecord {
  for (const target of [instrument, rootOf(instrument), '*']) {
    const row = core.q.priceSource.get(target);
    if (row) return toSourceRecord(row);
  }
  return DEFAULT_SOURCE;
}

/** How a MARKET order with no last price is priced: the demo price to set, or null (no price at all). */
export interface MissingPrice {
  demo?: number;
}

/**
 * What a MARKET order does when its instrument has no last price: fill at the demo price (the
 * instrument's source is `demo` and its root has one), fill at no price (it only reduces a
 * position that was itself opened at no price, by an older trade: getting flat is never blocked),
 * or be refused with the way to get a price.
 */
export function missingPrice(core: Core, account: string, instrument: string, signedQuantity: number): MissingPrice {
  const held = positionOf(core, account, instrument);
  if (held && held.pnl_known === 0 && held.quantity !== 0 && Math.sign(signedQuantity) !== Math.sign(held.quantity) && Math.abs(signedQuantity) <= Math.abs(held.quantity)) {
    return {};
  }
  const chosen = sourceOf(core, instrument);
  const demo = contractSpec(rootOf(instrument))?.demoPrice;
  if (chosen.source === 'demo' && demo !== undefined) return { demo };
  const quoted = JSON.stringify(instrument);
  const how: Record<PriceSourceKind, string> = {
    manual: `Set one: trade price set ${quoted} PRICE (its price source is manual).`,
    demo: `Set one: trade price set ${quoted} PRICE (${rootOf(instrument)} has no demo price; trade contract add ${rootOf(instrument)} --demo-price P gives it one).`,
    random: `Its price source is random: run it (trade price run ${quoted}, or trade serve), or set a price: trade price set ${quoted} PRICE.`,
    remote: `Its price source is remote: run it (trade price run ${quoted}, or trade serve), or set a price: trade price set ${quoted} PRICE.`,
    replay: `Its price source is a replay: run it (trade price run ${quoted}, or trade serve), or set a price: trade price set ${quoted} PRICE.`,
  };
  throw new RejectedError(`Invalid request: instrument: no last price for ${instrument} in the simulator`, {
    code: 'no_price',
    hint: `${how[chosen.source]} Nothing was placed.`,
  });
}

/** A user's contract as the table holds contracts. */
export function toContractSpec(row: CustomContractRow): ContractSpec {
  return userContract({
    root: row.root,
    name: row.name,
    exchange: row.exchange,
    tickSize: row.tick_size,
    pointValue: row.point_value,
    months: row.months.split(',').map(Number),
    dayEnd: row.day_end,
    demoPrice: row.demo_price ?? undefined,
  });
}

/** Hands the store's user contracts to the contract table. */
export function loadCustomContracts(core: Core): void {
  setCustomContracts(core.q.customContracts.all().map(toContractSpec));
}
