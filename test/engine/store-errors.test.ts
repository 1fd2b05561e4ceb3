/**
 * The store failing while the engine runs: a full disk (SQLite's own page limit, set on the
 * connection, stands in for it: SQLITE_FULL either way) is a typed StoreError, the write that
 * failed leaves nothing behind, and `trade serve` answers it with a 503 body and tells its
 * operator. Errors that are not the store's stay as they are: they are bugs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createEngineOnDb, type Engine } from '../../src/engine/engine.js';
import { openStore } from '../../src/engine/store.js';
import { toStoreError } from '../../src/engine/store-errors.js';
import { StoreError } from '../../src/common/errors.js';
import { createServer } from '../../src/server/server.js';
import { order } from '../helpers/engine.js';
import { TOKEN } from '../server/harness.js';

let dir: string;
let file: string;
let engine: Engine;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trade-full-'));
  file = join(dir, 'trade.db');
  const db = openStore(file);
  // No page beyond those the store has now: the first write that needs one fails as on a full disk.
  db.pragma(`max_page_count = ${db.pragma('page_count', { simple: true }) as number}`);
  engine = createEngineOnDb(db, file);
});
afterEach(() => {
  engine.close();
  rmSync(dir, { recursive: true, force: true });
});

const FULL = `The store ${join('DIR', 'trade.db')} cannot grow: the disk is full. Nothing was written.`;

/** Places orders until the store is full; returns how many went in and the error that stopped them. */
function fill(): { placed: number; error: unknown } {
  for (let placed = 0; placed < 10_000; placed++) {
    try {
      engine.placeOrder(order({ orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' }));
    } catch (error) {
      return { placed, error };
    }
  }
  throw new Error('the store never filled up');
}

describe('a full store', () => {
  it('is a StoreError naming the file (exit 1, 503), and the failed write left nothing', () => {
    const { placed, error } = fill();
    expect(placed).toBeGreaterThan(0);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({
      code: 'store_full',
      exitCode: 1,
      status: 503,
      message: FULL.replace('DIR', dir),
      hint: `Free space on the disk that holds ${dir}, then try again.`,
    });
    expect(engine.listOrders()).toHaveLength(placed);
    // Reads still work on a full disk.
    expect(engine.listAccounts()).toEqual(['Sim101']);
  });

  it('trade serve answers 503 with the §6.1 body, without the path, and tells its operator the whole of it', async () => {
    const warnings: string[] = [];
    const server = await createServer({ engine, token: TOKEN, warn: (line) => warnings.push(line) });
    const url = await server.listen({ host: '127.0.0.1', port: 0 });
    try {
      const { placed } = fill();
      const reply = await fetch(`${url}/v1/api/accounts/Sim101/orders/place`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'LIMIT', limitPrice: 4000, timeInForce: 'GTC' }),
      });
      expect(reply.status).toBe(503);
      expect(await reply.json()).toEqual({
        success: false,
        error: 'store_full',
        detail: 'trade serve cannot use its store: the disk is full. Nothing was written; its operator is told on its stderr.',
      });
      expect(warnings).toEqual([`trade serve: internal error in PlaceOrder: ${FULL.replace('DIR', dir)}`]);
      expect(engine.listOrders()).toHaveLength(placed);
    } finally {
      await server.close();
    }
  });
});

describe('what is not a failure of the store', () => {
  it('stays as it is, for main to report as a bug', () => {
    const bug = new TypeError("Cannot read properties of undefined (reading 'x')");
    expect(toStoreError(bug, file)).toBe(bug);
    const constraint = Object.assign(new Error('UNIQUE constraint failed: orders.id'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
    expect(toStoreError(constraint, file)).toBe(constraint);
    const sql = Object.assign(new Error('no such column: nope'), { code: 'SQLITE_ERROR' });
    expect(toStoreError(sql, file)).toBe(sql);
  });
});
