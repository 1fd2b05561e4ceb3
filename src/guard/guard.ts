/**
 * The guard: one wrapper between every command and its backend (embedded, http or ws alike).
 * Reads pass through untouched. A request the operation table marks as moving money is judged
 * first, by the rules (src/guard/rules.ts) on facts gathered here: the position, working orders
 * and the day's P&L from the backend (only when a rule needs them), the halt state, pace and
 * duplicates from the ledger (src/guard/ledger.ts). A refusal sends nothing (GuardError, exit 6)
 * and is journaled; a request that passes is counted and journaled in the same ledger
 * transaction before it is sent, and its outcome after.
 */
import { randomBytes } from '../common/random.js';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Backend, CallResult, GuardFacts } from '../backends/types.js';
import { GuardError, NetworkError } from '../common/errors.js';
import type { Order } from '../service/order.js';
import { sessionEnd } from '../service/session.js';
import { type ArgsOf, type BracketArgs, type ChangeArgs, OPERATIONS, type OperationName } from '../service/operations.js';
import { DEFAULT_LOCK_WAIT_MS, lockTimeout } from './account-locks.js';
import { isLedgerFailure, type Ledger, type LedgerOps, type LedgerSpec, openLedger } from './ledger.js';
import { createSpool, type Spool } from './spool.js';
import { createOwnOrders, type Sides } from './own-orders.js';
import {
  evaluate,
  type Facts,
  fingerprint,
  type Halt,
  type Intent,
  isSimAccount,
  needsPosition,
  reduces,
  reducible,
  type Refusal,
  type Rules,
} from './rules.js';
import { extended } from '../common/extended.js';

export interface GuardOptions {
  rules: Rules;
  /** The ledger: the machine's SQLite file, or a desk's PostgreSQL server (src/guard/ledger.ts). */
  ledger?: LedgerSpec;
  /** The machine's SQLite ledger file, when `ledger` is not given. */
  ledgerFile?: string;
  /** This machine's name in the journal (guard.machine): the host name unless given. */
  machine?: string;
  profile: string;
  /** Who sent it, for the journal: cli, batch, mcp. */
  source: string;
  clock?: () => Date;
  /** --confirm-live was given. */
  confirmLive?: boolean;
  /** At a terminal: asks a person to type the account's name; true when they did. */
  askLive?: (account: string) => Promise<boolean>;
  /** A warning for the person (an exit or a reducing order sent although the ledger could not record it). */
  warn?: (message: string) => void;
  /** Removes every form of a known secret (the token) from what is journaled. */
  redact?: (text: string) => string;
  /** How long an order waits for another process's hold of its account's lock (DEFAULT_LOCK_WAIT_MS). */
  lockWaitMs?: number;
}

/** A request refused before the guard judged it (by an MCP tier, by the CLI), for the journal. */
export interface OutsideRefusal {
  /** What refused it: `tier`, `same-side`. */
  rule: string;
  message: string;
}

/** The line a refusal prints: `refused by guard max-order-qty: quantity 50 is above the limit of 10 (profile default); nothing was sent`. */
export function refusalError(refusal: Refusal): GuardError {
  const source = refusal.source ? ` (${refusal.source})` : '';
  return new GuardError(`refused by guard ${refusal.rule}: ${refusal.reason}${source}; nothing was sent`, {
    code: refusal.error,
    rule: refusal.rule,
    limit: refusal.limit,
    value: refusal.value,
    hint: refusal.rule === 'halt' ? 'trade guard show says why; trade resume lifts the halt.' : 'trade guard show lists the rules; trade config unset guard.RULE removes one.',
  });
}

const opposite = (action: 'BUY' | 'SELL'): 'BUY' | 'SELL' => (action === 'BUY' ? 'SELL' : 'BUY');
const actionOf = (orderAction: string | undefined): 'BUY' | 'SELL' | undefined =>
  orderAction === undefined ? undefined : /^buy/i.test(orderAction) ? 'BUY' : 'SELL';

/**
 * The intent of a request, from its args alone (a Reverse and a Change need a read to complete it).
 * Each intent is written out whole: on Node 20, `{ ...base, action, ... }` (a spread followed by
 * keys the source lacks) builds new hidden classes every time, ~8 µs a call, which every order of
 * a batch paid twice.
 */
