/**
 * Where `trade watch` gets its updates, on each backend:
 * - embedded: the store itself, polled for changes every 100 ms (another process's `trade price
 *   set` included) and read with the builders `trade serve` streams with; no server needed;
 * - ws: the WebSocket streams (`subscribe` → `marketData`, `streamPnl` → `pnlUpdate`);
 * - http, and orders on ws (the service has no order stream): polls of the read operations,
 *   paced to WATCH_RATE requests a second, inside the service's budget of 3 (§7.1).
 * Each feed runs until its signal aborts (it then resolves) or fails with a typed error.
 */
import { nextCursorOf } from './call.js';
import type { EmbeddedBackend } from '../backends/embedded.js';
import { createPacer, MIN_RETRY_MS } from '../backends/pacer.js';
import { printable, RATE_LIMIT_TEXT } from '../backends/remote.js';
import type { Backend, CallResult } from '../backends/types.js';
import type { WsBackend, WsEvent } from '../backends/ws.js';
import type { Engine } from '../engine/engine.js';
import { RateLimitedError, RejectedError } from '../common/errors.js';
import { type PnlUpdateRead, readMarketData, readPnlUpdate, readStreamError, type StreamErrorRead } from '../service/events.js';
import type { ArgsOf, OperationName } from '../service/operations.js';
import type { ExecutionRead, OrderRead, QuoteRead } from '../service/shapes.js';

/** How often a remote backend is polled: quotes once a second is one request a second. */
export const REMOTE_POLL_MS = 1_000;
/** Polls use at most two of the service's three requests a second, so other commands still fit. */
export const WATCH_RATE = 2;

export interface FeedContext {
  backend: Backend;
  signal: AbortSignal;
  /** A message for the person watching (stderr), never data. */
  note(line: string): void;
  /** How long the first answer of a stream may take (the backend's timeout). */
  timeoutMs: number;
}

/** An update as read, and as the service sent it (what `--json` prints). */
type Emit<T> = (item: T, raw: unknown) => void;

const field = (value: unknown, name: string): unknown =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>)[name] : undefined;

/**
 * The objects of a list as they came, when they line up with those read (same `id` one by one):
 * a reply may be the list itself, `{key: [...]}`, a single object (GetQuote), or any of these in
 * the `{success, data}` envelope (§1.7). Otherwise the read ones stand in.
 */
