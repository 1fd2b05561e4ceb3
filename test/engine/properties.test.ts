/**
 * Property-based tests: random sequences of orders, prices, cancels, closes, reverses and clock
 * moves, with the engine's invariants checked after every step. Seeded and bounded, so the
 * suite stays fast and a failure replays the same way.
 *
 * The oracle is this file's own, written from the reference (§8.1 fill rules, §8.3 OCO, §8.5
 * close and reverse, §10 sessions) and never from the engine's functions: before each command it
 * reads the store and says whether the engine must accept it, or refuse it with which message;
 * after it, every fill's price is checked against the price the rules give for its order and the
 * move. The generators aim most cancels, closes and reverses at orders and positions that exist,
 * and the run must accept a floor of commands of each kind: an engine that refused everything,
 * or a generator that only made refusals, fails.
 */
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
    orderType: fc.constantFrom('MARKET', 'MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT'),
    timeInForce: fc.constantFrom('DAY', 'GTC'),
    limitPrice: price,
    stopPrice: price,
    ocoId: fc.option(fc.constantFrom('g1', 'g2', 'g3'), { nil: undefined }),
    // One order in eight asks for an ATM template, half of them one that does not exist.
    strategy: fc.constantFrom<string | undefined>(undefined, undefined, undefined, undefined, undefined, undefined, 'A', 'Nope'),
  })
  .map((o): Order => {
    const { limitPrice, stopPrice, ...rest } = o;
    return parseOrder({
      ...rest,
      ...(o.orderType === 'LIMIT' || o.orderType === 'STOPLIMIT' ? { limitPrice } : {}),
      ...(o.orderType === 'STOPMARKET' || o.orderType === 'STOPLIMIT' ? { stopPrice } : {}),
    });
  });

/**
 * Commands as generated: `pick` chooses among what the store holds when the command runs (a
 * working order, an open position), so most cancels, closes and reverses meet something to act on.
 */
type Command =
  | { kind: 'place'; order: Order }
  | { kind: 'reverse'; order: Order; pick?: number }
  | { kind: 'price'; instrument: string; price: number }
  | { kind: 'cancel'; pick: number; among: 'working' | 'any'; withAccount: boolean }
  | { kind: 'close'; pick?: number; account: string; instrument: string }
  | { kind: 'advance'; hours: number };

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 6, arbitrary: orderArb.map((order) => ({ kind: 'place' as const, order })) },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('reverse' as const), order: orderArb, pick: fc.option(fc.nat(10), { freq: 4, nil: undefined }) }),
  },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('price' as const), instrument: fc.constantFrom(...INSTRUMENTS), price }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('cancel' as const),
      pick: fc.nat(40),
      among: fc.constantFrom('working', 'working', 'working', 'any'),
      withAccount: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('close' as const),
      pick: fc.option(fc.nat(10), { freq: 4, nil: undefined }),
      account: fc.constantFrom(...ACCOUNTS),
      instrument: fc.constantFrom(...INSTRUMENTS),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('advance' as const), hours: fc.integer({ min: 1, max: 30 }) }) },
);

/** Most sequences start with a price for each instrument (a run without one tests the "no price yet" paths). */
const sequenceArb: fc.Arbitrary<Command[]> = fc
  .tuple(
    fc.option(price, { freq: 5, nil: undefined }),
    fc.option(price, { freq: 5, nil: undefined }),
    fc.array(commandArb, { minLength: 8, maxLength: 25 }),
  )
  .map(([es, nq, rest]) => [
    ...(es === undefined ? [] : [{ kind: 'price' as const, instrument: INSTRUMENTS[0]!, price: es }]),
    ...(nq === undefined ? [] : [{ kind: 'price' as const, instrument: INSTRUMENTS[1]!, price: nq }]),
    ...rest,
  ]);

