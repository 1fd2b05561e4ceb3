// npm run bench:race: max-position across processes (issue 31). Each round starts eight
// `trade place --quantity 1` processes at once with guard.max-position 2, on a fresh contract, and
// reads the position they leave; on `embedded` and through `trade serve` (a subprocess on port 0)
// over `http` and `ws`. Reports, per backend, the largest position any round ended with (the
// limit holds when it is 2), how the exit codes fell, and the time per round; writes
// bench/race-results.json. Not part of `npm test` (test/guard/race.test.ts runs 2 rounds of each).
//
//   node bench/race.js [--rounds 50] [--processes 8] [--backends embedded,http,ws]
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runTrade as run, median, printTable, startServe, tempDir } from './util.js';

const { values: flags } = parseArgs({
  options: { rounds: { type: 'string', default: '50' }, processes: { type: 'string', default: '8' }, backends: { type: 'string', default: 'embedded,http,ws' } },
});
const ROUNDS = Number(flags.rounds);
const PROCESSES = Number(flags.processes);
const BACKENDS = flags.backends.split(',');
const LIMIT = 2;
const TOKEN = 'race-bench-token-0123456789abcdef';

/** A dated contract per round and backend (any dated contract trades on the simulator; http and ws share one store). */
const instrumentOf = (round, backend) => `ES ${String(3 * (round % 4) + 3).padStart(2, '0')}-${(backend === 'ws' ? 70 : 40) + Math.floor(round / 4)}`;

async function race(backend, home, url) {
  const env = {
    TRADE_HOME: join(home, backend),
    TRADE_CONFIG_DIR: join(home, `${backend}-config`),
    NO_COLOR: '1',
    TRADE_GUARD_MAX_POSITION: String(LIMIT),
    ...(backend === 'embedded' ? {} : { TRADE_BACKEND: backend, TRADE_BASE_URL: url, TRADE_TOKEN: TOKEN }),
  };
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const instrument = instrumentOf(round, backend);
    const order = ['place', '--account', 'Sim101', '--instrument', instrument, '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'];
    const start = process.hrtime.bigint();
    const runs = await Promise.all(Array.from({ length: PROCESSES }, () => run(order, env)));
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const read = await run(['position', instrument, '--account', 'Sim101', '--json'], env);
    const position = JSON.parse(read.stdout).quantity ?? 0;
    const codes = runs.map((r) => r.code);
    const other = runs.filter((r) => r.code !== 0 && !/refused by guard max-position/.test(r.stderr));
    rounds.push({ instrument, position, placed: codes.filter((c) => c === 0).length, refused: codes.filter((c) => c === 6).length, other: other.map((r) => r.stderr.split('\n')[0]), ms });
    process.stderr.write(`${backend} round ${round + 1}/${ROUNDS}: position ${position}, ${rounds.at(-1).placed} placed, ${rounds.at(-1).refused} refused, ${ms.toFixed(0)} ms\n`);
  }
  return {
    rounds: rounds.length,
    maxPosition: Math.max(...rounds.map((r) => r.position)),
    held: rounds.every((r) => r.position <= LIMIT),
    exactlyAtLimit: rounds.filter((r) => r.position === LIMIT).length,
    placed: rounds.reduce((s, r) => s + r.placed, 0),
    refused: rounds.reduce((s, r) => s + r.refused, 0),
    otherFailures: rounds.flatMap((r) => r.other),
    medianRoundMs: Math.round(median(rounds.map((r) => r.ms))),
  };
}

async function main() {
  const { dir, cleanup } = tempDir('trade-race-');
  const serve = await startServe([], { TRADE_HOME: join(dir, 'serve'), TRADE_CONFIG_DIR: join(dir, 'serve-config'), TRADE_SERVE_TOKEN: TOKEN });
  // Stopped early (Ctrl-C), the server goes too.
  for (const signal of ['SIGINT', 'SIGTERM'])
    process.once(signal, () => {
      serve.child.kill('SIGTERM');
      cleanup();
      process.exit(1);
    });
  const results = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, processes: PROCESSES, limit: LIMIT };
  try {
    for (const backend of BACKENDS) results[backend] = await race(backend, dir, serve.url);
  } finally {
    serve.child.kill('SIGTERM');
    cleanup();
  }
  printTable([
    ['backend', 'rounds', 'largest position', 'held', 'placed / refused', 'other failures', 'median round'],
    ...BACKENDS.map((b) => {
      const r = results[b];
      return [b, r.rounds, r.maxPosition, r.held ? 'yes' : 'NO', `${r.placed} / ${r.refused}`, r.otherFailures.length, `${r.medianRoundMs} ms`];
    }),
  ]);
  writeFileSync(new URL('./race-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
  console.error('wrote bench/race-results.json');
  if (!BACKENDS.every((b) => results[b].held)) process.exitCode = 1;
}

await main();
