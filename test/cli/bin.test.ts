/** The built bin as a user runs it: real processes, real store. */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { Env } from '../../src/config/paths.js';
import { BIN, orderArgs, runBin, tempHome } from '../helpers/cli.js';
import { spawnRecorded } from '../helpers/spawn.js';

let env: Env;
let cleanup: () => void;
beforeEach(() => ({ env, cleanup } = tempHome()));
afterEach(() => cleanup());

describe('bin/trade.js', () => {
  it("places the README's example order on the embedded default", async () => {
    const result = await runBin(
      ['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'],
      env,
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n {2}order id {2}[0-9a-f]{32}\n/);
    expect(result.stdout).toContain('backend   embedded (');
  });

  it('places, reverses and lists with --json', async () => {
    const placed = await runBin(['place', ...orderArgs({ '--quantity': '2' }), '--json'], env);
    expect(JSON.parse(placed.stdout)).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
    const reversed = await runBin(['reverse', ...orderArgs({ '--action': 'sell', '--quantity': '2' }), '--json'], env);
    expect(reversed.code).toBe(0);
    const { orderId } = JSON.parse(reversed.stdout);
    const positions = JSON.parse((await runBin(['positions', '--json'], env)).stdout);
    expect(positions.positions).toEqual([expect.objectContaining({ instrument: 'ES 09-25', marketPosition: 'Short', quantity: 2 })]);
    const orders = JSON.parse((await runBin(['orders', '--account', 'Sim101', '--json'], env)).stdout).orders;
    expect(orders.at(-1)).toMatchObject({ orderId, orderAction: 'Sell', quantity: 2, orderState: 'Filled' });
  });

  it('trades a bracket with the new commands: atm, price, place, close', async () => {
    expect((await runBin(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16'], env)).code).toBe(0);
    expect((await runBin(['price', 'set', 'ES 09-25', '4500'], env)).code).toBe(0);
    const placed = await runBin(['place', ...orderArgs({ '--quantity': '2', '--strategy': 'Scalp' })], env);
    expect(placed.stdout).toContain('stop-loss  SELL 2 ES 09-25 STOPMARKET stop 4498 DAY, working');
    const moved = JSON.parse((await runBin(['price', 'set', 'ES 09-25', '4497', '--json'], env)).stdout);
    expect(moved.fills).toEqual([expect.objectContaining({ action: 'SELL', quantity: 2, price: 4498, origin: 'atm-stop-loss' })]);
    expect(moved.cancelledOrderIds).toHaveLength(1);
    const closed = await runBin(['close', '--account', 'Sim101', '--instrument', 'ES 09-25', '--json'], env);
    expect(closed).toMatchObject({ code: 1, stdout: `{"error":"No positions found for instrument 'ES 09-25'"}\n` });
  });

  it('never waits on a pipe: missing flags exit 2 at once even with stdin left open', async () => {
    const child = spawnRecorded(process.execPath, [BIN, 'place', '--account', 'Sim101'], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('Missing required flags: --instrument, --action, --quantity, --order-type, --tif');
  });

  it('twenty concurrent place processes all succeed with distinct ids', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => runBin(['place', ...orderArgs(), '--json'], env)),
    );
    for (const r of results) expect(r).toMatchObject({ code: 0, stderr: '' });
    const ids = results.map((r) => JSON.parse(r.stdout).orderId as string);
    expect(new Set(ids).size).toBe(20);
    const db = new Database(join(env.TRADE_HOME!, 'trade.db'), { readonly: true });
    const stored = db.prepare('SELECT id FROM orders').all() as Array<{ id: string }>;
    const position = db.prepare('SELECT quantity FROM positions').get();
    db.close();
    expect(stored.map((r) => r.id).sort()).toEqual([...ids].sort());
    expect(position).toEqual({ quantity: 20 });
  });
});