interface Row {
  id: string;
  order_id: string;
  account: string;
  instrument: string;
  action: 'BUY' | 'SELL';
  quantity: number;
  order_type: string;
  time_in_force: string;
  limit_price: number | null;
  stop_price: number | null;
  oco_id: string | null;
  state: string;
  triggered: number;
  created_at: string;
  seq: number;
  parent_id: string | null;
}
interface FillRow { order_id: string; account: string; instrument: string; action: string; quantity: number; price: number | null }
interface PositionRow { account: string; instrument: string; quantity: number; avg_price: number | null; realized_pnl: number; pnl_known: number }

interface State {
  orders: Row[];
  fills: FillRow[];
  positions: PositionRow[];
  prices: Map<string, number>;
}

/** A reader of the store's tables, on a connection of its own. */
function reader(file: string): { read(): State; close(): void } {
  const db = new Database(file, { readonly: true });
  const q = {
    orders: db.prepare('SELECT * FROM orders ORDER BY seq'),
    fills: db.prepare('SELECT * FROM fills'),
    positions: db.prepare('SELECT * FROM positions'),
    prices: db.prepare('SELECT instrument, price FROM prices'),
  };
  return {
    read: () => ({
      orders: q.orders.all() as Row[],
      fills: q.fills.all() as FillRow[],
      positions: q.positions.all() as PositionRow[],
      prices: new Map((q.prices.all() as Array<{ instrument: string; price: number }>).map((p) => [p.instrument, p.price])),
    }),
    close: () => db.close(),
  };
}

function fail(message: string, detail?: unknown): never {
  throw new Error(`${message}${detail === undefined ? '' : `: ${JSON.stringify(detail)}`}`);
}

// ---- The oracle: the reference's rules, written here. ----

type Side = 'BUY' | 'SELL';
/** A BUY limit takes any price at or below it; a SELL one any at or above. */
const limitTakes = (side: Side, limit: number, p: number) => (side === 'BUY' ? p <= limit : p >= limit);
/** A BUY stop is reached at or above it; a SELL stop at or below. */
const stopReached = (side: Side, stop: number, p: number) => (side === 'BUY' ? p >= stop : p <= stop);

/**
 * §8.1: what a move from `from` to `to` (every price in between traded) does to a working order:
 * the price it fills at, 'trigger' (a stop-limit whose limit is not marketable at its stop), or
 * null. An order fillable where the move starts fills there; otherwise at its level, if the move
 * reaches it.
 */
function expectedOnMove(o: Pick<Row, 'action' | 'order_type' | 'limit_price' | 'stop_price' | 'triggered'>, from: number, to: number): number | 'trigger' | null {
  const asLimit = (start: number) => (limitTakes(o.action, o.limit_price!, start) ? start : limitTakes(o.action, o.limit_price!, to) ? o.limit_price! : null);
  const stopAt = () => (stopReached(o.action, o.stop_price!, from) ? from : stopReached(o.action, o.stop_price!, to) ? o.stop_price! : null);
  switch (o.order_type) {
    case 'MARKET':
      return from;
    case 'LIMIT':
      return asLimit(from);
    case 'STOPMARKET':
      return stopAt();
    case 'STOPLIMIT': {
      if (o.triggered === 1) return asLimit(from);
      const touched = stopAt();
      if (touched === null) return null;
      return asLimit(touched) ?? 'trigger';
    }
    default:
      return fail('an order type the oracle does not know', o);
  }
}

const openPositions = (s: State) => s.positions.filter((p) => p.quantity !== 0);
const positionOf = (s: State, account: string, instrument: string) => s.positions.find((p) => p.account === account && p.instrument === instrument && p.quantity !== 0);

