/**
 * A client-side token bucket (service-reference.md §7.2): requests wait for a token instead of
 * spending the service's budget and getting 429s. The service allows 3 requests/s with bursts
 * of 20, one budget per user for HTTP and WebSocket together.
 */

export const SERVICE_RATE = 3;
export const SERVICE_BURST = 20;
/** The least a request waits after a 429 before it is sent again. */
export const MIN_RETRY_MS = 350;

export interface Pacer {
  /** Resolves when a request may be sent (at once while the bucket holds tokens). */
  take(): Promise<void>;
  /** The service said 429: its bucket is empty, whatever ours thought; refill from nothing. */
  drain(): void;
  /** Milliseconds until the bucket holds a token again. */
  waitMs(): number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** `perSecond` tokens a second, at most `burst` saved up; `perSecond` 0 never waits. */
export function createPacer(perSecond: number, burst = SERVICE_BURST, now: () => number = Date.now): Pacer {
  let tokens = burst;
  let last = now();
  const refill = () => {
    const time = now();
    tokens = Math.min(burst, tokens + (Math.max(0, time - last) * perSecond) / 1000);
    last = time;
  };
  const waitMs = () => {
    if (perSecond === 0) return 0;
    refill();
    return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) * 1000) / perSecond);
  };
  return {
    async take() {
      if (perSecond === 0) return;
      // Waiters that wake together check again: one of them takes the token, the others sleep on.
      for (let wait = waitMs(); wait > 0; wait = waitMs()) await sleep(wait);
      tokens -= 1;
    },
    drain() {
      refill();
      tokens = Math.min(tokens, 0);
    },
    waitMs,
  };
}
