/**
 * Hostile input on the test bench (issue 31): scenario files built to exhaust the reader (alias
 * bombs, deep nesting, huge files, a thousand and one rules, counts of a billion), refused with a
 * clear error before anything is served; and the control routes and request log under a flood,
 * each bounded (rules in force, snapshots kept, a body kept in the log), with what is past the
 * bound refused and nothing changed.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/common/errors.js';
import { MAX_COUNT, MAX_RULES } from '../../src/server/sandbox/rules.js';
import { MAX_SNAPSHOTS } from '../../src/server/sandbox/sandbox.js';
import { loadScenario, MAX_SCENARIO_BYTES } from '../../src/server/sandbox/scenario-file.js';
import { MAX_LOGGED_BODY } from '../../src/server/sandbox/request-log.js';
import { runBin, tempHome } from '../helpers/cli.js';
import { ES_MARKET, type Harness, startServer } from './harness.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function file(text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'trade-scenario-'));
  dirs.push(dir);
  const path = join(dir, 'scenario.yaml');
  writeFileSync(path, text);
  return path;
}

function refusal(path: string): string {
  try {
    loadScenario(path);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).message.replace(path, 'FILE');
  }
  throw new Error('the scenario was accepted');
}

const ALIAS_BOMB = [
  'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]',
  ...'bcdefgh'.split('').map((name, i) => `${name}: &${name} [${Array(9).fill(`*${'abcdefg'[i]}`).join(',')}]`),
  'rules: [*h]',
].join('\n');

describe('hostile scenario files', () => {
  it.each([
    ['an alias bomb', () => ALIAS_BOMB, 'FILE: its aliases (*name) expand to more than 100 copies: refused as a resource exhaustion attack (a "billion laughs")'],
    ['100,000 levels of nesting', () => `rules: ${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'FILE: nested too deeply to read (a scenario has at most 16 levels)'],
    ['20 levels of nesting', () => `rules: ${'['.repeat(20)}${']'.repeat(20)}`, 'FILE: nested more than 16 levels deep; a scenario has a list of rules of plain fields'],
    ['a file over 1 MiB', () => `rules:\n${'  - {effect: "delay 1ms"}\n'.repeat(60_000)}`, `FILE: 1,560,007 bytes is too large; a scenario file is at most 1 MiB (${MAX_RULES} rules)`],
    ['a thousand and one rules', () => `rules:\n${'  - {effect: "status 500"}\n'.repeat(MAX_RULES + 1)}`, `FILE:1: rules: at most ${MAX_RULES} rules`],
    ['a rule that matches everything a billion times', () => 'rules:\n  - effect: status 500\n    times: 1e9\n', 'FILE:3: rules[0].times: must be at most 1,000,000 (leave times out for a rule that never stops)'],
    ['every billionth call', () => 'rules:\n  - effect: drop-before\n    every: 1000000000\n', 'FILE:3: rules[0].every: must be at most 1,000,000'],
    ['the billionth call', () => '{"rules": [{"effect": "drop-after", "nth": 1e9}]}', 'FILE:1: rules[0].nth: must be at most 1,000,000'],
  ])('%s is refused with a clear error', (_what, text, message) => {
    expect(refusal(file(text()))).toBe(`--scenario ${message}`);
  });

  it('the largest file and counts it allows are read', () => {
    expect(MAX_SCENARIO_BYTES).toBe(1024 * 1024);
    const rules = loadScenario(file(`rules:\n${'  - {effect: "status 500", times: 1000000}\n'.repeat(MAX_RULES)}`));
    expect(rules).toHaveLength(MAX_RULES);
    expect(rules[0]).toEqual({ effect: 'status 500', times: MAX_COUNT });
  });

  it('trade serve with an alias bomb exits 2 at once, and makes no store', async () => {
    const home = tempHome();
    dirs.push(home.dir);
    const path = file(ALIAS_BOMB);
    const served = await runBin(['serve', '--port', '0', '--scenario', path], home.env);
    expect(served.code).toBe(2);
    expect(served.stderr.split('\n')[0]).toBe(`Error: --scenario ${path}: its aliases (*name) expand to more than 100 copies: refused as a resource exhaustion attack (a "billion laughs")`);
    expect(existsSync(join(home.env.TRADE_HOME!, 'trade.db'))).toBe(false);
  });
});

describe('the control routes and the request log under a flood', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startServer({ logSize: 200 });
  });
  afterAll(() => h.close());

  it(`a thousand rules at most are in force; the next is refused and changes nothing`, async () => {
    // A file's thousand rules, then the control route's: one more is one too many.
    const full = await startServer({ scenario: Array.from({ length: MAX_RULES - 1 }, (_, i) => ({ name: `r${i}`, operation: 'GetQuote', effect: 'status 500', times: 1 })) });
    try {
      expect((await full.post('/_sandbox/rules', { name: 'last', effect: 'drop-before', operation: 'GetQuote' })).status).toBe(200);
      const next = await full.post('/_sandbox/rules', { effect: 'drop-before' });
      expect(next).toMatchObject({ status: 400, body: { error: `Invalid request: ${MAX_RULES} rules are in force, the most there may be; DELETE /_sandbox/rules (trade sandbox clear) clears them` } });
      const listed = (await full.get('/_sandbox/rules')).body as { count: number; rules: Array<{ name: string }> };
      expect(listed.count).toBe(MAX_RULES);
      expect(listed.rules.at(-1)!.name).toBe('last');
      expect((await full.http('DELETE', '/_sandbox/rules')).body).toEqual({ cleared: MAX_RULES, success: true });
      expect((await full.post('/_sandbox/rules', { effect: 'status 500', times: MAX_COUNT + 1 })).body).toEqual({
        error: 'Invalid request: times: must be at most 1,000,000 (leave times out for a rule that never stops)',
      });
    } finally {
      await full.close();
    }
  });

  it('large bodies are kept in the log as a note of their size: the ring stays small whatever comes in', async () => {
    await h.http('DELETE', '/_sandbox/log');
    const big = { ...ES_MARKET, orderId: 'x', ocoId: 'y'.repeat(60_000) };
    const replies = await Promise.all(Array.from({ length: 300 }, () => h.post('/v1/api/accounts/Sim101/orders/place', big)));
    expect(replies.every((r) => r.status === 400)).toBe(true);
    await h.post('/v1/api/accounts/Sim101/orders/place', ES_MARKET);
    const log = (await h.get('/_sandbox/log')).body as { entries: Array<{ body: unknown; operation: string }>; total: number; size: number };
    expect(log.size).toBe(200);
    expect(log.total).toBe(302); // with the DELETE that cleared it
    expect(log.entries).toHaveLength(200);
    const kept = log.entries.filter((e) => e.operation === 'PlaceOrder');
    expect(kept.slice(0, -1).every((e) => e.body === `[a body of more than ${MAX_LOGGED_BODY} characters, not kept]`)).toBe(true);
    // A small body is kept as it came.
    expect(kept.at(-1)!.body).toEqual(ES_MARKET);
    expect(JSON.stringify(log).length).toBeLessThan(200 * 400);
    expect(h.snapshot().orders).toHaveLength(1);
  });

  it(`${MAX_SNAPSHOTS} snapshots at most are kept; another name is refused, the same one saved over`, async () => {
    for (let i = 0; i < MAX_SNAPSHOTS; i++) expect((await h.post('/_sandbox/save', { name: `s${i}` })).status).toBe(200);
    const next = await h.post('/_sandbox/save', { name: 'one-more' });
    expect(next.status).toBe(400);
    expect((next.body as { error: string }).error).toMatch(/^Invalid request: name: 100 snapshots are saved already, the most kept; save over one of them, or remove some from \S+\.snapshots$/);
    expect((await h.post('/_sandbox/save', { name: 's7' })).status).toBe(200);
    const dir = `${h.engine.file}.snapshots`;
    expect(readdirSync(dir).filter((f) => f.endsWith('.db'))).toHaveLength(MAX_SNAPSHOTS);
  });
});