function asSent<T>(body: unknown, key: string, read: T[], id: (item: unknown) => unknown): unknown[] {
  const data = field(body, 'data');
  for (const candidate of [body, field(body, key), data, field(data, key)]) {
    if (candidate === undefined || candidate === null) continue;
    const list = [candidate].flat();
    if (list.length === read.length && list.every((item, i) => id(item) !== undefined && id(item) === id(read[i]))) return list;
  }
  return read;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** `step`, then again every `ms`, until the signal aborts; a failure after the abort is the stop's, not an error. */
async function every(ms: number, signal: AbortSignal, step: () => Promise<void> | void): Promise<void> {
  while (!signal.aborted) {
    try {
      await step();
    } catch (error) {
      if (signal.aborted) return;
      throw error;
    }
    await sleep(ms, signal);
  }
}

/** Reads paced within the budget; a 429 (nothing was executed) waits and asks again, as reads may. */
function reader(ctx: FeedContext) {
  const { backend, signal } = ctx;
  const pacer = backend.name === 'embedded' ? undefined : createPacer(WATCH_RATE, WATCH_RATE);
  return async <K extends OperationName>(name: K, args: ArgsOf<K>): Promise<CallResult<K>> => {
    for (;;) {
      await pacer?.take();
      try {
        return await backend.call(name, args);
      } catch (error) {
        if (!(error instanceof RateLimitedError) || signal.aborted) throw error;
        pacer?.drain();
        await sleep(Math.max(MIN_RETRY_MS, (error.retryAfterSeconds ?? 0) * 1000), signal);
      }
    }
  };
}

/** Runs `step` now and after every change of the store, one run at a time, until the signal aborts. */
async function onStoreChange(engine: Engine, signal: AbortSignal, step: () => Promise<void> | void): Promise<void> {
  const { createStoreWatch } = await import('../engine/streams.js');
  return new Promise<void>((resolve, reject) => {
    let running = false;
    let again = false;
    const watch = createStoreWatch(engine, { keepAlive: true, onError: (error) => finish(error) });
    const run = async () => {
      if (running) return void (again = true);
      running = true;
      try {
        do {
          again = false;
          await step();
        } while (again && !signal.aborted);
      } catch (error) {
        finish(error);
      } finally {
        running = false;
      }
    };
    function finish(error?: unknown) {
      watch.close();
      signal.removeEventListener('abort', stopped);
      if (error === undefined || signal.aborted) resolve();
      else reject(error);
    }
    const stopped = () => finish();
    signal.addEventListener('abort', stopped, { once: true });
    // Watched before the first read, so a change while it runs is not missed.
    watch.onChange(() => void run());
    void run();
  });
}

/**
 * Listens to a WebSocket's events until the signal aborts (resolves), the connection is lost,
 * or `handle` throws (rejects). `start` sends the stream's action.
 */
function listen(ws: WsBackend, signal: AbortSignal, start: () => Promise<void>, handle: (event: WsEvent) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (error?: unknown) => {
      if (settled) return;
      settled = true;
      offEvent();
      offLost();
      signal.removeEventListener('abort', stopped);
      if (error === undefined || signal.aborted) resolve();
      else reject(error);
    };
    const stopped = () => settle();
    const offEvent = ws.streams.onEvent((event) => {
      try {
        handle(event);
      } catch (error) {
        settle(error);
      }
    });
    const offLost = ws.streams.onLost((error) => settle(error));
    signal.addEventListener('abort', stopped, { once: true });
    start().catch((error: unknown) => settle(error));
  });
}

/** A stream action the server refused (§5.3): a rate limit (exit 5) or a refusal naming what is wrong (exit 1). */
function streamRefused(event: StreamErrorRead, where: string): Error {
  if (event.error === RATE_LIMIT_TEXT)
    return new RateLimitedError(`Rate limited by ${where}: ${event.action ?? 'the stream'} was refused (subscription changes are limited to about 20 a minute). Nothing is streamed.`, {
      hint: 'Wait a minute and start the watch again.',
    });
  return new RejectedError(printable(event.error), { code: 'stream_refused' });
}

export function noPrice(instruments: string[], embedded: boolean): RejectedError {
  return new RejectedError(`Invalid request: instrument: no price for ${instruments.join(', ')}`, {
    code: 'no_price',
    hint: embedded
      ? `Set one with \`trade price set "${instruments[0]}" PRICE\`, then watch again.`
      : 'The service has no quote for it: check the contract month (`trade quote` says the same).',
  });
}

/** The quotes of `instruments` now, then each one again whenever it may have changed. */
export async function watchQuotes(ctx: FeedContext, instruments: string[], emit: Emit<QuoteRead>): Promise<void> {
  const { backend, signal } = ctx;
  if (backend.name === 'embedded') {
    const { engine } = backend as EmbeddedBackend;
    const { quoteOf } = await import('../engine/streams.js');
    const missing = instruments.filter((i) => engine.quoteDay(i) === undefined);
    if (missing.length > 0) throw noPrice(missing, true);
    return onStoreChange(engine, signal, () => {
      for (const instrument of instruments) {
        const quote = quoteOf(engine, instrument);
        if (quote) emit(quote, quote);
      }
    });
  }
  if (backend.name === 'http') {
    const read = reader(ctx);
    return every(REMOTE_POLL_MS, signal, async () => {
      const { value, body } = await read('GetQuote', { instrument: instruments });
      const quotes = [value].flat();
      const sent = asSent(body, 'quotes', quotes, (q) => field(q, 'instrument'));
      quotes.forEach((quote, i) => emit(quote, sent[i]));
    });
  }
  const ws = backend as WsBackend;
  const wanted = new Set(instruments);
  let first = true;
  // §5.4: the answer to a subscribe is one marketData at once, with the quotes of those that have a price.
  const firstAnswer = setTimeout(() => {
    first = false;
    ctx.note(`No quote from ${backend.label} yet; waiting for the first change.`);
  }, ctx.timeoutMs);
  try {
    return await listen(ws, signal, () => ws.streams.subscribe(instruments), (event) => {
      const refused = readStreamError(event);
      if (refused?.action === 'subscribe' || refused?.action === 'unsubscribe') throw streamRefused(refused, backend.label);
      const quotes = readMarketData(event);
      if (!quotes) return;
      if (first) {
        first = false;
        clearTimeout(firstAnswer);
        const missing = instruments.filter((i) => !quotes.some(({ quote }) => quote.instrument === i));
        if (missing.length > 0) throw noPrice(missing, false);
      }
      for (const { quote, raw } of quotes) if (wanted.has(quote.instrument)) emit(quote, raw);
    });
  } finally {
    clearTimeout(firstAnswer);
  }
}

