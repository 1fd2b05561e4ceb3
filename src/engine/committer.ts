/**
 * Group commit for the paths that have several operations at once (`trade serve` over HTTP and
 * WebSocket, `trade batch` on the embedded engine): operations submitted in the same turn of the
 * event loop are run together in one transaction (Engine.group: a savepoint each), and each
 * promise settles only after that transaction has committed. The group closes when the queue is
 * empty, or at MAX_OPS operations or BUDGET_MS of work, so a lone operation waits one turn of the
 * event loop and no more, and a flood is cut into transactions that leave room for other work.
 */
import type { Engine } from './types.js';

/** The most operations one transaction holds. */
export const MAX_OPS = 256;
/** The most time one group's operations run before it commits (the rest go into the next). */
export const BUDGET_MS = 4;

export interface Committer {
  /**
   * Runs `operation` (engine calls) in the next group; settles after the commit that holds it.
   * One whose `abandoned()` is true when its group runs (its client has gone) is not run: it
   * rejects with AbandonedError.
   */
  submit<R>(operation: () => R, abandoned?: () => boolean): Promise<R>;
  /**
   * Runs an operation in order with those submitted before it: one that may move money in the next
   * group (as `submit`); a read at once when nothing waits, else behind what waits, so that it
   * sees it and nothing submitted after it. A read run at once takes no write lock.
   */
  inOrder<R>(operation: () => R, movesMoney: boolean, abandoned?: () => boolean): Promise<R>;
}

/** An operation not run because its client had gone before its group ran. */
export class AbandonedError extends Error {
  constructor() {
    super('the client went away before the operation ran; nothing was done');
  }
}

interface Pending {
  run: () => unknown;
  abandoned?: () => boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export function createCommitter(engine: Engine, bounds: { maxOps?: number; budgetMs?: number } = {}): Committer {
  const maxOps = bounds.maxOps ?? MAX_OPS;
  const budgetMs = bounds.budgetMs ?? BUDGET_MS;
  const queue: Pending[] = [];
  let scheduled = false;

  const schedule = () => {
    if (scheduled) return;
    scheduled = true;
    setImmediate(flush);
  };

  function flush(): void {
    scheduled = false;
    // Work for clients that have gone is dropped before anything is done for them.
    for (let i = queue.length - 1; i >= 0; i--) {
      if (queue[i]!.abandoned?.()) queue.splice(i, 1)[0]!.reject(new AbandonedError());
    }
    if (queue.length === 0) return;
    const batch = queue.slice(0, maxOps);
    let settled;
    try {
      settled = engine.group(
        batch.map((p) => p.run),
        budgetMs,
      );
    } catch (error) {
      // The whole group was rolled back (a full disk, a failed commit, a lock not had): none of
      // them happened, so each is run again on its own and gets the outcome it would have had
      // alone — the orders that fit are placed, the one that does not is refused.
      queue.splice(0, batch.length);
      if (batch.length === 1) batch[0]!.reject(error);
      else for (const p of batch) alone(p);
      return next();
    }
    queue.splice(0, settled.length);
    settled.forEach((result, i) => (result.ok ? batch[i]!.resolve(result.value) : batch[i]!.reject(result.error)));
    next();
  }

  function alone(p: Pending): void {
    try {
      const [result] = engine.group([p.run]);
      if (result!.ok) p.resolve(result!.value);
      else p.reject(result!.error);
    } catch (error) {
      p.reject(error);
    }
  }

  function next(): void {
    if (queue.length > 0) schedule();
  }

  return {
    submit<R>(operation: () => R, abandoned?: () => boolean): Promise<R> {
      return new Promise<R>((resolve, reject) => {
        queue.push({ run: operation, abandoned, resolve: resolve as (value: unknown) => void, reject });
        schedule();
      });
    },
    inOrder<R>(operation: () => R, movesMoney: boolean, abandoned?: () => boolean): Promise<R> {
      if (movesMoney || queue.length > 0) return this.submit(operation, abandoned);
      try {
        return Promise.resolve(operation());
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };
}