export function intentOf(name: OperationName, args: unknown): Intent {
  const kind = OPERATIONS[name].guard!;
  const a = args as Record<string, unknown>;
  const account = a.account as string | undefined;
  const instrument = a.instrument as string | undefined;
  if (kind === 'exit') return { operation: name, kind, account, instrument };
  switch (name) {
    case 'PlaceOrder':
    case 'FlatPlace':
    case 'ReversePosition':
    case 'Replace': {
      const o = args as Order;
      return { operation: name, kind, account, instrument, action: o.action, quantity: o.quantity, orderType: o.orderType, limitPrice: o.limitPrice, stopPrice: o.stopPrice };
    }
    case 'CancelAndBracket': {
      // `action` is the side protected: the legs are the other side, clamped to the position.
      const b = args as BracketArgs;
      return {
        operation: name,
        kind,
        account,
        instrument,
        action: opposite(b.action),
        quantity: b.quantity,
        orderType: 'BRACKET',
        limitPrice: b.takeProfit,
        stopPrice: b.stopLoss,
      };
    }
    case 'Change': {
      const c = args as ChangeArgs;
      return { operation: name, kind, account, instrument, quantity: c.quantity, limitPrice: c.limitPrice, stopPrice: c.stopPrice, orderType: `CHANGE ${c.orderId}` };
    }
    default:
      return { operation: name, kind, account, instrument };
  }
}

/** An order that would reduce a position on the other side, if there is one. */
const couldReduce = (intent: Intent) =>
  intent.kind === 'order' && intent.account !== undefined && intent.instrument !== undefined && intent.action !== undefined && intent.quantity !== undefined;

/** Could the order add to a position, as far as what was read tells (a change that adds no size, an exit or a reducing order cannot)? */
const mayAdd = (intent: Intent, facts: Facts) =>
  !reduces(intent, reducible(facts)) && !(intent.quantityBefore !== undefined && intent.quantity !== undefined && intent.quantity <= intent.quantityBefore);

/** A position as a signed number: long > 0, short < 0. */
const signedPosition = (side: string | undefined, quantity: number | undefined) =>
  side === 'Long' ? (quantity ?? 0) : side === 'Short' ? -(quantity ?? 0) : 0;

/** The operations whose documented body takes a client `orderId` (§3.1, §3.2). */
const CLIENT_ID_OPERATIONS: ReadonlySet<OperationName> = new Set(['PlaceOrder', 'FlatPlace']);

/** Random bytes drawn 4 KiB at a time (one call into the system's generator per 256 ids, not one per id). */
let idPool = Buffer.alloc(0);
let idAt = 0;

/** A client order id: 16 random bytes in hex, no two sharing a byte of the pool. */
function clientOrderId(): string {
  if (idAt + 16 > idPool.length) {
    idPool = randomBytes(4096);
    idAt = 0;
  }
  idAt += 16;
  return idPool.toString('hex', idAt - 16, idAt);
}

/** The trading day a time belongs to: the date of the session close it comes before. */
const tradingDay = (now: Date): string => sessionEnd(now).toISOString().slice(0, 10);

export interface GuardedBackend extends Backend {
  check(name: OperationName, args: unknown): Promise<{ intent: Intent; facts: Facts; refusal?: Refusal }>;
  /** The guard's ledger, opened on first use (a GuardError `guard_ledger` when it cannot be). */
  ledger(): Promise<Ledger>;
  /** Journals a request refused before it reached the guard (outcome `refused`, this guard's source); resolves once stored. */
  refused(name: OperationName, args: unknown, refusal: OutsideRefusal): Promise<void>;
}

