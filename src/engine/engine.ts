/**
 * The simulation engine: accounts, orders, prices, fills and net positions over the SQLite store.
 * It trusts its input to have passed the order schema (src/service/order.ts); callers validate.
 * Every write runs in one IMMEDIATE transaction, so a failure changes nothing. Each operation
 * first expires the DAY orders whose session has ended, by the injected clock.
 */
import { invalidAccount, RejectedError } from '../common/errors.js';
import type { AtmTemplate, Order } from '../service/order.js';
import { addTemplate, removeTemplate } from './atm.js';
import { type Core, newEffects, newOrderId, positionOf, rowIdOfClientOrder } from './core.js';
import { createClockStore } from './clock.js';
import { setPriceIn } from './prices.js';
import { runReplayGroup } from './replay-group.js';
import { createWriteCache } from './cache.js';
import { expireDayOrders, hasExpiredDayOrders } from './expiry.js';
import { cancelWithGroup } from './oco.js';
import { assertOnTick, closeOpenPosition, type PlaceInjection, placeOrder } from './orders.js';
import {
  type FillRow,
  fillListQuery,
  orderListQuery,
  type OrderRow,
  type PositionRow,
  type Prepared,
  prepareQueries,
  type PricedPositionRow,
  toFill,
  toOrder,
  toPosition,
  toPricedPosition,
  toTemplate,
  whereOf,
} from './queries.js';
import { createMarket } from './market.js';
import { readMinuteBars } from './minute-bars.js';
import { loadCustomContracts, type PriceSourceKind, type PriceSourceParams, sourceOf, toSourceRecord } from './sources.js';
import { allContracts, contractSpec, type ContractSpec } from '../service/contracts.js';
import Database from 'better-sqlite3';
import { type Db, openStore, SCHEMA_VERSION, TABLES_VERSION } from './store.js';
import { releaseDb } from './sqlite.js';
import { guardEngine, toStoreError } from './store-errors.js';
import { createTrading } from './trading.js';
import type { ClockClaim, ClockControl, ContractSettings, Engine, EngineOptions, OrderFilter, OrderListFilter, Page, Paged, PositionRecord, PricedPosition, ReplayBatch, ReplayGroup, Settled } from './types.js';
import { monotonicMs } from '../common/monotonic.js';
import { extended } from '../common/extended.js';

/** How many different priced-positions reads are kept (accounts × filters); beyond, all are dropped. */
const PRICED_READS_KEPT = 64;

/** A prefix an order id may start with: one or more printable ASCII characters. */
const PRINTABLE_ASCII = /^[\x21-\x7e]+$/;

/** SQLite's BINARY order for ASCII text: the ORDER BY the prefix lookups had. */
const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export * from './types.js';
export { DEFAULT_SOURCE, PRICE_SOURCES, type PriceSourceKind, type PriceSourceParams, type PriceSourceRecord } from './sources.js';
export { nextPosition } from './position.js';
export { newOrderId };

/** Opens the store at `file`; a store that cannot be used throws a StoreError (or store_busy). */
export function createEngine(file: string, options: EngineOptions = {}): Engine {
  const db = openStore(file, options.busyTimeoutMs);
  try {
    return createEngineOnDb(db, file, options);
  } catch (error) {
    db.close();
    throw toStoreError(error, file);
  }
}

