/**
 * `trade sandbox save / restore / reset` against a running `trade serve` (issue 22): a restore
 * while clients place orders is atomic (no request sees half of it, the server keeps answering),
 * and the restored store equals the saved one, row for row.
 */
import { createHash } from 'node:crypto';
import Database from 'better-sqlite3';
import { Client } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { runCli, tempHome } from '../helpers/cli.js';
import { checkStore, killServes, type ServeProcess, startServe, storeFile } from '../helpers/serve-process.js';

const TOKEN = 'Qx7vK2mP9wLr4TzN8bYc';
let env: Env;
let cleanup: () => void;
let serve: ServeProcess;

beforeEach(() => ({ env, cleanup } = tempHome()));
afterEach(async () => {
  await killServes();
  cleanup();
});

const trade = (...argv: string[]) => runCli(argv, { ...env, TRADE_BASE_URL: serve.url, TRADE_TOKEN: TOKEN });

const TABLES = ['accounts', 'orders', 'fills', 'positions', 'prices'];

/** Row counts and a checksum of every row of the tables a snapshot must keep. */
function digest(): { counts: Record<string, number>; checksum: string } {
  const db = new Database(storeFile(env), { readonly: true });
  try {
    const hash = createHash('sha256');
    const counts: Record<string, number> = {};
    for (const table of TABLES) {
      const rows = db.prepare(`SELECT * FROM ${table}`).all().map((row) => JSON.stringify(row)).sort();
      counts[table] = rows.length;
      hash.update(`${table}\n${rows.join('\n')}\n`);
    }
    return { counts, checksum: hash.digest('hex') };
  } finally {
    db.close();
  }
}

async function placeWith(client: Client, orderId: string, quantity = 1): Promise<number> {
  const { statusCode, body } = await client.request({
    method: 'POST',
    path: '/v1/api/accounts/Sim101/orders/place',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ instrument: 'ES 09-25', action: 'BUY', quantity, orderType: 'MARKET', timeInForce: 'DAY', orderId }),
  });
  await body.dump();
  return statusCode;
}

describe('save and restore while the server runs', () => {
  it('a restore during a flood of orders is atomic, the server keeps answering, and the store equals the saved one', async () => {
    serve = await startServe(env, TOKEN);
    const client = new Client(serve.url, { pipelining: 1 });
    try {
      for (const id of ['base-1', 'base-2', 'base-3']) expect(await placeWith(client, id, 2)).toBe(200);
      expect((await trade('price', 'set', 'ES 09-25', '6010')).code).toBe(0);
      const saved = await trade('sandbox', 'save', 'base');
      expect(saved.code).toBe(0);
      expect(saved.stdout).toMatch(/^saved the store as 'base' \(.*trade\.db\.snapshots\/base\.db\)\n$/);
      const before = digest();
      expect(before.counts).toMatchObject({ orders: 3, fills: 3, positions: 1 });

      // Four clients place orders without pause; the restore comes in the middle.
      const acknowledged: Array<{ id: string; at: number }> = [];
      const statuses: number[] = [];
      let stop = false;
      const clients = Array.from({ length: 4 }, () => new Client(serve.url));
      const loops = clients.map(async (c, n) => {
        for (let i = 0; !stop; i++) {
          const id = `load-${n}-${i}`;
          const status = await placeWith(c, id);
          statuses.push(status);
          if (status === 200) acknowledged.push({ id, at: performance.now() });
        }
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      const sentAt = performance.now();
      const restored = await trade('sandbox', 'restore', 'base');
      expect(restored.code).toBe(0);
      expect(restored.stdout).toBe("restored the store from 'base'\n");
      await new Promise((resolve) => setTimeout(resolve, 200));
      stop = true;
      await loops;
      await Promise.all(clients.map((c) => c.close()));

      // The server kept answering every order, before, during and after.
      expect(statuses.length).toBeGreaterThan(20);
      expect(new Set(statuses)).toEqual(new Set([200]));
      const ids = new Set(checkStore(storeFile(env)).orderIds);
      for (const id of ['base-1', 'base-2', 'base-3']) expect(ids.has(id)).toBe(true);
      // Orders acknowledged before the restore was asked for are gone with the rest of that state.
      const gone = acknowledged.filter((a) => a.at < sentAt);
      expect(gone.length).toBeGreaterThan(0);
      expect(gone.filter((a) => ids.has(a.id))).toEqual([]);
      // Orders after it are whole: each fill has its order, each position is the sum of its fills.
      const check = checkStore(storeFile(env));
      expect(check.integrity).toBe('ok');
      expect(check.foreignKeyProblems).toBe(0);
      expect(check.fillMismatches).toBe(0);
      for (const p of check.positions) expect(p.position).toBe(p.fills);

      // Restored again with nothing placing: exactly the saved rows.
      expect((await trade('sandbox', 'restore', 'base')).code).toBe(0);
      expect(digest()).toEqual(before);
      // And the engine's caches were reset: the next order builds on the restored position.
      expect(await placeWith(client, 'after-1')).toBe(200);
      const after = checkStore(storeFile(env));
      expect(after.positions).toEqual([{ account: 'Sim101', instrument: 'ES 09-25', position: 7, fills: 7 }]);
    } finally {
      await client.close();
    }
  });

  it('reset restores the empty default; an unknown or bad name is refused and changes nothing', async () => {
    serve = await startServe(env, TOKEN);
    const client = new Client(serve.url);
    try {
      expect(await placeWith(client, 'r-1')).toBe(200);
      expect((await trade('accounts', 'add', 'Sim202', '--backend', 'embedded')).code).toBe(0);
      const before = digest();
      const missing = await trade('sandbox', 'restore', 'nope');
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("no snapshot 'nope'; none saved yet");
      const bad = await trade('sandbox', 'save', '../etc');
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('Invalid request: name: must be 1-64 of A-Z a-z 0-9 . _ -');
      expect(digest()).toEqual(before);
      const reset = await trade('sandbox', 'reset', '--json');
      expect(reset.stdout).toBe('{"success":true}\n');
      expect(digest().counts).toEqual({ accounts: 1, orders: 0, fills: 0, positions: 0, prices: 0 });
      // The server goes on with the fresh store: the same client id is free again.
      expect(await placeWith(client, 'r-1')).toBe(200);
    } finally {
      await client.close();
    }
  });

  it('a late reject still waiting is dropped by a restore: the restored store stays as saved', async () => {
    serve = await startServe(env, TOKEN);
    // 2 s: the save and the restore (two CLI runs) come before it is due, even on a busy machine.
    expect((await trade('sandbox', 'inject', 'reject-late', '2000ms', 'late', '--operation', 'PlaceOrder')).code).toBe(0);
    const client = new Client(serve.url);
    try {
      expect(await placeWith(client, 'held-1')).toBe(200);
    } finally {
      await client.close();
    }
    const placedAt = performance.now();
    // Saved while the order is accepted and held; restored before its reject is due.
    expect((await trade('sandbox', 'save', 'held')).code).toBe(0);
    expect((await trade('sandbox', 'restore', 'held')).code).toBe(0);
    expect(performance.now() - placedAt, 'the save and the restore took longer than the reject delay').toBeLessThan(2000);
    // Past the time the reject was due: a reject the restore did not drop would have landed.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, placedAt + 2300 - performance.now())));
    const order = JSON.parse((await trade('--backend', 'http', 'order', 'held-1', '--account', 'Sim101', '--json')).stdout) as Record<string, unknown>;
    expect(order.orderState).toBe('Accepted');
  });
});
