/**
 * A remote backend that keeps the execution history (history.ts) as it goes: every execution a
 * GetExecutions or GetExecution answer carries is recorded once by its id, with the stretch of
 * time a whole GetExecutions list covers. It sends nothing of its own: the service's reply to an
 * order carries no fill, so the fills of the orders sent are recorded when a read sees them
 * (`trade report`'s own, `trade executions`, `trade watch executions` through a session). A
 * history that cannot be written never fails the command: the person is warned, and the answer
 * is the service's as it came.
 */
import type { Backend, CallResult } from '../backends/types.js';
import type { ArgsOf, OperationName } from '../service/operations.js';
import type { History } from './history.js';

/** The service's longest lookback (§3.19). */
export const MAX_LOOKBACK_S = 900;

export interface RecorderOptions {
  service: string;
  /** Opens the history on first use. */
  history(): History;
  /** Epoch ms now (the engine's clock in tests). */
  clock(): number;
  warn(message: string): void;
}

const cursorOf = (body: unknown): string | undefined => {
  const cursor = (body as { nextCursor?: unknown } | null)?.nextCursor;
  return typeof cursor === 'string' && cursor !== '' ? cursor : undefined;
};

export function recordingBackend(inner: Backend, options: RecorderOptions): Backend {
  let history: History | undefined;
  let broken = false;
  /** A paged list's first request, by the cursor of its next page: when the last page comes, the whole list covers this. */
  const chains = new Map<string, { account: string; from: number; to: number }>();

  function write(work: (h: History) => void): void {
    if (broken) return;
    try {
      work((history ??= options.history()));
    } catch (error) {
      broken = true;
      options.warn(`the execution history was not updated: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  function observe(name: OperationName, args: Record<string, unknown>, result: CallResult, sentAt: number): void {
    const account = typeof args.account === 'string' ? args.account : undefined;
    if (name === 'GetExecution') write((h) => h.record(options.service, [result.value], sentAt, account));
    if (name !== 'GetExecutions' || account === undefined) return;
    const executions = (result.value as { executions?: unknown[] }).executions ?? [];
    const lookback = typeof args.lookbackTime === 'number' ? args.lookbackTime : 320;
    const started = typeof args.cursor === 'string' ? chains.get(args.cursor) : { account, from: sentAt - lookback * 1000, to: sentAt };
    if (typeof args.cursor === 'string') chains.delete(args.cursor);
    const next = cursorOf(result.body);
    if (started && next !== undefined) chains.set(next, started);
    write((h) => {
      h.record(options.service, executions, sentAt, account);
      if (started && next === undefined) h.cover(options.service, started.account, started.from, started.to);
    });
  }

  const own = {
    async call<K extends OperationName>(name: K, args: ArgsOf<K>): Promise<CallResult<K>> {
      const sentAt = options.clock();
      const result = await inner.call(name, args);
      if (name === 'GetExecutions' || name === 'GetExecution') observe(name, args as unknown as Record<string, unknown>, result as CallResult, sentAt);
      return result;
    },
    async close() {
      try {
        await inner.close();
      } finally {
        history?.close();
      }
    },
  };
  // What a backend offers beyond the interface (a WebSocket's streams) is the inner backend's own.
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(own, key)) return own[key as keyof typeof own];
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
