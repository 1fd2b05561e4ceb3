/**
 * What the streams of service-reference.md §4.7 carry, built by the code that answers GetQuote
 * and GetAccount (service-shapes.ts), so a stream and a request can never disagree; and a watch
 * on the store that says when anything in it changed, by this process or another one (a
 * `trade price set` while `trade serve` runs). `trade serve` and `trade watch` on the embedded
 * backend both stream through here.
 */
import type { PositionObject, QuoteObject } from '../service/shapes.js';
import { positionsOf } from './service.js';
import { toAccountObject, toQuoteObject } from './service-shapes.js';
import type { Engine } from './types.js';

/** One account in a `pnlUpdate` (§4.7). */
export interface PnlAccount {
  account: string;
  realizedProfitLoss: number;
  unrealizedProfitLoss: number;
  cashValue: number;
  netLiquidation: number;
  positions: PositionObject[];
}

export interface PnlUpdate {
  type: 'pnlUpdate';
  /** Milliseconds, like the snapshot's. */
  epoch: number;
  accounts: PnlAccount[];
}

export interface MarketData {
  type: 'marketData';
  quotes: QuoteObject[];
}

/** GetQuote's object for one instrument, without `success`; undefined when it has no price. */
export function quoteOf(engine: Engine, instrument: string): QuoteObject | undefined {
  const day = engine.quoteDay(instrument);
  return day && toQuoteObject(instrument, day, engine.now());
}

/** Every account's figures, as GetAccount reports them in its `item`, with its open positions. */
export function pnlUpdate(engine: Engine): PnlUpdate {
  const accounts = engine.listAccounts().map((name): PnlAccount => {
    const positions = positionsOf(engine, name);
    const { item } = toAccountObject(engine.accountId(name), name, engine.accountMoney(name), positions);
    return {
      account: name,
      realizedProfitLoss: item.realizedProfitLoss!,
      unrealizedProfitLoss: item.unrealizedProfitLoss!,
      cashValue: item.cashValue!,
      netLiquidation: item.netLiquidation!,
      positions,
    };
  });
  return { type: 'pnlUpdate', epoch: engine.now().getTime(), accounts };
}

/** How often the store is asked whether it changed: the streams' 100 ms, and cheap (no table is read). */
export const STORE_POLL_MS = 100;

export interface StoreWatchOptions {
  intervalMs?: number;
  /**
   * Whether the timer keeps the process alive: a `trade watch` has nothing else to, a server
   * must never be held open by it.
   */
  keepAlive?: boolean;
  /** A listener (or the store) failed; the watch goes on. */
  onError(error: unknown): void;
}

export interface StoreWatch {
  /** Calls `listener` after each change seen; returns the function that stops it. */
  onChange(listener: () => void): () => void;
  /** Stops every listener and the timer. */
  close(): void;
}

/**
 * Polls the store's version while someone listens, and not at all otherwise: no listener, no
 * timer, so an idle server costs nothing and shuts down as it did.
 */
export function createStoreWatch(engine: Engine, options: StoreWatchOptions): StoreWatch {
  const listeners = new Set<() => void>();
  let timer: NodeJS.Timeout | undefined;
  let seen = '';

  function poll(): void {
    let version: string;
    try {
      version = engine.storeVersion();
    } catch (error) {
      options.onError(error);
      return;
    }
    if (version === seen) return;
    seen = version;
    for (const listener of [...listeners]) {
      try {
        listener();
      } catch (error) {
        options.onError(error);
      }
    }
  }

  function stop(): void {
    if (timer) clearInterval(timer);
    timer = undefined;
  }

  return {
    onChange(listener) {
      listeners.add(listener);
      if (!timer) {
        // Changes from now on: what came before, the caller has just read for itself.
        seen = engine.storeVersion();
        timer = setInterval(poll, options.intervalMs ?? STORE_POLL_MS);
        if (!options.keepAlive) timer.unref();
      }
      return () => {
        listeners.delete(listener);
        if (listeners.size === 0) stop();
      };
    },
    close() {
      listeners.clear();
      stop();
    },
  };
}
