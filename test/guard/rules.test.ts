/** Every guard rule on the pure check, at its limit and one past it: no backend, no ledger, no clock. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  anyRuleSet,
  buildRules,
  envForRule,
  evaluate,
  type Facts,
  fingerprint,
  globMatch,
  GUARD_RULES,
  type GuardRule,
  insideWindow,
  type Intent,
  isSimAccount,
  needsPosition,
  normalizeRule,
  parseWindows,
  reduces,
  reducible,
  RULE_HELP,
  RuleSyntaxError,
} from '../../src/guard/rules.js';

const NOW = new Date('2026-11-24T15:00:00Z'); // a Tuesday, 09:00 in Chicago
const rules = (texts: Partial<Record<GuardRule, string>>) =>
  buildRules(Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, normalizeRule(k as GuardRule, v!)])), Object.fromEntries(Object.keys(texts).map((k) => [k, 'profile default'])));
const buy = (quantity: number, extra: Partial<Intent> = {}): Intent => ({
  operation: 'PlaceOrder', kind: 'order', account: 'Sim101', instrument: 'ES 12-25', action: 'BUY', quantity, orderType: 'MARKET', ...extra,
});
const facts = (extra: Partial<Facts> = {}): Facts => ({ now: NOW, ...extra });
// Each describe's rules are built inside its tests (`r()`), not when the file is collected: a
// mutation run (npm run mutate) then knows which test runs which parser, instead of running every
// test for a mutant of code that ran at collection.

describe('max-order-qty', () => {
  const r = () => rules({ 'max-order-qty': '10' });
  it('passes at the limit, refuses one past it with the rule, limit and value', () => {
    expect(evaluate(buy(10), r(), facts())).toBeUndefined();
    expect(evaluate(buy(11), r(), facts())).toMatchObject({
      rule: 'max-order-qty', error: 'guard_max_order_qty', limit: 10, value: 11, reason: 'quantity 11 is above the limit of 10', source: 'profile default',
    });
  });
  it('a change refuses only when it raises the quantity past the limit', () => {
    expect(evaluate(buy(11, { operation: 'Change', quantityBefore: 12 }), r(), facts())).toBeUndefined();
    expect(evaluate(buy(11, { operation: 'Change', quantityBefore: 10 }), r(), facts())?.rule).toBe('max-order-qty');
  });
  it('an order that only reduces the position passes', () => {
    expect(evaluate(buy(20, { action: 'SELL' }), r(), facts({ position: 20 }))).toBeUndefined();
    expect(evaluate(buy(21, { action: 'SELL' }), r(), facts({ position: 20 }))?.rule).toBe('max-order-qty');
  });
});

describe('max-position', () => {
  const r = () => rules({ 'max-position': '5' });
  it('counts the position, the working orders on the same side and this order', () => {
    expect(evaluate(buy(2), r(), facts({ position: 2, workingSameSide: 1 }))).toBeUndefined();
    expect(evaluate(buy(3), r(), facts({ position: 2, workingSameSide: 1 }))).toMatchObject({ rule: 'max-position', limit: 5, value: 6 });
  });
  it('either way: short too', () => {
    expect(evaluate(buy(5, { action: 'SELL' }), r(), facts({ position: 0 }))).toBeUndefined();
    expect(evaluate(buy(6, { action: 'SELL' }), r(), facts({ position: 0 }))?.value).toBe(6);
  });
  it('0 allows no position at all, but closing one still passes', () => {
    const zero = rules({ 'max-position': '0' });
    expect(evaluate(buy(1), zero, facts({ position: 0 }))?.rule).toBe('max-position');
    expect(evaluate(buy(3, { action: 'SELL' }), zero, facts({ position: 3 }))).toBeUndefined();
  });
});

describe('instruments and accounts', () => {
  it('roots or exact contracts', () => {
    const r = rules({ instruments: 'es, nq,CL 01-26' });
    expect(r.texts.instruments).toBe('ES,NQ,CL 01-26');
    expect(evaluate(buy(1), r, facts())).toBeUndefined();
    expect(evaluate(buy(1, { instrument: 'CL 01-26' }), r, facts())).toBeUndefined();
    expect(evaluate(buy(1, { instrument: 'CL 02-26' }), r, facts())).toMatchObject({ rule: 'instruments', value: 'CL 02-26' });
    expect(evaluate(buy(1, { instrument: 'MES 12-25' }), r, facts())?.rule).toBe('instruments');
  });
  it('accounts by glob, and the one rule even an exit must pass', () => {
    const r = rules({ accounts: 'Sim*,Paper1' });
    expect(evaluate(buy(1, { account: 'Sim102' }), r, facts())).toBeUndefined();
    expect(evaluate(buy(1, { account: 'Paper1' }), r, facts())).toBeUndefined();
    expect(evaluate(buy(1, { account: 'Live7' }), r, facts())).toMatchObject({ rule: 'accounts', value: 'Live7' });
    expect(evaluate({ operation: 'Flatten', kind: 'exit', account: 'Live7' }, r, facts())?.rule).toBe('accounts');
  });
});

describe('window', () => {
  it('inside and outside, by the zone named, with the clock passed in', () => {
    const r = rules({ window: 'Mon-Fri 08:30-15:00 America/Chicago' });
    expect(evaluate(buy(1), r, facts({ now: new Date('2026-11-24T14:30:00Z') }))).toBeUndefined(); // 08:30 Chicago: opens
    expect(evaluate(buy(1), r, facts({ now: new Date('2026-11-24T14:29:59Z') }))?.rule).toBe('window');
    expect(evaluate(buy(1), r, facts({ now: new Date('2026-11-24T20:59:00Z') }))).toBeUndefined(); // 14:59
    expect(evaluate(buy(1), r, facts({ now: new Date('2026-11-24T21:00:00Z') }))?.rule).toBe('window'); // 15:00: closed
    expect(evaluate(buy(1), r, facts({ now: new Date('2026-11-28T16:00:00Z') }))?.rule).toBe('window'); // Saturday
  });
  it('summer time moves the window with the zone', () => {
    const [w] = parseWindows('Mon-Fri 08:30-15:00 America/Chicago');
    expect(insideWindow(w!, new Date('2026-07-07T13:30:00Z'))).toBe(true); // 08:30 CDT
    expect(insideWindow(w!, new Date('2026-07-07T13:29:00Z'))).toBe(false);
  });
  it('a window past midnight, and several windows', () => {
    const [w] = parseWindows('Sun-Thu 17:00-16:00 America/Chicago');
    expect(insideWindow(w!, new Date('2026-11-29T23:00:00Z'))).toBe(true); // Sunday 17:00
    expect(insideWindow(w!, new Date('2026-11-30T21:59:00Z'))).toBe(true); // Monday 15:59
    expect(insideWindow(w!, new Date('2026-11-30T22:30:00Z'))).toBe(false); // Monday 16:30
    expect(insideWindow(w!, new Date('2026-11-28T18:00:00Z'))).toBe(false); // Saturday
    const two = rules({ window: 'Mon-Fri 08:30-11:00 America/Chicago; Mon-Fri 13:00-15:00 America/Chicago' });
    expect(evaluate(buy(1), two, facts({ now: new Date('2026-11-24T18:00:00Z') }))?.rule).toBe('window'); // 12:00
    expect(evaluate(buy(1), two, facts({ now: new Date('2026-11-24T19:00:00Z') }))).toBeUndefined(); // 13:00
  });
});

describe('max-orders', () => {
  const r = () => rules({ 'max-orders': '5/s, 60/min' });
  it('each pace at its count and one past', () => {
    expect(r().texts['max-orders']).toBe('5/s,60/min');
    expect(evaluate(buy(1), r(), facts({ paceCounts: [4, 59] }))).toBeUndefined();
    expect(evaluate(buy(1), r(), facts({ paceCounts: [5, 5] }))).toMatchObject({ rule: 'max-orders', limit: '5/s', value: 6 });
    expect(evaluate(buy(1), r(), facts({ paceCounts: [0, 60] }))).toMatchObject({ rule: 'max-orders', limit: '60/min', value: 61 });
  });
});

describe('daily-loss', () => {
  const r = () => rules({ 'daily-loss': '500' });
  it('at the limit refuses, above it passes; a latch holds; resume lifts it', () => {
    expect(evaluate(buy(1), r(), facts({ dayPnl: -499.99 }))).toBeUndefined();
    expect(evaluate(buy(1), r(), facts({ dayPnl: -500 }))).toMatchObject({ rule: 'daily-loss', limit: 500, value: -500 });
    expect(evaluate(buy(1), r(), facts({ lossLatched: true }))?.rule).toBe('daily-loss');
    expect(evaluate(buy(1), r(), facts({ lossLatched: true, lossResumed: true }))).toBeUndefined();
  });
  it('never stops an order that reduces', () => {
    expect(evaluate(buy(1, { action: 'SELL' }), r(), facts({ dayPnl: -900, position: 1 }))).toBeUndefined();
  });
});

describe('duplicate-window', () => {
  const r = () => rules({ 'duplicate-window': '10s' });
  it('refuses an identical order the ledger saw within the window', () => {
    expect(evaluate(buy(1), r(), facts())).toBeUndefined();
    expect(evaluate(buy(1), r(), facts({ duplicateAt: NOW.getTime() - 9_000 }))).toMatchObject({ rule: 'duplicate-window', value: 9000 });
  });
  it('one sent by another process after this one read its clock was sent 0s ago, not less', () => {
    expect(evaluate(buy(1), r(), facts({ duplicateAt: NOW.getTime() + 3 }))).toMatchObject({ value: 0, reason: 'an identical order was sent 0s ago, within 10s' });
  });
});

describe('confirm-live', () => {
  const r = () => rules({ 'confirm-live': 'on', 'sim-accounts': 'Paper*' });
  it('a simulation account needs nothing; another needs the confirmation', () => {
    expect(evaluate(buy(1, { account: 'Sim101' }), r(), facts())).toBeUndefined();
    expect(evaluate(buy(1, { account: 'Paper2' }), r(), facts())).toBeUndefined();
    expect(evaluate(buy(1, { account: 'U12345' }), r(), facts())).toMatchObject({ rule: 'confirm-live', value: 'U12345' });
    expect(evaluate(buy(1, { account: 'U12345' }), r(), facts({ liveConfirmed: true }))).toBeUndefined();
  });
});

describe('halt', () => {
  const halted: Facts['halt'] = { mode: 'halted', scope: 'profile:default', at: '2026-11-24T14:00:00Z', reason: 'runaway' };
  const reducing: Facts['halt'] = { ...halted, mode: 'reducing' };
  it('HALTED refuses new risk and every change; reducing orders and exits pass', () => {
    const r = rules({});
    expect(evaluate(buy(1), r, facts({ halt: halted }))).toMatchObject({ rule: 'halt', error: 'guard_halt' });
    expect(evaluate(buy(1), r, facts({ halt: halted }))?.reason).toContain('profile default is HALTED since 2026-11-24T14:00:00Z (runaway)');
    expect(evaluate(buy(1, { action: 'SELL' }), r, facts({ halt: halted, position: 2 }))).toBeUndefined();
    expect(evaluate({ operation: 'ClosePosition', kind: 'exit', account: 'Sim101' }, r, facts({ halt: halted }))).toBeUndefined();
    expect(evaluate(buy(1, { operation: 'Change', quantityBefore: 1 }), r, facts({ halt: halted, position: 0 }))?.rule).toBe('halt');
  });
  it('REDUCING also lets a change that adds no size through', () => {
    const r = rules({});
    expect(evaluate(buy(1, { operation: 'Change', quantityBefore: 1 }), r, facts({ halt: reducing, position: 0 }))).toBeUndefined();
    expect(evaluate(buy(2, { operation: 'Change', quantityBefore: 1 }), r, facts({ halt: reducing, position: 0 }))?.rule).toBe('halt');
    expect(evaluate(buy(1), r, facts({ halt: reducing }))?.rule).toBe('halt');
  });
});

describe('reduces', () => {
  it('the other side, no larger than the position', () => {
    expect(reduces(buy(2, { action: 'SELL' }), 2)).toBe(true);
    expect(reduces(buy(3, { action: 'SELL' }), 2)).toBe(false);
    expect(reduces(buy(1), 2)).toBe(false);
    expect(reduces(buy(1), -1)).toBe(true);
    expect(reduces(buy(1), 0)).toBe(false);
    expect(reduces(buy(1), undefined)).toBe(false);
  });
});

describe('rule texts', () => {
  it.each([
    ['max-order-qty', '0', 'must be a whole number of contracts of at least 1'],
    ['max-order-qty', '2.5', 'must be a whole number'],
    ['max-position', '-1', 'must be a whole number'],
    ['window', 'Mon-Fri 8:30 to 15:00', 'each window must be DAYS HH:MM-HH:MM ZONE'],
    ['window', 'Mon-Fri 08:30-15:00 Mars/Olympus', "'Mars/Olympus' is not a time zone"],
    ['window', 'Mon-Fry 08:30-15:00 UTC', 'is not a list of days'],
    ['window', 'Mon-Fri 08:30-25:00 UTC', "'25:00' is not a time of day"],
    ['max-orders', '5 per second', 'each pace must be COUNT/UNIT'],
    ['daily-loss', '-5', 'must be an amount above 0'],
    ['duplicate-window', '10 parsecs', 'must be a duration like 10s'],
    ['confirm-live', 'maybe', 'must be on or off'],
    ['instruments', 'ES;NQ', "'ES;NQ' is not a root or contract"],
  ] as const)('%s %j is refused: %s', (rule, raw, message) => {
    expect(() => normalizeRule(rule, raw)).toThrow(RuleSyntaxError);
    expect(() => normalizeRule(rule, raw)).toThrow(message);
  });
});

describe('rule texts at their edges', () => {
  it.each(['off', 'OFF', ' false ', 'no', '0'])('confirm-live %j is off', (raw) => expect(normalizeRule('confirm-live', raw)).toBe('off'));
  it.each(['on', 'True', 'yes', '1'])('confirm-live %j is on', (raw) => expect(normalizeRule('confirm-live', raw)).toBe('on'));

  it.each([
    ['Xyz 08:30-15:00 UTC', 'an unknown first day'],
    ['Mon-Xyz 08:30-15:00 UTC', 'an unknown last day'],
    ['Mon-Wed-Fri 08:30-15:00 UTC', 'a range of three days'],
  ])('window %j is refused (%s)', (raw) => expect(() => normalizeRule('window', raw)).toThrow("is not a list of days like Mon-Fri or Mon,Wed,Fri"));

  it('a range of days wraps past Sunday, and a list names each day', () => {
    expect([...parseWindows('Fri-Mon 08:30-15:00 UTC')[0]!.days].sort()).toEqual([0, 1, 5, 6]);
    expect([...parseWindows('Mon,Wed,Fri 08:30-15:00 UTC')[0]!.days].sort()).toEqual([1, 3, 5]);
    expect([...parseWindows('Wed 08:30-15:00 UTC')[0]!.days]).toEqual([3]);
  });
});

describe('the rules as the manual lists them', () => {
  it('docs/commands.md has one row per rule, in order, with its help text and its environment variable', () => {
    const manual = readFileSync(new URL('../../docs/commands.md', import.meta.url), 'utf8');
    const rows = manual.split('\n').filter((line) => /^\| `guard\.[a-z-]+` \| guard rule: /.test(line));
    expect(rows.map((row) => /^\| `guard\.([a-z-]+)`/.exec(row)![1])).toEqual([...GUARD_RULES]);
    expect(rows).toEqual(GUARD_RULES.map((rule) => `| \`guard.${rule}\` | guard rule: ${RULE_HELP[rule].replace(/\*/g, '\\*')} (off until set) | \`${envForRule(rule)}\` |`));
    expect(envForRule('duplicate-window')).toBe('TRADE_GUARD_DUPLICATE_WINDOW');
  });
});

