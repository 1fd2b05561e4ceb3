/**
 * The streams of one `trade serve` (service-reference.md §5.4): `subscribe`/`unsubscribe` →
 * `marketData`, `streamPnl` → `pnlUpdate`, and the `{"type":"error"}` event of §5.3 when a
 * stream action is refused. One hub per server watches the store (only while some connection
 * subscribes); each connection keeps its own instruments, throttle and P&L timer, and gives all
 * of them back when it closes.
 */
import { MAX_LISTED_ISSUES, ValidationError } from '../common/errors.js';
import { parseInstrument, show } from '../service/order.js';
import type { Engine } from '../engine/engine.js';
import { createStoreWatch, pnlUpdate, quoteOf, STORE_POLL_MS } from '../engine/streams.js';
import type { QuoteObject } from '../service/shapes.js';
import { RATE_LIMITED, type TakeResult } from './limits.js';
import { monotonicMs } from '../common/monotonic.js';

/** A connection's quote messages are at least this far apart (§5.4). */
export const MARKET_DATA_GAP_MS = 100;
export const PNL_INTERVAL = { default: 1_000, min: 250, max: 60_000 } as const;
/** Past this many bytes waiting in a socket, its stream messages are held back until it drains. */
export const CONGESTED_BYTES = 1024 * 1024;
/** A connection's subscriptions at most: each is a quote built on every change of the store. */
export const MAX_SUBSCRIPTIONS = 100;

export type StreamAction = 'subscribe' | 'unsubscribe' | 'streamPnl';

export interface StreamEvent {
  type: string;
  [key: string]: unknown;
}

/** Where a connection's events go. */
export interface StreamSink {
  send(event: StreamEvent): void;
  /** True while the socket holds so much unsent that more would only queue. */
  congested(): boolean;
}

export interface StreamHubOptions {
  engine: Engine;
  /** Takes a token from the subscription bucket (§7.3: 20 a minute); always ok without a rate limit. */
  takeSubscription(): TakeResult;
  onInternalError(what: string, error: unknown): void;
  pollMs?: number;
}

export interface ConnectionStreams {
  /** Answers one stream action; returns what it did, for the request log. */
  handle(action: StreamAction, message: Record<string, unknown>): string;
  /** Stops everything this connection had; safe to call twice. */
  close(): void;
}

export interface StreamHub {
  open(sink: StreamSink): ConnectionStreams;
  close(): void;
}

const streamError = (action: StreamAction, error: string): StreamEvent => ({ type: 'error', action, error });

/** A quote as sent last; a new one differing in anything is an update. */
const signature = (quote: QuoteObject) => JSON.stringify(quote);

/** The instruments of a subscribe or unsubscribe, each resolved as every request's are (§9); refusals named. */
function readInstruments(value: unknown): { resolved: string[]; refused: string[] } | { error: string } {
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string'))
    return { error: `Invalid request: instruments: must be a non-empty list of instruments like ["ES 06-26"], got ${show(value)}` };
  if (value.length > MAX_SUBSCRIPTIONS) return { error: `Invalid request: instruments: at most ${MAX_SUBSCRIPTIONS} at once, got ${value.length}` };
  const resolved: string[] = [];
  const refused: string[] = [];
  for (const text of value as string[]) {
    try {
      resolved.push(parseInstrument(text));
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      refused.push(error.issues.map((i) => i.message).join('; '));
    }
  }
  return { resolved: [...new Set(resolved)], refused };
}

/** Why each instrument was refused, the first few of them: a reply stays readable whatever was sent. */
function listed(refused: string[]): string {
  const shown = refused.slice(0, MAX_LISTED_ISSUES);
  if (refused.length > shown.length) shown.push(`and ${refused.length - shown.length} more`);
  return shown.join('; ');
}

