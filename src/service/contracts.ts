/**
 * Contract specifications of the common futures roots (service-reference.md §10): tick size,
 * point value, listed months, roll family, hours. A plain table: nothing is computed at import.
 */

/** How a root's contracts roll (§9.2): which date its anchor is. */
export type RollFamily = 'equity' | 'fx' | 'firstNotice' | 'crude' | 'natgas';

export interface ContractSpec {
  root: string;
  /** As §10 names it; the quote's `description` adds " Futures". */
  name: string;
  /** CME, CBOT, NYMEX or COMEX for the table's; a user's contract names its own. */
  exchange: string;
  tickSize: number;
  /** Money per 1.0 of price. */
  pointValue: number;
  /** The simulator's accounts are in US dollars, so every contract is too (no conversion is modelled). */
  currency: 'USD';
  /** Listed months, 1–12 ascending: the months the roll rule cycles through. */
  months: readonly number[];
  family: RollFamily;
  /** The quote's `tradingHours` label (§10 notes). */
  tradingHours: string;
  /** The daily session end in America/Chicago, `HH:MM` (DAY expiry, §8.1). */
  dayEnd: string;
  /**
   * The price the simulator's `demo` price source starts an instrument of this root at when no
   * price was ever set (docs/paper-trading.md): a round level near the market's, on the tick.
   */
  demoPrice?: number;
  /** Added or overridden by the user (`trade contract add`), not the table's own. */
  custom?: boolean;
}

const QUARTERLY = [3, 6, 9, 12];
const ALL = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
const EQUITY_HOURS = 'CME US Index Futures ETH';

function spec(
  root: string,
  name: string,
  exchange: ContractSpec['exchange'],
  tickSize: number,
  pointValue: number,
  months: readonly number[],
  family: RollFamily,
  tradingHours: string,
  demoPrice: number,
  dayEnd = '16:00',
): ContractSpec {
  return { root, name, exchange, tickSize, pointValue, currency: 'USD', months, family, tradingHours, dayEnd, demoPrice };
}

/** The table's own contracts (service-reference.md §10); `contractSpec` also sees the user's. */
export const CONTRACTS: Readonly<Record<string, ContractSpec>> = {
  ES: spec('ES', 'E-mini S&P 500', 'CME', 0.25, 50, QUARTERLY, 'equity', EQUITY_HOURS, 6000),
  MES: spec('MES', 'Micro E-mini S&P 500', 'CME', 0.25, 5, QUARTERLY, 'equity', EQUITY_HOURS, 6000),
  NQ: spec('NQ', 'E-mini Nasdaq-100', 'CME', 0.25, 20, QUARTERLY, 'equity', EQUITY_HOURS, 21000),
  MNQ: spec('MNQ', 'Micro E-mini Nasdaq-100', 'CME', 0.25, 2, QUARTERLY, 'equity', EQUITY_HOURS, 21000),
  YM: spec('YM', 'E-mini Dow ($5)', 'CBOT', 1, 5, QUARTERLY, 'equity', EQUITY_HOURS, 44000),
  MYM: spec('MYM', 'Micro E-mini Dow', 'CBOT', 1, 0.5, QUARTERLY, 'equity', EQUITY_HOURS, 44000),
  RTY: spec('RTY', 'E-mini Russell 2000', 'CME', 0.1, 50, QUARTERLY, 'equity', EQUITY_HOURS, 2300),
  M2K: spec('M2K', 'Micro E-mini Russell 2000', 'CME', 0.1, 5, QUARTERLY, 'equity', EQUITY_HOURS, 2300),
  ZN: spec('ZN', '10-Year T-Note', 'CBOT', 0.015625, 1000, QUARTERLY, 'firstNotice', 'CBOT Interest Rate ETH', 110),
  ZB: spec('ZB', 'U.S. Treasury Bond', 'CBOT', 0.03125, 1000, QUARTERLY, 'firstNotice', 'CBOT Interest Rate ETH', 115),
  CL: spec('CL', 'Crude Oil (WTI)', 'NYMEX', 0.01, 1000, ALL, 'crude', 'Nymex Energy ETH', 60),
  MCL: spec('MCL', 'Micro WTI Crude Oil', 'NYMEX', 0.01, 100, ALL, 'crude', 'Nymex Energy ETH', 60),
  NG: spec('NG', 'Henry Hub Natural Gas', 'NYMEX', 0.001, 10000, ALL, 'natgas', 'Nymex Energy ETH', 3),
  GC: spec('GC', 'Gold', 'COMEX', 0.1, 100, [2, 4, 6, 8, 10, 12], 'firstNotice', 'Comex Metals ETH', 2600),
  MGC: spec('MGC', 'Micro Gold', 'COMEX', 0.1, 10, [2, 4, 6, 8, 10, 12], 'firstNotice', 'Comex Metals ETH', 2600),
  SI: spec('SI', 'Silver', 'COMEX', 0.005, 5000, [3, 5, 7, 9, 12], 'firstNotice', 'Comex Metals ETH', 30),
  '6E': spec('6E', 'Euro FX', 'CME', 0.00005, 125000, QUARTERLY, 'fx', 'CME FX Futures ETH', 1.08),
  ZC: spec('ZC', 'Corn', 'CBOT', 0.25, 50, [3, 5, 7, 9, 12], 'firstNotice', 'CBOT Agricultural', 425, '13:20'),
  ZS: spec('ZS', 'Soybeans', 'CBOT', 0.25, 50, [1, 3, 5, 7, 8, 9, 11], 'firstNotice', 'CBOT Agricultural', 1000, '13:20'),
};

