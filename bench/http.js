// 3. `trade serve` over HTTP with keep-alive (autocannon): place orders per second and p99 latency,
//    and GetPositions of an account with 20 positions, each as a ratio to a bare fastify server
//    whose route parses the JSON body and answers a constant one, interleaved round by round.
import autocannon from 'autocannon';
import { startBareServer, startTradeServe, TOKEN } from './servers.js';
import { median, tempDir } from './util.js';

const BODY = JSON.stringify({ instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });

const HEADERS = { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` };

export function load(url, seconds) {
  return autocannon({ url: `${url}/v1/api/accounts/Sim101/orders/place`, method: 'POST', headers: HEADERS, body: BODY, connections: 16, duration: seconds });
}

/** GetPositions of an account holding 20 positions (issue 34): a reply of about 4.6 KB. */
export function loadPositions(url, seconds) {
  return autocannon({ url: `${url}/v1/api/accounts/Sim101/positions`, method: 'GET', headers: HEADERS, connections: 16, duration: seconds });
}

/**
 * 20 open positions in Sim101: ES 09-25, which the place runs add to, and 19 more of ES and NQ in
 * other contract months (the simulator trades any month).
 */
export async function openPositions(url) {
  const months = (root, count) => Array.from({ length: count }, (_, i) => `${root} ${String(i + 1).padStart(2, '0')}-27`);
  for (const instrument of ['ES 09-25', ...months('ES', 10), ...months('NQ', 9)]) {
    const body = JSON.stringify({ instrument, action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });
    const reply = await fetch(`${url}/v1/api/accounts/Sim101/orders/place`, { method: 'POST', headers: HEADERS, body });
    if (!reply.ok) throw new Error(`placing ${instrument}: ${reply.status} ${await reply.text()}`);
  }
  const { positions } = await (await fetch(`${url}/v1/api/accounts/Sim101/positions`, { headers: HEADERS })).json();
  if (positions.length !== 20) throw new Error(`expected 20 positions, found ${positions.length}`);
}

export async function benchHttp({ rounds = 3, seconds = 4 } = {}) {
  const { dir, cleanup } = tempDir();
  const serve = await startTradeServe(dir);
  const bare = await startBareServer();
  try {
    await openPositions(serve.url);
    await load(serve.url, 1); // warm up both
    await loadPositions(serve.url, 1);
    await load(bare.url, 1);
    const runs = { serve: [], positions: [], bare: [] };
    for (let i = 0; i < rounds; i++) {
      for (const [name, url, run] of [['bare', bare.url, load], ['serve', serve.url, load], ['positions', serve.url, loadPositions]]) {
        const r = await run(url, seconds);
        if (r.errors || r.non2xx) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx} non-2xx`);
        runs[name].push({ rps: r.requests.average, p99: r.latency.p99 });
      }
    }
    const pick = (name, key) => median(runs[name].map((r) => r[key]));
    // Each round's ratio to the bare run just before it, then their median: the machine's speed
    // drifts between rounds, much less within one.
    const ratio = (name) => +median(runs[name].map((r, i) => r.rps / runs.bare[i].rps)).toFixed(2);
    return {
      servePlacePerSecond: Math.round(pick('serve', 'rps')),
      serveP99Ms: pick('serve', 'p99'),
      positionsPerSecond: Math.round(pick('positions', 'rps')),
      positionsP99Ms: pick('positions', 'p99'),
      barePerSecond: Math.round(pick('bare', 'rps')),
      bareP99Ms: pick('bare', 'p99'),
      ratioToBare: ratio('serve'),
      positionsRatioToBare: ratio('positions'),
      connections: 16,
    };
  } finally {
    await serve.stop();
    await bare.stop();
    cleanup();
  }
}
