// Two builds of `trade serve` paired (issue 34, fifth round): each over its own store holding the
// HTTP bench's 20 positions, the same autocannon load on each in turn, the order swapped every
// round; per round the ratio B/A of requests a second, of the server's CPU per request (user +
// system from /proc, Linux) and of the 99th percentile latency (autocannon's), then their medians.
// Not part of `npm run bench`: a tool for a step.
//
//   node bench/serve-pair.js A_BIN B_BIN [--rounds 7] [--seconds 3] [--load place,positions]
//
// A_BIN and B_BIN are the bin/trade.js of two builds (a copy of bin/, dist/ and package.json,
// with node_modules beside them or above them), e.g. the build before a change and after it.
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { load, loadPositions, openPositions } from './http.js';
import { startTradeServe } from './servers.js';
import { cpuSeconds, median, tempDir } from './util.js';

const LOADS = { place: load, positions: loadPositions };

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { rounds: { type: 'string', default: '7' }, seconds: { type: 'string', default: '3' }, load: { type: 'string', default: 'place,positions' } },
});
if (positionals.length !== 2) {
  console.error('usage: node bench/serve-pair.js A_BIN B_BIN [--rounds 7] [--seconds 3] [--load place,positions]');
  process.exit(2);
}
const loads = values.load.split(',');
for (const name of loads) if (!LOADS[name]) throw new Error(`unknown load ${name}: place or positions`);
const { dir, cleanup } = tempDir('trade-pair-');
const servers = [];
try {
  for (const [i, bin] of positionals.entries()) servers.push(await startTradeServe(join(dir, String(i)), resolve(bin)));
  for (const s of servers) await openPositions(s.url);
  for (const s of servers) for (const name of loads) await LOADS[name](s.url, 1);
  const [a, b] = servers;
  for (const name of loads) {
    const rounds = [];
    for (let r = 0; r < Number(values.rounds); r++) {
      const measured = new Map();
      for (const s of r % 2 ? [b, a] : [a, b]) {
        const before = cpuSeconds(s.pid);
        const result = await LOADS[name](s.url, Number(values.seconds));
        if (result.errors || result.non2xx) throw new Error(`${name}: ${result.errors} errors, ${result.non2xx} non-2xx`);
        measured.set(s, { rps: result.requests.average, us: ((cpuSeconds(s.pid) - before) * 1e6) / result.requests.total, p99: result.latency.p99 });
      }
      const [ma, mb] = [measured.get(a), measured.get(b)];
      rounds.push({ rps: mb.rps / ma.rps, cpu: mb.us / ma.us, p99: mb.p99 / ma.p99, a: ma, b: mb });
      console.log(`${name} round ${r}: A ${ma.rps.toFixed(0)} req/s ${ma.us.toFixed(0)} µs/req p99 ${ma.p99} ms, B ${mb.rps.toFixed(0)} req/s ${mb.us.toFixed(0)} µs/req p99 ${mb.p99} ms`);
    }
    const span = (key) => `${median(rounds.map((x) => x[key])).toFixed(2)}× (${Math.min(...rounds.map((x) => x[key])).toFixed(2)}–${Math.max(...rounds.map((x) => x[key])).toFixed(2)})`;
    const p99 = (side) => median(rounds.map((x) => x[side].p99));
    console.log(`${name}: B/A requests a second ${span('rps')}, CPU per request ${span('cpu')}, p99 latency ${span('p99')} (A ${p99('a')} ms, B ${p99('b')} ms)`);
  }
} finally {
  for (const s of servers) await s.stop();
  cleanup();
}
