// npm run bench:soak: 100,000 requests to `trade serve` (the built bin, a subprocess on port 0)
// over keep-alive connections, sampling the server's resident memory (VmRSS from
// /proc/<pid>/status) as it goes. Reports start, peak and end memory and whether it stayed
// bounded; prints a table and writes bench/soak-results.json. Not part of `npm test`.
//
//   node bench/soak.js [--requests 100000] [--connections 16] [--concurrency 64]
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { printTable, startServe, tempDir } from './util.js';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '100000' },
    connections: { type: 'string', default: '16' },
    concurrency: { type: 'string', default: '64' },
  },
});
const REQUESTS = Number(flags.requests);
const CONNECTIONS = Number(flags.connections);
const CONCURRENCY = Number(flags.concurrency);
const SAMPLE_MS = 250;
/** Bounded: the peak of the second half is within this of the peak of the first half. */
const BOUND = { ratio: 1.1, slackMiB: 16 };

const TOKEN = 'soak-token-0123456789abcdef';
const JSON_AUTH = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const ORDER = { instrument: 'ES 09-25', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

/** One request of the mix: orders (the store grows), reads, and each kind of refusal. */
function requestFor(i) {
  const pick = i % 20;
  if (pick < 8) {
    return {
      method: 'POST',
      path: '/v1/api/accounts/Sim101/orders/place',
      headers: JSON_AUTH,
      body: JSON.stringify({ ...ORDER, action: i % 2 ? 'SELL' : 'BUY' }),
      expect: 200,
    };
  }
  if (pick < 14) return { method: 'GET', path: '/v1/api/accounts/Sim101/position?instrument=ES%2009-25', headers: JSON_AUTH, expect: 200 };
  if (pick < 16) return { method: 'GET', path: '/v1/api/positions', headers: JSON_AUTH, expect: 200 };
  if (pick < 18) {
    return {
      method: 'POST',
      path: '/v1/api/accounts/Sim101/orders/place',
      headers: JSON_AUTH,
      body: JSON.stringify({ ...ORDER, action: 'HOLD', quantity: 0 }),
      expect: 400,
    };
  }
  if (pick < 19) return { method: 'GET', path: `/v1/api/nothing/${i}`, headers: JSON_AUTH, expect: 404 };
  return { method: 'GET', path: '/v1/api/positions', headers: { authorization: 'Bearer wrong' }, expect: 401 };
}

function rssMiB(pid) {
  const kib = Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
  return Math.round((kib / 1024) * 10) / 10;
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

/** Least-squares slope of RSS against requests done, in MiB per 10,000 requests. */
function slope(samples) {
  const n = samples.length;
  if (n < 2) return 0;
  const mx = samples.reduce((s, x) => s + x.done, 0) / n;
  const my = samples.reduce((s, x) => s + x.rssMiB, 0) / n;
  const num = samples.reduce((s, x) => s + (x.done - mx) * (x.rssMiB - my), 0);
  const den = samples.reduce((s, x) => s + (x.done - mx) ** 2, 0);
  return den === 0 ? 0 : Math.round((num / den) * 10_000 * 100) / 100;
}

async function main() {
  const { dir, cleanup } = tempDir('trade-soak-');
  const { child, url } = await startServe([], { TRADE_HOME: join(dir, 'home'), TRADE_CONFIG_DIR: join(dir, 'config'), TRADE_SERVE_TOKEN: TOKEN });
  const pid = child.pid;
  try {
    await new Promise((resolve) => setTimeout(resolve, 500)); // settle after start-up
    const startMiB = rssMiB(pid);
    const samples = [{ ms: 0, done: 0, rssMiB: startMiB }];
    const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1, keepAliveTimeout: 60_000 });
    const statuses = {};
    const unexpected = [];
    const latencies = new Float64Array(REQUESTS);
    let next = 0;
    let done = 0;
    const began = performance.now();
    const sampler = setInterval(() => samples.push({ ms: Math.round(performance.now() - began), done, rssMiB: rssMiB(pid) }), SAMPLE_MS);
    const progress = setInterval(() => process.stderr.write(`\r${done} / ${REQUESTS} requests, RSS ${samples.at(-1).rssMiB} MiB   `), 1000);

    async function worker() {
      while (next < REQUESTS) {
        const i = next++;
        const { expect: want, ...request } = requestFor(i);
        const t = performance.now();
        const res = await pool.request(request);
        await res.body.dump();
        latencies[i] = performance.now() - t;
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        if (res.statusCode !== want && unexpected.length < 10) unexpected.push(`${request.method} ${request.path}: ${res.statusCode}, wanted ${want}`);
        done++;
      }
    }
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    const elapsedMs = performance.now() - began;
    clearInterval(sampler);
    clearInterval(progress);
    process.stderr.write('\n');
    const endMiB = rssMiB(pid);
    samples.push({ ms: Math.round(elapsedMs), done, rssMiB: endMiB });
    await pool.close();
    // Idle for a few seconds: what the process keeps once the load is gone.
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idleMiB = rssMiB(pid);

    const firstHalf = samples.filter((s) => s.done <= REQUESTS / 2);
    const secondHalf = samples.filter((s) => s.done > REQUESTS / 2);
    const peak = (list) => Math.max(...list.map((s) => s.rssMiB));
    const peakFirst = peak(firstHalf);
    const peakSecond = peak(secondHalf);
    const bounded = peakSecond <= peakFirst * BOUND.ratio + BOUND.slackMiB && unexpected.length === 0;
    const sorted = [...latencies].sort((a, b) => a - b);
    const results = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: cpus().length,
      requests: REQUESTS,
      connections: CONNECTIONS,
      concurrency: CONCURRENCY,
      seconds: Math.round(elapsedMs / 100) / 10,
      requestsPerSecond: Math.round((REQUESTS / elapsedMs) * 1000),
      latencyMs: { p50: Math.round(percentile(sorted, 50) * 100) / 100, p99: Math.round(percentile(sorted, 99) * 100) / 100, max: Math.round(sorted.at(-1) * 10) / 10 },
      statuses,
      unexpected,
      rssMiB: {
        start: startMiB,
        peak: peak(samples),
        peakFirstHalf: peakFirst,
        peakSecondHalf: peakSecond,
        end: endMiB,
        afterIdle: idleMiB,
        slopeSecondHalfPer10kRequests: slope(secondHalf),
      },
      bound: `peak of the second half <= ${BOUND.ratio} x peak of the first half + ${BOUND.slackMiB} MiB`,
      bounded,
      samples,
    };
    const r = results.rssMiB;
    printTable([
      ['soak', 'result'],
      ['requests', `${REQUESTS} over ${CONNECTIONS} keep-alive connections, ${CONCURRENCY} in flight`],
      ['time', `${results.seconds} s (${results.requestsPerSecond} req/s, p50 ${results.latencyMs.p50} ms, p99 ${results.latencyMs.p99} ms)`],
      ['statuses', Object.entries(statuses).map(([s, n]) => `${s}: ${n}`).join(', ')],
      ['RSS start', `${r.start} MiB`],
      ['RSS peak', `${r.peak} MiB (first half ${r.peakFirstHalf}, second half ${r.peakSecondHalf})`],
      ['RSS end', `${r.end} MiB (after 3 s idle: ${r.afterIdle} MiB)`],
      ['RSS trend', `${r.slopeSecondHalfPer10kRequests} MiB per 10k requests over the second half`],
      ['bounded', `${bounded ? 'yes' : 'NO'} (${results.bound})`],
    ]);
    if (unexpected.length) console.log(`unexpected statuses:\n  ${unexpected.join('\n  ')}`);
    writeFileSync(new URL('./soak-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
    console.error('wrote bench/soak-results.json');
    process.exitCode = bounded ? 0 : 1;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    cleanup();
  }
}

await main();
