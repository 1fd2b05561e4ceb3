/**
 * The request log of `trade serve` (issue 22): the last N requests, whatever their transport, in a
 * ring that never grows past N. An entry keeps the request's body as it came (a reference, no
 * copy: the normal path stays cheap) when it is small; a larger one is kept as a note of its size,
 * so a flood of large bodies holds N small entries, not N bodies. The token is scrubbed when the
 * log is read, from every field.
 */

export interface LogEntry {
  /** ms since the epoch, when the request arrived. */
  time: number;
  transport: 'http' | 'ws';
  /** The operation's name of the table, or the route (`GET /_sandbox/log`), or a WebSocket action. */
  operation: string;
  account?: string;
  body?: unknown;
  /** The HTTP status (or the status the HTTP route would answer, for an RPC); 0: no answer (dropped). */
  status: number;
  /** The name of the rule that fired, if one did. */
  rule?: string;
  ms: number;
}

export const DEFAULT_LOG_SIZE = 10_000;
/** A body is kept whole up to this many characters (strings, keys and about 8 for each other value). */
export const MAX_LOGGED_BODY = 2048;

/** Is the value larger than `limit` characters? Walks at most that much of it. */
function largerThan(value: unknown, limit: number): boolean {
  let size = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') size += item.length + 2;
    else if (item !== null && typeof item === 'object') {
      for (const [key, inner] of Object.entries(item)) {
        size += key.length + 4;
        stack.push(inner);
        if (size > limit) return true;
      }
      size += 2;
    } else size += 8;
    if (size > limit) return true;
  }
  return false;
}

export interface RequestLog {
  readonly size: number;
  add(entry: LogEntry): void;
  /** Oldest first. */
  entries(): LogEntry[];
  /** Every request since start (or the last clear), also those the ring has let go. */
  total(): number;
  clear(): void;
}

export function createRequestLog(size: number = DEFAULT_LOG_SIZE): RequestLog {
  const ring: Array<LogEntry | undefined> = new Array(size);
  let next = 0;
  let count = 0;
  return {
    size,
    add(entry) {
      ring[next] =
        entry.body !== undefined && largerThan(entry.body, MAX_LOGGED_BODY)
          ? { ...entry, body: `[a body of more than ${MAX_LOGGED_BODY} characters, not kept]` }
          : entry;
      next = (next + 1) % size;
      count++;
    },
    entries() {
      if (count < size) return ring.slice(0, count) as LogEntry[];
      return [...ring.slice(next), ...ring.slice(0, next)] as LogEntry[];
    },
    total: () => count,
    clear() {
      ring.fill(undefined);
      next = 0;
      count = 0;
    },
  };
}

/** Counts per operation, most first. */
export function countsOf(entries: readonly LogEntry[]): Record<string, number> {
  const counts = new Map<string, number>();
  for (const e of entries) counts.set(e.operation, (counts.get(e.operation) ?? 0) + 1);
  return Object.fromEntries([...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])));
}

/** A whole number from 1 to 1,000,000, for --log-size. */
export function parseLogSize(text: string): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!Number.isSafeInteger(value) || value < 1 || value > 1_000_000) return NaN;
  return value;
}