export function createStreamHub(options: StreamHubOptions): StreamHub {
  const { engine } = options;
  const watch = createStoreWatch(engine, {
    intervalMs: options.pollMs ?? STORE_POLL_MS,
    onError: (error) => options.onInternalError('marketData', error),
  });
  const subscribers = new Set<Connection>();
  const open = new Set<Connection>();
  let unwatch: (() => void) | undefined;

  /** Quotes of the instruments that changed, built once per change for every connection. */
  function onStoreChange(): void {
    const built = new Map<string, QuoteObject | undefined>();
    for (const connection of subscribers) {
      connection.changed((instrument) => {
        if (!built.has(instrument)) built.set(instrument, quoteOf(engine, instrument));
        return built.get(instrument);
      });
    }
  }

  function watched(connection: Connection, subscribed: boolean): void {
    if (subscribed) subscribers.add(connection);
    else subscribers.delete(connection);
    if (subscribers.size > 0 && !unwatch) unwatch = watch.onChange(onStoreChange);
    if (subscribers.size === 0 && unwatch) {
      unwatch();
      unwatch = undefined;
    }
  }

  class Connection implements ConnectionStreams {
    private readonly instruments = new Set<string>();
    /** What each instrument's last quote sent was. */
    private readonly sent = new Map<string, string>();
    /** The latest quote of each instrument changed since the last message. */
    private readonly pending = new Map<string, QuoteObject>();
    private lastSent = -Infinity;
    private flushTimer: NodeJS.Timeout | undefined;
    private pnlTimer: NodeJS.Timeout | undefined;
    private closed = false;

    constructor(private readonly sink: StreamSink) {}

    handle(action: StreamAction, message: Record<string, unknown>): string {
      if (action === 'streamPnl') return this.streamPnl(message.enabled, message.interval);
      if (!options.takeSubscription().ok) return this.refuse(action, RATE_LIMITED);
      const read = readInstruments(message.instruments);
      if ('error' in read) return this.refuse(action, read.error);
      if (read.resolved.length === 0) return this.refuse(action, `Invalid request: instruments: ${listed(read.refused)}`);
      return action === 'subscribe' ? this.subscribe(read.resolved) : this.unsubscribe(read.resolved);
    }

    private refuse(action: StreamAction, error: string): string {
      this.sink.send(streamError(action, error));
      return `refused: ${error}`;
    }

    private subscribe(instruments: string[]): string {
      const added = instruments.filter((i) => !this.instruments.has(i));
      if (this.instruments.size + added.length > MAX_SUBSCRIPTIONS)
        return this.refuse('subscribe', `Invalid request: instruments: at most ${MAX_SUBSCRIPTIONS} per connection; unsubscribe some first`);
      for (const instrument of added) this.instruments.add(instrument);
      // The answer comes at once, whatever the throttle says: it is a reply, not an update.
      for (const instrument of instruments) {
        const quote = quoteOf(engine, instrument);
        if (quote) this.pending.set(instrument, quote);
      }
      this.flush(true);
      watched(this, true);
      return `${instruments.join(', ')} (${this.instruments.size} subscribed)`;
    }

    private unsubscribe(instruments: string[]): string {
      for (const instrument of instruments) {
        this.instruments.delete(instrument);
        this.sent.delete(instrument);
        this.pending.delete(instrument);
      }
      if (this.instruments.size === 0) watched(this, false);
      return `${instruments.join(', ')} (${this.instruments.size} subscribed)`;
    }

    /** After a store change: the quotes that differ from what was sent become an update. */
    changed(quote: (instrument: string) => QuoteObject | undefined): void {
      for (const instrument of this.instruments) {
        const latest = quote(instrument);
        if (latest && signature(latest) !== this.sent.get(instrument)) this.pending.set(instrument, latest);
      }
      this.flush(false);
    }

    /**
     * Sends what is pending as one message, unless the last went out under 100 ms ago or the
     * socket is congested; then it tries again later with whatever is latest by then.
     */
    private flush(answer: boolean): void {
      if (this.closed) return;
      if (answer && this.flushTimer) {
        // An update held back by the throttle goes out now, in the answer.
        clearTimeout(this.flushTimer);
        this.flushTimer = undefined;
      }
      if (this.flushTimer || (this.pending.size === 0 && !answer)) return;
      const congested = this.sink.congested();
      const wait = answer ? 0 : this.lastSent + MARKET_DATA_GAP_MS - monotonicMs();
      if (congested || wait > 0) {
        this.flushTimer = setTimeout(() => {
          this.flushTimer = undefined;
          this.flush(answer);
        }, congested ? MARKET_DATA_GAP_MS : wait).unref();
        return;
      }
      const quotes = [...this.pending.values()];
      this.pending.clear();
      for (const quote of quotes) this.sent.set(quote.instrument, signature(quote));
      this.lastSent = monotonicMs();
      this.sink.send({ type: 'marketData', quotes });
    }

    private streamPnl(enabled: unknown, interval: unknown): string {
      if (typeof enabled !== 'boolean') return this.refuse('streamPnl', `Invalid request: enabled: must be true or false, got ${show(enabled)}`);
      if (interval !== undefined && (typeof interval !== 'number' || !Number.isFinite(interval)))
        return this.refuse('streamPnl', `Invalid request: interval: must be a number of milliseconds, got ${show(interval)}`);
      if (this.pnlTimer) clearInterval(this.pnlTimer);
      this.pnlTimer = undefined;
      if (!enabled) return 'stopped';
      const every = Math.min(PNL_INTERVAL.max, Math.max(PNL_INTERVAL.min, Math.round((interval as number | undefined) ?? PNL_INTERVAL.default)));
      this.sendPnl();
      this.pnlTimer = setInterval(() => this.sendPnl(), every).unref();
      return `every ${every} ms`;
    }

    /** A congested socket misses this tick rather than queueing it: the next one is newer anyway. */
    private sendPnl(): void {
      if (this.closed || this.sink.congested()) return;
      try {
        this.sink.send({ ...pnlUpdate(engine) });
      } catch (error) {
        options.onInternalError('pnlUpdate', error);
      }
    }

    close(): void {
      if (this.closed) return;
      this.closed = true;
      if (this.flushTimer) clearTimeout(this.flushTimer);
      if (this.pnlTimer) clearInterval(this.pnlTimer);
      this.flushTimer = this.pnlTimer = undefined;
      this.instruments.clear();
      this.pending.clear();
      watched(this, false);
      open.delete(this);
    }
  }

  return {
    open(sink) {
      const connection = new Connection(sink);
      open.add(connection);
      return connection;
    },
    close() {
      for (const connection of [...open]) connection.close();
      watch.close();
      unwatch = undefined;
    },
  };
}