/** The roots, in the table's order. */
export const CONTRACT_ROOTS: readonly string[] = Object.keys(CONTRACTS);

/**
 * The user's contracts (`trade contract add`), by root: loaded from the store by the engine when
 * it opens, and consulted before the table, so a user's ES overrides the table's.
 */
let customs: Record<string, ContractSpec> = {};
/** Bumped on every change of the user's contracts, for what is computed from the whole table. */
let generation = 0;

/** What a user gives for a contract (`trade contract add`); the demo price is optional. */
export type UserContractFields = Pick<ContractSpec, 'root' | 'name' | 'exchange' | 'tickSize' | 'pointValue' | 'months' | 'dayEnd' | 'demoPrice'>;

/** A user's contract as the table holds one: in US dollars, rolled as the equity roots are. */
export function userContract({ demoPrice, ...fields }: UserContractFields): ContractSpec {
  return { ...fields, currency: 'USD', family: 'equity', tradingHours: 'User defined', ...(demoPrice === undefined ? {} : { demoPrice }), custom: true };
}

/** Replaces the user's contracts (the engine calls it with the store's). */
export function setCustomContracts(specs: readonly ContractSpec[]): void {
  const next: Record<string, ContractSpec> = {};
  for (const spec of specs) next[spec.root] = { ...spec, custom: true };
  const same = JSON.stringify(next) === JSON.stringify(customs);
  if (same) return;
  customs = next;
  generation++;
}

/** A number that changes whenever the user's contracts do. */
export const contractsGeneration = (): number => generation;

/** Every contract: the table's (a user's override in its place), then the user's own roots. */
export function allContracts(): ContractSpec[] {
  const table = Object.values(CONTRACTS).map((spec) => customs[spec.root] ?? spec);
  return [...table, ...Object.values(customs).filter((spec) => !Object.hasOwn(CONTRACTS, spec.root))];
}

/** The root of a dated contract, upper case: `ES 12-26` → `ES`. */
export const rootOf = (instrument: string): string => instrument.split(' ')[0]!.toUpperCase();

/** The spec of a root (upper case), or undefined when the table does not have it. */
export function contractSpec(root: string): ContractSpec | undefined {
  if (Object.hasOwn(customs, root)) return customs[root];
  return Object.hasOwn(CONTRACTS, root) ? CONTRACTS[root] : undefined;
}

/** Money per tick: tick size × point value. */
export function tickValue(spec: ContractSpec): number {
  return Number((spec.tickSize * spec.pointValue).toFixed(10));
}

/** The first day of a contract's month, as a quote's `expiration` writes it (§4.4): `ES 06-26` → `2026-06-01`. */
export function expirationOf(instrument: string): string {
  const match = / (\d\d)-(\d\d)$/.exec(instrument);
  return match ? `20${match[2]}-${match[1]}-01` : '';
}

/**
 * Whether the root's Globex session is open at a Chicago wall-clock time (UTC-encoded, as
 * chicagoWallClock gives it): Sunday 17:00 to Friday 16:00 with a daily break 16:00–17:00; the
 * grains (DAY end 13:20) Sunday–Friday 19:00–07:45 and Monday–Friday 08:30–13:20 (§10).
 */
export function isMarketOpen(spec: ContractSpec | undefined, wall: number): boolean {
  const date = new Date(wall);
  const day = date.getUTCDay();
  const minute = date.getUTCHours() * 60 + date.getUTCMinutes();
  const at = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3));
  if (spec?.dayEnd === '13:20') {
    const night = minute >= at('19:00') ? day >= 0 && day <= 4 : minute < at('07:45') && day >= 1 && day <= 5;
    const dayTime = day >= 1 && day <= 5 && minute >= at('08:30') && minute < at('13:20');
    return night || dayTime;
  }
  if (day === 6 || (day === 0 && minute < at('17:00')) || (day === 5 && minute >= at('16:00'))) return false;
  return !(minute >= at('16:00') && minute < at('17:00'));
}
