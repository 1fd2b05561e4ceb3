// 5. `trade batch` of 10,000 orders through embedded, http and ws, against a shell loop of single
//    `trade place` processes (a few hundred, scaled to orders per second).
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTradeServe, TOKEN } from './servers.js';
import { BIN, childEnv, tempDir } from './util.js';

const ARGS = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

function timedBatch(file, env) {
  const start = process.hrtime.bigint();
  // A local trade serve has no budget to keep to: --rate 0 turns the service pacing off.
  const result = spawnSync(process.execPath, [BIN, 'batch', file, '--rate', '0'], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (result.status !== 0) throw new Error(`batch exited ${result.status}: ${result.stderr}`);
  return seconds;
}

/** An NDJSON file of `orders` MARKET PlaceOrder lines for `trade batch`. */
export function writeOrders(file, orders) {
  writeFileSync(file, `${Array.from({ length: orders }, (_, i) => JSON.stringify({ api: 'PlaceOrder', id: i, args: ARGS })).join('\n')}\n`);
}

export async function benchBatch({ orders = 10_000, loop = 200 } = {}) {
  const { dir, cleanup } = tempDir();
  const file = join(dir, 'orders.ndjson');
  writeOrders(file, orders);
  const serve = await startTradeServe(join(dir, 'serve'));
  try {
    const home = (name) => ({ TRADE_HOME: join(dir, name), TRADE_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1' });
    const remote = { TRADE_TOKEN: TOKEN, TRADE_BASE_URL: serve.url };
    const perSecond = (seconds) => Math.round(orders / seconds);
    const result = {
      embedded: perSecond(timedBatch(file, home('embedded'))),
      http: perSecond(timedBatch(file, { ...home('x'), ...remote, TRADE_BACKEND: 'http' })),
      ws: perSecond(timedBatch(file, { ...home('x'), ...remote, TRADE_BACKEND: 'ws' })),
    };
    const loopScript = `for i in $(seq ${loop}); do "${process.execPath}" "${BIN}" place --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --order-type MARKET --tif DAY --json >/dev/null || exit 1; done`;
    const start = process.hrtime.bigint();
    const shell = spawnSync('bash', ['-c', loopScript], { env: childEnv(home('loop')), stdio: 'ignore' });
    if (shell.status !== 0) throw new Error('shell loop failed');
    result.shellLoop = Math.round(loop / (Number(process.hrtime.bigint() - start) / 1e9));
    result.orders = orders;
    result.loopProcesses = loop;
    return result;
  } finally {
    await serve.stop();
    cleanup();
  }
}
