// 6. The guard's cost per order on embedded, every rule on: the same market orders placed through
//    the embedded backend bare and through the guard, interleaved in blocks; medians per order.
//    With max-position on, every order that may add to a position takes its account's lock (issue
//    31): its cost alone, taken and let go uncontended, is measured beside.
import { join } from 'node:path';
import { median, tempDir } from './util.js';

const RULES = {
  'max-order-qty': '100',
  'max-position': '100000',
  instruments: 'ES,NQ',
  accounts: 'Sim*',
  window: 'Sun-Sat 00:00-24:00 UTC',
  'max-orders': '100000/s,1000000/day',
  'daily-loss': '100000000',
  'duplicate-window': '10ms',
  'confirm-live': 'on',
};

export async function benchGuard({ orders = 2000, block = 100 } = {}) {
  const { createEmbeddedBackend, guardBackend, buildRules, normalizeRule, parseOrder, ledgerPath, openLedger } = await import('../dist/lib.js');
  const { dir, cleanup } = tempDir();
  // Two stores: one connection writing each, as one trade process would (a second writer on the
  // same file would drop the other's cached sums at every commit).
  const file = join(dir, 'guarded', 'trade.db');
  const bare = createEmbeddedBackend({ file: join(dir, 'bare', 'trade.db') });
  const rules = buildRules(Object.fromEntries(Object.entries(RULES).map(([rule, text]) => [rule, normalizeRule(rule, text)])));
  const guarded = guardBackend(createEmbeddedBackend({ file }), { rules, ledgerFile: ledgerPath(file), profile: 'bench', source: 'bench' });
  // BUY q then SELL q (which reduces): q runs 1..50, so no order repeats within the duplicate window.
  const order = (i) =>
    parseOrder({ account: 'Sim101', instrument: 'ES 09-25', action: i % 2 ? 'SELL' : 'BUY', quantity: 1 + (Math.floor(i / 2) % 50), orderType: 'MARKET', timeInForce: 'DAY' });
  const times = { bare: [], guarded: [] };
  try {
    for (const backend of [bare, guarded]) for (let i = 0; i < 20; i++) await backend.call('PlaceOrder', order(i)); // warm up
    for (let done = 0; done < orders; done += block) {
      for (const [name, backend] of [['bare', bare], ['guarded', guarded]]) {
        for (let i = done; i < done + block; i++) {
          const start = process.hrtime.bigint();
          await backend.call('PlaceOrder', order(i));
          times[name].push(Number(process.hrtime.bigint() - start) / 1e6);
        }
      }
    }
    const bareMs = median(times.bare);
    const guardedMs = median(times.guarded);
    const ledger = await openLedger(join(dir, 'lock', 'guard.db'));
    const lockTimes = [];
    try {
      for (let i = 0; i < orders; i++) {
        const start = process.hrtime.bigint();
        (await ledger.lockAccount('Sim101', 0)).release();
        lockTimes.push(Number(process.hrtime.bigint() - start) / 1e3);
      }
    } finally {
      await ledger.close();
    }
    return {
      accountLockMedianUs: +median(lockTimes).toFixed(1),
      bareMedianMs: +bareMs.toFixed(3),
      guardedMedianMs: +guardedMs.toFixed(3),
      addedMs: +(guardedMs - bareMs).toFixed(3),
      orders,
      rules: RULES,
      note: 'every rule on; the guard reads the position, working orders and account from the engine and writes the ledger twice per order',
    };
  } finally {
    await bare.close();
    await guarded.close();
    cleanup();
  }
}