export function guardBackend(inner: Backend, options: GuardOptions): GuardedBackend {
  const { rules } = options;
  const spec: LedgerSpec = options.ledger ?? { kind: 'sqlite', file: options.ledgerFile! };
  const machine = spec.kind === 'postgres' ? spec.machine : (options.machine ?? hostname());
  let ledger: Ledger | undefined;
  let opening: Promise<Ledger> | undefined;
  /** Opened once; a failed open is tried again at the next request (a desk's server may be back). */
  const openOnce = (): Promise<Ledger> =>
    ledger
      ? Promise.resolve(ledger)
      : (opening ??= openLedger(spec).then(
          (opened) => (ledger = opened),
          (error: unknown) => {
            opening = undefined;
            throw error;
          },
        ));
  /** What was sent while a desk's ledger could not be reached, journaled when it is back (src/guard/spool.ts). */
  const spool: Spool | undefined = spec.kind === 'postgres' ? createSpool(join(spec.dataDir, 'guard-spool'), machine) : undefined;

  // The embedded engine answers the guard's reads directly; a remote backend through `call`.
  const direct = (inner as { guardFacts?: GuardFacts }).guardFacts;
  // The engine's clock, a replay's while one drives it: windows and trading days follow it.
  const clock = options.clock ?? (direct?.now ? () => direct.now!() : () => new Date());

  async function position(account: string, instrument: string): Promise<number> {
    if (direct) return direct.position(account, instrument);
    const read = await inner.call('GetPosition', { account, instrument });
    return signedPosition(read.value.marketPosition, read.value.quantity);
  }

  async function working(account: string, instrument: string, action: 'BUY' | 'SELL'): Promise<number> {
    if (direct) return direct.working(account, instrument, action);
    const orders = (await inner.call('GetOrders', { account, activeOnly: true })).value.orders;
    return orders
      .filter((o) => o.instrument === instrument && actionOf(o.orderAction) === action && !['Filled', 'Cancelled', 'Rejected'].includes(o.orderState ?? ''))
      .reduce((sum, o) => sum + Math.max(0, (o.quantity ?? 0) - (o.filled ?? 0)), 0);
  }

  async function dayPnl(account: string): Promise<number | undefined> {
    if (direct) return direct.dayPnl(account);
    const item = (await inner.call('GetAccount', { account })).value.item ?? {};
    const total = Number(item.realizedProfitLoss ?? 0) + Number(item.unrealizedProfitLoss ?? 0);
    return Number.isFinite(total) ? total : undefined;
  }

  /** This process's own orders in flight (src/guard/own-orders.ts). */
  const mine = createOwnOrders();

  /** One request being judged: its intent, the facts gathered, and what was read of the backend. */
  interface Judging {
    intent: Intent;
    facts: Facts;
    /** This process's orders ended when the backend was read (see own-orders.ts). */
    endedAtRead?: Sides;
    /** The backend's working orders of the intent's side, when max-position needs them. */
    workingRead?: number;
    /** Counted in `passed`: counted in `ended` too once its send is over. */
    counted?: boolean;
  }

  /** The facts of this process's own orders in flight, as they stand now. */
  function ownOrders(call: Judging): void {
    const { intent, facts, endedAtRead } = call;
    if (intent.account === undefined || intent.instrument === undefined || !endedAtRead) return;
    facts.flying = mine.flying(intent.account, intent.instrument, endedAtRead);
    if (call.workingRead !== undefined && intent.action !== undefined) facts.workingSameSide = call.workingRead + facts.flying[intent.action];
  }

  /** Completes the intent and gathers what the rules set need to judge it. */
  async function gather(name: OperationName, call: Judging, args: unknown, led: Ledger, live: LiveAnswer): Promise<void> {
    const { facts } = call;
    let intent = call.intent;
    const { account } = intent;
    if (account === undefined) return;
    // Read here only where it decides what to read next (a change's order); the verdict reads it
    // again under the write lock in any case.
    if (name === 'Change') facts.halt = await led.halts(account, options.profile);
    if (name === 'Reverse') {
      // Turns the position over: the new side's size is the position's.
      const current = await position(account, intent.instrument!);
      if (current === 0) {
        call.intent = { ...intent, kind: 'exit' };
        return;
      }
      intent = { ...intent, action: current > 0 ? 'SELL' : 'BUY', quantity: Math.abs(current), orderType: 'REVERSE' };
      // Closing first, then opening: what counts is the new side alone.
      facts.position = 0;
    }
    if (name === 'Change' && (Object.keys(rules.texts).length > 0 || facts.halt)) {
      const order = (await inner.call('GetOrder', { account, orderId: (args as ChangeArgs).orderId })).value;
      intent = {
        ...intent,
        instrument: order.instrument,
        action: actionOf(order.orderAction),
        quantityBefore: order.quantity ?? 0,
        quantity: intent.quantity ?? order.quantity ?? 0,
      };
    }
    const instrument = intent.instrument;
    // Taken before the backend is read (see own-orders.ts).
    if (instrument !== undefined) call.endedAtRead = mine.endedNow(account, instrument);
    if (rules.dailyLoss !== undefined) {
      const state = await led.lossDay(account, tradingDay(facts.now));
      facts.lossLatched = state === 'latched';
      facts.lossResumed = state === 'resumed';
      if (!facts.lossLatched && !facts.lossResumed) facts.dayPnl = await dayPnl(account);
    }
    if (rules.confirmLive && !isSimAccount(account, rules)) facts.liveConfirmed = await live(account);
    if (name === 'FlatPlace' || name === 'ReversePosition') {
      // The position is closed (and, for FlatPlace, the instrument's orders cancelled) first.
      facts.position = 0;
    }
    if (instrument !== undefined && facts.position === undefined && needsPosition(intent, rules, facts)) facts.position = await position(account, instrument);
    if (name === 'CancelAndBracket' && facts.position !== undefined && facts.position !== 0 && intent.quantity !== undefined)
      // Clamped to the position it protects.
      intent = { ...intent, quantity: Math.min(intent.quantity, Math.abs(facts.position)) };
    if (rules.maxPosition !== undefined && instrument !== undefined && intent.action !== undefined && name !== 'FlatPlace')
      call.workingRead = await working(account, instrument, intent.action);
    call.intent = intent;
    ownOrders(call);
  }

  /** confirm-live's answer for an account, asked at most once per request (it may be gathered twice). */
  type LiveAnswer = (account: string) => Promise<boolean>;
  const liveAnswer = (): LiveAnswer => {
    let asked: Promise<boolean> | undefined;
    return (account) => (asked ??= options.confirmLive === true ? Promise.resolve(true) : options.askLive ? options.askLive(account) : Promise.resolve(false));
  };

  const scrub = options.redact ?? ((text: string) => text);

  /** The journal line of a request, before its outcome. */
  function lineOf(name: OperationName, args: unknown, intent: Intent, now: Date) {
    return {
      at: now.toISOString(),
      profile: options.profile,
      backend: inner.name,
      source: options.source,
      operation: name,
      account: intent.account === undefined ? null : scrub(intent.account),
      instrument: intent.instrument === undefined ? null : scrub(intent.instrument),
      request: scrub(JSON.stringify(args) ?? 'null'),
      client_order_id: CLIENT_ID_OPERATIONS.has(name) ? ((args as Order).orderId ?? null) : null,
      pid: process.pid,
      machine,
    };
  }

  type Send = <K extends OperationName>(name: K, args: ArgsOf<K>) => Promise<CallResult<K>>;

  async function guarded<K extends OperationName>(name: K, args: ArgsOf<K>, send: Send): Promise<CallResult<K>> {
    if (CLIENT_ID_OPERATIONS.has(name) && (args as Order).orderId === undefined && inner.name !== 'embedded')
      // A client order id on every order sent to a service, so that an unknown outcome can be
      // looked up (trade reconcile). In-process, the engine's answer is never lost on the way.
      args = extended(args as Order, { orderId: clientOrderId() }) as ArgsOf<K>;
    // Anything sent yet? A ledger failing before it fails closed (or lets an exit go); after, it only warns.
    let sent = false;
    const sending: Send = (n, a) => {
      sent = true;
      return send(n, a);
    };
    try {
      return await judged(name, args, sending, await openOnce());
    } catch (error) {
      if (sent || !isLedgerFailure(error)) throw error;
      return ledgerDown(name, args, send, error);
    }
  }

  async function judged<K extends OperationName>(name: K, args: ArgsOf<K>, send: Send, led: Ledger): Promise<CallResult<K>> {
    const spec = OPERATIONS[name];
    const live = liveAnswer();
    const account = intentOf(name, args).account;
    // With max-position set, an order that may add to a position is checked, sent and recorded
    // under its account's lock: another process's order cannot land unseen between this one's
    // read and its send. An exit never takes it; an order found to only reduce a position does
    // not wait for it. confirm-live is asked first: a person typing holds no lock.
    const lockable = spec.guard === 'order' && rules.maxPosition !== undefined && account !== undefined;
    if (lockable && rules.confirmLive && !isSimAccount(account, rules)) await live(account);
    let hold = lockable ? await led.lockAccount(account, 0) : undefined;
    try {
      let call: Judging = { intent: intentOf(name, args), facts: { now: clock() } };
      await gather(name, call, args, led, live);
      if (lockable && !hold && mayAdd(call.intent, call.facts)) {
        const waitMs = options.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS;
        hold = await led.lockAccount(account, waitMs);
        if (!hold) {
          const error = lockTimeout(account, waitMs);
          await inTurn(led, (tx) => tx.journal({ ...lineOf(name, args, call.intent, clock()), outcome: 'refused', rule: 'account-lock', message: error.message }));
          throw error;
        }
        // Read again, under the lock: what the other process sent is in the backend now.
        call = { intent: intentOf(name, args), facts: { now: clock() } };
        await gather(name, call, args, led, live);
      }
      return await judgeAndSend(name, args, send, call, led);
    } finally {
      hold?.release();
    }
  }

  /**
   * The ledger cannot be used (unreachable, too slow, damaged) and nothing was sent: getting flat
   * is never blocked. An exit, or an order that only reduces the position read now, is sent with
   * a warning (journaled later on a desk's ledger: src/guard/spool.ts); anything else is refused,
   * with the ledger's error (exit 6).
   */
  async function ledgerDown<K extends OperationName>(name: K, args: ArgsOf<K>, send: Send, failure: GuardError): Promise<CallResult<K>> {
    const intent = intentOf(name, args);
    const facts: Facts = { now: clock() };
    if (OPERATIONS[name].guard !== 'exit') {
      if (!couldReduce(intent) || name === 'FlatPlace' || name === 'ReversePosition' || name === 'Reverse') throw failure;
      const endedAtRead = mine.endedNow(intent.account!, intent.instrument!);
      facts.position = await position(intent.account!, intent.instrument!);
      facts.flying = mine.flying(intent.account!, intent.instrument!, endedAtRead);
      if (!reduces(intent, reducible(facts))) throw failure;
    }
    // The rules that need no ledger still hold (accounts).
    const refusal = evaluate(intent, rules, facts);
    if (refusal) throw refusalError(refusal);
    const what = failure.message.replace(/; nothing was sent\.$/, '');
    const key = spool?.line({ ...lineOf(name, args, intent, facts.now), outcome: 'sent' });
    options.warn?.(`${what}: this ${name} is sent ${spool ? 'now, and journaled when the ledger is back' : 'without being journaled'}.`);
    mine.passed(intent);
    try {
      const result = await send(name, args);
      const orderId = (result.value as { orderId?: unknown }).orderId;
      if (key) spool!.settle({ key }, 'accepted', { orderId: typeof orderId === 'string' ? orderId : undefined, at: clock().toISOString() });
      return result;
    } catch (error) {
      const unknown = error instanceof NetworkError && error.outcomeUnknown;
      if (key) spool!.settle({ key }, unknown ? 'unknown' : 'rejected', { message: scrub((error as Error).message), at: clock().toISOString() });
      throw error;
    } finally {
      mine.ended(intent);
    }
  }

  async function judgeAndSend<K extends OperationName>(name: K, args: ArgsOf<K>, send: Send, call: Judging, led: Ledger): Promise<CallResult<K>> {
    const spec = OPERATIONS[name];
    const { facts } = call;
    const now = facts.now;
    const line = lineOf(name, args, call.intent, now);
    type Verdict = { unsure: true } | { refusal: Refusal } | { id: number };
    const judge = () =>
      inTurn<Verdict>(led, async (tx, haltOf) => {
        const { intent } = call;
        // Read again under the write lock: what another process did a moment ago counts.
        facts.halt = intent.account !== undefined ? haltOf(intent.account) : undefined;
        if (intent.account !== undefined && rules.maxOrders)
          facts.paceCounts = await tx.paceCounts(intent.account, rules.maxOrders.map((p) => p.ms), now.getTime());
        // Only the pace and duplicate rules read it.
        const fp = rules.maxOrders || rules.duplicateWindowMs !== undefined ? fingerprint(intent) : '';
        if (rules.duplicateWindowMs !== undefined) facts.duplicateAt = await tx.lastSent(fp, now.getTime() - rules.duplicateWindowMs);
        // This process's orders passed so far, this turn's included.
        ownOrders(call);
        const refusal = evaluate(intent, rules, facts);
        if (refusal) {
          // It may only reduce the position: the position decides, read outside the lock.
          if (facts.position === undefined && couldReduce(intent)) return { unsure: true as const };
          if (refusal.rule === 'daily-loss' && !facts.lossLatched && intent.account !== undefined)
            await tx.setLossDay(intent.account, tradingDay(now), 'latched');
          await tx.journal(extended(line, { outcome: 'refused' as const, rule: refusal.rule, message: scrub(refusal.reason) }));
          return { refusal };
        }
        // Counted for the pace and duplicate rules (only when the profile has one: the journal says the rest).
        if (intent.account !== undefined && spec.guard === 'order' && (rules.maxOrders || rules.duplicateWindowMs !== undefined))
          await tx.recordSend(intent.account, now.getTime(), fp);
        const id = await tx.journal(extended(line, { outcome: 'sent' as const }));
        mine.passed(intent);
        call.counted = true;
        return { id };
      });
    try {
      let verdict = await judge();
      if ('unsure' in verdict) {
        facts.position = await position(call.intent.account!, call.intent.instrument!);
        verdict = await judge();
      }
      if ('refusal' in verdict) throw refusalError(verdict.refusal!);
      const id = (verdict as { id: number }).id;
      try {
        const result = await send(name, args);
        const orderId = (result.value as { orderId?: unknown }).orderId;
        settle(led, id, 'accepted', { orderId: typeof orderId === 'string' ? orderId : undefined });
        return result;
      } catch (error) {
        const unknown = error instanceof NetworkError && error.outcomeUnknown;
        settle(led, id, unknown ? 'unknown' : 'rejected', { message: scrub((error as Error).message) });
        throw error;
      }
    } finally {
      if (call.counted) mine.ended(call.intent);
    }
  }

  /**
   * The ledger's writes, grouped: every request judged in one turn of the event loop (a batch's
   * lines in flight) shares one transaction under the write lock, with the outcomes recorded
   * since the last one. A verdict is answered only after the commit that holds it, so nothing is
   * sent before its journal line is stored; an outcome waits for the next transaction (or the
   * backend's close): a process killed before it leaves the line `sent`, read as unknown.
   */
  type HaltOf = (account: string) => Halt | undefined;
  type TurnWork = (tx: LedgerOps, haltOf: HaltOf) => Promise<unknown>;
  const turn: Array<{ work: TurnWork; resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  type Settled = [number, 'accepted' | 'rejected' | 'unknown', { orderId?: string; message?: string; at: string }];
  const outcomes: Settled[] = [];
  let scheduled = false;
  /** The flushes under way: close waits for them. */
  let flushing: Promise<void> = Promise.resolve();

  function schedule(led: Ledger): void {
    if (scheduled) return;
    scheduled = true;
    setImmediate(() => {
      const run = flush(led);
      flushing = flushing.then(() => run);
    });
  }

  function inTurn<T>(led: Ledger, work: (tx: LedgerOps, haltOf: HaltOf) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      turn.push({ work, resolve: resolve as (v: unknown) => void, reject });
      schedule(led);
    });
  }

  async function flush(led: Ledger): Promise<void> {
    scheduled = false;
    const works = turn.splice(0);
    const settled = outcomes.splice(0);
    if (works.length === 0 && settled.length === 0) return;
    const results: Array<{ value?: unknown; error?: unknown }> = [];
    try {
      await led.exclusive(async (tx) => {
        // The halts, read once for the whole turn under the write lock (a handful of rows).
        const halts = new Map((await tx.allHalts()).map((h) => [h.scope, h]));
        const haltOf: HaltOf = (account) => halts.get(`account:${account}`) ?? halts.get(`profile:${options.profile}`);
        for (const [id, outcome, fields] of settled) await tx.settle(id, outcome, fields);
        for (const { work } of works) {
          try {
            results.push({ value: await work(tx, haltOf) });
          } catch (error) {
            // The ledger itself failing fails the whole turn (below); anything else is this request's.
            if (error instanceof GuardError) throw error;
            results.push({ error });
          }
        }
      });
    } catch (error) {
      for (const { reject } of works) reject(error);
      if (settled.length > 0) {
        // A desk's ledger: the outcomes wait in the spool for the server.
        if (spool) for (const [id, outcome, fields] of settled) spool.settle({ id }, outcome, fields);
        options.warn?.(
          `The guard's journal could not record ${settled.length} outcome(s)${spool ? ' yet (they are recorded when the ledger is back)' : ''}: ${(error as Error).message}`,
        );
      }
      return;
    }
    works.forEach(({ resolve, reject }, i) => (results[i]!.error !== undefined ? reject(results[i]!.error) : resolve(results[i]!.value)));
  }

  function settle(led: Ledger, id: number, outcome: 'accepted' | 'rejected' | 'unknown', fields: { orderId?: string; message?: string }) {
    outcomes.push([id, outcome, extended(fields, { at: clock().toISOString() })]);
    schedule(led);
  }

  /** The verdict on a request without sending or recording it (`trade guard test`). */
  async function check(name: OperationName, args: unknown): Promise<{ intent: Intent; facts: Facts; refusal?: Refusal }> {
    const led = await openOnce();
    const call: Judging = { intent: intentOf(name, args), facts: { now: clock() } };
    await gather(name, call, args, led, liveAnswer());
    const { intent, facts } = call;
    const now = facts.now;
    if (OPERATIONS[name].guard === undefined) return { intent, facts };
    if (intent.account !== undefined) facts.halt = await led.halts(intent.account, options.profile);
    if (intent.account !== undefined && rules.maxOrders)
      facts.paceCounts = await led.paceCounts(intent.account, rules.maxOrders.map((p) => p.ms), now.getTime());
    if (rules.duplicateWindowMs !== undefined) facts.duplicateAt = await led.lastSent(fingerprint(intent), now.getTime() - rules.duplicateWindowMs);
    let refusal = evaluate(intent, rules, facts);
    if (refusal && facts.position === undefined && couldReduce(intent)) {
      facts.position = await position(intent.account!, intent.instrument!);
      refusal = evaluate(intent, rules, facts);
    }
    return { intent, facts, refusal };
  }

  async function refused(name: OperationName, args: unknown, refusal: OutsideRefusal): Promise<void> {
    const led = await openOnce();
    const intent: Intent = OPERATIONS[name].guard === undefined ? { operation: name, kind: 'exit', account: (args as { account?: string }).account } : intentOf(name, args);
    await inTurn(led, (tx) => tx.journal({ ...lineOf(name, args, intent, clock()), outcome: 'refused', rule: refusal.rule, message: scrub(refusal.message) }));
  }

  let handoff: Promise<void> = Promise.resolve();
  const own = {
    check,
    refused,
    ledger: openOnce,
    /**
     * Calls reach the backend in the order they were made: a read waits until the orders asked
     * before it have been handed over (or refused), however long their judging took, as the
     * embedded engine's group commit and `trade batch` promise.
     */
    call<K extends OperationName>(name: K, args: ArgsOf<K>): Promise<CallResult<K>> {
      const before = handoff;
      let handedOver!: () => void;
      handoff = new Promise<void>((resolve) => (handedOver = resolve));
      const send: Send = async (n, a) => {
        await before;
        try {
          return inner.call(n, a);
        } finally {
          handedOver();
        }
      };
      const run = OPERATIONS[name].guard === undefined ? send(name, args) : guarded(name, args, send);
      return run.finally(handedOver);
    },
    async close() {
      try {
        await inner.close();
      } finally {
        if (ledger) {
          await flushing;
          await flush(ledger);
          await ledger.close();
        }
      }
    },
  };
  // What a backend offers beyond the interface (the embedded engine's quote day, a stream's
  // events) is the inner backend's own, reached through the guard unchanged.
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(own, key)) return own[key as keyof typeof own];
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as unknown as GuardedBackend;
}

