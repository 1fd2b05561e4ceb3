/** The engine's public shapes: records it returns, outcomes of its operations, its interface. */
import type { Action, AtmTemplate, Order, OrderType, TimeInForce } from '../service/order.js';
import type { AccountMoney, QuoteDay, Tick } from './market.js';
import type { MinuteBar } from './minute-bars.js';
import type { BracketRequest, Bracketed, ClosePart, Flattened, FlattenFilter, OrderChange } from './trading.js';
import type { ContractSpec } from '../service/contracts.js';
import type { PriceSourceKind, PriceSourceParams, PriceSourceRecord } from './sources.js';
import type { ClockControl, ClockState } from '../service/session-clock.js';
import type { ClockClaim } from './clock.js';

export type { ClockClaim, ClockControl, ClockState };

/** One record of a replay: its instrument, its time, and the price it sets (a tick's), or the prices in order (a bar's path). */
export interface ReplayRecord {
  instrument: string;
  timeMs: number;
  price: number;
  /** A bar's prices, in the order they are set (its `price` is the first). */
  path?: number[];
}

/**
 * Records of a replay in columns, without an object per record (replay-batch.ts): the i-th, for i
 * below `length`, sets `prices[i]` (a tick's) or `paths.get(i)` (a bar's prices in order) of
 * `instruments[i]` at `times[i]`. The typed arrays may be longer than `length`.
 */
export interface ReplayBatch {
  length: number;
  instruments: string[];
  times: Float64Array;
  prices: Float64Array;
  paths: Map<number, number[]>;
}

/** What replayed records did: a group's (Engine.replayGroup), or a whole replay's. */
export interface ReplayCounts {
  /** Records set. */
  records: number;
  /** Prices set (a price equal to the last one is not set again). */
  prices: number;
  fills: number;
  cancelled: number;
  /** DAY orders expired at the replayed session's close. */
  expired: number;
  brackets: number;
  /** The last price set of each instrument they moved. */
  last: Map<string, number>;
}

/** What one replay group did: its records are the batch's first ones. */
export interface ReplayGroup extends ReplayCounts {
  /** The clock after the group. */
  clock: ClockState;
}

export type { AccountMoney, BracketRequest, Bracketed, ClosePart, Flattened, FlattenFilter, MinuteBar, OrderChange, QuoteDay, Tick };

export type { AtmTemplate };

export type OrderState = 'WORKING' | 'FILLED' | 'CANCELLED' | 'EXPIRED';
/** Who created the order: the client, the engine while closing or reversing, or an ATM bracket. */
export type OrderOrigin = 'client' | 'reverse-close' | 'close' | 'atm-stop-loss' | 'atm-profit-target';

export interface OrderRecord {
  /** The engine's own key for the order. */
  id: string;
  /** The service's id (§1.6): the client's own `orderId`, else the same as `id`. */
  orderId: string;
  account: string;
  instrument: string;
  action: Action;
  quantity: number;
  orderType: OrderType;
  timeInForce: TimeInForce;
  limitPrice?: number;
  stopPrice?: number;
  /** The prices a Change set (the service's `limitPriceChanged`, `stopPriceChanged`). */
  limitPriceChanged?: number;
  stopPriceChanged?: number;
  ocoId?: string;
  strategy?: string;
  state: OrderState;
  filledQuantity: number;
  /** Average fill price; null while unfilled or when filled with no known price. */
  avgFillPrice: number | null;
  origin: OrderOrigin;
  /** For ATM brackets and the close of a CloseStrategy: the entry order (its `id`) whose strategy owns them. */
  parentOrderId?: string;
  /** A STOPLIMIT whose stop was touched and now works as a limit order. */
  triggered?: true;
  /** A scenario rule's late reject (issue 22): pending while WORKING, done once CANCELLED (the service's `Rejected`). */
  rejectReason?: string;
  createdAt: string;
  updatedAt: string;
}

export interface PositionRecord {
  account: string;
  instrument: string;
  /** Signed: positive long, negative short. */
  quantity: number;
  /** Null when flat or when a fill had no known price. */
  avgPrice: number | null;
  /** In price points times contracts; null when a closing fill had no known price. */
  realizedPnl: number | null;
}

