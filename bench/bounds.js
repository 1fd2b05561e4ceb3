// 7. The server under abuse (test/server/bounds.test.ts checks what happens; this measures how
// long it takes, which a test on a busy machine must not bound): how long another client waits for
// an answer while one WebSocket client never reads its replies, and while one HTTP connection
// pipelines 200 big reads, each as a ratio to the same wait with no abuse, in the same server; and
// the longest wait (the first call after the abuse began, as a rule).
import { connect } from 'node:net';
import { join } from 'node:path';
import WebSocket from 'ws';
import { startTradeServe, TOKEN } from './servers.js';
import { median, tempDir } from './util.js';

const AUTH = { authorization: `Bearer ${TOKEN}` };

/** A store whose Sim101 holds `count` working orders (each GetOrders page about 550 KB at 2,000). */
async function seed(dir, count) {
  const { createEngine } = await import('../dist/lib.js');
  const engine = createEngine(join(dir, 'home', 'trade.db'));
  engine.setPrice('ES 12-26', 5000);
  for (let i = 0; i < count; i++)
    engine.placeOrder({ account: 'Sim101', instrument: 'ES 12-26', action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' });
  engine.close();
}

async function openWs(url) {
  const socket = new WebSocket(url, { headers: AUTH, perMessageDeflate: false });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  return socket;
}

/** Milliseconds for each of `calls` GetPositions over WebSocket, one after another. */
async function wsWaits(url, calls) {
  const socket = await openWs(url);
  const waits = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await new Promise((resolve) => {
      socket.once('message', resolve);
      socket.send(JSON.stringify({ action: 'rpc', id: `p${i}`, api: 'GetPositions', args: { account: 'Sim101' } }));
    });
    waits.push(performance.now() - started);
  }
  socket.close();
  return waits;
}

/** Milliseconds for each of `calls` GET /positions over HTTP, one after another. */
async function httpWaits(url, calls) {
  const waits = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    const reply = await fetch(`${url}/v1/api/positions`, { headers: AUTH });
    await reply.arrayBuffer();
    waits.push(performance.now() - started);
  }
  return waits;
}

export async function benchBounds({ orders = 2000, calls = 30 } = {}) {
  const { dir, cleanup } = tempDir();
  await seed(dir, orders);
  const serve = await startTradeServe(dir);
  try {
    await wsWaits(serve.wsUrl, calls); // warm-up
    await httpWaits(serve.url, calls);
    const quietWs = median(await wsWaits(serve.wsUrl, calls));
    const greedy = await openWs(serve.wsUrl);
    greedy.pause(); // reads nothing from here on
    const call = JSON.stringify({ action: 'rpc', id: 'g', api: 'GetOrders', args: { account: 'Sim101' } });
    for (let i = 0; i < 3000; i++) greedy.send(call);
    const greedyWs = await wsWaits(serve.wsUrl, calls);
    greedy.terminate();

    const quietHttp = median(await httpWaits(serve.url, calls));
    const { hostname, port } = new URL(serve.url);
    const flood = connect({ host: hostname, port: Number(port) });
    await new Promise((resolve) => flood.once('connect', resolve));
    flood.resume();
    flood.write(`GET /v1/api/accounts/Sim101/orders HTTP/1.1\r\nHost: x\r\nAuthorization: ${AUTH.authorization}\r\n\r\n`.repeat(200));
    const floodHttp = await httpWaits(serve.url, calls);
    flood.destroy();

    const round = (n) => Math.round(n * 10) / 10;
    return {
      workingOrders: orders,
      wsQuietMs: round(quietWs),
      wsBesideGreedyMs: round(median(greedyWs)),
      wsBesideGreedyMaxMs: round(Math.max(...greedyWs)),
      wsRatio: round(median(greedyWs) / quietWs),
      httpQuietMs: round(quietHttp),
      httpBesidePipelinedMs: round(median(floodHttp)),
      httpBesidePipelinedMaxMs: round(Math.max(...floodHttp)),
      httpRatio: round(median(floodHttp) / quietHttp),
    };
  } finally {
    await serve.stop();
    cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) console.log(JSON.stringify(await benchBounds(), null, 2));