const money = (value: unknown) => (typeof value === 'number' ? value : undefined);

/** Every account's P&L now, then every `intervalMs`. */
export async function watchPnl(ctx: FeedContext, intervalMs: number, emit: Emit<PnlUpdateRead>): Promise<void> {
  const { backend, signal } = ctx;
  if (backend.name === 'embedded') {
    const { engine } = backend as EmbeddedBackend;
    const { pnlUpdate } = await import('../engine/streams.js');
    return every(intervalMs, signal, () => {
      const update = pnlUpdate(engine);
      emit(update, update);
    });
  }
  if (backend.name === 'http') {
    const read = reader(ctx);
    // Each update is two requests; once a second at most keeps the watch inside its pace.
    return every(Math.max(intervalMs, REMOTE_POLL_MS), signal, async () => {
      const accounts = (await read('ListAccounts', {})).value.accounts;
      const positions = (await read('GetAllPositions', { includeFlat: false })).value.positions;
      const update: PnlUpdateRead = {
        type: 'pnlUpdate',
        epoch: Date.now(),
        accounts: accounts.map((a) => ({
          account: a.name,
          realizedProfitLoss: money(a.item?.realizedProfitLoss),
          unrealizedProfitLoss: money(a.item?.unrealizedProfitLoss),
          cashValue: money(a.item?.cashValue),
          netLiquidation: money(a.item?.netLiquidation),
          positions: positions.filter((p) => p.account === a.name),
        })),
      };
      emit(update, update);
    });
  }
  const ws = backend as WsBackend;
  return listen(ws, signal, () => ws.streams.streamPnl(true, intervalMs), (event) => {
    const refused = readStreamError(event);
    if (refused?.action === 'streamPnl') throw streamRefused(refused, backend.label);
    const update = readPnlUpdate(event);
    if (update) emit(update, event);
  });
}

/** Only what tells an order's progress: its state, fills and prices. */
const progress = (o: OrderRead) => JSON.stringify([o.orderState, o.filled, o.averageFillPrice, o.quantity, o.limitPrice, o.stopPrice]);
const TERMINAL = new Set(['Filled', 'Cancelled', 'Rejected']);
/** Pages of one account's orders read per poll at most. */
const MAX_ORDER_PAGES = 100;

/**
 * The working orders of the accounts now, then every order that is new or whose state, fill or
 * prices changed. GetOrders (`activeOnly: false`: the active ones and the trading day's) is
 * polled; on embedded only when the store changed.
 */