export interface FillRecord {
  /** The execution's own id (32 hex). */
  executionId: string;
  /** The service's id of the order filled. */
  orderId: string;
  account: string;
  instrument: string;
  action: Action;
  quantity: number;
  /** Null when no price was known (a MARKET order before any `price set`). */
  price: number | null;
  time: string;
  orderType: OrderType;
  origin: OrderOrigin;
  /** The signed position in the instrument after this fill. */
  positionAfter: number;
  /** What this fill realized, in price points × contracts. */
  realized: number;
  /** Money charged for it: the root's commission per contract × its quantity. */
  commission: number;
}

/** The simulator's settings of a contract root (docs/paper-trading.md). */
export interface ContractSettings {
  root: string;
  /** Money per contract, charged on every fill. */
  commission: number;
  /** Ticks against the trader on market and stop fills. */
  slippageTicks: number;
}

export interface PriceRecord {
  instrument: string;
  price: number;
  updatedAt: string;
}

/** What an operation did beyond its own order: fills, cancellations, stop triggers, brackets. */
export interface Effects {
  fills: FillRecord[];
  /** Cancelled by the operation: the instrument's orders on close, OCO siblings of a fill. */
  cancelledOrderIds: string[];
  /** STOPLIMIT orders whose stop was touched; they now work as limits. */
  triggeredOrderIds: string[];
  /** ATM brackets placed because an entry filled. */
  bracketOrders: OrderRecord[];
  /** Instruments that had no price and took their root's demo price (the `demo` price source). */
  demoPrices?: Array<{ instrument: string; price: number }>;
}

export interface PlaceOutcome extends Effects {
  orderId: string;
  /** The order as it stands after placing: FILLED when it filled at once. */
  order: OrderRecord;
}

export interface CloseOutcome extends Effects {
  /** The position before closing. */
  closed: PositionRecord;
  /** The market order that flattened the position. */
  closingOrder: OrderRecord;
}

export interface ReverseOutcome extends PlaceOutcome {
  /** The market order that flattened the old position. */
  closingOrder: OrderRecord;
  /** The position before reversing. */
  closed: PositionRecord;
}

export interface CancelOutcome {
  orderId: string;
  order: OrderRecord;
  /** The order itself first, then the OCO siblings cancelled with it. */
  cancelledOrderIds: string[];
}

export interface PriceOutcome extends Effects {
  instrument: string;
  price: number;
  previousPrice: number | null;
}

export interface OrderFilter {
  account?: string;
  instrument?: string;
}

/** One page of a list, oldest first: the items after `after` (a nextCursor), at most `limit` of them. */
export interface Page {
  after?: number;
  limit: number;
}

/** A page's items and, when more remain, where the next page starts. */
export interface Paged<T> {
  items: T[];
  next?: number;
}

export interface OrderListFilter extends OrderFilter {
  /** Only orders still working. */
  activeOnly?: boolean;
  /** Working orders, and the others created or changed at or after this ISO time. */
  activeOrSince?: string;
}

/** A position and its instrument's last price (undefined when none is known). */
export interface PricedPosition {
  position: PositionRecord;
  last: number | undefined;
}

export interface PositionFilter extends OrderFilter {
  /** Include flat positions, to see the realized P&L of closed trades. */
  includeFlat?: boolean;
}

export interface EngineOptions {
  /** The clock: order times, fill times and DAY expiry all read it. */
  now?: () => Date;
  newOrderId?: () => string;
  /** Row ids of the orders whose client chose their id (default: core.ts's rowIdOfClientOrder). */
  newRowId?: () => string;
  /** Execution ids (default: random); tests inject a sequence for output they can compare. */
  newExecutionId?: () => string;
  /** How long a write waits for another process's write lock (default 15 s). */
  busyTimeoutMs?: number;
  /**
   * Every price move runs every working order in time priority, as before the index of what moves
   * reach them (issue 29); tests hold the index to this plain sweep. Off by default.
   */
  sweepAll?: boolean;
}

