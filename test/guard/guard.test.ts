/**
 * The guard (src/guard/guard.ts) in this process, over the embedded engine and a real SQLite ledger:
 * what it reads before judging (the position only when a rule needs it), orders that only reduce a
 * position passing every size rule at the position's size and not one contract past it, on either
 * side, and orders of this process still in flight using up what another may reduce. The CLI's
 * view of the same rules is test/guard/guard-cli.test.ts; the rules on plain data rules.test.ts.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { embeddedBackendOn } from '../../src/backends/embedded.js';
import { GuardError } from '../../src/common/errors.js';
import { guardBackend, type GuardedBackend } from '../../src/guard/guard.js';
import { openLedger } from '../../src/guard/ledger.js';
import { buildRules, type GuardRule, normalizeRule } from '../../src/guard/rules.js';
import { order, testEngine, type TestEngine } from '../helpers/engine.js';

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Setup {
  t: TestEngine;
  guard: GuardedBackend;
  ledgerFile: string;
}

/** An engine with ES at 4500, a position of `position` contracts in Sim101 (long > 0), and a guard with these rules. */
async function setup(texts: Partial<Record<GuardRule, string>>, position = 0): Promise<Setup> {
  const t = testEngine('2026-11-24T15:00:00Z');
  t.engine.setPrice('ES 09-25', 4500);
  const inner = embeddedBackendOn(t.engine);
  if (position !== 0) await inner.call('PlaceOrder', order({ action: position > 0 ? 'BUY' : 'SELL', quantity: Math.abs(position) }));
  const rules = buildRules(
    Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, normalizeRule(k as GuardRule, v!)])),
    Object.fromEntries(Object.keys(texts).map((k) => [k, 'profile default'])),
  );
  const ledgerFile = join(t.file, '..', 'guard.db');
  const guard = guardBackend(inner, { rules, ledgerFile, profile: 'default', source: 'cli' });
  cleanups.push(() => t.cleanup(), () => guard.close());
  return { t, guard, ledgerFile };
}

/** The rule that refused the call, or 'sent'. */
const outcome = (call: Promise<unknown>): Promise<string> =>
  call.then(
    () => 'sent',
    (error: unknown) => {
      expect(error).toBeInstanceOf(GuardError);
      return String((error as GuardError).body.rule);
    },
  );

const position = (s: Setup) => s.t.engine.getPosition('Sim101', 'ES 09-25')?.quantity ?? 0;

describe('orders that only reduce a position', () => {
  it.each([
    ['long 3', 3, 'SELL', 3, 'sent'],
    ['long 3', 3, 'SELL', 4, 'max-order-qty'],
    ['long 3', 3, 'BUY', 2, 'max-order-qty'],
    ['short 3', -3, 'BUY', 3, 'sent'],
    ['short 3', -3, 'BUY', 4, 'max-order-qty'],
    ['short 3', -3, 'SELL', 2, 'max-order-qty'],
    ['flat', 0, 'SELL', 2, 'max-order-qty'],
  ] as const)('%s, max-order-qty 1: %s %i is %s', async (_, held, action, quantity, expected) => {
    const s = await setup({ 'max-order-qty': '1' }, held);
    expect(await outcome(s.guard.call('PlaceOrder', order({ action, quantity })))).toBe(expected);
    expect(position(s)).toBe(expected === 'sent' ? held + (action === 'BUY' ? quantity : -quantity) : held);
  });

  it('a halted profile lets the position be closed, not one contract more', async () => {
    const s = await setup({}, -2);
    const ledger = await openLedger(s.ledgerFile);
    await ledger.setHalt('profile:default', 'halted', 'test', '2026-11-24T15:00:00.000Z');
    await ledger.close();
    expect(await outcome(s.guard.call('PlaceOrder', order({ action: 'BUY', quantity: 3 })))).toBe('halt');
    expect(await outcome(s.guard.call('PlaceOrder', order({ action: 'BUY', quantity: 2 })))).toBe('sent');
    expect(position(s)).toBe(0);
  });
});

