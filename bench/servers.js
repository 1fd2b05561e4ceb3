// Servers for the benchmarks, each in its own process: `trade serve` over a fresh store, and a
// bare node:http server that answers a constant JSON body (the baseline).
import { once } from 'node:events';
import { join } from 'node:path';
import { BIN, startProcess } from './util.js';

export const TOKEN = 'bench-token-0123456789abcdef';

const BARE = `
const http = require('node:http');
const body = JSON.stringify({ orderId: '0'.repeat(32), success: true });
const server = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => { res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }); res.end(body); });
});
server.keepAliveTimeout = 30000;
server.listen(0, '127.0.0.1', () => console.error('listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
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

export async function startTradeServe(dir) {
  const child = startProcess([BIN, 'serve', '--port', '0'], { TRADE_HOME: join(dir, 'home'), TRADE_SERVE_TOKEN: TOKEN, NO_COLOR: '1' });
  const url = await waitForUrl(child);
  return { url, wsUrl: `${url.replace('http', 'ws')}/ws/stream`, pid: child.pid, stop: () => stop(child) };
}

export async function startBareServer() {
  const child = startProcess(['-e', BARE], {});
  const url = await waitForUrl(child);
  return { url, stop: () => stop(child) };
}
