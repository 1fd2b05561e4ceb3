/**
 * `trade serve`'s checkpointer (src/server/checkpointer.ts): a real store, a real worker thread with
 * its own SQLite connection, the log's size read from the real wal-index header.
 */
import { closeSync, existsSync, mkdtempSync, openSync, readSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import type { Order } from '../../src/service/order.js';
import { type CheckpointEvent, type Checkpointer, startCheckpointer } from '../../src/server/checkpointer.js';
import { ES_MARKET, startServer } from './harness.js';

/**
 * The frames the log holds now (mxFrame of the wal-index header, read from the open `-shm` file
 * `shmFd`, https://www.sqlite.org/walformat.html) and its first salt (new at each restart), or
 * undefined when the header's two copies differ (being rewritten).
 */
function walFrames(shmFd: number): { frames: number; salt: number } | undefined {
  const header = new Uint32Array(34);
  if (readSync(shmFd, header, 0, 136, 0) !== 136 || header[2] !== header[14] || header[4] !== header[16]) return undefined;
  return { frames: header[4]!, salt: header[8]! };
}

const ORDER: Order = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  while (cleanups.length > 0) await cleanups.pop()!();
});

interface Setup {
  file: string;
  engine: Engine;
  events: CheckpointEvent[];
  warnings: string[];
  /** Resolves with the first event (already seen or to come) that `match` accepts. */
  next(match: (event: CheckpointEvent) => boolean): Promise<CheckpointEvent>;
  frames(): { frames: number; salt: number };
  /** Places MARKET orders one by one until the log holds at least `frames` frames. */
  fill(frames: number): void;
  /** Places orders one by one until the log restarts (a new salt); false if it has not after `most` orders. */
  untilRestart(most: number): boolean;
  checkpointer: Checkpointer | undefined;
}