describe('rule texts: what each is read as, spaces and bounds included', () => {
  it.each([
    ['max-order-qty', ' 5 ', '5'],
    ['max-position', '0', '0'],
    ['instruments', ' es ,, nq  12-25 ,', 'ES,NQ 12-25'],
    ['accounts', 'Sim*,  Paper 1', 'Sim*,Paper 1'],
    ['duplicate-window', ' 10 S ', '10 s'],
    ['duplicate-window', '1.25s', '1.25s'],
    ['duplicate-window', '1ms', '1ms'],
    ['duplicate-window', '7d', '7d'],
    ['max-orders', ' 5 / s , 60/min', '5/s,60/min'],
    ['max-orders', '1/10s', '1/10s'],
    ['window', '  Mon-Fri   08:30-15:00  UTC ', 'Mon-Fri 08:30-15:00 UTC'],
    ['window', 'Fri-Sun 00:00-24:00 UTC', 'Fri-Sun 00:00-24:00 UTC'],
    ['window', 'Monday-Friday 08:30-23:59 UTC', 'Monday-Friday 08:30-23:59 UTC'],
    ['daily-loss', ' 500 ', '500'],
    ['daily-loss', '0.01', '0.01'],
    ['daily-loss', '1250.50', '1250.5'],
    ['confirm-live', ' on ', 'on'],
  ] as const)('%s %j is %j', (rule, raw, text) => {
    expect(normalizeRule(rule, raw)).toBe(text);
  });

  it.each([
    ['max-position', 'x', "must be a whole number of contracts of at least 0, got 'x'"],
    ['instruments', ' , ', 'must name at least one root or contract, comma-separated'],
    ['accounts', 'a/b', "'a/b' is not a account glob (letters, digits, space . _ : - and * ? globs)"],
    ['duplicate-window', '0.5ms', "must be from 1ms to 7 days, got '0.5ms'"],
    ['duplicate-window', '7.001d', "must be from 1ms to 7 days, got '7.001d'"],
    ['duplicate-window', 'x10s', "must be a duration like 10s, 500ms, 2m or 1h, got 'x10s'"],
    ['duplicate-window', '10sx', "must be a duration like 10s, 500ms, 2m or 1h, got '10sx'"],
    ['duplicate-window', '1.x s', "must be a duration like 10s, 500ms, 2m or 1h, got '1.x s'"],
    ['max-orders', '0/s', "each pace must be COUNT/UNIT like 5/s, 60/min, 500/day, got '0/s'"],
    ['max-orders', 'x5/s', "each pace must be COUNT/UNIT like 5/s, 60/min, 500/day, got 'x5/s'"],
    ['max-orders', '5/sx', "each pace must be COUNT/UNIT like 5/s, 60/min, 500/day, got '5/sx'"],
    ['max-orders', '5x/s', "each pace must be COUNT/UNIT like 5/s, 60/min, 500/day, got '5x/s'"],
    ['max-orders', '5/10xs', "each pace must be COUNT/UNIT like 5/s, 60/min, 500/day, got '5/10xs'"],
    ['max-orders', '5/s,  5 per s ', "each pace must be COUNT/UNIT like 5/s, 60/min, 500/day, got '5 per s'"],
    ['window', 'Mon-Fri 08:30-08:30 UTC', 'the window 08:30-08:30 is empty'],
    ['window', 'Mon-Fri 08:30-24:01 UTC', "'24:01' is not a time of day like 08:30"],
    ['window', 'Mon-Fri 08:30-23:60 UTC', "'23:60' is not a time of day like 08:30"],
    ['window', 'Mon- 08:30-15:00 UTC', "'Mon-' is not a list of days like Mon-Fri or Mon,Wed,Fri"],
    ['window', 'x Mon-Fri 08:30-15:00 UTC', 'each window must be DAYS HH:MM-HH:MM ZONE'],
    ['window', 'Mon-Fri 08:30-15:00 UTC x', 'each window must be DAYS HH:MM-HH:MM ZONE'],
    ['daily-loss', '0', "must be an amount above 0 like 500 or 1250.50, got '0'"],
    ['daily-loss', '0.00', "must be an amount above 0 like 500 or 1250.50, got '0.00'"],
    ['daily-loss', '500.555', "must be an amount above 0 like 500 or 1250.50, got '500.555'"],
    ['daily-loss', 'x500', "must be an amount above 0 like 500 or 1250.50, got 'x500'"],
    ['daily-loss', '500x', "must be an amount above 0 like 500 or 1250.50, got '500x'"],
    ['daily-loss', '500.5x', "must be an amount above 0 like 500 or 1250.50, got '500.5x'"],
  ] as const)('%s %j is refused: %s', (rule, raw, message) => {
    expect(() => normalizeRule(rule, raw)).toThrow(message);
  });

  it('a duration or a pace is read in milliseconds', () => {
    expect(buildRules({ 'duplicate-window': '1.25s', 'max-orders': '5/10s,2/min' })).toMatchObject({
      duplicateWindowMs: 1250,
      maxOrders: [
        { count: 5, ms: 10_000, text: '5/10s' },
        { count: 2, ms: 60_000, text: '2/min' },
      ],
    });
  });

  it('buildRules sets only the rules given', () => {
    expect(buildRules({}, {})).toEqual({ sources: {}, texts: {} });
    expect(buildRules({ 'confirm-live': 'off' }).confirmLive).toBe(false);
    expect(buildRules({ 'confirm-live': 'on' }).confirmLive).toBe(true);
    expect(anyRuleSet(buildRules({}))).toBe(false);
    expect(anyRuleSet(buildRules({ 'sim-accounts': 'Paper*' }))).toBe(true);
  });
});

