/**
 * Desk mode through the built CLI (docs/desk-mode.md): three machines, each a data directory and
 * a config of its own (TRADE_HOME, TRADE_CONFIG_DIR, HOME), trading the same accounts of one real
 * `trade serve` over http and sharing one guard ledger on a real PostgreSQL server (this file's
 * database on the run's throwaway cluster, test/helpers/postgres.ts). A limit counts every
 * machine's orders, a halt on one stops the others at their next order, the journal lists every
 * machine's lines with its name, a line left unknown by one is reconciled on another; the server
 * stopped in the middle of a run refuses new risk (exit 6) and lets a flatten through, journaled
 * once it is back. A few rounds of the three-machine race here; `npm run bench:desk` runs 50.
 */
import { spawnRecorded } from '../helpers/spawn.js';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { blackHole } from '../helpers/black-hole.js';
import { BIN, orderArgs, runBin, tempHomes } from '../helpers/cli.js';
import { type Cluster, startCluster, stopOwnCluster, type TestDatabase, testDatabase } from '../helpers/postgres.js';
import { closedPort } from '../helpers/ports.js';
import { killServes, type ServeProcess, startServe } from '../helpers/serve-process.js';

const TOKEN = 'desk-test-token-7b3e91c4d2';
const ROUNDS = 2;

const { home, cleanup } = tempHomes();
let serve: ServeProcess;
let db: TestDatabase;
const ACCOUNTS = ['Sim201', 'Sim301', 'Sim401', 'Sim501', 'Sim601', 'Sim701'];
beforeAll(async () => {
  const served = home();
  for (const account of ACCOUNTS) expect((await runBin(['accounts', 'add', account], served)).code).toBe(0);
  [serve, db] = await Promise.all([startServe(served, TOKEN), testDatabase('desk')]);
});
afterAll(async () => {
  await killServes();
  await db?.drop();
  await stopOwnCluster();
  cleanup();
});

/** A machine of the desk: its own data and config, the shared service and ledger. */
function machine(name: string, extra: Env = {}, url = db.url): Env {
  return home({ TRADE_BACKEND: 'http', TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN, TRADE_GUARD_LEDGER: url, TRADE_GUARD_MACHINE: name, ...extra });
}

/** `postgres://trade_admin:PASSWORD@…` → its parts, to hand the password over another way. */
const withoutPassword = (url: string) => url.replace(/^(postgres:\/\/[^:]+):[^@]+@/, '$1@');
const passwordOf = (url: string) => /^postgres:\/\/[^:]+:([^@]+)@/.exec(url)![1]!;

type Entry = { id: number; machine: string | null; operation: string; account: string | null; instrument: string | null; outcome: string; rule: string | null; clientOrderId: string | null };
async function journal(env: Env): Promise<Entry[]> {
  const run = await runBin(['history', '--json'], env);
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { entries: Entry[] }).entries;
}

async function position(env: Env, instrument: string): Promise<number> {
  const run = await runBin(['position', instrument, '--account', 'Sim101', '--json'], env);
  expect(run.code, run.stderr).toBe(0);
  const body = JSON.parse(run.stdout) as { marketPosition: string; quantity?: number };
  return body.marketPosition === 'Short' ? -(body.quantity ?? 0) : (body.quantity ?? 0);
}

