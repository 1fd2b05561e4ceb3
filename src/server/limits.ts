/**
 * The server's limits. The size limit is the same for an HTTP body and a WebSocket message. The
 * rate limit is a token bucket like the real service's: `burst` requests at once, refilled at
 * `count` per `period`; one bucket per server, because every client holds the same token and so
 * is the same caller.
 */
import { UsageError } from '../common/errors.js';

export const BODY_LIMIT = 64 * 1024;

/**
 * The bounds of the HTTP side (docs/reliability.md "Limits"). Node checks the two timeouts every
 * `checkIntervalMs`, so a timed-out request is refused up to that much later.
 */
export interface HttpLimits {
  /** A request's headers must have arrived this long after its connection opened or its previous request ended. */
  headersTimeoutMs: number;
  /** A whole request, body included, must have arrived this long after it began. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long. */
  keepAliveTimeoutMs: number;
  checkIntervalMs: number;
  /** Connections (HTTP and WebSocket) open at once; the next ones are closed as they arrive. */
  maxConnections: number;
  /** Pipelined requests of one connection being answered at once; those beyond get a 503 and nothing is done. */
  maxInFlightPerConnection: number;
}

export const HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  checkIntervalMs: 1_000,
  maxConnections: 2_048,
  maxInFlightPerConnection: 16,
};

/** A whole number from 1, for --max-connections. */
export function parseMaxConnections(text: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(value) || value < 1) throw new UsageError(`--max-connections must be a whole number from 1, got '${text}'`);
  return value;
}
export const RATE_LIMITED = 'Rate limit exceeded';

export interface RateLimitOptions {
  /** Requests allowed per period, once the burst is spent. */
  count: number;
  periodMs: number;
  /** Requests allowed back to back from a full bucket. */
  burst: number;
}

export type TakeResult = { ok: true } | { ok: false; retryAfterSeconds: number };

export interface TokenBucket {
  take(): TakeResult;
}

const PERIODS: Record<string, number> = {
  s: 1_000,
  sec: 1_000,
  second: 1_000,
  m: 60_000,
  min: 60_000,
  minute: 60_000,
  h: 3_600_000,
  hour: 3_600_000,
};

export const DEFAULT_BURST = 20;

/** `180/min` → { count: 180, periodMs: 60000 }. Throws a UsageError naming the flag. */
export function parseRate(text: string): { count: number; periodMs: number } {
  const match = /^\s*(\d+)\s*\/\s*([a-z]+)\s*$/i.exec(text);
  const periodMs = match ? PERIODS[match[2]!.toLowerCase()] : undefined;
  const count = match ? Number(match[1]) : 0;
  if (!match || periodMs === undefined || !Number.isSafeInteger(count) || count < 1) {
    throw new UsageError(`--rate-limit must look like 180/min (a whole number from 1, per s, min or h), got '${text}'`);
  }
  return { count, periodMs };
}

export function parseBurst(text: string): number {
  const burst = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(burst) || burst < 1) throw new UsageError(`--burst must be a whole number from 1, got '${text}'`);
  return burst;
}

export function describeRateLimit(limit: RateLimitOptions): string {
  const unit = { 1_000: 's', 60_000: 'min', 3_600_000: 'h' }[limit.periodMs] ?? `${limit.periodMs}ms`;
  return `${limit.count}/${unit}, burst ${limit.burst}`;
}

export function createTokenBucket(limit: RateLimitOptions, now: () => number = Date.now): TokenBucket {
  const perMs = limit.count / limit.periodMs;
  let tokens = limit.burst;
  let last = now();
  return {
    take() {
      const time = now();
      // Refill lazily on each request; a clock that steps back refills nothing.
      tokens = Math.min(limit.burst, tokens + Math.max(0, time - last) * perMs);
      last = time;
      if (tokens >= 1) {
        tokens -= 1;
        return { ok: true };
      }
      // Whole seconds until one token is back, never 0 so a client always waits a little.
      // (Multiplied rather than divided by the rate, so 1/hour waits 3600 s, not 3601 by rounding.)
      const waitMs = ((1 - tokens) * limit.periodMs) / limit.count;
      return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    },
  };
}
