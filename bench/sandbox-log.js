// node bench/sandbox-log.js: the request log of `trade serve` (issue 22) under a soak. Sends
// 100,000 requests (orders, reads, refusals; the token also in bodies and query strings, as a
// careless client would) to the built bin's `trade serve --log-size N` with a scenario rule in
// force, then checks that the log holds exactly N entries, counted all 100,000, holds no form of
// the token, and that the server's memory stayed bounded. Writes bench/sandbox-log-results.json.
// Not part of `npm test`.
//
//   node bench/sandbox-log.js [--requests 100000] [--log-size 1000] [--concurrency 64]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { printTable, startServe, tempDir } from './util.js';

const { values: flags } = parseArgs({
  options: {
    requests: { type: 'string', default: '100000' },
    'log-size': { type: 'string', default: '1000' },
    concurrency: { type: 'string', default: '64' },
  },
});
const REQUESTS = Number(flags.requests);
const LOG_SIZE = Number(flags['log-size']);
const CONCURRENCY = Number(flags.concurrency);
const TOKEN = 'SoakLogTok7qR2mZ9xW4vB8n';
const AUTH = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
const ORDER = { instrument: 'ES 09-25', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

function requestFor(i) {
  const pick = i % 10;
  if (pick < 4) return { method: 'POST', path: '/v1/api/accounts/Sim101/orders/place', headers: AUTH, body: JSON.stringify({ ...ORDER, action: i % 2 ? 'SELL' : 'BUY', note: TOKEN }) };
  if (pick < 8) return { method: 'GET', path: `/v1/api/accounts/Sim101/position?instrument=ES%2009-25&token=${TOKEN}`, headers: AUTH };
  if (pick < 9) return { method: 'GET', path: `/v1/api/nothing/${i}`, headers: AUTH };
  return { method: 'GET', path: '/v1/api/positions', headers: { authorization: 'Bearer wrong' } };
}

const rssMiB = (pid) => Math.round((Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024) * 10) / 10;

async function main() {
  const { dir, cleanup } = tempDir('trade-sandbox-log-');
  const scenario = join(dir, 'scenario.json');
  writeFileSync(scenario, JSON.stringify({ rules: [{ name: 'slow-reads', operation: 'GetPosition', every: 100, effect: 'delay 1ms' }] }));
  const { child, url } = await startServe(['--log-size', String(LOG_SIZE), '--scenario', scenario], {
    TRADE_HOME: join(dir, 'home'),
    TRADE_CONFIG_DIR: join(dir, 'config'),
    TRADE_SERVE_TOKEN: TOKEN,
  });
  try {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const startMiB = rssMiB(child.pid);
    let peakMiB = startMiB;
    const pool = new Pool(url, { connections: 16, keepAliveTimeout: 60_000 });
    let next = 0;
    let done = 0;
    const began = performance.now();
    const sampler = setInterval(() => (peakMiB = Math.max(peakMiB, rssMiB(child.pid))), 250);
    const progress = setInterval(() => process.stderr.write(`\r${done} / ${REQUESTS} requests   `), 1000);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < REQUESTS) {
          next++;
          const res = await pool.request(requestFor(next));
          await res.body.dump();
          done++;
        }
      }),
    );
    const seconds = (performance.now() - began) / 1000;
    clearInterval(sampler);
    clearInterval(progress);
    process.stderr.write('\n');
    const res = await pool.request({ method: 'GET', path: '/_sandbox/log', headers: AUTH });
    const text = await res.body.text();
    await pool.close();
    const log = JSON.parse(text);
    // The log read itself is logged after it answered: REQUESTS requests before it.
    const counted = log.total === REQUESTS;
    const bounded = log.entries.length === LOG_SIZE && log.size === LOG_SIZE;
    const fragments = Array.from({ length: TOKEN.length - 7 }, (_, i) => TOKEN.slice(i, i + 8));
    const encoded = [encodeURIComponent(TOKEN), Buffer.from(TOKEN).toString('base64')];
    const leaked = [...fragments, ...encoded].filter((f) => text.toLowerCase().includes(f.toLowerCase()));
    const ok = counted && bounded && leaked.length === 0;
    const results = {
      date: new Date().toISOString(),
      requests: REQUESTS,
      logSize: LOG_SIZE,
      seconds: Math.round(seconds * 10) / 10,
      requestsPerSecond: Math.round(REQUESTS / seconds),
      logEntries: log.entries.length,
      logTotal: log.total,
      counts: log.counts,
      tokenFragmentsFound: leaked.length,
      rssMiB: { start: startMiB, peak: peakMiB, end: rssMiB(child.pid) },
      ok,
    };
    printTable([
      ['request log soak', 'result'],
      ['requests', `${REQUESTS} in ${results.seconds} s (${results.requestsPerSecond} req/s)`],
      ['log', `${log.entries.length} entries kept of ${log.total} counted (--log-size ${LOG_SIZE}): ${bounded && counted ? 'bounded' : 'NOT BOUNDED'}`],
      ['token', leaked.length === 0 ? 'in no form' : `FOUND ${leaked.length} fragments`],
      ['RSS', `start ${startMiB} MiB, peak ${peakMiB} MiB, end ${results.rssMiB.end} MiB`],
    ]);
    writeFileSync(new URL('./sandbox-log-results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
    process.exitCode = ok ? 0 : 1;
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    cleanup();
  }
}

await main();