describe('trade guard init', () => {
  it('an order before it is refused with how to make the schema; two machines at once make it; a third run finds it done', async () => {
    const [one, two] = [machine('desk-1'), machine('desk-2')];
    const early = await runBin(['place', ...orderArgs()], one);
    expect(early.code).toBe(6);
    expect(early.stderr).toBe(
      `Error: The guard's ledger ${withoutPassword(db.url)} has no schema yet; nothing was sent.\n  Run \`trade guard init\` once (from any machine of the desk).\n`,
    );
    const doctor = await runBin(['doctor'], one);
    expect(doctor.code).toBe(6);
    expect(doctor.stdout).toContain(`: reachable, no schema yet\n`);
    expect(doctor.stdout).toMatch(/\n✖ ledger +postgres:\/\/trade_admin@127\.0\.0\.1:\d+\/desk_\w+: reachable, no schema yet\n +Run `trade guard init` once, from any machine of the desk\.\n/);
    const both = await Promise.all([runBin(['guard', 'init'], one), runBin(['guard', 'init', '--json'], two)]);
    expect(both.map((r) => r.code)).toEqual([0, 0]);
    const json = JSON.parse(both[1].stdout) as { from: number; schemaVersion: number; ledger: string; kind: string };
    expect(json).toMatchObject({ schemaVersion: 1, ledger: withoutPassword(db.url), kind: 'postgres' });
    // One of them made it; the other waited for it and found it made.
    const created = [both[0].stdout === `The guard's ledger ${withoutPassword(db.url)} was created (schema 1).\n`, json.from === 0];
    expect(created.filter(Boolean)).toHaveLength(1);
    if (!created[0]) expect(both[0].stdout).toBe(`The guard's ledger ${withoutPassword(db.url)} was already at schema 1.\n`);
    const again = await runBin(['guard', 'init'], machine('desk-3'));
    expect(again.stdout).toBe(`The guard's ledger ${withoutPassword(db.url)} was already at schema 1.\n`);
    const checked = await runBin(['doctor', '--json'], one);
    expect(checked.code, checked.stdout).toBe(0);
    const report = JSON.parse(checked.stdout) as { ledger: { where: string; schemaVersion: number; clockSkewMs: number }; checks: Array<{ name: string; status: string; message: string }> };
    expect(report.ledger).toMatchObject({ where: withoutPassword(db.url), schemaVersion: 1, currentSchemaVersion: 1 });
    expect(Math.abs(report.ledger.clockSkewMs)).toBeLessThan(1000);
    expect(report.checks.find((c) => c.name === 'ledger')).toMatchObject({ status: 'pass', message: expect.stringMatching(/: reachable, schema 1, clock [+-]\d+ ms against the server$/) });
    for (const run of [early, doctor, ...both, again, checked]) expect(run.stdout + run.stderr).not.toContain(passwordOf(db.url));
  }, 60_000);
});