export function createEngineOnDb(db: Db, file: string, options: EngineOptions = {}): Engine {
  const clocks = createClockStore(db);
  const wall = () => (options.now ? options.now() : new Date());
  /** A replay's time while one drives the store's session clock, else the wall clock (issue 29). */
  const clock = () => clocks.now(wall);
  const core: Core = {
    q: prepareQueries(db),
    makeId: options.newOrderId ?? newOrderId,
    makeRowId: options.newRowId ?? rowIdOfClientOrder,
    makeExecutionId: options.newExecutionId ?? newOrderId,
    cache: createWriteCache(db),
    sweepAll: options.sweepAll,
  };
  const { q } = core;

  const immediate = db.transaction(<R>(body: () => R): R => {
    core.cache.sync();
    return body();
  });
  /**
   * Runs `body` in an IMMEDIATE transaction, the write cache synced with the store first; inside
   * a transaction already open (a group's savepoint) it runs as it is. A failure of the store
   * (busy past the timeout, full, read-only) is typed by guardEngine; a failed transaction was
   * rolled back, so what the cache learnt from it goes too.
   */
  function inWrite<R>(body: () => R): R {
    try {
      return db.inTransaction ? body() : (immediate.immediate(body) as R);
    } catch (error) {
      core.cache.reset();
      throw error;
    }
  }

  /**
   * Wraps an operation in a write that first expires due DAY orders. Any write but a price's may
   * change working orders: the index of what price moves reach (prices.ts) is dropped after it.
   */
  function write<A extends unknown[], R>(operation: (time: string, ...args: A) => R, keepsTriggers = false): (...args: A) => R {
    return (...args: A) =>
      inWrite(() => {
        const now = clock();
        expireDayOrders(core, now, newEffects());
        try {
          return operation(now.toISOString(), ...args);
        } finally {
          if (!keepsTriggers) core.cache.triggers.clear();
        }
      });
  }

  const expire = () => inWrite(() => expireDayOrders(core, clock(), newEffects()));
  /** Reads see expired DAY orders as expired; the write lock is taken only when one is due. */
  function fresh(): number {
    const version = core.cache.sync();
    if (hasExpiredDayOrders(core, clock)) expire();
    return version;
  }

  /**
   * Canonical names by their ASCII-lower-cased form (how COLLATE NOCASE compares) and by
   * themselves. Accounts are never removed, so a name found once stays right; a miss asks the
   * store, which may have gained an account from another process since.
   */
  const canonical = new Map<string, string>();
  const folded = (name: string) => name.replace(/[A-Z]+/g, (c) => c.toLowerCase());
  function resolveAccount(name: string): string {
    // The name as given first: a request names its account the same way every time, and folding
    // its case is a regular expression and a new string on every read (issue 34).
    const known = canonical.get(name) ?? canonical.get(folded(name));
    if (known !== undefined) return known;
    const row = q.account.get(name);
    if (!row) throw invalidAccount(name);
    // Keyed by its folded form and by its own spelling (not by every spelling asked for, which a
    // client could vary without end). Names are unique without case, so no key is two accounts'.
    canonical.set(folded(name), row.name).set(row.name, row.name);
    return row.name;
  }

  function openPosition(account: string, instrument: string): PositionRow | undefined {
    const row = positionOf(core, account, instrument);
    return row && row.quantity !== 0 ? row : undefined;
  }

  const place = write((time, order: Order, injected?: PlaceInjection) => {
    const effects = newEffects();
    const record = placeOrder(core, { ...order, account: resolveAccount(order.account) }, 'client', time, effects, null, injected);
    return extended(effects, { orderId: record.orderId, order: record });
  });

  const reverse = write((time, order: Order) => {
    const account = resolveAccount(order.account);
    const position = openPosition(account, order.instrument);
    if (!position) {
      throw new RejectedError(`No position found for instrument '${order.instrument}' in account '${order.account}'`, {
        code: 'no_position',
      });
    }
    const effects = newEffects();
    const closingOrder = closeOpenPosition(core, position, 'reverse-close', time, effects);
    const record = placeOrder(core, { ...order, account }, 'client', time, effects);
    return { ...effects, orderId: record.orderId, order: record, closingOrder, closed: toPosition(position) };
  });

  /** An order by the service's id: in the account when one is given, else the oldest with that id. */
  function findRow(orderId: string, accountName: string | undefined): OrderRow | undefined {
    if (accountName === undefined) return q.ordersByOrderId.get({ id: orderId });
    return q.orderByOrderId.get({ account: resolveAccount(accountName), id: orderId });
  }

  const cancel = write((time, accountName: string | undefined, orderId: string) => {
    const row = findRow(orderId, accountName);
    if (!row || row.state !== 'WORKING') {
      throw new RejectedError(`Order linked to '${orderId}' not found or already terminal.`, { code: 'order_not_found' });
    }
    const effects = newEffects();
    cancelWithGroup(core, row, time, effects);
    return { orderId, order: toOrder(q.orderById.get(row.id)!), cancelledOrderIds: effects.cancelledOrderIds };
  });

  const trading = createTrading({ core, resolveAccount, openPosition, findRow });
  const market = createMarket(db);

  const setPrice = write((time, instrument: string, price: number) => {
    assertOnTick('price', instrument, price);
    const effects = newEffects();
    const previousPrice = setPriceIn(core, instrument, price, time, effects);
    return { ...effects, instrument, price, previousPrice };
  }, true);

  // The session clock (issue 29): a replay takes it, moves it group by group, and gives it back.
  const replayGroupWrite = db.transaction((batch: ReplayBatch, from: number, eof: boolean, budgetMs: number) => runReplayGroup(core, clocks, batch, { from, eof, budgetMs }));
  function replayGroup(batch: ReplayBatch, options: { from?: number; eof: boolean; budgetMs?: number }): ReplayGroup {
    try {
      return replayGroupWrite.immediate(batch, options.from ?? 0, options.eof, options.budgetMs ?? 25) as ReplayGroup;
    } catch (error) {
      core.cache.reset();
      throw error;
    }
  }
  const claimClock = (claim: ClockClaim) => inWrite(() => clocks.claim(claim));
  const releaseClock = () => inWrite(() => clocks.release());
  const controlClock = (request: ClockControl) => inWrite(() => clocks.control(request));

  const addAccount = write((time, name: string) => {
    const existing = q.account.get(name);
    if (existing) throw new RejectedError(`Account '${existing.name}' already exists`, { code: 'account_exists' });
    q.addAccount.run(name, time);
    return name;
  });

  const toSettings = (row: { root: string; commission: number; slippage_ticks: number }): ContractSettings => ({
    root: row.root,
    commission: row.commission,
    slippageTicks: row.slippage_ticks,
  });
  const setContractSettings = write((time, root: string, change: { commission?: number; slippageTicks?: number }) => {
    const now = q.contractSetting.get(root);
    q.setContractSetting.run(root, change.commission ?? now?.commission ?? 0, change.slippageTicks ?? now?.slippage_ticks ?? 0, time);
    core.cache.settings.delete(root);
    return toSettings(q.contractSetting.get(root)!);
  });

  loadCustomContracts(core);
  /** The user's contracts and the table's; read again from the store, another process may have changed them. */
  const contracts = () => {
    loadCustomContracts(core);
    return allContracts();
  };
  const addContract = write((time, spec: ContractSpec) => {
    q.addCustomContract.run({
      root: spec.root,
      name: spec.name,
      exchange: spec.exchange,
      tick_size: spec.tickSize,
      point_value: spec.pointValue,
      months: spec.months.join(','),
      day_end: spec.dayEnd,
      demo_price: spec.demoPrice ?? null,
      updated_at: time,
    });
    loadCustomContracts(core);
    core.cache.reset();
    return contractSpec(spec.root)!;
  });
  const removeContract = write((_time, root: string) => {
    const removed = q.removeCustomContract.run(root).changes > 0;
    loadCustomContracts(core);
    core.cache.reset();
    return removed;
  });
  const setPriceSource = write((time, target: string, source: PriceSourceKind, params: PriceSourceParams) => {
    q.setPriceSource.run(target, source, JSON.stringify(params), time);
    return toSourceRecord(q.priceSource.get(target)!);
  });
  const clearPriceSource = write((_time, target: string) => q.removePriceSource.run(target).changes > 0);

  const addAtm = write((time, template: AtmTemplate) => addTemplate(core, template, time));
  const removeAtm = write((_time, name: string) => removeTemplate(core, name));

  /** The filter's clauses (its account made canonical) after the `extra` ones, which take no values. */
  function where(filter: OrderFilter, extra: string[] = [], table = ''): { sql: string; params: string[] } {
    const params: string[] = [];
    const sql = whereOf(table, [...extra], params, inStore(filter));
    return { sql, params };
  }

  /** A filter with its account as the store spells it. */
  function inStore<F extends OrderFilter>(filter: F): F {
    return filter.account === undefined ? filter : { ...filter, account: resolveAccount(filter.account) };
  }

  /** The statements of the lists built per filter (a few texts each: orders, fills, positions), prepared once. */
  const listStatements = new Map<string, Database.Statement<string[], unknown>>();
  function listStatement<R>(text: string): Database.Statement<string[], R> {
    let statement = listStatements.get(text);
    if (!statement) listStatements.set(text, (statement = db.prepare<string[], unknown>(text)));
    return statement as Database.Statement<string[], R>;
  }
  const pricedStatements = new Map<string, Database.Statement<string[], PricedPositionRow>>();
  /** The last priced-positions read per text and parameters, with the store state it was read in. */
  const pricedRead = new Map<string, { state: string; rows: PricedPosition[] }>();

  function orderRows(filter: OrderListFilter, page?: Page): OrderRow[] {
    fresh();
    const { text, params } = orderListQuery(inStore(filter), page);
    return listStatement<OrderRow>(text).all(...params);
  }

  function fillRows(filter: OrderFilter & { since?: string }, page?: Page): FillRow[] {
    const { text, params } = fillListQuery(inStore(filter), page);
    return listStatement<FillRow>(text).all(...params);
  }

  function paged<R extends { seq: number }, T>(rows: R[], page: Page, to: (row: R) => T): Paged<T> {
    if (rows.length <= page.limit) return { items: rows.map(to) };
    const items = rows.slice(0, page.limit);
    return { items: items.map(to), next: items[items.length - 1]!.seq };
  }

  /**
   * Group commit (issue 16): operations that arrive together share one IMMEDIATE transaction,
   * each in its own savepoint, so one that fails is rolled back alone and its neighbours stay.
   * Runs them in order until they are done or `budgetMs` has passed (at least one runs), then
   * commits; the results are returned only after the commit, so no caller can acknowledge an
   * operation before the commit that holds it. A failed commit throws: none of them happened.
   */
  const savepoint = db.transaction(<R>(run: () => R): R => run());
  const groupTransaction = db.transaction(<R>(runs: ReadonlyArray<() => R>, budgetMs: number): Array<Settled<R>> => {
    core.cache.sync();
    const deadline = monotonicMs() + budgetMs;
    const settled: Array<Settled<R>> = [];
    for (const run of runs) {
      if (settled.length > 0 && monotonicMs() > deadline) break;
      try {
        settled.push({ ok: true, value: savepoint(run) as R });
      } catch (error) {
        core.cache.reset();
        // Some failures (a full disk, an I/O error) make SQLite roll back the whole transaction:
        // the neighbours run so far are undone too, so the group fails as one, with that error.
        if (!db.inTransaction) throw error;
        settled.push({ ok: false, error });
      }
    }
    return settled;
  });
  function group<R>(runs: ReadonlyArray<() => R>, budgetMs = Infinity): Array<Settled<R>> {
    try {
      return groupTransaction.immediate(runs, budgetMs) as Array<Settled<R>>;
    } catch (error) {
      core.cache.reset();
      throw error;
    }
  }

  /** A held order (placed with holdForReject) turns Rejected; false when it was cancelled or filled meanwhile. */
  const rejectHeld = write((time, id: string) => core.q.rejectHeld.run(time, id).changes > 0);

  /**
   * A consistent copy of the whole store in `file` (SQLite's VACUUM INTO reads one snapshot, so
   * writes of other processes land wholly before or after it). The file must not exist.
   */
  function snapshotTo(target: string): void {
    db.prepare('VACUUM INTO ?').run(target);
  }

  /**
   * Replaces every row of the store with those of the snapshot `source` in one IMMEDIATE
   * transaction: another process sees the old store or the new one, never a mix, and this one
   * runs nothing else meanwhile (it is synchronous). What this connection remembers of the old
   * rows (the write cache, account names, custom contracts) is dropped, since its own commit
   * does not move data_version.
   */
  function restoreFrom(source: string): void {
    const snapshot = new Database(source, { readonly: true, fileMustExist: true });
    let tables: string[];
    try {
      const version = snapshot.pragma('user_version', { simple: true }) as number;
      // A snapshot from before a migration that only changed indexes has the same tables: its
      // rows go into this store's tables, under this store's indexes.
      if (version < TABLES_VERSION || version > SCHEMA_VERSION)
        throw new RejectedError(`the snapshot ${source} has schema ${version}; this store has ${SCHEMA_VERSION}`, { code: 'snapshot_schema' });
      tables = snapshot
        .prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_stat%'")
        .all()
        .map((t) => t.name);
    } finally {
      snapshot.close();
    }
    const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;
    db.prepare('ATTACH DATABASE ? AS snapshot').run(source);
    try {
      const mine = new Set(
        db.prepare<[], { name: string }>("SELECT name FROM main.sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_stat%'").all().map((t) => t.name),
      );
      db.transaction(() => {
        // The rows are swapped whole; references are checked once, at the commit.
        db.pragma('defer_foreign_keys = ON');
        // The session clock is not data but who drives the store now: a running replay keeps it.
        mine.delete('session_clock');
        for (const table of mine) db.exec(`DELETE FROM main.${quoted(table)}`);
        for (const table of tables) if (mine.has(table)) db.exec(`INSERT INTO main.${quoted(table)} SELECT * FROM snapshot.${quoted(table)}`);
      }).immediate();
    } finally {
      core.cache.reset();
      canonical.clear();
      loadCustomContracts(core);
      db.exec('DETACH DATABASE snapshot');
    }
  }

  // The store's state: data_version (moves when another connection commits, read by the write
  // cache's sync) and total_changes() (this connection's own row changes, rolled back or not; no
  // read transaction, ~0.15 µs). Prepared on first use: an order never asks.
  let ownChanges: Prepared<[], { own: number }> | undefined;
  function stateAfter(version: number): string {
    ownChanges ??= db.prepare<[], { own: number }>('SELECT total_changes() AS own').pluck();
    return `${version}:${ownChanges.get() as unknown as number}`;
  }
  function storeVersion(): string {
    return stateAfter(core.cache.sync());
  }

  fresh();

  // Every method, reads included: a damaged page or a full disk can show up in any of them.
  return guardEngine<Engine>({
    file,
    now: clock,
    clockState: () => clocks.state(),
    claimClock,
    replayGroup,
    releaseClock,
    controlClock,
    placeOrder: place,
    rejectHeld,
    snapshotTo,
    restoreFrom,
    group,
    reversePosition: reverse,
    cancelOrder: cancel,
    closePosition: write(trading.close),
    flatten: write(trading.flatten),
    flattenEverything: write(trading.flattenEverything),
    invertPosition: write(trading.invert),
    flatPlace: write(trading.flatPlace),
    changeOrder: write(trading.change),
    replaceOrder: write(trading.replace),
    cancelOrders: write(trading.cancelMany),
    bracket: write(trading.bracket),
    closeStrategy: write(trading.closeStrategy),
    quoteDay: (instrument) => market.quoteDay(instrument, clock()),
    ticks: (instrument, from, to) => market.ticks(instrument, from, to),
    minuteBars: (instrument, from, to) => readMinuteBars(q, instrument, from, to),
    accountMoney: (account) => market.money(resolveAccount(account), clock(), core.cache),
    accountMoneyToday: (account) => market.moneyToday(resolveAccount(account), clock(), core.cache),
    contractSettings: () => q.contractSettings.all().map(toSettings),
    setContractSettings,
    contracts,
    addContract,
    removeContract,
    priceSources: () => q.priceSources.all().map(toSourceRecord),
    priceSourceOf: (instrument) => sourceOf(core, instrument),
    setPriceSource,
    clearPriceSource,
    getFill(account, executionId) {
      return this.listFills({ account }).find((f) => f.executionId === executionId);
    },
    setPrice,
    listPrices: () => q.prices.all(),
    lastPrice: (instrument) => q.price.get(instrument)?.price,
    listOrders(filter = {}) {
      return orderRows(filter).map(toOrder);
    },
    pageOrders(filter, page) {
      const rows = orderRows(filter, page);
      return paged(rows, page, toOrder);
    },
    listPositions(filter = {}): PositionRecord[] {
      fresh();
      const { sql, params } = where(filter, filter.includeFlat ? [] : ['quantity != 0']);
      const text = `SELECT * FROM positions${sql} ORDER BY account COLLATE NOCASE, instrument`;
      // One of eight texts (account, instrument, flat or not): each prepared once, not per read (issue 34).
      return listStatement<PositionRow>(text).all(...params).map(toPosition);
    },
    listPricedPositions(filter = {}) {
      const version = fresh();
      const { sql, params } = where(filter, filter.includeFlat ? [] : ['p.quantity != 0'], 'p.');
      // One read for the positions and their last prices, each row an array (no object per row,
      // no second query by instrument): GetPositions of 20 (issue 34). One of eight texts.
      const text = `SELECT p.account, p.instrument, p.quantity, p.avg_price, p.realized_pnl, p.pnl_known, pr.price FROM positions p LEFT JOIN prices pr ON pr.instrument = p.instrument${sql} ORDER BY p.account COLLATE NOCASE, p.instrument`;
      // The same read of a store nothing has changed since is answered from memory. The store's
      // state is storeVersion(): the other connections' commits (data_version) and this
      // connection's own row changes (total_changes(), which counts those rolled back too); inside
      // a transaction, whose changes may yet be rolled back, nothing is kept or reused. The version
      // is the one fresh() read, before the rows are: another connection's commit in between makes
      // the next read a miss, never a stale answer. Its own writes (an expiry) are counted after.
      const state = db.inTransaction ? undefined : stateAfter(version);
      const key = `${text}\u0000${params.join('\u0000')}`;
      const kept = state === undefined ? undefined : pricedRead.get(key);
      if (kept && kept.state === state) return kept.rows;
      let statement = pricedStatements.get(text);
      if (!statement) pricedStatements.set(text, (statement = db.prepare<string[], PricedPositionRow>(text).raw(true) as unknown as Database.Statement<string[], PricedPositionRow>));
      const rows = statement.all(...params).map(toPricedPosition);
      if (state !== undefined) {
        if (pricedRead.size >= PRICED_READS_KEPT) pricedRead.clear();
        pricedRead.set(key, { state, rows });
      }
      return rows;
    },
    orderIdsByPrefix(prefixes, account) {
      fresh();
      const inAccount = account === undefined ? undefined : resolveAccount(account);
      const found = new Map<string, { orderId: string; account: string }>();
      for (const prefix of prefixes) {
        // Every id in the store is printable ASCII (§1.6: 32 hex digits, or a client's from a set
        // of ASCII characters), so no id starts with anything else. The ids that start with
        // `prefix` are those in [prefix, prefix with its last character the next one): a range
        // of an index, never every row.
        if (!PRINTABLE_ASCII.test(prefix)) continue;
        const to = prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
        const rows = inAccount === undefined ? q.orderIdsBetween.all({ from: prefix, to }) : q.orderIdsBetweenIn.all({ from: prefix, to, account: inAccount });
        for (const row of rows) found.set(`${row.orderId}\n${row.account}`, row);
      }
      return [...found.values()].sort((a, b) => byCodeUnits(a.orderId, b.orderId) || byCodeUnits(a.account, b.account));
    },
    getOrder(orderId, account) {
      fresh();
      const row = findRow(orderId, account);
      return row && toOrder(row);
    },
    orderRecord(id) {
      const row = q.orderById.get(id);
      return row && toOrder(row);
    },
    getPosition(account, instrument) {
      const row = q.position.get(resolveAccount(account), instrument);
      return row ? toPosition(row) : undefined;
    },
    listFills(filter = {}) {
      return fillRows(filter).map(toFill);
    },
    pageFills(filter, page) {
      return paged(fillRows(filter, page), page, toFill);
    },
    addAtmTemplate: addAtm,
    listAtmTemplates: () => q.templates.all().map(toTemplate),
    removeAtmTemplate: removeAtm,
    expireDayOrders: expire,
    listAccounts: () => q.accounts.all().map((r) => r.name),
    accountId: (account) => q.account.get(resolveAccount(account))!.id,
    addAccount,
    resolveAccount,
    storeVersion,
    autoCheckpoint: (pages) => void db.pragma(`wal_autocheckpoint = ${Math.max(0, Math.trunc(pages))}`),
    checkpoint() {
      const [row] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; log: number; checkpointed: number }>;
      return { busy: row!.busy !== 0, log: row!.log, checkpointed: row!.checkpointed };
    },
    close: () => releaseDb(db),
  }, file);
}
