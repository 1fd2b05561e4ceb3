// 2. The engine in-process: orders per second for place and for reverse, on a real SQLite file.
import { join } from 'node:path';
import { tempDir } from './util.js';

export async function benchEngine({ orders = 20_000 } = {}) {
  const { createEngine, parseOrder } = await import('../dist/lib.js');
  const { dir, cleanup } = tempDir();
  const engine = createEngine(join(dir, 'trade.db'));
  const order = (action) =>
    parseOrder({ account: 'Sim101', instrument: 'ES 09-25', action, quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });
  try {
    let start = process.hrtime.bigint();
    for (let i = 0; i < orders; i++) engine.placeOrder(order(i % 2 ? 'SELL' : 'BUY'));
    const placeSeconds = Number(process.hrtime.bigint() - start) / 1e9;
    engine.placeOrder(order('BUY'));
    const reverses = Math.round(orders / 4);
    start = process.hrtime.bigint();
    for (let i = 0; i < reverses; i++) engine.reversePosition(order(i % 2 ? 'BUY' : 'SELL'));
    const reverseSeconds = Number(process.hrtime.bigint() - start) / 1e9;
    return {
      placePerSecond: Math.round(orders / placeSeconds),
      reversePerSecond: Math.round(reverses / reverseSeconds),
      note: 'each order validated by the schema and written in its own transaction (WAL, synchronous=NORMAL)',
    };
  } finally {
    engine.close();
    cleanup();
  }
}
