/**
 * Property-based tests: random sequences of orders, prices, cancels, closes, reverses and clock
 * moves, with the engine's invariants checked after every step. Seeded and bounded, so the
 * suite stays fast and a failure replays the same way.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { stopIsTouched, limitFillPrice } from '../../src/engine/matching.js';
import { closeOf, sessionEnd } from '../../src/service/session.js';
import { RejectedError } from '../../src/common/errors.js';
import { parseOrder, type Order } from '../../src/service/order.js';
import { testEngine, type TestEngine } from '../helpers/engine.js';

const ACCOUNTS = ['Sim101', 'Sim102'];
const INSTRUMENTS = ['ES 09-25', 'NQ 12-25'];
const price = fc.integer({ min: 188, max: 212 }).map((n) => n / 2); // 94 … 106 in halves

const orderArb = fc
  .record({
    account: fc.constantFrom(...ACCOUNTS),
    instrument: fc.constantFrom(...INSTRUMENTS),
    action: fc.constantFrom('BUY', 'SELL'),
    quantity: fc.integer({ min: 1, max: 4 }),
    orderType: fc.constantFrom('MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT'),
    timeInForce: fc.constantFrom('DAY', 'GTC'),
    limitPrice: price,
    stopPrice: price,
    ocoId: fc.option(fc.constantFrom('g1', 'g2', 'g3'), { nil: undefined }),
    strategy: fc.option(fc.constantFrom('A', 'Nope'), { freq: 3, nil: undefined }),
  })
  .map((o): Order => {
    const { limitPrice, stopPrice, ...rest } = o;
    return parseOrder({
      ...rest,
      ...(o.orderType === 'LIMIT' || o.orderType === 'STOPLIMIT' ? { limitPrice } : {}),
      ...(o.orderType === 'STOPMARKET' || o.orderType === 'STOPLIMIT' ? { stopPrice } : {}),
    });
  });

type Command =
  | { kind: 'place'; order: Order }
  | { kind: 'reverse'; order: Order }
  | { kind: 'price'; instrument: string; price: number }
  | { kind: 'cancel'; pick: number; account?: string }
  | { kind: 'close'; account: string; instrument: string }
  | { kind: 'advance'; hours: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 5, arbitrary: orderArb.map((order) => ({ kind: 'place' as const, order })) },
  { weight: 1, arbitrary: orderArb.map((order) => ({ kind: 'reverse' as const, order })) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('price' as const), instrument: fc.constantFrom(...INSTRUMENTS), price }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('cancel' as const),
      pick: fc.nat(40),
      account: fc.option(fc.constantFrom(...ACCOUNTS), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('close' as const),
      account: fc.constantFrom(...ACCOUNTS),
      instrument: fc.constantFrom(...INSTRUMENTS),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 30 }) }) },
);

interface Row { id: string; account: string; instrument: string; action: string; quantity: number; order_type: string;
  time_in_force: string; limit_price: number | null; stop_price: number | null; oco_id: string | null; state: string;
  triggered: number; created_at: string }
interface FillRow { order_id: string; account: string; instrument: string; action: string; quantity: number; price: number | null }
interface PositionRow { account: string; instrument: string; quantity: number; avg_price: number | null; realized_pnl: number; pnl_known: number }

function fail(message: string, detail?: unknown): never {
  throw new Error(`${message}${detail === undefined ? '' : `: ${JSON.stringify(detail)}`}`);
}

function checkInvariants(t: TestEngine, now: Date): void {
  t.engine.listOrders(); // a read runs DAY expiry, like any operation
  const db = new Database(t.file, { readonly: true });
  const orders = db.prepare('SELECT * FROM orders').all() as Row[];
  const fills = db.prepare('SELECT * FROM fills').all() as FillRow[];
  const positions = db.prepare('SELECT * FROM positions').all() as PositionRow[];
  const prices = new Map((db.prepare('SELECT instrument, price FROM prices').all() as Array<{ instrument: string; price: number }>).map((p) => [p.instrument, p.price]));
  db.close();
  const byId = new Map(orders.map((o) => [o.id, o]));

  // Every fill belongs to a FILLED order, once, for its whole quantity; no other order has fills.
  const fillsPerOrder = new Map<string, number>();
  for (const f of fills) fillsPerOrder.set(f.order_id, (fillsPerOrder.get(f.order_id) ?? 0) + 1);
  for (const o of orders) {
    const n = fillsPerOrder.get(o.id) ?? 0;
    if (o.state === 'FILLED' ? n !== 1 : n !== 0) fail('an order is filled and not, or filled twice', { o, n });
  }
  for (const f of fills) {
    const o = byId.get(f.order_id)!;
    if (f.quantity !== o.quantity) fail('a fill is not for the whole order', f);
    // Limits fill at their limit or better; stops at their stop or beyond it.
    if (f.price !== null && o.limit_price !== null && limitFillPrice(o.action as 'BUY', o.limit_price, f.price, f.price) === null)
      fail('a limit filled at a worse price than its limit', { o, f });
    if (f.price !== null && o.order_type === 'STOPMARKET' && !stopIsTouched(o.action as 'BUY', o.stop_price!, f.price))
      fail('a stop filled before its stop price', { o, f });
  }

  // The position always equals the signed sum of fills; P&L agrees with the cash flow.
  for (const p of positions) {
    const mine = fills.filter((f) => f.account === p.account && f.instrument === p.instrument);
    const signed = mine.reduce((sum, f) => sum + (f.action === 'BUY' ? f.quantity : -f.quantity), 0);
    if (signed !== p.quantity) fail('position differs from the sum of fills', { p, signed });
    if (mine.every((f) => f.price !== null) && p.pnl_known) {
      const cash = mine.reduce((sum, f) => sum + (f.action === 'BUY' ? -1 : 1) * f.quantity * f.price!, 0);
      const expected = cash + p.quantity * (p.avg_price ?? 0);
      if (Math.abs(expected - p.realized_pnl) > 1e-6) fail('realized P&L disagrees with the fills', { p, expected });
    }
  }

  // At most one order of an OCO group fills.
  const groupFills = new Map<string, number>();
  for (const o of orders) {
    if (o.oco_id === null || o.state !== 'FILLED') continue;
    const key = `${o.account}/${o.oco_id}`;
    groupFills.set(key, (groupFills.get(key) ?? 0) + 1);
    if (groupFills.get(key)! > 1) fail('two orders of one OCO group filled', key);
  }

  for (const o of orders.filter((x) => x.state === 'WORKING')) {
    // No working order is left marketable at the last price: crossing orders have filled.
    const last = prices.get(o.instrument);
    if (last !== undefined) {
      const asLimit = o.order_type === 'LIMIT' || (o.order_type === 'STOPLIMIT' && o.triggered === 1);
      if (asLimit && limitFillPrice(o.action as 'BUY', o.limit_price!, last, last) !== null) fail('a working limit is marketable', { o, last });
      if (!asLimit && stopIsTouched(o.action as 'BUY', o.stop_price!, last)) fail('a working stop is touched', { o, last });
    }
    // No DAY order works past its session's end.
    if (o.time_in_force === 'DAY' && sessionEnd(new Date(o.created_at), closeOf(o.instrument)) <= now) fail('a DAY order outlived its session', o);
  }
}

function runCommand(t: TestEngine, command: Command, ids: string[], clock: { now: Date }): void {
  switch (command.kind) {
    case 'place':
      ids.push(t.engine.placeOrder(command.order).orderId);
      return;
    case 'reverse':
      ids.push(t.engine.reversePosition(command.order).orderId);
      return;
    case 'price':
      t.engine.setPrice(command.instrument, command.price);
      return;
    case 'cancel':
      t.engine.cancelOrder(command.account, ids.length === 0 || command.pick >= ids.length ? 'no-such-order' : ids[command.pick]!);
      return;
    case 'close':
      t.engine.closePosition(command.account, command.instrument);
      return;
    case 'advance':
      clock.now = new Date(clock.now.getTime() + command.hours * 3_600_000);
      t.setTime(clock.now.toISOString());
      return;
  }
}

describe('engine properties over random command sequences', () => {
  it('keeps its invariants, and a rejected command changes nothing', () => {
    fc.assert(
      fc.property(fc.array(commandArb, { minLength: 1, maxLength: 30 }), (commands) => {
        const t = testEngine('2025-03-06T15:00:00Z'); // Thursday before the spring DST change
        const clock = { now: new Date('2025-03-06T15:00:00Z') };
        try {
          t.engine.addAccount('Sim102');
          t.engine.addAtmTemplate({ name: 'A', stopLossTicks: 2, profitTargetTicks: 3, tickSize: 0.5 });
          const ids: string[] = [];
          for (const command of commands) {
            t.engine.listOrders();
            const before = t.snapshot();
            try {
              runCommand(t, command, ids, clock);
            } catch (error) {
              if (!(error instanceof RejectedError)) throw error;
              const after = t.snapshot();
              if (JSON.stringify(after) !== JSON.stringify(before)) fail('a rejected command changed the store', command);
            }
            checkInvariants(t, clock.now);
          }
        } finally {
          t.cleanup();
        }
      }),
      { seed: 20250906, numRuns: 80 },
    );
  });
});
