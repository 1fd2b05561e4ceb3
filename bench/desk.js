// npm run bench:desk: desk mode (issue 35, docs/desk-mode.md). Three machines (three data
// directories and configs) trade the same account of one `trade serve` over http and share one
// guard ledger on a real PostgreSQL server (a throwaway cluster from Debian's postgresql package,
// started here as `nobody` when run as root, on a free loopback port). guard.max-position 2; each
// round every machine sends two `trade place --quantity 1` at once, on a fresh contract, and the
// position they leave is read. Every tenth round one machine halts the account and each other
// machine's next order must be refused by the halt. Reports the largest position any round ended
// with (the limit holds when it is 2), how the exit codes fell, the halts seen, and the time per
// round; writes bench/desk-results.json. test/guard/desk.test.ts runs 2 rounds in `npm test`.
//
//   node bench/desk.js [--rounds 50]
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runTrade as run, median, printTable, startServe, tempDir } from './util.js';

const { values: flags } = parseArgs({ options: { rounds: { type: 'string', default: '50' } } });
const ROUNDS = Number(flags.rounds);
const MACHINES = 3;
const PER_MACHINE = 2;
const LIMIT = 2;
const TOKEN = 'desk-bench-token-0123456789abcdef';

/** A PostgreSQL cluster in `dir`, as nobody under root (initdb refuses root), password auth, on a free loopback port. */
async function startPostgres(dir) {
  const root = '/usr/lib/postgresql';
  const version = existsSync(root) ? readdirSync(root).filter((v) => existsSync(join(root, v, 'bin', 'initdb'))).sort((a, b) => b - a)[0] : undefined;
  if (!version) throw new Error('PostgreSQL is not installed: apt-get install postgresql');
  const bin = join(root, version, 'bin');
  const as = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const pgDir = join(dir, 'pg');
  const data = join(pgDir, 'data');
  mkdirSync(data, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o755);
  const password = randomBytes(12).toString('hex');
  writeFileSync(join(pgDir, 'pwfile'), `${password}\n`, { mode: 0o600 });
  if (as.uid !== undefined) for (const path of [pgDir, data, join(pgDir, 'pwfile')]) chownSync(path, as.uid, as.gid);
  const exec = (program, args) => {
    const result = spawnSync(join(bin, program), args, { cwd: pgDir, encoding: 'utf8', ...as, env: { PATH: process.env.PATH, LANG: 'C' } });
    if (result.status !== 0) throw new Error(`${program} failed: ${result.stderr}`);
  };
  exec('initdb', ['-D', data, '-U', 'desk', `--pwfile=${join(pgDir, 'pwfile')}`, '--auth=scram-sha-256', '-E', 'UTF8', '--no-locale']);
  const port = await new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = server.address();
      server.close(() => resolve(free));
    });
  });
  exec('pg_ctl', ['-D', data, '-l', join(pgDir, 'log'), '-w', '-o', `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=`, 'start']);
  return { url: `postgres://desk:${password}@127.0.0.1:${port}/postgres`, stop: () => exec('pg_ctl', ['-D', data, '-m', 'fast', '-w', 'stop']) };
}