/** One operation of a group: what it returned, or what it threw (it was rolled back alone). */
export type Settled<R> = { ok: true; value: R } | { ok: false; error: unknown };

export interface Engine {
  readonly file: string;
  /**
   * Runs operations (engine calls) in one transaction, each in its own savepoint, in order until
   * done or `budgetMs` has passed (at least one runs); returns what each did after the commit.
   * The ones past the budget are not run and have no entry. Throws when the commit fails.
   */
  group<R>(runs: ReadonlyArray<() => R>, budgetMs?: number): Array<Settled<R>>;
  /**
   * The engine's clock: a replay's time while one drives the store's session clock (any process's),
   * else EngineOptions.now, else the system's.
   */
  now(): Date;
  /** The session clock's state (the wall clock's when no replay drives it). */
  clockState(): ClockState;
  /** Takes the store's clock for a replay from this process; refused (replay_running) while another has it. */
  claimClock(claim: ClockClaim): void;
  /**
   * Sets the batch's records from `from` on (default 0) in one transaction, as many as the clock
   * allows (all that are due at its pace, none while paused, those of a step); returns what they
   * did after the commit. At a pace the batch's last record is set only with `eof`.
   */
  replayGroup(batch: ReplayBatch, options: { from?: number; eof: boolean; budgetMs?: number }): ReplayGroup;
  /** Gives the clock back: the wall clock again. */
  releaseClock(): void;
  /** Pause, resume, speed or step a running replay's clock (409 no_replay when none runs). */
  controlClock(request: ClockControl): { seq: number; state: ClockState };
  /** `injected`: what a `trade serve` scenario rule does to the placement (issue 22). */
  placeOrder(order: Order, injected?: { holdForReject?: string; fillCap?: number }): PlaceOutcome;
  /** Turns an order held for a late reject (its engine id) Rejected; false when it is no longer held. */
  rejectHeld(id: string): boolean;
  /** Writes a consistent copy of the store to `file` (which must not exist). */
  snapshotTo(file: string): void;
  /** Replaces the store's rows with a snapshot's, atomically. */
  restoreFrom(file: string): void;
  reversePosition(order: Order): ReverseOutcome;
  /** Cancels a working order and its OCO group. With an account, the order must be in it. */
  cancelOrder(account: string | undefined, orderId: string): CancelOutcome;
  /** ClosePosition: all (cancelling the instrument's working orders), or a part by quantity or percent. */
  closePosition(account: string, instrument: string, part?: ClosePart): CloseOutcome;
  /** Flatten one account: its working orders (all, or one instrument's) cancelled, its positions closed. */
  flatten(account: string, instrument?: string): Flattened;
  /** The filtered flatten of every account; no filter at all is everything. */
  flattenEverything(filter: FlattenFilter): Flattened;
  /** Reverse: the position turned over with two MARKET orders; the opening order's id. */
  invertPosition(account: string, instrument: string): ReverseOutcome;
  /** FlatPlace: the instrument's orders cancelled and its position closed (if any), then the order placed. */
  flatPlace(order: Order): PlaceOutcome & { closingOrder?: OrderRecord };
  changeOrder(account: string, orderId: string, change: OrderChange): PlaceOutcome;
  /** Cancels a working order and places another, both or neither. */
  replaceOrder(account: string, orderId: string, order: Order): PlaceOutcome;
  /** Cancels the working orders of an account (or of every account), of one instrument or all. */
  cancelOrders(account: string | undefined, instrument: string | undefined): Effects;
  bracket(account: string, request: BracketRequest): Bracketed;
  closeStrategy(account: string, strategyId: string): Effects & { strategyId: string };
  /** A quote's day from the store, or undefined when the instrument has no price. */
  quoteDay(instrument: string): QuoteDay | undefined;
  ticks(instrument: string, from: string, to: string): Tick[];
  /** The one-minute bars of an instrument's prices whose minute starts in [from, to] (epoch ms), oldest first. */
  minuteBars(instrument: string, from: number, to: number): MinuteBar[];
  accountMoney(account: string): AccountMoney;
  /** The realized P&L and commissions of the current trading day alone (the day's fills only). */
  accountMoneyToday(account: string): Pick<AccountMoney, 'realizedToday' | 'commissionToday'>;
  /** The roots with a commission or slippage set, and setting them (0 and 0 removes nothing: it records 0). */
  contractSettings(): ContractSettings[];
  setContractSettings(root: string, change: { commission?: number; slippageTicks?: number }): ContractSettings;
  /** Every contract the simulator knows: the table's (a user's override in its place), then the user's own roots. */
  contracts(): ContractSpec[];
  /** Adds a user's contract, or replaces one (a root of the table: overrides it). */
  addContract(spec: ContractSpec): ContractSpec;
  /** Removes a user's contract; false when there was none (a table root comes back as the table has it). */
  removeContract(root: string): boolean;
  /** The price sources chosen: `*`, roots and contracts. */
  priceSources(): PriceSourceRecord[];
  /** The source an instrument's prices come from: its own, its root's, every instrument's, or the default (demo). */
  priceSourceOf(instrument: string): PriceSourceRecord;
  setPriceSource(target: string, source: PriceSourceKind, params: PriceSourceParams): PriceSourceRecord;
  /** Forgets a choice; false when there was none. */
  clearPriceSource(target: string): boolean;
  getFill(account: string, executionId: string): FillRecord | undefined;
  /** Records a new last price and fills the working orders it crosses. */
  setPrice(instrument: string, price: number): PriceOutcome;
  listPrices(): PriceRecord[];
  lastPrice(instrument: string): number | undefined;
  listOrders(filter?: OrderListFilter): OrderRecord[];
  /** listOrders, one page at a time. */
  pageOrders(filter: OrderListFilter, page: Page): Paged<OrderRecord>;
  /** One order by the service's id; with an account, only in that account (else the oldest with that id). */
  getOrder(orderId: string, account?: string): OrderRecord | undefined;
  /**
   * The service's order ids (with their accounts) that start with one of `prefixes`, sorted by id
   * then account; with an account, only that account's. For prefix ids and unique short ids.
   */
  orderIdsByPrefix(prefixes: string[], account?: string): Array<{ orderId: string; account: string }>;
  /** One order by the engine's own id (`OrderRecord.id`, `parentOrderId`). */
  orderRecord(id: string): OrderRecord | undefined;
  listPositions(filter?: PositionFilter): PositionRecord[];
  /**
   * listPositions with each instrument's last price (undefined: none known), in one read. The
   * same array may be answered again while the store is unchanged: read it, do not change it.
   */
  listPricedPositions(filter?: PositionFilter): PricedPosition[];
  getPosition(account: string, instrument: string): PositionRecord | undefined;
  listFills(filter?: OrderFilter & { since?: string }): FillRecord[];
  /** listFills, one page at a time. */
  pageFills(filter: OrderFilter & { since?: string }, page: Page): Paged<FillRecord>;
  addAtmTemplate(template: AtmTemplate): AtmTemplate;
  listAtmTemplates(): AtmTemplate[];
  /** Removes a template; entries already placed keep the distances they were placed with. */
  removeAtmTemplate(name: string): AtmTemplate;
  /** Expires DAY orders whose session has ended; runs by itself before every operation. */
  expireDayOrders(): string[];
  listAccounts(): string[];
  /** An account's number (the Account object's `id`). */
  accountId(account: string): number;
  addAccount(name: string): string;
  /** The canonical name of an account (names match in any case), or a 404 rejection. */
  resolveAccount(name: string): string;
  /**
   * A mark that differs from the last one read whenever the store has changed since, written by
   * this engine or by another process; reading it touches no table, so streams poll it cheaply.
   */
  storeVersion(): string;
  /**
   * This connection's automatic checkpoint of the log: every `pages` pages, 0 for none (SQLite's
   * default, 1,000, is what every CLI process keeps). `trade serve` turns it off while its
   * checkpointer runs (src/server/checkpointer.ts).
   */
  autoCheckpoint(pages: number): void;
  /** A PASSIVE checkpoint on this connection: the log's frames, and how many of them are in the database now. */
  checkpoint(): { busy: boolean; log: number; checkpointed: number };
  close(): void;
}
