// Servers for the benchmarks, each in its own process: `trade serve` over a fresh store, and a
// bare fastify server whose one route parses the JSON body and answers a constant one (the baseline).
import { once } from 'node:events';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { BIN, startProcess } from './util.js';

export const TOKEN = 'bench-token-0123456789abcdef';

// The baseline is a bare fastify server (the framework trade serve is built on) with one route
// that parses the JSON body and answers a constant one: what serving costs before any work.
const FASTIFY = createRequire(import.meta.url).resolve('fastify');
const BARE = `
const fastify = require(${JSON.stringify(FASTIFY)})({ logger: false });
const body = { orderId: '0'.repeat(32), success: true };
fastify.post('/v1/api/accounts/:account/orders/place', async () => body);
fastify.listen({ port: 0, host: '127.0.0.1' }).then((url) => console.error('listening on ' + url));
process.on('SIGTERM', () => fastify.close().then(() => process.exit(0)));
`;

/**
 * The URL a server prints when it listens. Its stderr is read to the end, not just to that line:
 * a pipe closed under a server makes its next write (a warning) fail with EPIPE and kill it.
 */
function waitForUrl(child) {
  return new Promise((resolve, reject) => {
    let text = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      text += chunk;
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(text);
      if (match) resolve(match[1]);
      if (process.env.BENCH_SERVER_LOG) process.stderr.write(chunk);
    });
    child.once('exit', () => reject(new Error(`server exited before listening: ${text}`)));
  });
}

async function stop(child) {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

/** `trade serve` over a fresh store in `dir`; `bin`: another build's bin/trade.js (bench/serve-pair.js). */
export async function startTradeServe(dir, bin = BIN) {
  const child = startProcess([bin, 'serve', '--port', '0'], { TRADE_HOME: join(dir, 'home'), TRADE_SERVE_TOKEN: TOKEN, NO_COLOR: '1' });
  const url = await waitForUrl(child);
  return { url, wsUrl: `${url.replace('http', 'ws')}/ws/stream`, pid: child.pid, stop: () => stop(child) };
}

export async function startBareServer() {
  const child = startProcess(['-e', BARE], {});
  const url = await waitForUrl(child);
  return { url, stop: () => stop(child) };
}
