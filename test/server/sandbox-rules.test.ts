/** The scenario rules of `trade serve` (issue 22) on their own: effects, matching, firing, the file's errors. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/common/errors.js';
import { createRuleSet, parseDuration, parseEffect } from '../../src/server/sandbox/rules.js';
import { loadScenario } from '../../src/server/sandbox/scenario-file.js';
import { createRequestLog } from '../../src/server/sandbox/request-log.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function file(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'trade-scenario-'));
  dirs.push(dir);
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('effects', () => {
  it.each([
    ['status 429', { kind: 'status', status: 429, retryAfter: 1 }],
    ['status 429 30', { kind: 'status', status: 429, retryAfter: 30 }],
    ['delay 1.5s', { kind: 'delay', ms: 1500 }],
    ['drop-before', { kind: 'drop-before' }],
    ['reject-late 250ms Order rejected by risk', { kind: 'reject-late', ms: 250, reason: 'Order rejected by risk' }],
    ['partial 3', { kind: 'partial', quantity: 3 }],
    ['ws-close 1011 2s', { kind: 'ws-close', code: 1011, afterMs: 2000 }],
  ])('%s', (text, effect) => expect(parseEffect(text)).toEqual(effect));

  it.each([
    ['status 404', "status takes 408, 429 or 500, got '404'"],
    ['delay soon', "delay takes one DURATION (500ms, 2s; at most 1h), got 'soon'"],
    ['reject-late 1s', 'reject-late takes a REASON after its DURATION (1 to 200 characters)'],
    ['partial 0', "partial takes one QTY, a whole number from 1, got '0'"],
    ['ws-close 1006', "ws-close takes a close code from 1000 to 4999 (not 1005, 1006, 1015), got '1006'"],
    ['explode', 'unknown effect'],
  ])('%s is refused', (text, message) => expect(parseEffect(text)).toContain(message));

  it('durations', () => {
    expect([parseDuration('250'), parseDuration('250ms'), parseDuration('2s'), parseDuration('1m'), parseDuration('2h')]).toEqual([250, 250, 2000, 60_000, undefined]);
  });
});

describe('firing', () => {
  const facts = { operation: 'PlaceOrder', transport: 'http' as const, account: 'Sim101', instrument: 'ES 09-25' };

  it('nth, every, times, and matching fields; the first rule that fires wins', () => {
    const rules = createRuleSet();
    expect(rules.active).toBe(false);
    rules.add({ name: 'third', operation: 'PlaceOrder', nth: 3, effect: 'drop-after' });
    rules.add({ name: 'every2', every: 2, times: 2, effect: 'status 500' });
    rules.add({ name: 'ws-only', transport: 'ws', effect: 'delay 1ms' });
    rules.add({ name: 'other-account', account: 'SIM202', effect: 'status 408' });
    expect(rules.active).toBe(true);
    const fired = Array.from({ length: 8 }, () => rules.fire(facts)?.name ?? '-');
    // A rule counts the calls that reach it: after 'third' fired on call 3, 'every2' saw it not.
    expect(fired).toEqual(['-', 'every2', 'third', '-', 'every2', '-', '-', '-']);
    expect(rules.fire({ ...facts, transport: 'ws' })?.name).toBe('ws-only');
    expect(rules.fire({ ...facts, account: 'sim202' })?.name).toBe('other-account');
    expect(rules.clear()).toBe(4);
    expect(rules.active).toBe(false);
  });

  it('an instrument in any form matches the request as resolved', () => {
    const rules = createRuleSet();
    rules.add({ instrument: 'ESU5', effect: 'status 500' });
    expect(rules.fire({ ...facts, instrument: 'ES SEP25' })).toBeDefined();
    expect(rules.fire({ ...facts, instrument: 'NQ 09-25' })).toBeUndefined();
  });

  it('a seeded probability fires on the same calls every time; another seed on others', () => {
    const run = (seed: number) => {
      const rules = createRuleSet();
      rules.add({ probability: 0.25, seed, effect: 'status 500' });
      return Array.from({ length: 200 }, (_, i) => (rules.fire(facts) ? i : -1)).filter((i) => i >= 0);
    };
    expect(run(7)).toEqual(run(7));
    expect(run(7)).not.toEqual(run(8));
    expect(run(7).length).toBeGreaterThan(25);
    expect(run(7).length).toBeLessThan(75);
  });

  it('ws-close never fires on http', () => {
    const rules = createRuleSet();
    rules.add({ effect: 'ws-close 4000' });
    expect(rules.fire(facts)).toBeUndefined();
    expect(rules.fire({ ...facts, transport: 'ws' })).toBeDefined();
  });
});

describe('scenario files', () => {
  const refused = (path: string) => {
    try {
      loadScenario(path);
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return (error as Error).message;
    }
    throw new Error('accepted');
  };

  it('YAML and JSON give the same rules; a file seed seeds each rule by its index', () => {
    const yaml = file('s.yaml', 'seed: 10\nrules:\n  - operation: PlaceOrder\n    nth: 2\n    effect: drop-after\n  - probability: 0.5\n    effect: status 500\n');
    const json = file('s.json', JSON.stringify({ seed: 10, rules: [{ operation: 'PlaceOrder', nth: 2, effect: 'drop-after' }, { probability: 0.5, effect: 'status 500' }] }));
    expect(loadScenario(yaml)).toEqual([
      { operation: 'PlaceOrder', nth: 2, effect: 'drop-after' },
      { probability: 0.5, seed: 11, effect: 'status 500' },
    ]);
    expect(loadScenario(json)).toEqual(loadScenario(yaml));
  });

  it('names the file, the line and the field of the first problem', () => {
    const path = file('bad.yaml', 'rules:\n  - operation: PlaceOrder\n    effect: drop-after\n  - operation: PlaceOrder\n    nth: 1\n    every: 2\n    effect: drop-after\n');
    expect(refused(path)).toBe(`--scenario ${path}:6: rules[1].every: give one of nth, every and probability, not nth and every`);
    const missing = file('missing.yaml', 'rules:\n  - operation: PlaceOrder\n    nth: 1\n');
    expect(refused(missing)).toMatch(new RegExp(`^--scenario ${missing}:2: rules\\[0\\]\\.effect: `));
    const extra = file('extra.yaml', 'rules:\n  - effect: drop-after\n    tiems: 1\n');
    expect(refused(extra)).toMatch(new RegExp(`^--scenario ${extra}:2: rules\\[0\\]: .*tiems`));
    const late = file('late.yaml', 'rules:\n  - effect: partial 1\n');
    expect(refused(late)).toBe(`--scenario ${late}:2: rules[0].operation: partial needs operation: PlaceOrder`);
    const twice = file('twice.yaml', 'rules:\n  - effect: drop-after\n    effect: drop-before\n');
    expect(refused(twice)).toMatch(new RegExp(`^--scenario ${twice}:3: not valid YAML or JSON: .*[Uu]nique`));
    expect(refused(join(tmpdir(), 'no-such-scenario.yaml'))).toContain('cannot be read (ENOENT)');
  });
});

describe('the request log', () => {
  it('keeps the last N, oldest first, and counts every one', () => {
    const log = createRequestLog(3);
    for (let i = 0; i < 7; i++) log.add({ time: i, transport: 'http', operation: `op${i}`, status: 200, ms: 1 });
    expect(log.entries().map((e) => e.operation)).toEqual(['op4', 'op5', 'op6']);
    expect(log.total()).toBe(7);
    log.clear();
    expect([log.entries(), log.total()]).toEqual([[], 0]);
  });
});
