/**
 * Every refusal journaled (issue 31), whatever refused it, with who asked, the rule and what was
 * asked: a guard rule from the CLI and from a batch, a reverse to the same side in a script (the
 * CLI's own refusal), the account lock; `trade history --refused` lists them and nothing else. A
 * request that is not valid reaches no decision and leaves the journal as it was; no journal line
 * holds the token, in the account column either.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, runBin, tempHomes } from '../helpers/cli.js';

const { home, cleanup } = tempHomes();
afterAll(cleanup);

interface Entry {
  source: string;
  operation: string;
  account: string | null;
  outcome: string;
  rule: string | null;
  message: string | null;
  request: Record<string, unknown>;
}

async function entries(env: Env, ...flags: string[]): Promise<Entry[]> {
  const listed = await runBin(['history', '--json', ...flags], env);
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { entries: Entry[] }).entries;
}

describe('trade history --refused', () => {
  it('lists the refusals of the CLI, a batch and the guard, with source, rule and request; not what passed', async () => {
    const env = home({ TRADE_GUARD_MAX_ORDER_QTY: '2' });
    expect((await runBin(['place', ...orderArgs()], env)).code).toBe(0);
    const sameSide = await runBin(['reverse', ...orderArgs()], env);
    expect(sameSide.code).toBe(2);
    expect((await runBin(['place', ...orderArgs({ '--quantity': '3' })], env)).code).toBe(6);
    const batch = await runBin(['batch', '-'], env, `${JSON.stringify({ api: 'PlaceOrder', args: { account: 'Sim101', instrument: 'ES 09-25', action: 'SELL', quantity: 5, orderType: 'MARKET', timeInForce: 'DAY' } })}\n`);
    expect(batch.code).toBe(6);
    // Not valid: no decision was made, nothing is journaled.
    expect((await runBin(['place', ...orderArgs({ '--quantity': '0' })], env)).code).toBe(2);

    const refused = await entries(env, '--refused');
    expect(refused.map((e) => [e.source, e.operation, e.rule, e.request.quantity])).toEqual([
      ['cli', 'ReversePosition', 'same-side', 1],
      ['cli', 'PlaceOrder', 'max-order-qty', 3],
      ['batch', 'PlaceOrder', 'max-order-qty', 5],
    ]);
    expect(refused[0]!.message).toBe(sameSide.stderr.split('\n')[0]!.replace(/^Error: /, ''));
    expect(refused.every((e) => e.outcome === 'refused' && e.account === 'Sim101')).toBe(true);
    expect((await entries(env)).map((e) => e.outcome)).toEqual(['accepted', 'refused', 'refused', 'refused']);

    const table = await runBin(['history', '--refused'], env);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^ID\s+TIME \(UTC\)\s+SOURCE\s+OPERATION\s+ACCOUNT\s+INSTRUMENT\s+ORDER\s+OUTCOME\s+ORDER ID \/ MESSAGE$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(2, 8))).toEqual([
      ['cli', 'ReversePosition', 'Sim101', 'ES 09-25', 'BUY 1 MARKET', 'refused (same-side)'],
      ['cli', 'PlaceOrder', 'Sim101', 'ES 09-25', 'BUY 3 MARKET', 'refused (max-order-qty)'],
      ['batch', 'PlaceOrder', 'Sim101', 'ES 09-25', 'SELL 5 MARKET', 'refused (max-order-qty)'],
    ]);
  });

  it('says so when nothing was refused; with --unknown too, lists either', async () => {
    const env = home();
    expect((await runBin(['history', '--refused'], env)).stdout).toBe('No request was refused.\n');
    expect((await runBin(['history', '--refused', '--unknown'], env)).stdout).toBe('No request was refused or has an unknown outcome.\n');
    expect((await runBin(['place', ...orderArgs({ '--quantity': '2' }), '--guard', 'max-order-qty=1'], env)).code).toBe(6);
    expect((await entries(env, '--refused', '--unknown')).map((e) => e.rule)).toEqual(['max-order-qty']);
  });

  it('journals no token: not in the request, not in the account column', async () => {
    const token = 'refusals-test-token-4b9e2d7c';
    const env = home({ TRADE_TOKEN: token, TRADE_GUARD_MAX_ORDER_QTY: '1' });
    expect((await runBin(['accounts', 'add', token], env)).code).toBe(0);
    expect((await runBin(['place', ...orderArgs({ '--account': token, '--quantity': '2' })], env)).code).toBe(6);
    const [line] = await entries(env, '--refused');
    expect(line).toMatchObject({ account: '[redacted]', rule: 'max-order-qty', request: expect.objectContaining({ account: '[redacted]' }) });
    const { readFileSync, readdirSync } = await import('node:fs');
    for (const f of readdirSync(env.TRADE_HOME!).filter((f) => /^guard\.db(-wal)?$/.test(f)))
      expect(readFileSync(`${env.TRADE_HOME!}/${f}`).includes(Buffer.from(token))).toBe(false);
  });
});