describe('three machines on one ledger', () => {
  const desk = (extra: Env = {}) => [machine('desk-1', extra), machine('desk-2', extra), machine('desk-3', extra)];

  it(`max-position 2: two orders from each machine at once end at a position of 2, ${ROUNDS} rounds`, async () => {
    const machines = desk({ TRADE_GUARD_MAX_POSITION: '2' });
    for (let round = 0; round < ROUNDS; round++) {
      const instrument = `NQ ${String(3 * round + 3).padStart(2, '0')}-31`;
      const runs = await Promise.all(machines.flatMap((env) => [0, 1].map(() => runBin(['place', ...orderArgs({ '--instrument': instrument })], env))));
      expect(runs.map((r) => r.code).sort(), runs.map((r) => r.stderr).join('')).toEqual([0, 0, 6, 6, 6, 6]);
      for (const refused of runs.filter((r) => r.code === 6))
        expect(refused.stderr).toMatch(/^Error: refused by guard max-position: position [12] (\+ working \d+ )?\+ this order 1 could reach 3, above the limit of 2 \(TRADE_GUARD_MAX_POSITION\); nothing was sent\n/);
      expect(await position(machines[round % 3]!, instrument)).toBe(2);
      // Every machine's journal is the desk's: the six lines, each with the machine that sent it.
      const lines = (await journal(machines[(round + 1) % 3]!)).filter((e) => e.instrument === instrument);
      expect(lines.map((e) => `${e.outcome} ${e.rule ?? ''}`.trim()).sort()).toEqual(['accepted', 'accepted', ...Array(4).fill('refused max-position')]);
      expect(lines.map((e) => e.machine).sort()).toEqual(['desk-1', 'desk-1', 'desk-2', 'desk-2', 'desk-3', 'desk-3']);
    }
  }, 120_000);

  it('max-orders counts every machine\'s orders; a halt on one stops the others at their next order, a resume on a third lifts it', async () => {
    const [one, two, three] = desk({ TRADE_GUARD_MAX_ORDERS: '3/min', TRADE_ACCOUNT: 'Sim201' });
    const order = orderArgs({ '--account': 'Sim201', '--instrument': 'YM 12-31' });
    const paced = await Promise.all([one, two, three].flatMap((env) => [runBin(['place', ...order], env), runBin(['place', ...order], env)]));
    expect(paced.map((r) => r.code).sort()).toEqual([0, 0, 0, 6, 6, 6]);
    for (const refused of paced.filter((r) => r.code === 6)) expect(refused.stderr).toMatch(/^Error: refused by guard max-orders: this would be order 4 of Sim201 within min, above 3\/min/);

    const calm = [machine('desk-1'), machine('desk-2'), machine('desk-3')];
    const halted = await runBin(['halt', '--account', 'Sim301', '--reason', 'news'], calm[0]!);
    expect(halted.code, halted.stderr).toBe(0);
    const refused = await runBin(['place', ...orderArgs({ '--account': 'Sim301' })], calm[1]!);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toMatch(/^Error: refused by guard halt: account Sim301 is HALTED since \S+ \(news\); nothing was sent\n/);
    const shown = await runBin(['guard', 'show'], calm[2]!);
    expect(shown.stdout).toContain(`(ledger ${withoutPassword(db.url)})`);
    expect(shown.stdout).toMatch(/State: account Sim301 HALTED since \S+ \(news\)/);
    expect((await runBin(['resume', '--account', 'Sim301'], calm[2]!)).stdout).toBe('account Sim301 resumed.\n');
    const placed = await runBin(['place', ...orderArgs({ '--account': 'Sim301' })], calm[1]!);
    expect(placed.code, placed.stderr).toBe(0);
    // The table of any machine names each line's machine.
    const table = await runBin(['history', '--account', 'Sim301'], calm[0]!);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TIME \(UTC\)\s+MACHINE\s+SOURCE\s+OPERATION/);
    expect(table.stdout).toMatch(/\s+desk-2\s+cli\s+PlaceOrder\s+Sim301\s+ES 09-25\s+BUY 1 MARKET\s+refused \(halt\)/);
    expect(table.stdout).toMatch(/\s+desk-2\s+cli\s+PlaceOrder\s+Sim301\s+ES 09-25\s+BUY 1 MARKET\s+accepted/);
  }, 60_000);

  it('a line one machine left unknown (killed after sending) is listed and reconciled by another', async () => {
    const hole = await blackHole(serve.url);
    try {
      const lost = machine('desk-1', { TRADE_BASE_URL: hole.url, TRADE_TIMEOUT: '60' });
      const other = machine('desk-2');
      const child = spawnRecorded(process.execPath, [BIN, 'place', ...orderArgs({ '--account': 'Sim401', '--instrument': 'CL 01-26' })], { env: { PATH: process.env.PATH, ...lost }, stdio: 'ignore' });
      await expect
        .poll(async () => (JSON.parse((await runBin(['orders', '--account', 'Sim401', '--json'], other)).stdout) as { orders: unknown[] }).orders.length, { timeout: 20_000, interval: 100 })
        .toBe(1);
      const gone = new Promise((resolve) => child.once('close', resolve));
      child.kill('SIGKILL');
      await gone;
      const unknown = await runBin(['history', '--unknown', '--json'], other);
      const lines = (JSON.parse(unknown.stdout) as { entries: Entry[] }).entries;
      expect(lines).toEqual([expect.objectContaining({ outcome: 'unknown', machine: 'desk-1', instrument: 'CL 01-26', clientOrderId: expect.stringMatching(/^[0-9a-f]{32}$/) })]);
      const reconciled = await runBin(['reconcile'], other);
      expect(reconciled.code, reconciled.stderr).toBe(0);
      expect(reconciled.stdout).toBe(`#${lines[0]!.id} PlaceOrder: placed (order ${lines[0]!.clientOrderId}, Filled)\n`);
      expect((await runBin(['history', '--unknown'], machine('desk-3'))).stdout).toBe('No request has an unknown outcome.\n');
    } finally {
      hole.server.close();
    }
  }, 60_000);

  it('the password from the URL, PGPASSWORD or ~/.pgpass; never printed, not even when the server is unreachable', async () => {
    const password = passwordOf(db.url);
    const bare = withoutPassword(db.url);
    const fromEnv = machine('desk-env', { PGPASSWORD: password }, bare);
    const fromFile = machine('desk-file', {}, bare);
    const { port } = new URL(db.url);
    writeFileSync(join(fromFile.HOME!, '.pgpass'), `127.0.0.1:${port}:*:trade_admin:${password}\n`);
    chmodSync(join(fromFile.HOME!, '.pgpass'), 0o600);
    for (const env of [fromEnv, fromFile]) {
      const run = await runBin(['halt', '--account', 'Sim501'], env);
      expect(run.code, run.stderr).toBe(0);
      expect((await runBin(['resume', '--account', 'Sim501'], env)).code).toBe(0);
    }
    const none = await runBin(['place', ...orderArgs({ '--account': 'Sim501' })], machine('desk-none', {}, bare));
    expect(none.code).toBe(6);
    expect(none.stderr.split('\n')[0]).toBe(
      `Error: The guard's ledger ${bare} cannot be used (the server asks for a password and none was found in the URL, PGPASSWORD or ~/.pgpass); nothing was sent.`,
    );
    const away = `postgres://trade_admin:${password}@127.0.0.1:${await closedPort()}/desk`;
    const unreachable = await runBin(['place', ...orderArgs({ '--account': 'Sim501' })], machine('desk-away', {}, away));
    expect(unreachable.code).toBe(6);
    expect(unreachable.stderr.split('\n')[0]).toBe(`Error: The guard's ledger ${withoutPassword(away)} cannot be used (connection refused); nothing was sent.`);
    const listed = await runBin(['config', 'list'], machine('desk-away', {}, away));
    expect(listed.stdout).toMatch(/guard\.ledger\s+postgres:\/\/trade_admin:…@127\.0\.0\.1:\d+\/desk\s+env\n/);
    for (const run of [none, unreachable, listed]) expect(run.stdout + run.stderr).not.toContain(password);
  }, 60_000);
});

