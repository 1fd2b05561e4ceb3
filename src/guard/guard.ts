/**
 * The guard: one wrapper between every command and its backend (embedded, http or ws alike).
 * Reads pass through untouched. A request the operation table marks as moving money is judged
 * first, by the rules (src/guard/rules.ts) on facts gathered here: the position, working orders
 * and the day's P&L from the backend (only when a rule needs them), the halt state, pace and
 * duplicates from the ledger (src/guard/ledger.ts). A refusal sends nothing (GuardError, exit 6)
 * and is journaled; a request that passes is counted and journaled in the same ledger
 * transaction before it is sent, and its outcome after.
 */
import { randomBytes } from 'node:crypto';
import type { Backend, CallResult, GuardFacts } from '../backends/types.js';
import { GuardError, NetworkError } from '../common/errors.js';
import type { Order } from '../service/order.js';
import { sessionEnd } from '../service/session.js';
import { type ArgsOf, type BracketArgs, type ChangeArgs, OPERATIONS, type OperationName } from '../service/operations.js';
import { DEFAULT_LOCK_WAIT_MS, lockTimeout } from './account-locks.js';
import { openLedger, type Ledger } from './ledger.js';
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

export interface GuardOptions {
  rules: Rules;
  ledgerFile: string;
  profile: string;
  /** Who sent it, for the journal: cli, batch, mcp. */
  source: string;
  clock?: () => Date;
  /** --confirm-live was given. */
  confirmLive?: boolean;
  /** At a terminal: asks a person to type the account's name; true when they did. */
  askLive?: (account: string) => Promise<boolean>;
  /** A warning for the person (an exit sent although the ledger could not record it). */
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

/** The intent of a request, from its args alone (a Reverse and a Change need a read to complete it). */
export function intentOf(name: OperationName, args: unknown): Intent {
  const kind = OPERATIONS[name].guard!;
  const a = args as Record<string, unknown>;
  const base: Intent = { operation: name, kind, account: a.account as string | undefined, instrument: a.instrument as string | undefined };
  if (kind === 'exit') return base;
  switch (name) {
    case 'PlaceOrder':
    case 'FlatPlace':
    case 'ReversePosition':
    case 'Replace': {
      const o = args as Order;
      return { ...base, action: o.action, quantity: o.quantity, orderType: o.orderType, limitPrice: o.limitPrice, stopPrice: o.stopPrice };
    }
    case 'CancelAndBracket': {
      // `action` is the side protected: the legs are the other side, clamped to the position.
      const b = args as BracketArgs;
      return { ...base, action: opposite(b.action), quantity: b.quantity, orderType: 'BRACKET', limitPrice: b.takeProfit, stopPrice: b.stopLoss };
    }
    case 'Change': {
      const c = args as ChangeArgs;
      return { ...base, quantity: c.quantity, limitPrice: c.limitPrice, stopPrice: c.stopPrice, orderType: `CHANGE ${c.orderId}` };
    }
    default:
      return base;
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

/** The trading day a time belongs to: the date of the session close it comes before. */
const tradingDay = (now: Date): string => sessionEnd(now).toISOString().slice(0, 10);

export interface GuardedBackend extends Backend {
  check(name: OperationName, args: unknown): Promise<{ intent: Intent; facts: Facts; refusal?: Refusal }>;
  /** Journals a request refused before it reached the guard (outcome `refused`, this guard's source); resolves once stored. */
  refused(name: OperationName, args: unknown, refusal: OutsideRefusal): Promise<void>;
}

export function guardBackend(inner: Backend, options: GuardOptions): GuardedBackend {
  const { rules } = options;
  let ledger: Ledger | undefined;
  const openOnce = () => (ledger ??= openLedger(options.ledgerFile));

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
    if (name === 'Change') facts.halt = led.halts(account, options.profile);
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
      const state = led.lossDay(account, tradingDay(facts.now));
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
    };
  }

  type Send = <K extends OperationName>(name: K, args: ArgsOf<K>) => Promise<CallResult<K>>;

  async function guarded<K extends OperationName>(name: K, args: ArgsOf<K>, send: Send): Promise<CallResult<K>> {
    const spec = OPERATIONS[name];
    let led: Ledger;
    try {
      led = openOnce();
    } catch (error) {
      // Fail closed, except for getting flat: an exit goes on, unjournaled, and says so.
      if (spec.guard === 'exit') {
        options.warn?.(`${(error as Error).message.replace(/; nothing was sent\.$/, '')}: this ${name} is sent without being journaled.`);
        return send(name, args);
      }
      throw error;
    }
    if (CLIENT_ID_OPERATIONS.has(name) && (args as Order).orderId === undefined && inner.name !== 'embedded')
      // A client order id on every order sent to a service, so that an unknown outcome can be
      // looked up (trade reconcile). In-process, the engine's answer is never lost on the way.
      args = { ...(args as Order), orderId: randomBytes(16).toString('hex') } as ArgsOf<K>;
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
          await inTurn(led, () => led.journal({ ...lineOf(name, args, call.intent, clock()), outcome: 'refused', rule: 'account-lock', message: error.message }));
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

  async function judgeAndSend<K extends OperationName>(name: K, args: ArgsOf<K>, send: Send, call: Judging, led: Ledger): Promise<CallResult<K>> {
    const spec = OPERATIONS[name];
    const { facts } = call;
    const now = facts.now;
    const line = lineOf(name, args, call.intent, now);
    type Verdict = { unsure: true } | { refusal: Refusal } | { id: number };
    const judge = () =>
      inTurn<Verdict>(led, () => {
        const { intent } = call;
        // Read again under the write lock: what another process did a moment ago counts.
        facts.halt = intent.account !== undefined ? haltOf(intent.account) : undefined;
        if (intent.account !== undefined && rules.maxOrders)
          facts.paceCounts = led.paceCounts(intent.account, rules.maxOrders.map((p) => p.ms), now.getTime());
        const fp = fingerprint(intent);
        if (rules.duplicateWindowMs !== undefined) facts.duplicateAt = led.lastSent(fp, now.getTime() - rules.duplicateWindowMs);
        // This process's orders passed so far, this turn's included.
        ownOrders(call);
        const refusal = evaluate(intent, rules, facts);
        if (refusal) {
          // It may only reduce the position: the position decides, read outside the lock.
          if (facts.position === undefined && couldReduce(intent)) return { unsure: true as const };
          if (refusal.rule === 'daily-loss' && !facts.lossLatched && intent.account !== undefined)
            led.setLossDay(intent.account, tradingDay(now), 'latched');
          led.journal({ ...line, outcome: 'refused', rule: refusal.rule, message: scrub(refusal.reason) });
          return { refusal };
        }
        // Counted for the pace and duplicate rules (only when the profile has one: the journal says the rest).
        if (intent.account !== undefined && spec.guard === 'order' && (rules.maxOrders || rules.duplicateWindowMs !== undefined))
          led.recordSend(intent.account, now.getTime(), fp);
        const id = led.journal({ ...line, outcome: 'sent' });
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
  const turn: Array<{ work: () => unknown; resolve: (v: unknown) => void; reject: (e: unknown) => void }> = [];
  const outcomes: Array<[number, 'accepted' | 'rejected' | 'unknown', { orderId?: string; message?: string; at: string }]> = [];
  let scheduled = false;
  /** The halt state of an account, as the current turn's transaction read it. */
  let haltOf: (account: string) => Halt | undefined = () => undefined;

  function inTurn<T>(led: Ledger, work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      turn.push({ work, resolve: resolve as (v: unknown) => void, reject });
      if (!scheduled) {
        scheduled = true;
        setImmediate(() => flush(led));
      }
    });
  }

  function flush(led: Ledger): void {
    scheduled = false;
    const works = turn.splice(0);
    const settled = outcomes.splice(0);
    if (works.length === 0 && settled.length === 0) return;
    const results: Array<{ value?: unknown; error?: unknown }> = [];
    try {
      led.exclusive(() => {
        // The halts, read once for the whole turn under the write lock (a handful of rows).
        const halts = new Map(led.allHalts().map((h) => [h.scope, h]));
        haltOf = (account) => halts.get(`account:${account}`) ?? halts.get(`profile:${options.profile}`);
        for (const [id, outcome, fields] of settled) led.settle(id, outcome, fields);
        for (const { work } of works) {
          try {
            results.push({ value: work() });
          } catch (error) {
            // The ledger itself failing fails the whole turn (below); anything else is this request's.
            if (error instanceof GuardError) throw error;
            results.push({ error });
          }
        }
      });
    } catch (error) {
      for (const { reject } of works) reject(error);
      if (settled.length > 0) options.warn?.(`The guard's journal could not record ${settled.length} outcome(s): ${(error as Error).message}`);
      return;
    }
    works.forEach(({ resolve, reject }, i) => (results[i]!.error !== undefined ? reject(results[i]!.error) : resolve(results[i]!.value)));
  }

  function settle(led: Ledger, id: number, outcome: 'accepted' | 'rejected' | 'unknown', fields: { orderId?: string; message?: string }) {
    outcomes.push([id, outcome, { ...fields, at: clock().toISOString() }]);
    if (!scheduled) {
      scheduled = true;
      setImmediate(() => flush(led));
    }
  }

  /** The verdict on a request without sending or recording it (`trade guard test`). */
  async function check(name: OperationName, args: unknown): Promise<{ intent: Intent; facts: Facts; refusal?: Refusal }> {
    const led = openOnce();
    const call: Judging = { intent: intentOf(name, args), facts: { now: clock() } };
    await gather(name, call, args, led, liveAnswer());
    const { intent, facts } = call;
    const now = facts.now;
    if (OPERATIONS[name].guard === undefined) return { intent, facts };
    if (intent.account !== undefined) facts.halt = led.halts(intent.account, options.profile);
    if (intent.account !== undefined && rules.maxOrders)
      facts.paceCounts = led.paceCounts(intent.account, rules.maxOrders.map((p) => p.ms), now.getTime());
    if (rules.duplicateWindowMs !== undefined) facts.duplicateAt = led.lastSent(fingerprint(intent), now.getTime() - rules.duplicateWindowMs);
    let refusal = evaluate(intent, rules, facts);
    if (refusal && facts.position === undefined && couldReduce(intent)) {
      facts.position = await position(intent.account!, intent.instrument!);
      refusal = evaluate(intent, rules, facts);
    }
    return { intent, facts, refusal };
  }

  async function refused(name: OperationName, args: unknown, refusal: OutsideRefusal): Promise<void> {
    const led = openOnce();
    const intent: Intent = OPERATIONS[name].guard === undefined ? { operation: name, kind: 'exit', account: (args as { account?: string }).account } : intentOf(name, args);
    await inTurn(led, () => led.journal({ ...lineOf(name, args, intent, clock()), outcome: 'refused', rule: refusal.rule, message: scrub(refusal.message) }));
  }

  let handoff: Promise<void> = Promise.resolve();
  const own = {
    check,
    refused,
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
          flush(ledger);
          ledger.close();
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