describe('globs, simulation accounts, fingerprints', () => {
  it('a glob is * and ? over the whole name, any case; every other character is itself', () => {
    expect(globMatch('Sim*', 'sim101')).toBe(true);
    expect(globMatch('Sim?01', 'Sim101')).toBe(true);
    expect(globMatch('Sim?01', 'Sim1101')).toBe(false);
    expect(globMatch('Sim.1', 'Simx1')).toBe(false);
    expect(globMatch('Sim.1', 'Sim.1')).toBe(true);
    expect(globMatch('A+B', 'A+B')).toBe(true);
    expect(globMatch('Sim', 'Sim101')).toBe(false);
    expect(globMatch('101', 'Sim101')).toBe(false);
  });

  it('Sim* is a simulation account; so is any of sim-accounts, not only when all match', () => {
    const r = rules({ 'sim-accounts': 'Paper*,Demo*' });
    expect(isSimAccount('SIM2', r)).toBe(true);
    expect(isSimAccount('Live-sim', r)).toBe(false);
    expect(isSimAccount('Paper7', r)).toBe(true);
    expect(isSimAccount('Demo1', r)).toBe(true);
    expect(isSimAccount('Live1', r)).toBe(false);
    expect(isSimAccount('Paper7', rules({}))).toBe(false);
  });

  it('the fingerprint of an order is its operation and fields, in order, | between', () => {
    expect(fingerprint(buy(2, { limitPrice: 4500, orderType: 'LIMIT' }))).toBe('PlaceOrder|Sim101|ES 12-25|BUY|2|LIMIT|4500|');
  });
});

