/**
 * `trade positions` on all three backends (embedded; http and ws against a real `trade serve` on
 * the same store): a long, a short and a flat position shown the same way, as a table and as the
 * service's body with `--json`. A short was once shown as a long over http and ws.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { parseOrder } from '../../src/service/order.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';
import { startServer, TOKEN, type Harness } from '../server/harness.js';

let server: Harness;
let home: ReturnType<typeof tempHome>;
beforeAll(async () => {
  server = await startServer();
  home = tempHome();
  const order = (instrument: string, action: string, quantity: number) =>
    server.engine.placeOrder(parseOrder({ account: 'Sim101', instrument, action, quantity, orderType: 'MARKET', timeInForce: 'DAY' }));
  for (const [instrument, price] of [['ES 06-26', 5000], ['NQ 06-26', 20000], ['CL 06-26', 70]] as const) server.engine.setPrice(instrument, price);
  order('ES 06-26', 'BUY', 2);
  order('NQ 06-26', 'SELL', 3);
  order('CL 06-26', 'BUY', 1);
  order('CL 06-26', 'SELL', 1);
  server.engine.setPrice('NQ 06-26', 19990.5);
});
afterAll(async () => {
  await server.close();
  home.cleanup();
});

const envFor = (backend: string): Env =>
  backend === 'embedded'
    ? { ...home.env, TRADE_HOME: server.engine.file.replace(/\/trade\.db$/, '') }
    : { ...home.env, TRADE_BACKEND: backend, TRADE_BASE_URL: server.url, TRADE_TOKEN: TOKEN };

describe.each(['embedded', 'http', 'ws'])('trade positions on %s', (backend) => {
  it('a long is Long, a short is Short with an unsigned size, flat only with --all', async () => {
    const table = await runCli(['positions', '--all'], envFor(backend));
    expect(table.code).toBe(0);
    expect(table.stdout).toBe(
      [
        'ACCOUNT  INSTRUMENT  POSITION  QTY  AVG PRICE  MARKET   UNREALIZED P&L',
        'Sim101   CL 06-26    Flat      0    —          70       —',
        'Sim101   ES 06-26    Long      2    5000       5000     0.00',
        'Sim101   NQ 06-26    Short     3    20000      19990.5  570.00',
        '',
      ].join('\n'),
    );
    const json = JSON.parse((await runCli(['positions', '--json'], envFor(backend))).stdout) as { positions: unknown[]; count: number };
    expect(json).toEqual({
      positions: [
        expect.objectContaining({ instrument: 'ES 06-26', marketPosition: 'Long', quantity: 2, averagePrice: 5000, unrealizedProfitLoss: 0 }),
        expect.objectContaining({ instrument: 'NQ 06-26', marketPosition: 'Short', quantity: 3, averagePrice: 20000, marketPrice: 19990.5, unrealizedProfitLoss: 570 }),
      ],
      count: 2,
      success: true,
    });
    const one = JSON.parse((await runCli(['positions', '--instrument', 'nq 6-26', '--json'], envFor(backend))).stdout) as { positions: unknown[] };
    expect(one.positions).toEqual([expect.objectContaining({ instrument: 'NQ 06-26', marketPosition: 'Short' })]);
  });

  it('places through the same backend and reads its own order back', async () => {
    const placed = await runCli(['place', ...orderArgs({ '--instrument': 'ES 06-26', '--order-type': 'LIMIT', '--limit-price': '4000' }), '--json'], envFor(backend));
    const { orderId } = JSON.parse(placed.stdout) as { orderId: string };
    const orders = await runCli(['orders', '--account', 'Sim101', '--active', '--json'], envFor(backend));
    expect(JSON.parse(orders.stdout)).toMatchObject({ orders: expect.arrayContaining([expect.objectContaining({ orderId, orderState: 'Working', orderAction: 'Buy' })]) });
    expect((await runCli(['cancel', orderId, '--account', 'Sim101'], envFor(backend))).code).toBe(0);
  });
});
