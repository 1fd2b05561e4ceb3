// 4. WebSocket RPC: PlaceOrder calls per second on one connection, pipelined (a window in flight).
import WebSocket from 'ws';
import { startTradeServe, TOKEN } from './servers.js';
import { median, tempDir } from './util.js';

const ARGS = { account: 'Sim101', instrument: 'ES 09-25', action: 'Buy', quantity: 1, orderType: 'Market', timeInForce: 'Day' };

async function run(wsUrl, total, window) {
  const socket = new WebSocket(wsUrl, { headers: { authorization: `Bearer ${TOKEN}` }, perMessageDeflate: false });
  await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
  let sent = 0;
  let answered = 0;
  const start = process.hrtime.bigint();
  await new Promise((resolve, reject) => {
    const send = () => socket.send(JSON.stringify({ action: 'rpc', id: String(sent++), api: 'PlaceOrder', args: ARGS }));
    socket.on('message', (raw) => {
      if (JSON.parse(raw.toString()).data?.success !== true) return reject(new Error(`RPC failed: ${raw}`));
      answered += 1;
      if (sent < total) send();
      if (answered === total) resolve();
    });
    while (sent < Math.min(window, total)) send();
  });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  socket.close();
  return total / seconds;
}

export async function benchWs({ rounds = 3, total = 10_000, window = 128 } = {}) {
  const { dir, cleanup } = tempDir();
  const serve = await startTradeServe(dir);
  try {
    await run(serve.wsUrl, 1000, window);
    const rates = [];
    for (let i = 0; i < rounds; i++) rates.push(await run(serve.wsUrl, total, window));
    return { rpcPerSecond: Math.round(median(rates)), total, inFlight: window };
  } finally {
    await serve.stop();
    cleanup();
  }
}