/** The refusal the reference gives an order on this state (§3.1, §8.3, §8.4), or undefined when it must be taken. */
function placeRefusal(s: State, o: Order, cancelled: Set<string> = new Set()): string | undefined {
  const last = s.prices.get(o.instrument);
  // The price source is manual (set below): a MARKET order needs a price someone set (§3.1, §8.1).
  if (o.orderType === 'MARKET' && last === undefined) return `Invalid request: instrument: no last price for ${o.instrument} in the simulator`;
  if (o.strategy === 'Nope') return "ATM strategy template 'Nope' not found";
  if (o.ocoId !== undefined) {
    const group = s.orders.filter((r) => r.account === o.account && r.oco_id === o.ocoId);
    if (group.length > 0 && !group.some((r) => r.state === 'WORKING' && !cancelled.has(r.id)))
      return `Invalid request: ocoId: group '${o.ocoId}' has no active order; use a new id`;
  }
  if ((o.orderType === 'STOPMARKET' || o.orderType === 'STOPLIMIT') && last !== undefined && stopReached(o.action, o.stopPrice!, last))
    return `Invalid request: stopPrice: a ${o.action} stop must be ${o.action === 'BUY' ? 'above' : 'below'} the last price ${last} of ${o.instrument}`;
  return undefined;
}

/** The working orders a full close or a reverse of a position cancels: the instrument's, and their OCO groups (§8.5, §8.3). */
function cancelledByClosing(s: State, account: string, instrument: string): Set<string> {
  const working = s.orders.filter((r) => r.state === 'WORKING');
  const hit = working.filter((r) => r.account === account && r.instrument === instrument);
  const groups = new Set(hit.filter((r) => r.oco_id !== null).map((r) => r.oco_id));
  return new Set(working.filter((r) => hit.includes(r) || (r.account === account && r.oco_id !== null && groups.has(r.oco_id))).map((r) => r.id));
}

/** A command made concrete on the state it meets, and what the reference says must come of it. */
type Step =
  | { kind: 'place' | 'reverse'; order: Order; refusal?: string }
  | { kind: 'price'; instrument: string; price: number }
  | { kind: 'cancel'; account?: string; orderId: string; refusal?: string }
  | { kind: 'close'; account: string; instrument: string; refusal?: string }
  | { kind: 'advance'; hours: number };

function resolve(command: Command, s: State, placedIds: string[]): Step {
  switch (command.kind) {
    case 'place':
      return { kind: 'place', order: command.order, refusal: placeRefusal(s, command.order) };
    case 'reverse': {
      const open = openPositions(s);
      const target = command.pick !== undefined && open.length > 0 ? open[command.pick % open.length]! : undefined;
      const order = target ? { ...command.order, account: target.account, instrument: target.instrument } : command.order;
      const position = positionOf(s, order.account, order.instrument);
      const refusal = position
        ? placeRefusal(s, order, cancelledByClosing(s, order.account, order.instrument))
        : `No position found for instrument '${order.instrument}' in account '${order.account}'`;
      return { kind: 'reverse', order, refusal };
    }
    case 'price':
      return command;
    case 'cancel': {
      const pool = command.among === 'working' ? s.orders.filter((r) => r.state === 'WORKING').map((r) => r.order_id) : placedIds;
      const orderId = pool.length === 0 ? 'no-such-order' : pool[command.pick % pool.length]!;
      const row = s.orders.find((r) => r.order_id === orderId);
      const account = command.withAccount && row ? row.account : undefined;
      const refusal = row?.state === 'WORKING' ? undefined : `Order linked to '${orderId}' not found or already terminal.`;
      return { kind: 'cancel', account, orderId, refusal };
    }
    case 'close': {
      const open = openPositions(s);
      const target = command.pick !== undefined && open.length > 0 ? open[command.pick % open.length]! : command;
      const refusal = positionOf(s, target.account, target.instrument) ? undefined : `No positions found for instrument '${target.instrument}'`;
      return { kind: 'close', account: target.account, instrument: target.instrument, refusal };
    }
    case 'advance':
      return command;
  }
}

function run(t: TestEngine, step: Step, clock: { now: Date }): string[] {
  switch (step.kind) {
    case 'place':
      return [t.engine.placeOrder(step.order).orderId];
    case 'reverse':
      return [t.engine.reversePosition(step.order).orderId];
    case 'price':
      t.engine.setPrice(step.instrument, step.price);
      return [];
    case 'cancel':
      t.engine.cancelOrder(step.account, step.orderId);
      return [];
    case 'close':
      t.engine.closePosition(step.account, step.instrument);
      return [];
    case 'advance':
      clock.now = new Date(clock.now.getTime() + step.hours * 3_600_000);
      t.setTime(clock.now.toISOString());
      return [];
  }
}

