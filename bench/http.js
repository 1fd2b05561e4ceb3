// 3. `trade serve` over HTTP with keep-alive (autocannon): place orders per second and p99 latency,
//    as a ratio to a bare fastify server answering a constant JSON body, interleaved.
import autocannon from 'autocannon';
import { startBareServer, startTradeServe, TOKEN } from './servers.js';
import { median, tempDir } from './util.js';

const BODY = JSON.stringify({ instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });

function load(url, seconds) {
  return autocannon({
    url: `${url}/v1/api/accounts/Sim101/orders/place`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    body: BODY,
    connections: 16,
    duration: seconds,
  });
}

export async function benchHttp({ rounds = 3, seconds = 4 } = {}) {
  const { dir, cleanup } = tempDir();
  const serve = await startTradeServe(dir);
  const bare = await startBareServer();
  try {
    await load(serve.url, 1); // warm up both
    await load(bare.url, 1);
    const runs = { serve: [], bare: [] };
    for (let i = 0; i < rounds; i++) {
      for (const [name, url] of [['bare', bare.url], ['serve', serve.url]]) {
        const r = await load(url, seconds);
        if (r.errors || r.non2xx) throw new Error(`${name}: ${r.errors} errors, ${r.non2xx} non-2xx`);
        runs[name].push({ rps: r.requests.average, p99: r.latency.p99 });
      }
    }
    const pick = (name, key) => median(runs[name].map((r) => r[key]));
    return {
      servePlacePerSecond: Math.round(pick('serve', 'rps')),
      serveP99Ms: pick('serve', 'p99'),
      barePerSecond: Math.round(pick('bare', 'rps')),
      bareP99Ms: pick('bare', 'p99'),
      ratioToBare: +(pick('serve', 'rps') / pick('bare', 'rps')).toFixed(2),
      connections: 16,
    };
  } finally {
    await serve.stop();
    await bare.stop();
    cleanup();
  }
}
