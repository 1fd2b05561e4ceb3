/**
 * The ledger's own lookups (src/guard/ledger.ts), on a real SQLite file, at their boundaries: the
 * duplicate window's "last identical order sent after this time", the pace counts, the pruning of
 * old sends; and the guard (src/guard/guard.ts) reading them with its clock, so the duplicate and
 * pace rules are tested with the answer the ledger gives, not with one handed in.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddedBackendOn } from '../../src/backends/embedded.js';
import { guardBackend } from '../../src/guard/guard.js';
import { openLedger, type Ledger } from '../../src/guard/ledger.js';
import { buildRules, normalizeRule, type GuardRule } from '../../src/guard/rules.js';
import { GuardError } from '../../src/common/errors.js';
import { order, testEngine, type TestEngine } from '../helpers/engine.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function ledgerFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'trade-ledger-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'guard.db');
}

async function open(file = ledgerFile()): Promise<Ledger> {
  const ledger = await openLedger(file);
  cleanups.push(() => ledger.close());
  return ledger;
}

describe('lastSent: the duplicate lookup', () => {
  it('finds an identical send strictly after the time asked, the latest of them, and only that fingerprint', async () => {
    const ledger = await open();
    await ledger.recordSend('Sim101', 1_000, 'fp-a');
    await ledger.recordSend('Sim101', 4_000, 'fp-a');
    await ledger.recordSend('Sim101', 9_000, 'fp-b');
    expect(await ledger.lastSent('fp-a', 0)).toBe(4_000);
    expect(await ledger.lastSent('fp-a', 3_999)).toBe(4_000);
    // At the limit: a send at exactly the start of the window is outside it.
    expect(await ledger.lastSent('fp-a', 4_000)).toBeUndefined();
    expect(await ledger.lastSent('fp-b', 8_999)).toBe(9_000);
    expect(await ledger.lastSent('fp-c', 0)).toBeUndefined();
  });

  it('sees what another process recorded (another ledger on the same file)', async () => {
    const file = ledgerFile();
    const mine = await open(file);
    const theirs = await open(file);
    await theirs.recordSend('Sim101', 5_000, 'fp');
    expect(await mine.lastSent('fp', 4_999)).toBe(5_000);
  });
});

describe('paceCounts', () => {
  it('counts the account’s sends strictly inside each window ending now', async () => {
    const ledger = await open();
    for (const at of [1_000, 2_000, 2_000, 3_000]) await ledger.recordSend('Sim101', at, `fp-${at}`);
    await ledger.recordSend('Sim102', 3_000, 'other');
    // Windows of 1 s, 2 s, 2.001 s and 10 s ending at 4 s: after 3 s, 2 s, 1.999 s and -6 s.
    expect(await ledger.paceCounts('Sim101', [1_000, 2_000, 2_001, 10_000], 4_000)).toEqual([0, 1, 3, 4]);
    expect(await ledger.paceCounts('Sim103', [10_000], 4_000)).toEqual([0]);
  });
});

describe('pruning', () => {
  it('every 1,000th send removes the sends older than 8 days, and only those', async () => {
    const file = ledgerFile();
    const ledger = await open(file);
    const DAY = 86_400_000;
    const now = 30 * DAY;
    await ledger.recordSend('Sim101', now - 8 * DAY - 1, 'old');
    await ledger.recordSend('Sim101', now - 8 * DAY, 'kept');
    const reader = new Database(file, { readonly: true });
    cleanups.push(() => reader.close());
    const count = (fp: string) => (reader.prepare('SELECT count(*) AS n FROM sends WHERE fingerprint = ?').get(fp) as { n: number }).n;
    for (let i = 0; i < 997; i++) await ledger.recordSend('Sim101', now, 'new');
    expect([count('old'), count('kept'), count('new')]).toEqual([1, 1, 997]);
    await ledger.recordSend('Sim101', now, 'new');
    expect([count('old'), count('kept'), count('new')]).toEqual([0, 1, 998]);
  });
});

describe('the guard on the ledger, with its clock', () => {
  const START = Date.parse('2026-11-24T15:00:00Z'); // a Tuesday, the market open

  function guarded(t: TestEngine, texts: Partial<Record<GuardRule, string>>, clock: { ms: number }, file: string) {
    const rules = buildRules(
      Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, normalizeRule(k as GuardRule, v!)])),
      Object.fromEntries(Object.keys(texts).map((k) => [k, 'profile default'])),
    );
    return guardBackend(embeddedBackendOn(t.engine), { rules, ledgerFile: file, profile: 'default', source: 'cli', clock: () => new Date(clock.ms) });
  }

  function engine(): TestEngine {
    const t = testEngine('2026-11-24T15:00:00Z');
    cleanups.push(() => t.cleanup());
    t.engine.setPrice('ES 09-25', 4500);
    return t;
  }

  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => {
        expect(error).toBeInstanceOf(GuardError);
        const { body, message } = error as GuardError;
        return { rule: body.rule, value: body.value, message };
      },
    );

  it('duplicate-window 10s: an identical order 9.999 s later is refused, one 10 s later is sent', async () => {
    const t = engine();
    const file = join(t.file, '..', 'guard.db');
    const clock = { ms: START };
    const backend = guarded(t, { 'duplicate-window': '10s' }, clock, file);
    await backend.call('PlaceOrder', order());
    clock.ms = START + 4_000;
    expect(await refusal(backend.call('PlaceOrder', order()))).toEqual({
      rule: 'duplicate-window',
      value: 4_000,
      message: 'refused by guard duplicate-window: an identical order was sent 4s ago, within 10s (profile default); nothing was sent',
    });
    clock.ms = START + 9_999;
    expect(await refusal(backend.call('PlaceOrder', order()))).toMatchObject({ rule: 'duplicate-window', value: 9_999 });
    // Another order (one more contract) is not a duplicate.
    await backend.call('PlaceOrder', order({ quantity: 2 }));
    clock.ms = START + 10_000;
    await backend.call('PlaceOrder', order());
    expect(t.engine.listOrders().map((o) => o.quantity)).toEqual([1, 2, 1]);
    expect((await (await open(file)).lines({ outcomes: ['refused'] })).map((l) => l.rule)).toEqual(['duplicate-window', 'duplicate-window']);
  });

  it('duplicate-window: what another guard on the same ledger file sent (another process) is found there', async () => {
    const t = engine();
    const file = join(t.file, '..', 'guard.db');
    const clock = { ms: START };
    const first = guarded(t, { 'duplicate-window': '2m' }, clock, file);
    const second = guarded(t, { 'duplicate-window': '2m' }, clock, file);
    await first.call('PlaceOrder', order());
    clock.ms = START + 119_999;
    expect((await refusal(second.call('PlaceOrder', order())))?.rule).toBe('duplicate-window');
    clock.ms = START + 120_000;
    await second.call('PlaceOrder', order());
    expect(t.engine.listOrders()).toHaveLength(2);
  });

  it('max-orders 2/10s: the third order inside 10 s is refused, the one at 10 s after the first is sent', async () => {
    const t = engine();
    const file = join(t.file, '..', 'guard.db');
    const clock = { ms: START };
    const backend = guarded(t, { 'max-orders': '2/10s' }, clock, file);
    await backend.call('PlaceOrder', order());
    clock.ms = START + 5_000;
    await backend.call('PlaceOrder', order({ action: 'SELL' }));
    clock.ms = START + 9_999;
    expect(await refusal(backend.call('PlaceOrder', order({ quantity: 3 })))).toEqual({
      rule: 'max-orders',
      value: 3,
      message: 'refused by guard max-orders: this would be order 3 of Sim101 within 10s, above 2/10s (profile default); nothing was sent',
    });
    clock.ms = START + 10_000;
    await backend.call('PlaceOrder', order({ quantity: 3 }));
    expect(t.engine.listOrders().map((o) => o.quantity)).toEqual([1, 1, 3]);
  });
});