/**
 * Every fill the step made, at the price §8.1 gives: an order that was working, on the step's
 * move, at its level (or where the move starts, if it was fillable there); an order placed on the
 * step (the order itself, the MARKET that closes a position) at the last price, if it was
 * fillable there; an ATM bracket on the rest of the move, from its entry's fill price (§8.4).
 */
function checkFills(before: State, after: State, step: Step): void {
  const known = new Map(before.orders.map((o) => [o.id, o]));
  const fillsBefore = new Set(before.fills.map((f) => f.order_id));
  for (const fill of after.fills.filter((f) => !fillsBefore.has(f.order_id))) {
    const order = after.orders.find((o) => o.id === fill.order_id)!;
    const was = known.get(order.id);
    let expected: number | 'trigger' | null;
    if (was) {
      if (step.kind !== 'price' || was.state !== 'WORKING') fail('an order filled on a step that cannot fill it', { was, fill, step });
      expected = expectedOnMove(was, before.prices.get(step.instrument) ?? step.price, step.price);
    } else if (order.parent_id !== null) {
      const entry = after.fills.find((f) => f.order_id === order.parent_id);
      if (!entry || entry.price === null) return fail('a bracket filled before its entry', { order, fill });
      expected = expectedOnMove(order, entry.price, step.kind === 'price' ? step.price : entry.price);
    } else {
      const last = before.prices.get(order.instrument);
      if (last === undefined) return fail('an order filled with no price known', { order, fill, step });
      expected = expectedOnMove(order, last, last);
    }
    if (fill.price !== expected) fail('a fill is not at the price the rules give', { order, fill, expected, step });
  }
}

/** §10: the first weekday 16:00 in Chicago after `time` (ES and NQ close at 16:00; daylight time from Intl). */
function sessionClose(time: Date): Date {
  const offsetAt = (instant: number) => {
    const parts = new Intl.DateTimeFormat('en-US', { timeZone: 'America/Chicago', timeZoneName: 'longOffset' }).formatToParts(new Date(instant));
    const [, sign, hh, mm] = /GMT([+-])(\d\d):(\d\d)/.exec(parts.find((p) => p.type === 'timeZoneName')!.value)!;
    return (sign === '-' ? -1 : 1) * (Number(hh) * 60 + Number(mm)) * 60_000;
  };
  for (let day = 0; day < 8; day++) {
    const local = new Date(time.getTime() + offsetAt(time.getTime()) + day * 86_400_000);
    const candidate = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), 16);
    const close = candidate - offsetAt(candidate - 6 * 3_600_000);
    const weekday = new Date(candidate).getUTCDay();
    if (weekday !== 0 && weekday !== 6 && close > time.getTime()) return new Date(close);
  }
  return fail('no close within a week', time);
}

