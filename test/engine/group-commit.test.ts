/**
 * Group commit (issue 16): operations that arrive together share one transaction, each in its
 * own savepoint; a rejected one leaves its neighbours placed and itself absent; nothing is told
 * before the commit; a failed commit tells every one of them it failed.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AbandonedError, createCommitter } from '../../src/engine/committer.js';
import { createEngine, createEngineOnDb } from '../../src/engine/engine.js';
import { openStore } from '../../src/engine/store.js';
import { RejectedError } from '../../src/common/errors.js';
import { parseOrder } from '../../src/service/order.js';
import { testEngine, type TestEngine } from '../helpers/engine.js';

let t: TestEngine;
beforeEach(() => {
  t = testEngine();
  t.engine.setPrice('ES 09-25', 5000);
});
afterEach(() => t.cleanup());

const market = (quantity: number, account = 'Sim101') =>
  parseOrder({ account, instrument: 'ES 09-25', action: 'BUY', quantity, orderType: 'MARKET', timeInForce: 'DAY' });

describe('Engine.group', () => {
  it('runs each operation in its own savepoint: a rejected one is absent, its neighbours placed', () => {
    const settled = t.engine.group([
      () => t.engine.placeOrder(market(1)),
      () => t.engine.placeOrder(market(2, 'Nobody')),
      // Writes (a demo price, a fill) and then fails: all of it rolled back, alone.
      () => {
        t.engine.placeOrder(market(5));
        throw new Error('failed after writing');
      },
      () => t.engine.placeOrder(market(3)),
    ]);
    expect(settled.map((s) => s.ok)).toEqual([true, false, false, true]);
    expect((settled[1] as { error: unknown }).error).toBeInstanceOf(RejectedError);
    expect(t.engine.listOrders().map((o) => o.quantity)).toEqual([1, 3]);
    expect(t.engine.getPosition('Sim101', 'ES 09-25')).toMatchObject({ quantity: 4, avgPrice: 5000 });
    expect(t.engine.listFills().map((f) => f.quantity)).toEqual([1, 3]);
  });

  it('fails as one when the store rolls the whole transaction back (a full disk): no neighbour is reported placed', () => {
    const db = openStore(t.file);
    const engine = createEngineOnDb(db, t.file);
    try {
      db.pragma(`max_page_count = ${(db.pragma('page_count', { simple: true }) as number) + 1}`);
      const before = t.snapshot();
      const big = Array.from({ length: 300 }, () => () => engine.placeOrder(market(1)));
      expect(() => engine.group(big)).toThrow(/disk is full/);
      expect(t.snapshot()).toEqual(before);
    } finally {
      db.close();
    }
  });

  it('stops at its time budget with at least one run; the rest are left to the caller', () => {
    const runs = Array.from({ length: 5 }, (_, i) => () => {
      const until = performance.now() + 3;
      while (performance.now() < until);
      return t.engine.placeOrder(market(i + 1)).orderId;
    });
    const settled = t.engine.group(runs, 0);
    expect(settled).toHaveLength(1);
    expect(t.engine.listOrders()).toHaveLength(1);
  });

  it('keeps the write cache right across a rolled-back savepoint and another connection\'s commit', () => {
    t.engine.group([
      () => {
        t.engine.setPrice('ES 09-25', 5100);
        throw new Error('undone');
      },
    ]);
    // The price set was rolled back: a market order fills at 5000, not 5100.
    expect(t.engine.placeOrder(market(1)).order.avgFillPrice).toBe(5000);
    // Another connection (a second engine on the store, as another process) moves the price and
    // the position: this engine's next order sees both.
    const other = createEngine(t.file);
    try {
      other.setPrice('ES 09-25', 5200);
      other.placeOrder(market(3));
    } finally {
      other.close();
    }
    expect(t.engine.placeOrder(market(1)).order.avgFillPrice).toBe(5200);
    expect(t.engine.getPosition('Sim101', 'ES 09-25')).toMatchObject({ quantity: 5, avgPrice: (5000 + 3 * 5200 + 5200) / 5 });
  });
});

describe('the committer', () => {
  it('groups the operations submitted in one turn into one transaction and settles each after the commit', async () => {
    // No time budget here: the grouping, not this machine's speed, is under test.
    const committer = createCommitter(t.engine, { budgetMs: Infinity });
    const groups: number[] = [];
    const group = t.engine.group.bind(t.engine);
    t.engine.group = ((runs: ReadonlyArray<() => unknown>, budget?: number) => {
      groups.push(runs.length);
      return group(runs, budget);
    }) as typeof t.engine.group;
    const told: string[] = [];
    const submitted = Array.from({ length: 20 }, (_, i) =>
      committer.submit(() => t.engine.placeOrder(market(1, i === 7 ? 'Nobody' : 'Sim101'))).then(
        (outcome) => told.push(`placed ${outcome.orderId}`),
        (error: Error) => told.push(`refused ${error.message}`),
      ),
    );
    // Nothing is told in the turn the orders were submitted: they have not been committed yet.
    expect(told).toEqual([]);
    await Promise.all(submitted);
    expect(groups).toEqual([20]);
    expect(told.filter((line) => line.startsWith('placed'))).toHaveLength(19);
    expect(told).toContain('refused Account Nobody not found');
    expect(t.engine.listOrders()).toHaveLength(19);
  });

  it('tells every operation of a group that its commit failed, and none of them happened', async () => {
    const committer = createCommitter(t.engine);
    t.engine.group = (() => {
      throw new Error('disk I/O error at COMMIT');
    }) as typeof t.engine.group;
    const results = await Promise.allSettled([committer.submit(() => 1), committer.submit(() => 2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
  });

  it('does not run an operation whose client has gone by the time its group runs', async () => {
    const committer = createCommitter(t.engine);
    let gone = false;
    const kept = committer.submit(() => t.engine.placeOrder(market(1)).orderId);
    const dropped = committer.submit(() => t.engine.placeOrder(market(2)).orderId, () => gone);
    gone = true;
    await expect(kept).resolves.toMatch(/^[0-9a-f]{32}$/);
    await expect(dropped).rejects.toBeInstanceOf(AbandonedError);
    expect(t.engine.listOrders().map((o) => o.quantity)).toEqual([1]);
  });

  it('cuts a flood into groups of at most its bound, in order', async () => {
    const committer = createCommitter(t.engine, { maxOps: 8 });
    const order: number[] = [];
    await Promise.all(Array.from({ length: 20 }, (_, i) => committer.submit(() => order.push(i))));
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });
});