function setup(options: { pages: number; bound: number; removeFirst?: boolean }): Setup {
  const dir = mkdtempSync(join(tmpdir(), 'trade-ckpt-'));
  const file = join(dir, 'trade.db');
  const engine = createEngine(file);
  engine.placeOrder(ORDER);
  const shm = openSync(`${file}-shm`, 'r');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => engine.close());
  cleanups.push(() => closeSync(shm));
  if (options.removeFirst) for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`);
  const events: CheckpointEvent[] = [];
  const warnings: string[] = [];
  const waiters: Array<() => void> = [];
  const checkpointer = startCheckpointer({
    engine,
    warn: (line) => warnings.push(line),
    pages: options.pages,
    bound: options.bound,
    onEvent: (event) => {
      events.push(event);
      for (const wake of waiters.splice(0)) wake();
    },
  });
  cleanups.push(() => checkpointer?.close());
  const frames = () => {
    for (;;) {
      const read = walFrames(shm);
      if (read) return read;
    }
  };
  return {
    file,
    engine,
    events,
    warnings,
    checkpointer,
    frames,
    fill(target) {
      while (frames().frames < target) engine.placeOrder(ORDER);
    },
    untilRestart(most) {
      const { salt } = frames();
      for (let i = 0; i < most; i++) {
        engine.placeOrder(ORDER);
        if (frames().salt !== salt) return true;
      }
      return false;
    },
    async next(match) {
      for (;;) {
        const found = events.find(match);
        if (found) return found;
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
  };
}

describe("trade serve's checkpointer", () => {
  it('checkpoints the log from its worker after a load, and the next write restarts the log', async () => {
    const s = setup({ pages: 40, bound: 1_000_000 });
    await s.next((e) => e.kind === 'open');
    s.fill(50);
    const stopped = s.frames();
    const done = await s.next((e) => e.kind === 'checkpoint' && e.checkpointed === stopped.frames);
    expect(done).toEqual({ kind: 'checkpoint', busy: false, log: stopped.frames, checkpointed: stopped.frames, ms: expect.any(Number) });
    expect(s.events.some((e) => e.kind === 'bound')).toBe(false);
    s.engine.placeOrder(ORDER);
    const after = s.frames();
    expect(after.salt).not.toBe(stopped.salt);
    expect(after.frames).toBeLessThan(20);
    expect(s.warnings).toEqual([]);
  });

  it('a checkpoint that could not copy every frame (a reader held them) is made whole once the log stops growing', async () => {
    const s = setup({ pages: 40, bound: 1_000_000 });
    await s.next((e) => e.kind === 'open');
    // Another connection's read transaction: no checkpoint copies a frame written after it began.
    const reader = new Database(s.file, { readonly: true });
    cleanups.push(() => reader.close());
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM orders').get();
    s.fill(60);
    const partial = await s.next((e) => e.kind === 'checkpoint');
    expect(partial).toMatchObject({ busy: false });
    expect((partial as { checkpointed: number }).checkpointed).toBeLessThan((partial as { log: number }).log);
    const stopped = s.frames();
    reader.exec('COMMIT');
    // No more writes: the worker sees the log idle, over its pages and not all copied.
    const whole = await s.next((e) => e.kind === 'checkpoint' && e.checkpointed === stopped.frames);
    expect(whole).toEqual({ kind: 'checkpoint', busy: false, log: stopped.frames, checkpointed: stopped.frames, ms: expect.any(Number) });
    s.engine.placeOrder(ORDER);
    expect(s.frames().salt).not.toBe(stopped.salt);
    expect(s.frames().frames).toBeLessThan(20);
  });

  it('past the bound, the serving connection checkpoints the log itself, and it restarts', async () => {
    // The worker's cadence never comes (pages too many): only the bound can checkpoint, and the
    // worker checkpoints nothing below its pages.
    const s = setup({ pages: 1_000_000, bound: 60 });
    s.fill(60);
    const before = s.frames();
    const bound = await s.next((e) => e.kind === 'bound');
    expect(bound).toMatchObject({ kind: 'bound', busy: false, log: before.frames, checkpointed: before.frames });
    expect(s.events.filter((e) => e.kind !== 'open')).toEqual([bound]);
    s.engine.placeOrder(ORDER);
    expect(s.frames().salt).not.toBe(before.salt);
    expect(s.frames().frames).toBeLessThan(before.frames);
  });

  it('ends its worker on close and gives the serving connection its automatic checkpoint back', async () => {
    const s = setup({ pages: 1_000_000, bound: 1_000_000 });
    await s.next((e) => e.kind === 'open');
    await s.checkpointer!.close();
    // SQLite's own autocheckpoint (1,000 pages, ~170 orders) restarts the log again.
    expect(s.untilRestart(400)).toBe(true);
    // The worker's connection is closed: the engine's close, the last one, removes the log.
    s.engine.close();
    expect(existsSync(`${s.file}-wal`)).toBe(false);
    expect(s.events).toEqual([{ kind: 'open' }]);
  });

  it('reports a failure (the store file removed), hands the checkpoint back, and orders go on', async () => {
    const s = setup({ pages: 40, bound: 80, removeFirst: true });
    const failed = await s.next((e) => e.kind === 'error');
    expect(failed).toEqual({ kind: 'error', message: expect.stringMatching(/unable to open database file|does not exist/) });
    expect(s.warnings).toEqual([
      `trade serve: the log's checkpointer stopped (${(failed as { message: string }).message}); the store's own connection checkpoints it from now on`,
    ]);
    expect(s.untilRestart(400)).toBe(true);
    expect(s.engine.placeOrder(ORDER).order.state).toBe('FILLED');
    expect(s.events).toEqual([failed]);
  });

  it('runs with trade serve, which stops it on close; save, restore and reset beside it keep the store whole', async () => {
    const events: CheckpointEvent[] = [];
    const h = await startServer({ checkpointer: { pages: 30, bound: 120, onEvent: (e) => events.push(e) } });
    cleanups.push(() => h.close());
    const place = () => h.post('/v1/api/accounts/Sim101/orders/place', ES_MARKET);
    for (let i = 0; i < 20; i++) expect((await place()).status).toBe(200);
    expect((await h.post('/_sandbox/save', { name: 'twenty' })).status).toBe(200);
    for (let i = 0; i < 20; i++) expect((await place()).status).toBe(200);
    expect((await h.post('/_sandbox/restore', { name: 'twenty' })).status).toBe(200);
    expect(h.snapshot().orders).toHaveLength(20);
    for (let i = 0; i < 5; i++) expect((await place()).status).toBe(200);
    expect((await h.post('/_sandbox/reset', {})).status).toBe(200);
    expect(h.snapshot().orders).toHaveLength(0);
    for (let i = 0; i < 30; i++) expect((await place()).status).toBe(200);
    expect(h.snapshot().orders).toHaveLength(30);
    expect(events.filter((e) => e.kind === 'checkpoint').length).toBeGreaterThan(0);
    expect(events.some((e) => e.kind === 'error')).toBe(false);
    expect(h.warnings).toEqual([]);
    await h.server.close();
    h.engine.close();
    const check = new Database(`${h.engine.file}`, { readonly: true });
    try {
      expect(check.pragma('integrity_check', { simple: true })).toBe('ok');
      expect((check.prepare('SELECT count(*) AS n FROM orders').get() as { n: number }).n).toBe(30);
    } finally {
      check.close();
    }
  });
});