async function main() {
  const { dir, cleanup } = tempDir('trade-desk-');
  const pg = await startPostgres(dir);
  const serveEnv = { TRADE_HOME: join(dir, 'serve'), TRADE_CONFIG_DIR: join(dir, 'serve-config'), TRADE_SERVE_TOKEN: TOKEN };
  const serve = await startServe([], serveEnv);
  const stopAll = () => {
    serve.child.kill('SIGTERM');
    pg.stop();
    cleanup();
  };
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => {
      stopAll();
      process.exit(1);
    });
  const machines = Array.from({ length: MACHINES }, (_, i) => ({
    TRADE_HOME: join(dir, `machine-${i + 1}`),
    TRADE_CONFIG_DIR: join(dir, `machine-${i + 1}-config`),
    HOME: join(dir, `machine-${i + 1}`),
    NO_COLOR: '1',
    TRADE_BACKEND: 'http',
    TRADE_BASE_URL: serve.url,
    TRADE_TOKEN: TOKEN,
    TRADE_GUARD_LEDGER: pg.url,
    TRADE_GUARD_MACHINE: `desk-${i + 1}`,
    TRADE_GUARD_MAX_POSITION: String(LIMIT),
  }));
  const rounds = [];
  const halts = { tried: 0, seen: 0 };
  try {
    const init = await run(['guard', 'init'], machines[0]);
    if (init.code !== 0) throw new Error(`trade guard init: ${init.stderr}`);
    for (let round = 0; round < ROUNDS; round++) {
      const instrument = `ES ${String(3 * (round % 4) + 3).padStart(2, '0')}-${40 + Math.floor(round / 4)}`;
      const order = ['place', '--account', 'Sim101', '--instrument', instrument, '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'];
      const start = process.hrtime.bigint();
      const runs = await Promise.all(machines.flatMap((env) => Array.from({ length: PER_MACHINE }, () => run(order, env))));
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      const read = await run(['position', instrument, '--account', 'Sim101', '--json'], machines[round % MACHINES]);
      const position = JSON.parse(read.stdout).quantity ?? 0;
      const codes = runs.map((r) => r.code);
      const other = runs.filter((r) => r.code !== 0 && !/refused by guard max-position/.test(r.stderr));
      rounds.push({ instrument, position, placed: codes.filter((c) => c === 0).length, refused: codes.filter((c) => c === 6).length, other: other.map((r) => r.stderr.split('\n')[0]), ms });
      if (round % 10 === 9) {
        // A halt on one machine, seen by each other machine at its next order.
        const halter = machines[round % MACHINES];
        await run(['halt', '--account', 'Sim101', '--reason', 'bench'], halter);
        for (const env of machines.filter((m) => m !== halter)) {
          halts.tried++;
          const next = await run(order, env);
          if (next.code === 6 && /refused by guard halt: account Sim101 is HALTED/.test(next.stderr)) halts.seen++;
        }
        await run(['resume', '--account', 'Sim101'], machines[(round + 1) % MACHINES]);
      }
      const last = rounds.at(-1);
      process.stderr.write(`round ${round + 1}/${ROUNDS}: position ${position}, ${last.placed} placed, ${last.refused} refused, ${ms.toFixed(0)} ms\n`);
    }
  } finally {
    stopAll();
  }
  const results = {
    date: new Date().toISOString(),
    node: process.version,
    cpus: cpus().length,
    machines: MACHINES,
    ordersPerMachine: PER_MACHINE,
    limit: LIMIT,
    rounds: rounds.length,
    maxPosition: Math.max(...rounds.map((r) => r.position)),
    held: rounds.every((r) => r.position <= LIMIT),
    exactlyAtLimit: rounds.filter((r) => r.position === LIMIT).length,
    placed: rounds.reduce((s, r) => s + r.placed, 0),
    refused: rounds.reduce((s, r) => s + r.refused, 0),
    otherFailures: rounds.flatMap((r) => r.other),
    halts,
    medianRoundMs: Math.round(median(rounds.map((r) => r.ms))),
  };
  printTable([
    ['rounds', 'largest position', 'held', 'at the limit', 'placed / refused', 'other failures', 'halts seen', 'median round'],
    [results.rounds, results.maxPosition, results.held ? 'yes' : 'NO', results.exactlyAtLimit, `${results.placed} / ${results.refused}`, results.otherFailures.length, `${halts.seen} / ${halts.tried}`, `${results.medianRoundMs} ms`],
  ]);
  writeFileSync(new URL('./desk-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  console.error('wrote bench/desk-results.json');
  if (!results.held || halts.seen !== halts.tried) process.exitCode = 1;
}

await main();