describe('the ledger server stopped in the middle of a run', () => {
  let cluster: Cluster;
  beforeAll(async () => {
    cluster = await startCluster();
  });
  afterAll(() => cluster?.destroy());

  it('new risk is refused with exit 6, a flatten and a reducing order pass, and the journal is complete once it is back', async () => {
    const url = cluster.adminUrl;
    const one = machine('desk-1', {}, url);
    const two = machine('desk-2', {}, url);
    expect((await runBin(['guard', 'init'], one)).code).toBe(0);
    const order = orderArgs({ '--account': 'Sim601', '--instrument': 'RTY 12-31', '--quantity': '3' });
    expect((await runBin(['place', ...order], one)).code).toBe(0);
    cluster.stop();
    const refused = await runBin(['place', ...order], two);
    expect(refused.code).toBe(6);
    expect(refused.stderr).toBe(
      `Error: The guard's ledger ${withoutPassword(url)} cannot be used (connection refused); nothing was sent.\n  Check that the desk's PostgreSQL server is up and reachable from this machine (trade doctor checks it). Exits and orders that only reduce a position still go through, journaled when it is back.\n`,
    );
    const reducing = await runBin(['place', ...orderArgs({ '--account': 'Sim601', '--instrument': 'RTY 12-31', '--action': 'SELL', '--quantity': '1' })], two);
    expect(reducing.code, reducing.stderr).toBe(0);
    expect(reducing.stderr).toBe(
      `Warning: The guard's ledger ${withoutPassword(url)} cannot be used (connection refused): this PlaceOrder is sent now, and journaled when the ledger is back.\n`,
    );
    const flatten = await runBin(['flatten', '--account', 'Sim601'], one);
    expect(flatten.code, flatten.stderr).toBe(0);
    expect(flatten.stderr).toBe(`Warning: The guard's ledger ${withoutPassword(url)} cannot be used (connection refused): this Flatten is sent now, and journaled when the ledger is back.\n`);
    expect(await position(one, 'RTY 12-31')).toBe(0);
    cluster.start();
    // Each machine's next use of the ledger journals what it sent meanwhile.
    await runBin(['guard', 'show'], one);
    await runBin(['guard', 'show'], two);
    const lines = (await journal(two)).map((e) => [e.machine, e.operation, e.outcome, e.rule]);
    expect(lines).toEqual(
      expect.arrayContaining([
        ['desk-1', 'PlaceOrder', 'accepted', null],
        ['desk-2', 'PlaceOrder', 'accepted', null],
        ['desk-1', 'Flatten', 'accepted', null],
      ]),
    );
    expect(lines).toHaveLength(3);
    for (const run of [refused, reducing, flatten]) expect(run.stdout + run.stderr).not.toContain(passwordOf(url));
  }, 90_000);

  it('a server too slow to answer (a statement timeout) fails closed the same way', async () => {
    const url = cluster.adminUrl;
    const env = machine('desk-1', { TRADE_GUARD_LEDGER_TIMEOUT: '0.5' }, url);
    expect((await runBin(['guard', 'init'], env)).code).toBe(0);
    const pg = (await import('pg')).default;
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      // Another session holds the halts table: every judging statement waits, past the limit.
      await holder.query('BEGIN');
      await holder.query('LOCK TABLE trade_guard.halts IN ACCESS EXCLUSIVE MODE');
      const slow = await runBin(['place', ...orderArgs({ '--account': 'Sim701' })], env);
      expect(slow.code).toBe(6);
      expect(slow.stderr.split('\n')[0]).toBe(`Error: The guard's ledger ${withoutPassword(url)} cannot be used (no answer within 0.5 s); nothing was sent.`);
      const flatten = await runBin(['flatten', '--account', 'Sim701'], env);
      expect(flatten.code, flatten.stderr).toBe(0);
      expect(flatten.stderr).toMatch(/^Warning: The guard's ledger .* cannot be used \(no answer within 0\.5 s\): this Flatten is sent now, and journaled when the ledger is back\.\n$/);
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    const lines = (await journal(env)).filter((e) => e.account === 'Sim701');
    expect(lines.map((e) => [e.machine, e.operation, e.outcome])).toEqual([['desk-1', 'Flatten', 'accepted']]);
  }, 60_000);
});