describe('each refusal in its own words', () => {
  const reason = (intent: Intent, texts: Partial<Record<GuardRule, string>>, extra: Partial<Facts> = {}) => evaluate(intent, rules(texts), facts(extra));

  it('accounts, instruments, confirm-live, window', () => {
    expect(reason(buy(1, { account: 'Live1' }), { accounts: 'Sim*' })).toMatchObject({ rule: 'accounts', error: 'guard_accounts', reason: 'account Live1 is not in Sim*', source: 'profile default' });
    expect(reason(buy(1), { instruments: 'NQ' })).toMatchObject({ rule: 'instruments', value: 'ES 12-25', reason: 'ES 12-25 is not in NQ' });
    expect(reason(buy(1, { account: 'Live1' }), { 'confirm-live': 'on' })).toMatchObject({
      rule: 'confirm-live',
      limit: 'on',
      value: 'Live1',
      reason: 'account Live1 is not a simulation account and was not confirmed (type its name at the prompt, or --confirm-live)',
    });
    expect(reason(buy(1), { window: 'Sat 08:30-15:00 UTC' })).toMatchObject({ rule: 'window', reason: '2026-11-24T15:00:00.000Z is outside Sat 08:30-15:00 UTC' });
  });

  it('a halt, HALTED or REDUCING, with its reason when it has one', () => {
    const at = '2026-11-24T14:00:00Z';
    expect(reason(buy(1), {}, { halt: { mode: 'halted', scope: 'profile:default', at, reason: 'runaway' } })).toMatchObject({
      rule: 'halt',
      error: 'guard_halt',
      limit: 'halted',
      value: 'profile:default',
      reason: 'profile default is HALTED since 2026-11-24T14:00:00Z (runaway)',
      source: undefined,
    });
    expect(reason(buy(1), {}, { halt: { mode: 'reducing', scope: 'account:Sim101', at } })?.reason).toBe(
      'account Sim101 is REDUCING (only orders that reduce a position) since 2026-11-24T14:00:00Z',
    );
  });

  it('max-position: with and without working orders, and a change counts only what it adds', () => {
    expect(reason(buy(3), { 'max-position': '4' }, { position: 2 })?.reason).toBe('position 2 + this order 3 could reach 5, above the limit of 4');
    expect(reason(buy(2, { action: 'SELL' }), { 'max-position': '4' }, { position: -2, workingSameSide: 1 })?.reason).toBe(
      'position -2 + working -1 + this order -2 could reach 5, above the limit of 4',
    );
    // A change from 2 to 3 adds one contract: 2 + 1 is within 4.
    expect(reason(buy(3, { operation: 'Change', quantityBefore: 2 }), { 'max-position': '4' }, { position: 2 })).toBeUndefined();
    expect(reason(buy(3, { operation: 'Change', quantityBefore: 1 }), { 'max-position': '3' }, { position: 2 })?.reason).toBe(
      'position 2 + this order 2 could reach 4, above the limit of 3',
    );
    // A change that lowers the quantity adds nothing, however far over the limit the rest is.
    expect(reason(buy(2, { operation: 'Change', quantityBefore: 3 }), { 'max-position': '5' }, { position: 5, workingSameSide: 3 })).toBeUndefined();
  });

  it('daily-loss: the day as read, or the latch of earlier today; decimals shown to the cent', () => {
    expect(reason(buy(1), { 'daily-loss': '500' }, { dayPnl: -612.5 })?.reason).toBe(
      "the day's P&L of Sim101 is -612.50, at or below -500; new risk waits for the next trading day or trade resume",
    );
    expect(reason(buy(1), { 'daily-loss': '250.5' }, { lossLatched: true })?.reason).toBe(
      'Sim101 reached the daily loss of -250.50 earlier today; new risk waits for the next trading day or trade resume',
    );
  });

  it('duplicate-window names itself', () => {
    expect(reason(buy(1), { 'duplicate-window': '10s' }, { duplicateAt: NOW.getTime() - 2500 })).toMatchObject({
      rule: 'duplicate-window',
      error: 'guard_duplicate_window',
      limit: '10s',
      value: 2500,
      reason: 'an identical order was sent 2.50s ago, within 10s',
    });
  });

  it('facts a rule that is not set never refuse', () => {
    expect(reason(buy(1), {}, { lossLatched: true, dayPnl: -10_000, duplicateAt: NOW.getTime() - 1, position: 50, workingSameSide: 50, paceCounts: [99] })).toBeUndefined();
  });

  it('an intent without an account or an instrument is not refused for what it does not name', () => {
    const bare: Intent = { operation: 'PlaceOrder', kind: 'order', action: 'BUY', quantity: 1 };
    expect(evaluate({ operation: 'FlattenEverything', kind: 'exit' }, rules({ accounts: 'Sim*' }), facts())).toBeUndefined();
    expect(evaluate(bare, rules({ 'confirm-live': 'on' }), facts())).toBeUndefined();
    expect(evaluate(bare, rules({ instruments: 'ES' }), facts())).toBeUndefined();
  });
});