describe('orders of this process in flight', () => {
  it.each([
    ['long 3', 3, 'SELL'],
    ['short 3', -3, 'BUY'],
  ] as const)('%s: two reducing orders of 2 sent at once, the second no longer only reduces', async (_, held, action) => {
    const s = await setup({ 'max-order-qty': '1' }, held);
    const results = await Promise.all([outcome(s.guard.call('PlaceOrder', order({ action, quantity: 2 }))), outcome(s.guard.call('PlaceOrder', order({ action, quantity: 2 })))]);
    expect(results).toEqual(['sent', 'max-order-qty']);
    expect(position(s)).toBe(held > 0 ? 1 : -1);
  });

  it('two that together are no more than the position both pass', async () => {
    const s = await setup({ 'max-order-qty': '1' }, 4);
    const results = await Promise.all([outcome(s.guard.call('PlaceOrder', order({ action: 'SELL', quantity: 2 }))), outcome(s.guard.call('PlaceOrder', order({ action: 'SELL', quantity: 2 })))]);
    expect(results).toEqual(['sent', 'sent']);
    expect(position(s)).toBe(0);
  });
});

describe('what the guard reads before judging (guard test: check)', () => {
  it('no rule set: nothing is read, and the order passes', async () => {
    const s = await setup({}, 3);
    const checked = await s.guard.check('PlaceOrder', order({ quantity: 5 }));
    expect(checked.refusal).toBeUndefined();
    expect(checked.facts.position).toBeUndefined();
    expect(checked.intent).toMatchObject({ operation: 'PlaceOrder', kind: 'order', account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 5 });
  });

  it('a rule the order passes anyway: the position is not read', async () => {
    const s = await setup({ 'max-order-qty': '5' }, 3);
    const checked = await s.guard.check('PlaceOrder', order({ action: 'SELL', quantity: 5 }));
    expect(checked.refusal).toBeUndefined();
    expect(checked.facts.position).toBeUndefined();
  });

  it('a rule that would refuse unless the order reduces: the position is read, and decides', async () => {
    const s = await setup({ 'max-order-qty': '1' }, 3);
    const reducing = await s.guard.check('PlaceOrder', order({ action: 'SELL', quantity: 2 }));
    expect(reducing.facts.position).toBe(3);
    expect(reducing.refusal).toBeUndefined();
    const adding = await s.guard.check('PlaceOrder', order({ action: 'BUY', quantity: 2 }));
    expect(adding.facts.position).toBe(3);
    expect(adding.refusal).toMatchObject({ rule: 'max-order-qty', limit: 1, value: 2 });
  });

  it('max-position reads the position and the working orders of the same side, whatever the order', async () => {
    const s = await setup({ 'max-position': '4' }, -3);
    await s.guard.call('PlaceOrder', order({ action: 'SELL', quantity: 1, orderType: 'LIMIT', limitPrice: 4600 }));
    const checked = await s.guard.check('PlaceOrder', order({ action: 'SELL', quantity: 1 }));
    expect(checked.facts.position).toBe(-3);
    expect(checked.facts.workingSameSide).toBe(1);
    expect(checked.refusal).toMatchObject({ rule: 'max-position', limit: 4, value: 5 });
  });

  it('an exit reads nothing and passes every rule but accounts', async () => {
    const s = await setup({ 'max-order-qty': '1', 'max-position': '0', accounts: 'Sim2*' }, 3);
    const checked = await s.guard.check('ClosePosition', { account: 'Sim101', instrument: 'ES 09-25' });
    expect(checked.intent.kind).toBe('exit');
    expect(checked.facts.position).toBeUndefined();
    expect(checked.refusal).toMatchObject({ rule: 'accounts', value: 'Sim101' });
    const other = await setup({ 'max-order-qty': '1', 'max-position': '0' }, 3);
    expect((await other.guard.check('ClosePosition', { account: 'Sim101', instrument: 'ES 09-25' })).refusal).toBeUndefined();
  });
});