export async function watchOrders(ctx: FeedContext, account: string | undefined, emit: Emit<OrderRead>): Promise<void> {
  const { backend, signal } = ctx;
  const read = reader(ctx);
  const accounts = account !== undefined ? [account] : (await read('ListAccounts', {})).value.accounts.map((a) => a.name);
  if (accounts.length === 0) throw new RejectedError(`${backend.label} lists no account to watch.`, { code: 'no_account' });
  const seen = new Map<string, string>();
  let first = true;
  const poll = async () => {
    for (const name of accounts) {
      // A long day's orders come a page at a time from trade serve (docs/reliability.md "Limits").
      for (let cursor: string | undefined, pages = 0; pages === 0 || (cursor !== undefined && pages < MAX_ORDER_PAGES); pages++) {
        const { value, body } = await read('GetOrders', { account: name, activeOnly: false, ...(cursor === undefined ? {} : { cursor }) });
        const sent = asSent(body, 'orders', value.orders, (o) => field(o, 'orderId') ?? field(o, 'id'));
        for (const [i, order] of value.orders.entries()) {
          const key = `${order.account ?? name}\u0000${order.orderId}`;
          const now = progress(order);
          if (seen.get(key) === now) continue;
          seen.set(key, now);
          // At the start, what is done is history; what still works is what there is to watch.
          if (!first || !TERMINAL.has(order.orderState ?? '')) emit({ ...order, account: order.account ?? name }, sent[i]);
        }
        const next = nextCursorOf(body);
        cursor = next === cursor ? undefined : next;
      }
    }
    first = false;
  };
  if (backend.name === 'embedded') return onStoreChange((backend as EmbeddedBackend).engine, signal, poll);
  return every(REMOTE_POLL_MS, signal, poll);
}

/** The service's longest GetExecutions lookback, in seconds (§3.19). */
const MAX_LOOKBACK_S = 900;

/**
 * The executions of the accounts (every account when none is given) of the last `backSeconds`
 * (at most 900 on a remote backend), then each new one as it comes, each once by its id.
 * Remote: GetExecutions of each account once a second, each asking back to a little before the
 * last poll (so a slow poll misses nothing), every page; a backend that keeps the execution
 * history records them as they are read. Embedded: the store's fills, on each change of it.
 */
export async function watchExecutions(ctx: FeedContext, accounts: string[] | undefined, backSeconds: number, emit: Emit<ExecutionRead>): Promise<void> {
  const { backend, signal } = ctx;
  const seen = new Set<string>();
  if (backend.name === 'embedded') {
    const { engine } = backend as EmbeddedBackend;
    const { toExecutionObject } = await import('../engine/service-shapes.js');
    const names = accounts?.map((a) => engine.resolveAccount(a));
    const from = new Date(engine.now().getTime() - backSeconds * 1000).toISOString();
    return onStoreChange(engine, signal, () => {
      const fills = names === undefined ? engine.listFills({ since: from }) : names.flatMap((account) => engine.listFills({ account, since: from }));
      for (const fill of fills.sort((a, b) => a.time.localeCompare(b.time))) {
        if (seen.has(fill.executionId)) continue;
        seen.add(fill.executionId);
        const object = toExecutionObject(fill);
        emit(object, object);
      }
    });
  }
  const read = reader(ctx);
  const names = accounts ?? (await read('ListAccounts', {})).value.accounts.map((a) => a.name);
  if (names.length === 0) throw new RejectedError(`${backend.label} lists no account to watch.`, { code: 'no_account' });
  let last = Date.now() - Math.min(backSeconds, MAX_LOOKBACK_S) * 1000;
  return every(REMOTE_POLL_MS, signal, async () => {
    const started = Date.now();
    const lookbackTime = Math.min(MAX_LOOKBACK_S, Math.max(1, Math.ceil((started - last) / 1000) + 5));
    for (const account of names) {
      for (let cursor: string | undefined, pages = 0; pages === 0 || (cursor !== undefined && pages < MAX_ORDER_PAGES); pages++) {
        const { value, body } = await read('GetExecutions', { account, lookbackTime, ...(cursor === undefined ? {} : { cursor }) });
        const sent = asSent(body, 'executions', value.executions, (e) => field(e, 'id'));
        for (const [i, execution] of value.executions.entries()) {
          if (seen.has(execution.id)) continue;
          seen.add(execution.id);
          emit(execution, sent[i]);
        }
        const next = nextCursorOf(body);
        cursor = next === cursor ? undefined : next;
      }
    }
    last = started;
  });
}