describe('windows past midnight at their edges; what the guard must read', () => {
  it('22:00-02:00 opens at 22:00 on an open day and closes at 02:00 the day after', () => {
    const [w] = parseWindows('Mon 22:00-02:00 UTC');
    expect(insideWindow(w!, new Date('2026-11-23T21:59:00Z'))).toBe(false);
    expect(insideWindow(w!, new Date('2026-11-23T22:00:00Z'))).toBe(true);
    expect(insideWindow(w!, new Date('2026-11-24T01:59:00Z'))).toBe(true);
    expect(insideWindow(w!, new Date('2026-11-24T02:00:00Z'))).toBe(false);
    expect(insideWindow(w!, new Date('2026-11-24T22:00:00Z'))).toBe(false);
  });

  it('reduces: an exit always; reducible: the position less the orders in flight on the reducing side', () => {
    expect(reduces({ operation: 'ClosePosition', kind: 'exit' }, undefined)).toBe(true);
    expect(reducible({ now: NOW, position: 3, flying: { BUY: 5, SELL: 1 } })).toBe(2);
    expect(reducible({ now: NOW, position: 3, flying: { BUY: 0, SELL: 4 } })).toBe(0);
    expect(reducible({ now: NOW, position: -3, flying: { BUY: 1, SELL: 5 } })).toBe(-2);
    expect(reducible({ now: NOW, position: -3, flying: { BUY: 4, SELL: 0 } })).toBe(0);
    expect(reducible({ now: NOW, position: 0, flying: { BUY: 1, SELL: 1 } })).toBe(0);
    expect(reducible({ now: NOW, position: 3 })).toBe(3);
    expect(reducible({ now: NOW })).toBeUndefined();
  });

  it('needsPosition: not for an exit, not when the position is read, else when a rule reads it or would refuse', () => {
    expect(needsPosition(buy(5), rules({ 'max-order-qty': '1' }), facts({ position: 3 }))).toBe(false);
    expect(needsPosition(buy(5), rules({ 'max-order-qty': '1' }), facts())).toBe(true);
    expect(needsPosition(buy(1), rules({ 'max-order-qty': '1' }), facts())).toBe(false);
    expect(needsPosition(buy(1), rules({ 'max-position': '9' }), facts())).toBe(true);
    expect(needsPosition({ operation: 'ClosePosition', kind: 'exit', account: 'Sim101' }, rules({ 'max-position': '0' }), facts())).toBe(false);
  });
});
