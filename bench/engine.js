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
    // Group commit: 256 orders to a transaction, each in its own savepoint (what serve and batch do).
    const GROUP = 256;
    start = process.hrtime.bigint();
    for (let i = 0; i < orders; i += GROUP) {
      engine.group(Array.from({ length: GROUP }, (_, j) => () => engine.placeOrder(order((i + j) % 2 ? 'SELL' : 'BUY'))));
    }
    const groupedSeconds = Number(process.hrtime.bigint() - start) / 1e9;
    return {
      placePerSecond: Math.round(orders / placeSeconds),
      groupedPlacePerSecond: Math.round(orders / groupedSeconds),
      reversePerSecond: Math.round(reverses / reverseSeconds),
      note: 'each order validated by the schema; one transaction each (WAL, synchronous=NORMAL), or 256 to a transaction with a savepoint each',
    };
  } finally {
    engine.close();
    cleanup();
  }
}