function checkInvariants(s: State, now: Date): void {
  const byId = new Map(s.orders.map((o) => [o.id, o]));

  // Every fill belongs to a FILLED order, once, for its whole quantity; no other order has fills.
  const fillsPerOrder = new Map<string, number>();
  for (const f of s.fills) fillsPerOrder.set(f.order_id, (fillsPerOrder.get(f.order_id) ?? 0) + 1);
  for (const o of s.orders) {
    const n = fillsPerOrder.get(o.id) ?? 0;
    if (o.state === 'FILLED' ? n !== 1 : n !== 0) fail('an order is filled and not, or filled twice', { o, n });
  }
  for (const f of s.fills) if (f.quantity !== byId.get(f.order_id)!.quantity) fail('a fill is not for the whole order', f);

  // The position always equals the signed sum of fills; P&L agrees with the cash flow.
  for (const p of s.positions) {
    const mine = s.fills.filter((f) => f.account === p.account && f.instrument === p.instrument);
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
  for (const o of s.orders) {
    if (o.oco_id === null || o.state !== 'FILLED') continue;
    const key = `${o.account}/${o.oco_id}`;
    groupFills.set(key, (groupFills.get(key) ?? 0) + 1);
    if (groupFills.get(key)! > 1) fail('two orders of one OCO group filled', key);
  }

  for (const o of s.orders.filter((x) => x.state === 'WORKING')) {
    // No working order is left fillable at the last price: orders the market reached have filled.
    const last = s.prices.get(o.instrument);
    if (last !== undefined) {
      const outcome = expectedOnMove(o, last, last);
      if (typeof outcome === 'number') fail('a working order is fillable at the last price', { o, last });
      if (outcome === 'trigger') fail('a working stop-limit is touched and not triggered', { o, last });
    }
    // No DAY order works past its session's end.
    if (o.time_in_force === 'DAY' && sessionClose(new Date(o.created_at)) <= now) fail('a DAY order outlived its session', o);
  }
}

describe('engine properties over random command sequences', () => {
  it('does what the oracle says with every command, keeps its invariants, and a refused command changes nothing', () => {
    const accepted: Record<string, number> = {};
    const refused: Record<string, number> = {};
    fc.assert(
      fc.property(sequenceArb, (commands) => {
        const t = testEngine('2025-03-06T15:00:00Z'); // Thursday before the spring DST change
        const clock = { now: new Date('2025-03-06T15:00:00Z') };
        const store = reader(t.file);
        try {
          // Prices only from the commands (no demo price jumps in): a MARKET order before any is refused.
          t.engine.setPriceSource('*', 'manual', {});
          t.engine.addAccount('Sim102');
          t.engine.addAtmTemplate({ name: 'A', stopLossTicks: 2, profitTargetTicks: 3, tickSize: 0.5 });
          const placed: string[] = [];
          for (const command of commands) {
            t.engine.listOrders(); // a read runs DAY expiry, like any operation
            const before = store.read();
            const step = resolve(command, before, placed);
            const expected = 'refusal' in step ? step.refusal : undefined;
            // The whole store, to show a refusal changed nothing (an unexpected refusal fails anyway).
            const snapshot = expected === undefined ? undefined : t.snapshot();
            let outcome: string | undefined;
            try {
              placed.push(...run(t, step, clock));
            } catch (error) {
              if (!(error instanceof RejectedError)) throw error;
              outcome = error.message;
              if (snapshot && JSON.stringify(t.snapshot()) !== JSON.stringify(snapshot)) fail('a refused command changed the store', step);
            }
            if (outcome !== expected) fail(expected === undefined ? 'the engine refused a command the rules allow' : 'the engine did not refuse as the rules say', { step, outcome, expected });
            (outcome === undefined ? accepted : refused)[step.kind] = ((outcome === undefined ? accepted : refused)[step.kind] ?? 0) + 1;
            t.engine.listOrders();
            const after = store.read();
            checkFills(before, after, step);
            checkInvariants(after, clock.now);
          }
        } finally {
          store.close();
          t.cleanup();
        }
      }),
      { seed: 20250906, numRuns: 60 },
    );
    // A floor on what was accepted (the seed is fixed, so these are the same every run): an engine
    // that refused everything, or generators that came to make mostly refusals, fail here. Every
    // kind is refused sometimes too, each time with the message the rules give.
    const total = (kind: string) => (accepted[kind] ?? 0) + (refused[kind] ?? 0);
    const floors: Record<string, number> = { place: 0.5, cancel: 0.2, close: 0.3, reverse: 0.15 };
    for (const [kind, floor] of Object.entries(floors)) {
      expect(accepted[kind] ?? 0, `${kind}: accepted of ${total(kind)}`).toBeGreaterThanOrEqual(floor * total(kind));
      expect(refused[kind] ?? 0, `${kind} refused`).toBeGreaterThan(0);
    }
    for (const kind of ['price', 'advance']) expect(accepted[kind], kind).toBe(total(kind));
    const all = Object.keys({ ...accepted, ...refused }).reduce((n, kind) => n + total(kind), 0);
    expect(Object.values(accepted).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(0.55 * all);
  });
});
