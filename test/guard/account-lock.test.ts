/**
 * The ledger's per-account lock (src/guard/ledger.ts) and the guard around it (src/guard/guard.ts):
 * two ledgers exclude each other, one ledger's calls share a hold, the wait is bounded, a process
 * killed while holding lets go of it; an order that may add to a position waits for it and is
 * refused (journaled) when the wait is over, while an exit and a reducing order go on at once.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddedBackendOn } from '../../src/backends/embedded.js';
import { guardBackend } from '../../src/guard/guard.js';
import { openLedger, type Ledger } from '../../src/guard/ledger.js';
import { buildRules } from '../../src/guard/rules.js';
import { GuardError } from '../../src/common/errors.js';
import { order, testEngine, type TestEngine } from '../helpers/engine.js';
import { holderProcess } from '../helpers/ledger-hold.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function ledgerOf(t: TestEngine): Promise<Ledger> {
  const ledger = await openLedger(join(t.file, '..', 'guard.db'));
  cleanups.push(() => ledger.close());
  return ledger;
}

function engineWithPrice(): TestEngine {
  const t = testEngine();
  cleanups.push(() => t.cleanup());
  t.engine.setPrice('ES 09-25', 4500);
  return t;
}

describe('the ledger account lock', () => {
  it('excludes another ledger, is shared within one, and is let go by the last release', async () => {
    const t = engineWithPrice();
    const a = await ledgerOf(t);
    const b = await ledgerOf(t);
    const first = await a.lockAccount('Sim101', 0);
    const second = await a.lockAccount('SIM101', 0);
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(await b.lockAccount('Sim101', 0)).toBeUndefined();
    // Another account is another lock.
    const other = await b.lockAccount('Sim102', 0);
    expect(other).toBeDefined();
    other!.release();
    first!.release();
    first!.release(); // a second release of the same hold changes nothing
    expect(await b.lockAccount('Sim101', 0)).toBeUndefined();
    second!.release();
    const taken = await b.lockAccount('Sim101', 0);
    expect(taken).toBeDefined();
    taken!.release();
  });

  it('waits while another holds it, and gets it when it is let go', async () => {
    const t = engineWithPrice();
    const a = await ledgerOf(t);
    const b = await ledgerOf(t);
    const hold = (await a.lockAccount('Sim101', 0))!;
    const waiting = b.lockAccount('Sim101', 10_000);
    setTimeout(() => hold.release(), 50);
    const got = await waiting;
    expect(got).toBeDefined();
    got!.release();
  });

  it('gives up after the wait, and withAccountLock says so with a GuardError', async () => {
    const t = engineWithPrice();
    const a = await ledgerOf(t);
    const b = await ledgerOf(t);
    const hold = (await a.lockAccount('Sim101', 0))!;
    expect(await b.lockAccount('Sim101', 100)).toBeUndefined();
    let ran = false;
    const error = await b
      .withAccountLock('Sim101', async () => {
        ran = true;
      }, 100)
      .catch((e: unknown) => e);
    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(GuardError);
    expect((error as GuardError).code).toBe('guard_account_lock');
    expect((error as GuardError).message).toBe(
      'refused by guard account-lock: another trade process held the lock of account Sim101 for 0.1 s (it is sending an order that may add to a position); nothing was sent',
    );
    hold.release();
    expect(await b.withAccountLock('Sim101', async () => 'ran', 100)).toBe('ran');
  });

  it('is let go when the process holding it is killed', async () => {
    const t = engineWithPrice();
    const file = join(t.file, '..', 'guard.db');
    const child = await holderProcess(file, 'Sim101', cleanups);
    const ledger = await ledgerOf(t);
    expect(await ledger.lockAccount('Sim101', 0)).toBeUndefined();
    const closed = new Promise((resolve) => child.once('close', resolve));
    child.kill('SIGKILL');
    await closed;
    const hold = await ledger.lockAccount('Sim101', 0);
    expect(hold).toBeDefined();
    hold!.release();
  });
});

describe('the guard under the account lock', () => {
  function guarded(t: TestEngine, text: Record<string, string>, lockWaitMs = 150) {
    const backend = guardBackend(embeddedBackendOn(t.engine), {
      rules: buildRules(text, Object.fromEntries(Object.keys(text).map((k) => [k, 'test']))),
      ledgerFile: join(t.file, '..', 'guard.db'),
      profile: 'default',
      source: 'cli',
      lockWaitMs,
    });
    return backend;
  }

  it('eight orders of one process at once never pass max-position together', async () => {
    const t = engineWithPrice();
    const backend = guarded(t, { 'max-position': '2' });
    const results = await Promise.allSettled(Array.from({ length: 8 }, () => backend.call('PlaceOrder', order())));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const r of results.filter((r) => r.status === 'rejected')) expect(((r as PromiseRejectedResult).reason as GuardError).code).toBe('guard_max_position');
    expect(t.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(2);
  });

  it('an adding order waits for another process, is refused when the wait is over, and is journaled; exits and reducing orders never wait', async () => {
    const t = engineWithPrice();
    t.engine.placeOrder(order({ quantity: 2 }));
    const working = t.engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' }));
    const other = await ledgerOf(t);
    const hold = (await other.lockAccount('Sim101', 0))!;
    const backend = guarded(t, { 'max-position': '5' }, 150);
    const started = performance.now();
    const error = await backend.call('PlaceOrder', order()).catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect((error as GuardError).code).toBe('guard_account_lock');
    expect(t.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(2);
    // The lock is still held by the other ledger: these go through on their own read.
    await backend.call('Change', { account: 'Sim101', orderId: working.orderId, limitPrice: 4001 });
    await backend.call('PlaceOrder', order({ action: 'SELL', quantity: 1 }));
    await backend.call('ClosePosition', { account: 'Sim101', instrument: 'ES 09-25' });
    expect(t.engine.getPosition('Sim101', 'ES 09-25')?.quantity ?? 0).toBe(0);
    hold.release();
    await backend.call('PlaceOrder', order());
    await backend.close();
    const lines = (await other.lines({})).map((l) => [l.operation, l.outcome, l.rule]);
    expect(lines).toEqual([
      ['PlaceOrder', 'refused', 'account-lock'],
      ['Change', 'accepted', null],
      ['PlaceOrder', 'accepted', null],
      ['ClosePosition', 'accepted', null],
      ['PlaceOrder', 'accepted', null],
    ]);
  });

  it('an order waiting for the lock reads the position again once it has it', async () => {
    const t = engineWithPrice();
    const other = await ledgerOf(t);
    const hold = (await other.lockAccount('Sim101', 0))!;
    const backend = guarded(t, { 'max-position': '2' }, 10_000);
    const waiting = backend.call('PlaceOrder', order({ quantity: 2 })).catch((e: unknown) => e);
    // What the other process sends while it holds the lock: in the position before the lock is let go.
    await new Promise((resolve) => setTimeout(resolve, 30));
    t.engine.placeOrder(order({ quantity: 1 }));
    hold.release();
    const error = await waiting;
    expect((error as GuardError).code).toBe('guard_max_position');
    expect(t.engine.getPosition('Sim101', 'ES 09-25')?.quantity).toBe(1);
    await backend.close();
  });
});
