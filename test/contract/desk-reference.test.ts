/**
 * Desk mode (docs/desk-mode.md) against the reference double (written from service-reference.md
 * alone): two machines, one on the http backend and one on ws, trading the same accounts of one
 * double and sharing one guard ledger on a real PostgreSQL (this file's database on the run's
 * throwaway cluster). The guard's remote reads and `trade reconcile`'s GetOrderStatus are the
 * service's, not `trade serve`'s: a max-position that counts the other machine's short, a halt
 * set over one transport stopping the other, a line one machine left unknown reconciled by the
 * other over the other transport.
 */
import { spawnRecorded } from '../helpers/spawn.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { blackHole } from '../helpers/black-hole.js';
import { BIN, orderArgs, runBin, tempHomes } from '../helpers/cli.js';
import { stopOwnCluster, type TestDatabase, testDatabase } from '../helpers/postgres.js';
import { type ReferenceDouble, startReferenceDouble } from '../helpers/reference-double.js';

const ES = 'ES 06-26';
const NQ = 'NQ 06-26';
const CL = 'CL 06-26';

const { home, cleanup } = tempHomes();
let double: ReferenceDouble;
let db: TestDatabase;
beforeAll(async () => {
  [double, db] = await Promise.all([startReferenceDouble({ prices: { [ES]: 5000, [NQ]: 20000, [CL]: 70 } }), testDatabase('deskref')]);
  const init = await runBin(['guard', 'init'], machine('http', 'init'));
  expect(init.code, init.stderr).toBe(0);
});
afterAll(async () => {
  await double?.close();
  await db?.drop();
  await stopOwnCluster();
  cleanup();
});

/** A machine of the desk on `backend`: its own data and config, the double and the shared ledger. */
function machine(backend: 'http' | 'ws', name: string, extra: Env = {}): Env {
  return home({ TRADE_BACKEND: backend, TRADE_BASE_URL: `${double.url}/v1/api`, TRADE_TOKEN: double.token, TRADE_GUARD_LEDGER: db.url, TRADE_GUARD_MACHINE: name, ...extra });
}

type Entry = { id: number; machine: string | null; operation: string; instrument: string | null; outcome: string; rule: string | null; clientOrderId: string | null };
async function journal(env: Env): Promise<Entry[]> {
  const run = await runBin(['history', '--json'], env);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { entries: Entry[] }).entries;
}

const placed = () => double.requests.filter((r) => r.api === 'PlaceOrder' && r.status === 200).length;

describe('a desk of an http machine and a ws machine against the reference double', () => {
  it("max-position counts the other machine's short; a buy that covers it reduces; two at once from each end at the limit", async () => {
    const limit = { TRADE_GUARD_MAX_POSITION: '2' };
    const [viaHttp, viaWs] = [machine('http', 'desk-http', limit), machine('ws', 'desk-ws', limit)];
    const short = await runBin(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL', '--quantity': '2' })], viaHttp);
    expect(short.code, short.stderr).toBe(0);
    const over = await runBin(['place', ...orderArgs({ '--instrument': ES, '--action': 'SELL' })], viaWs);
    expect(over.code).toBe(6);
    expect(over.stderr).toBe(
      'Error: refused by guard max-position: position -2 + this order -1 could reach 3, above the limit of 2 (TRADE_GUARD_MAX_POSITION); nothing was sent\n' +
        '  trade guard show lists the rules; trade config unset guard.RULE removes one.\n',
    );
    const cover = await runBin(['place', ...orderArgs({ '--instrument': ES, '--action': 'BUY' })], viaWs);
    expect(cover.code, cover.stderr).toBe(0);

    const before = placed();
    const runs = await Promise.all([viaHttp, viaHttp, viaWs, viaWs].map((env) => runBin(['place', ...orderArgs({ '--instrument': NQ })], env)));
    expect(runs.map((r) => r.code).sort(), runs.map((r) => r.stderr).join('')).toEqual([0, 0, 6, 6]);
    expect(placed()).toBe(before + 2);
    const lines = (await journal(viaWs)).filter((e) => e.instrument === NQ);
    expect(lines.map((e) => `${e.outcome} ${e.rule ?? ''}`.trim()).sort()).toEqual(['accepted', 'accepted', 'refused max-position', 'refused max-position']);
    expect(lines.map((e) => e.machine).sort()).toEqual(['desk-http', 'desk-http', 'desk-ws', 'desk-ws']);
  }, 60_000);

  it('a halt set over ws stops the http machine at its next order; its flatten still goes out; a resume over http lifts it', async () => {
    const [viaHttp, viaWs] = [machine('http', 'desk-http'), machine('ws', 'desk-ws')];
    expect((await runBin(['place', ...orderArgs({ '--instrument': CL })], viaHttp)).code).toBe(0);
    const halted = await runBin(['halt', '--reason', 'fomc'], viaWs);
    expect(halted.code, halted.stderr).toBe(0);
    const before = placed();
    const refused = await runBin(['place', ...orderArgs({ '--instrument': CL })], viaHttp);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/^Error: refused by guard halt: profile default is HALTED since \S+ \(fomc\); nothing was sent\n/);
    expect(placed()).toBe(before);
    const flatten = await runBin(['flatten', '--account', 'Sim101', '--yes'], viaHttp);
    expect(flatten.code, flatten.stderr).toBe(0);
    expect(double.requests.filter((r) => r.api === 'Flatten').map((r) => [r.transport, r.args.account, r.status])).toEqual([['http', 'Sim101', 200]]);
    expect((await runBin(['resume'], viaHttp)).code).toBe(0);
    const again = await runBin(['place', ...orderArgs({ '--instrument': CL })], viaWs);
    expect(again.code, again.stderr).toBe(0);
  }, 60_000);

  it('a line the http machine left unknown (killed after sending) is reconciled by the ws machine (GetOrderStatus)', async () => {
    const hole = await blackHole(double.url);
    try {
      const lost = machine('http', 'desk-http', { TRADE_BASE_URL: `${hole.url}/v1/api`, TRADE_TIMEOUT: '60' });
      const viaWs = machine('ws', 'desk-ws');
      const before = placed();
      const child = spawnRecorded(process.execPath, [BIN, 'place', ...orderArgs({ '--instrument': ES })], { env: { PATH: process.env.PATH, ...lost }, stdio: 'ignore' });
      await expect.poll(placed, { timeout: 20_000, interval: 50 }).toBe(before + 1);
      const gone = new Promise((resolve) => child.once('close', resolve));
      child.kill('SIGKILL');
      await gone;
      const sent = double.requests.filter((r) => r.api === 'PlaceOrder').at(-1)!;
      const unknown = (JSON.parse((await runBin(['history', '--unknown', '--json'], viaWs)).stdout) as { entries: Entry[] }).entries;
      expect(unknown).toEqual([expect.objectContaining({ outcome: 'unknown', machine: 'desk-http', instrument: ES, clientOrderId: sent.args.orderId })]);
      const reconciled = await runBin(['reconcile'], viaWs);
      expect(reconciled.code, reconciled.stderr).toBe(0);
      expect(reconciled.stdout).toBe(`#${unknown[0]!.id} PlaceOrder: placed (order ${String(sent.args.orderId)}, Filled)\n`);
      expect(double.requests.filter((r) => r.api === 'GetOrderStatus').map((r) => r.transport)).toEqual(['ws']);
      expect((await runBin(['history', '--unknown'], machine('http', 'desk-3'))).stdout).toBe('No request has an unknown outcome.\n');
    } finally {
      hole.server.close();
    }
  }, 60_000);
});
