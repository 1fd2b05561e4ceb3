/**
 * Carries out a read alert (webhook-reference.md §5, steps 4 and 7–11): the kill switch, the
 * delay, the self rate limit, the trading window, then each account's clone (concurrently): the
 * account, the required position, the strategy sync, the strategy lock, relative prices, the
 * REST validation, the operation, and what follows it (the bracket, the timeout). Every order is
 * an operation-table call made through the host, which is `trade serve`'s engine (the webhook)
 * or the CLI's guarded backend (`trade alert`); what one host cannot do faithfully, it lacks, and
 * `unsupported` says so before anything is sent.
 */
import { RejectedError, TradeError, UsageError } from '../common/errors.js';
import { type ArgsOf, type OperationName, parseArgs, type ReplyOf } from '../service/operations.js';
import type { OrderRead, QuoteRead } from '../service/shapes.js';
import { AlertFailure, type Alert, type CommandAlert, type FailureCode } from './message.js';
import { bracketLegs, CLOSING_COMMANDS, hasRelativePrice, mainCall, type PlannedCall, resolvedArgs } from './plan.js';
import { type Contract, type PriceSpec, resolvePrice } from './prices.js';
import { easternMinute, windowAt } from './windows.js';

export type ResultStatus = 'success' | 'warning' | 'failed';

/** One operation made for an alert, and what it answered. */
export interface CallRecord {
  operation: OperationName;
  args: Record<string, unknown>;
  body: unknown;
}

/** One account's outcome (§1.3's `results` entry). */
export interface CloneResult {
  account?: string;
  instrument?: string;
  status: ResultStatus;
  orderIds: string[];
  error?: FailureCode;
  detail?: string;
  /** The operations made, in order (reads left out). */
  calls: CallRecord[];
  /** What was thrown, when the failure is an error of the host (the CLI's exit code reads it). */
  cause?: unknown;
}

export interface AlertOutcome {
  status: ResultStatus;
  command: string;
  results: CloneResult[];
  /** A failure of the whole message before it reached any account (kill switch, rate limit, window). */
  error?: FailureCode;
  detail?: string;
  warnings: string[];
}

export interface HostCall {
  body: unknown;
  value: unknown;
}

/** A bracket waiting for its entry to fill (§4.5), kept by a host that can wait for it. */
export interface HeldBracket {
  account: string;
  instrument: string;
  /** The entry's order id. */
  orderId: string;
  action: 'BUY' | 'SELL';
  legs: PlannedCall[];
  alertId: string;
}

/** What an alert runs on. */
export interface AlertHost {
  /** One operation of the table, args already checked; resolves with its body and the body as read, or throws a typed error. */
  call<K extends OperationName>(name: K, args: ArgsOf<K>): Promise<HostCall>;
  now(): Date;
  sleep(ms: number): Promise<void>;
  killSwitch(): boolean | Promise<boolean>;
  setKillSwitch(on: boolean): void | Promise<void>;
  /** Counts an alert of `id` when fewer than `count` passed in the last `windowMs`; false when the limit is reached (§4.11). */
  takeRate(id: string, count: number, windowMs: number): boolean | Promise<boolean>;
  /** The strategy lock (§4.14); absent where it cannot be kept. */
  locks?: {
    owner(account: string, instrument: string): string | undefined;
    claim(account: string, instrument: string, tag: string): void;
    release(account: string, instrument: string): void;
  };
  /** Cancels the order if it is still working at `dueMs` (§4.7): scheduled, or waited for. */
  cancelAfter(account: string, orderId: string, dueMs: number): Promise<void> | void;
  /** Holds a bracket until its entry fills; absent where it cannot. */
  holdBracket?(held: HeldBracket): void;
  /** Told when the alert starts to wait (its delay): the webhook answers `pending` then. */
  onPending?(): void;
}

/** What the host lacks for this alert, as the message a client shows (nothing sent); undefined when it has all. */
export function unsupported(alert: Alert, host: Pick<AlertHost, 'locks' | 'holdBracket'>): string | undefined {
  if (alert.kind !== 'command') return undefined;
  if (alert.options.strategyTag !== undefined && !host.locks)
    return 'strategy_tag needs the service\'s strategy lock, which only its webhook keeps';
  if (alert.options.bracket && alert.command !== 'CANCELANDBRACKET' && alert.order.orderType !== 'MARKET' && !host.holdBracket)
    return `a bracket on a ${alert.order.orderType} entry waits for the fill, which only the service's webhook does`;
  return undefined;
}

const failure = (code: FailureCode, detail: string): Omit<CloneResult, 'calls'> & { calls: CallRecord[] } => ({ status: 'failed', orderIds: [], error: code, detail, calls: [] });

/** The failure a REST refusal stands for (§6.3): by the service's own texts, which every backend shares. */
export function failureOf(error: unknown): { code: FailureCode; detail: string } {
  if (error instanceof AlertFailure) return { code: error.code, detail: error.detail };
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof RejectedError) {
    const detail = typeof error.body.detail === 'string' && error.body.error === 'invalid_account' ? error.body.detail : message;
    if (error.body.error === 'invalid_account' || /^Account .* not found$/.test(detail)) return { code: 'unknown_account', detail };
    if (message.startsWith('Market position requirement not met')) return { code: 'market_position_blocked', detail: message };
    if (message.startsWith('Max positions reached')) return { code: 'max_positions_reached', detail: message };
    if (/^Order linked to .* not found or already terminal\.$/.test(message)) return { code: 'order_not_found', detail: message };
    return { code: 'rejected', detail: message };
  }
  if (error instanceof UsageError) return { code: 'invalid_value', detail: message };
  return { code: 'rejected', detail: message };
}

const sideOf = (read: { marketPosition?: string; quantity?: number } | undefined): { side: 'flat' | 'long' | 'short'; quantity: number } => {
  const quantity = read?.quantity ?? 0;
  if (read?.marketPosition === 'Long' && quantity > 0) return { side: 'long', quantity };
  if (read?.marketPosition === 'Short' && quantity > 0) return { side: 'short', quantity: -quantity };
  return { side: 'flat', quantity: 0 };
};
const capital = (side: string) => `${side[0]!.toUpperCase()}${side.slice(1)}`;
const TERMINAL = new Set(['Filled', 'Cancelled', 'Rejected']);

/**
 * Runs an alert on a host. Never throws for the alert's own failures: they are in the outcome;
 * an error of the host itself (a store that fails) is a clone's failure with its cause.
 */
export async function runAlert(alert: Alert, host: AlertHost, context: { alertId: string }): Promise<AlertOutcome> {
  const warnings = [...alert.warnings];
  if (alert.kind === 'kill_switch') {
    await host.setKillSwitch(alert.on);
    return { status: 'success', command: 'KILL_SWITCH', results: [], warnings };
  }
  const command = alert.command;
  const whole = (code: FailureCode, detail: string): AlertOutcome => ({
    status: 'failed',
    command,
    error: code,
    detail,
    results: cloneAccounts(alert).map((account) => ({ account, instrument: alert.instrument, ...failure(code, detail) })),
    warnings,
  });
  // §5 step 4: the kill switch blocks every alert but its own message.
  if (await host.killSwitch()) return whole('kill_switch_on', 'Kill switch is on; alert not processed');
  const o = alert.options;
  // Step 7: the delay comes before every other action (§4.10); the clones wait together.
  if (o.delaySeconds) {
    host.onPending?.();
    await host.sleep(o.delaySeconds * 1000);
  }
  // Step 8: only alerts that pass the limiter count (§4.11).
  if (o.rateLimit && !(await host.takeRate(o.rateLimit.id, o.rateLimit.count, o.rateLimit.seconds * 1000)))
    return whole('rate_limited', `Rate limit for id '${o.rateLimit.id}' reached: ${o.rateLimit.count} per ${o.rateLimit.seconds} s`);
  // Step 9: the alert's own window, unless bypassed (§4.8, §4.9).
  let closingOnly: string | undefined;
  if (o.window && !o.bypassTradeWindows) {
    const verdict = windowAt(o.window, easternMinute(host.now()));
    if (verdict.open === false) return whole('outside_trade_window', verdict.detail);
    if (verdict.open === 'closing-only' && !CLOSING_COMMANDS.has(command)) {
      if (command === 'FLATPLACE' || command === 'REVERSE' || command === 'CANCELREPLACE') return whole('outside_trade_window', verdict.detail);
      closingOnly = verdict.detail;
    }
  }
  // Step 10: one clone per account, concurrently (§4.1).
  const results = await Promise.all(
    cloneAccounts(alert).map(async (account) => {
      const clone = new Clone(alert, host, account, context.alertId, closingOnly);
      try {
        await clone.run();
      } catch (error) {
        clone.fail(error);
      }
      return clone.result;
    }),
  );
  const status: ResultStatus = results.some((r) => r.status === 'failed') ? 'failed' : results.some((r) => r.status === 'warning') || warnings.length > 0 ? 'warning' : 'success';
  return { status, command, results, warnings };
}

/** The accounts a message's clones act on: its list, or one clone with none. */
function cloneAccounts(alert: CommandAlert): Array<string | undefined> {
  return alert.accounts.length > 0 ? alert.accounts : [undefined];
}

/** One account's part of an alert (§5 steps 10–11). */
class Clone {
  readonly result: CloneResult;
  private quote: { last?: number; contract: Contract } | undefined;

  constructor(
    private readonly alert: CommandAlert,
    private readonly host: AlertHost,
    account: string | undefined,
    private readonly alertId: string,
    private readonly closingOnly: string | undefined,
  ) {
    this.result = { account, instrument: alert.instrument, status: 'success', orderIds: [], calls: [] };
  }

  fail(error: unknown): void {
    const { code, detail } = failureOf(error);
    Object.assign(this.result, { status: 'failed', error: code, detail });
    if (!(error instanceof AlertFailure) && error instanceof TradeError && !(error instanceof RejectedError)) this.result.cause = error;
  }

  private warn(detail: string): void {
    this.result.status = 'warning';
    this.result.detail = detail;
  }

  /** A read: its value. */
  private async read<K extends OperationName>(name: K, args: ArgsOf<K>): Promise<ReplyOf<K>> {
    return (await this.host.call(name, args)).value as ReplyOf<K>;
  }

  /** A call that may move money, checked by the operation's schema first; recorded (its body as sent back); its reply as read. */
  private async send(call: PlannedCall, resolve?: (spec: PriceSpec, field: string) => number): Promise<Record<string, unknown>> {
    const raw = resolvedArgs(call, resolve ?? (() => NaN));
    let args: unknown;
    try {
      args = parseArgs(call.operation, raw, 'client');
    } catch (error) {
      throw new AlertFailure('invalid_value', error instanceof Error ? error.message : String(error));
    }
    const { body, value } = await this.host.call(call.operation, args as ArgsOf<typeof call.operation>);
    this.result.calls.push({ operation: call.operation, args: args as Record<string, unknown>, body });
    // The reply as read (src/service/shapes.ts): a flat body, or the `data` of an envelope (§1.7).
    const read = (value ?? {}) as Record<string, unknown>;
    if (typeof read.orderId === 'string') this.result.orderIds.push(read.orderId);
    return read;
  }

  private position(account: string, instrument: string) {
    return this.read('GetPosition', { account, instrument }).then((p) => sideOf(p as { marketPosition?: string; quantity?: number }));
  }

  /** The instrument's last price and contract (§4.6), read once; no last price → `no_market_data`. */
  private async market(instrument: string): Promise<{ last: number; contract: Contract }> {
    if (!this.quote) {
      const reply = await this.read('GetQuote', { instrument: [instrument] }).catch((error: unknown) => {
        if (error instanceof RejectedError && error.status < 500) return undefined;
        throw error;
      });
      const quote = (Array.isArray(reply) ? reply[0] : reply) as QuoteRead | undefined;
      this.quote = {
        last: typeof quote?.last === 'number' && quote.last > 0 ? quote.last : undefined,
        contract: { tickSize: quote?.tickSize ?? 0.01, pointValue: quote?.pointValue ?? 1 },
      };
    }
    if (this.quote.last === undefined) throw new AlertFailure('no_market_data', `No last price for ${instrument}`);
    return { last: this.quote.last, contract: this.quote.contract };
  }

  /** A resolver of relative prices from `reference` (the last price, or a fill). */
  private resolver(instrument: string, reference: number, contract: Contract) {
    return (spec: PriceSpec, field: string): number => {
      const price = resolvePrice(spec, reference, contract);
      if (price === undefined) throw new AlertFailure('invalid_value', `${field}: '${spec.text}' from ${reference} is not a positive price for ${instrument}`);
      return price;
    };
  }

  async run(): Promise<void> {
    const { alert, host } = this;
    const o = alert.options;
    let account = this.result.account;
    const instrument = alert.instrument;
    // The account exists (GetAccount answers its canonical name; 404 otherwise, §1.4).
    if (account !== undefined) {
      const read = await this.read('GetAccount', { account });
      account = read.name ?? account;
      this.result.account = account;
    } else if (alert.command === 'CANCEL' || alert.command === 'CHANGE' || alert.command === 'CLOSESTRATEGY') {
      account = await this.lookupAccount();
      this.result.account = account;
    }
    let call = mainCall(alert, account);
    if (alert.command === 'CANCEL' || alert.command === 'CHANGE') call = await this.atmName(call, account!);

    // The position, read once for whichever checks need it.
    const needsPosition =
      instrument !== undefined &&
      account !== undefined &&
      (o.requireMarketPosition !== undefined || o.sync !== undefined || this.closingOnly !== undefined || alert.options.strategyTag !== undefined || host.locks !== undefined ||
        ['CLOSEPOSITION', 'REVERSE', 'REVERSEPOSITION'].includes(alert.command) || call.operation === 'ClosePosition');
    const held = needsPosition ? await this.position(account!, instrument!) : undefined;

    if (o.requireMarketPosition && held && !o.requireMarketPosition.includes(held.side))
      throw new AlertFailure(
        'market_position_blocked',
        `Market position requirement not met: ${instrument} in account '${account}' is ${capital(held.side)}; required ${o.requireMarketPosition.join(', ')}`,
      );
    if (alert.command === 'CANCELREPLACE' && o.maxPositions !== undefined && held?.side === 'flat') {
      const open = ((await this.read('GetPositions', { account: account! })).positions ?? []).filter((p) => sideOf(p).side !== 'flat').length;
      if (open >= o.maxPositions)
        throw new AlertFailure('max_positions_reached', `Max positions reached: account '${account}' has ${open} open positions; maxPositions is ${o.maxPositions}`);
    }
    if (o.sync && held) {
      const done = await this.sync(account!, instrument!, held);
      if (done) return;
    }
    const tagged = await this.checkLock(account, instrument, held);

    // Nothing to do is not a failure (§3.3–§3.5 [decision]).
    if (held?.side === 'flat' && (call.operation === 'ClosePosition' || alert.command === 'REVERSE' || alert.command === 'REVERSEPOSITION')) {
      this.warn(
        alert.command === 'REVERSE' || alert.command === 'REVERSEPOSITION'
          ? `No position found for instrument '${instrument}' in account '${account}'; nothing done`
          : `No positions found for instrument '${instrument}'`,
      );
      return;
    }
    if (this.closingOnly !== undefined) {
      const blocked = await this.closeFirstUnderClosingOnly(call, account!, instrument!, held);
      if (blocked) return;
    }

    const relative = hasRelativePrice(call);
    const market = relative || (o.bracket && alert.command !== 'CANCELANDBRACKET') ? await this.market(instrument ?? (await this.orderInstrument(call))) : undefined;
    const resolve = market ? this.resolver(instrument ?? '', market.last, market.contract) : undefined;
    if (o.bracket && alert.command !== 'CANCELANDBRACKET') this.checkBracketSides(market!.last, resolve!);

    const body = await this.send(call, resolve);
    if (call.operation === 'FlattenEverything' || call.operation === 'Flatten') {
      const closed = (body.closedPositions as unknown[] | undefined) ?? [];
      if (closed.length === 0) this.warn(typeof body.warning === 'string' ? body.warning : 'No positions to flatten');
    }
    if (Array.isArray(body.orderIds) && call.operation !== 'FlattenEverything') this.result.orderIds.push(...(body.orderIds as string[]));
    if (tagged && host.locks && account !== undefined && instrument !== undefined) host.locks.claim(account, instrument, tagged);
    const entryId = typeof body.orderId === 'string' ? body.orderId : undefined;
    if (entryId !== undefined && account !== undefined && instrument !== undefined) await this.after(entryId, account, instrument, market);
  }

  /** CANCEL, CHANGE, CLOSESTRATEGY without an account: the one account that has it (§3.8 [decision]). */
  private async lookupAccount(): Promise<string> {
    const { alert } = this;
    const accounts = ((await this.read('ListAccounts', {})).accounts ?? []).map((a) => a.name);
    const matches: string[] = [];
    for (const name of accounts) {
      if (alert.command === 'CLOSESTRATEGY') {
        const orders = (await this.read('GetOrders', { account: name, activeOnly: true })).orders ?? [];
        if (orders.some((order) => order.ownerStrategy?.id === alert.order.strategyId)) matches.push(name);
      } else if (alert.order.strategyId !== undefined) {
        const orders = (await this.read('GetOrders', { account: name, activeOnly: true })).orders ?? [];
        if (orders.some((order) => order.ownerStrategy?.id === alert.order.strategyId)) matches.push(name);
      } else {
        const found = await this.read('GetOrderStatus', { account: name, orderId: alert.order.orderId! }).then(
          () => true,
          (error: unknown) => {
            if (error instanceof RejectedError && error.status < 500) return false;
            throw error;
          },
        );
        if (found) matches.push(name);
      }
    }
    const what = alert.command === 'CLOSESTRATEGY' ? `strategy_id '${alert.order.strategyId}'` : `order_id '${alert.order.orderId}'`;
    if (matches.length > 1) throw new AlertFailure('invalid_value', `${what} exists in several accounts; add account=`);
    if (matches.length === 0) {
      if (alert.command === 'CLOSESTRATEGY') throw new AlertFailure('rejected', `Invalid request: strategyId: no active strategy '${alert.order.strategyId}'`);
      throw new AlertFailure('order_not_found', `Order linked to '${alert.order.orderId}' not found or already terminal.`);
    }
    return matches[0]!;
  }

  /** An ATM order name (`STOP1`, `TARGET1`, `ENTRY1`) within the strategy of `strategy_id`, as its order id (§3.8). */
  private async atmName(call: PlannedCall, account: string): Promise<PlannedCall> {
    const { strategyId, orderId } = this.alert.order;
    if (strategyId === undefined) return call;
    const orders = (await this.read('GetOrders', { account, activeOnly: true })).orders ?? [];
    const own = orders.filter((order) => order.ownerStrategy?.id === strategyId);
    if (own.length === 0) throw new AlertFailure('rejected', `Invalid request: strategyId: no active strategy '${strategyId}' in account '${account}'`);
    const wanted = orderId!.toLowerCase().replace(/^entry1$/, 'entry');
    const named = own.find((order) => order.orderId === orderId || (order.name ?? '').toLowerCase() === wanted);
    if (!named) throw new AlertFailure('order_not_found', `Order linked to '${orderId}' not found or already terminal.`);
    return { ...call, args: { ...call.args, orderId: named.orderId } };
  }

  /** The instrument of the order a CHANGE acts on (its relative prices are anchored on its last price). */
  private async orderInstrument(call: PlannedCall): Promise<string> {
    const order = await this.read('GetOrder', { account: call.args.account as string, orderId: call.args.orderId as string });
    this.result.instrument = order.instrument;
    return order.instrument!;
  }

  /**
   * §4.15: in sync when the position's side is what the strategy had before. Out of sync: block,
   * flatten (close and place nothing), or resync (one MARKET order to the strategy's target).
   * True when the clone is done.
   */
  private async sync(account: string, instrument: string, held: { side: string; quantity: number }): Promise<boolean> {
    const sync = this.alert.options.sync!;
    if (held.side === sync.prevMarketPosition) return false;
    const detail = `Position Out of Sync: strategy expected ${sync.prevMarketPosition}, ${instrument} in account '${account}' is ${capital(held.side)}`;
    if (sync.outOfSync === 'block') throw new AlertFailure('out_of_sync', detail);
    if (sync.outOfSync === 'flatten') {
      if (held.side !== 'flat') await this.send({ operation: 'ClosePosition', args: { account, instrument } });
      this.warn(`${detail}; the position was closed and nothing placed`);
      return true;
    }
    const size = sync.targetQuantity ?? this.alert.order.quantity ?? 0;
    const target = sync.marketPosition === 'long' ? size : sync.marketPosition === 'short' ? -size : 0;
    const delta = target - held.quantity;
    if (delta !== 0)
      await this.send({
        operation: 'PlaceOrder',
        args: { account, instrument, action: delta > 0 ? 'BUY' : 'SELL', quantity: Math.abs(delta), orderType: 'MARKET', timeInForce: this.alert.order.timeInForce ?? 'DAY' },
      });
    this.warn(`${detail}; resynced to ${sync.marketPosition} ${Math.abs(target)}`);
    return true;
  }

  /**
   * §4.14: an instrument locked to a strategy takes only that strategy's alerts; the lock is let
   * go once the instrument is flat with no working orders. Answers the tag to claim after the
   * command succeeds (the instrument was free), or undefined.
   */
  private async checkLock(account: string | undefined, instrument: string | undefined, held: { side: string } | undefined): Promise<string | undefined> {
    const locks = this.host.locks;
    const tag = this.alert.options.strategyTag;
    if (!locks || account === undefined || instrument === undefined) return undefined;
    const owner = locks.owner(account, instrument);
    const idle = async () => held?.side === 'flat' && !((await this.read('GetOrders', { account, activeOnly: true })).orders ?? []).some((order) => order.instrument === instrument && !TERMINAL.has(order.orderState ?? ''));
    if (owner !== undefined) {
      if (owner === tag) return undefined;
      if (!(await idle())) throw new AlertFailure('strategy_locked', `Trade blocked: ${instrument} is managed by strategy '${owner}'`);
      locks.release(account, instrument);
    }
    if (tag === undefined || CLOSING_COMMANDS.has(this.alert.command)) return undefined;
    return (await idle()) ? tag : undefined;
  }

  /**
   * Under *closing only* (§4.8): a PLACE that only reduces the opposite position goes through;
   * PLACE + flatten_first and REVERSEPOSITION run their close, then their order is blocked. True
   * when the clone is done.
   */
  private async closeFirstUnderClosingOnly(call: PlannedCall, account: string, instrument: string, held: { side: string; quantity: number } | undefined): Promise<boolean> {
    const { alert } = this;
    const o = alert.order;
    if (call.operation === 'PlaceOrder' && held) {
      const reduces = (held.quantity > 0 && o.action === 'SELL') || (held.quantity < 0 && o.action === 'BUY');
      if (reduces && (o.quantity ?? 0) <= Math.abs(held.quantity)) return false;
    }
    if ((call.operation === 'FlatPlace' || call.operation === 'ReversePosition') && held && held.side !== 'flat')
      await this.send({ operation: 'ClosePosition', args: { account, instrument } });
    const { status: _s, ...rest } = failure('outside_trade_window', this.closingOnly!);
    Object.assign(this.result, { ...rest, status: 'failed', orderIds: this.result.orderIds, calls: this.result.calls });
    return true;
  }

  /** §4.5 [decision]: a BUY's take-profit above the reference and its stop-loss below; mirrored for a SELL. */
  private checkBracketSides(last: number, resolve: (spec: PriceSpec, field: string) => number): void {
    const { alert } = this;
    const o = alert.order;
    const b = alert.options.bracket!;
    const entry = o.orderType === 'MARKET' ? last : o.orderType === 'STOPMARKET' ? resolve(o.stopPrice!, 'stop_price') : resolve(o.limitPrice!, 'limit_price');
    const sign = o.action === 'BUY' ? 1 : -1;
    const check = (spec: PriceSpec | undefined, field: string, above: boolean) => {
      if (!spec) return;
      // A relative leg is worked out from the entry's own price when it fills; its sign decides its side.
      const price = spec.kind === 'relative' ? entry + Math.sign(spec.amount) : spec.value;
      const wrong = above ? sign * (price - entry) <= 0 : sign * (price - entry) >= 0;
      if (wrong)
        throw new AlertFailure('invalid_value', `${field}: ${spec.text.trim()} is on the wrong side of the ${o.action} entry at ${entry} (a take-profit ${o.action === 'BUY' ? 'above' : 'below'}, a stop-loss ${o.action === 'BUY' ? 'below' : 'above'})`);
    };
    check(b.takeProfit, 'take_profit', true);
    check(b.stopLoss, 'stop_loss', false);
    check(b.stopLossLimit, 'stop_loss_limit', false);
  }

  /** Step 11, after the order: its bracket (now, or held until it fills) and its timeout. */
  private async after(orderId: string, account: string, instrument: string, market: { last: number; contract: Contract } | undefined): Promise<void> {
    const { alert, host } = this;
    const o = alert.order;
    const bracket = alert.options.bracket;
    if (bracket && alert.command !== 'CANCELANDBRACKET' && o.action && o.quantity) {
      const legs = bracketLegs(bracket, { account, instrument, action: o.action, quantity: o.quantity }, `br-${this.alertId}`);
      // A market entry filled when it was answered (a refusal throws): its legs go at once, from
      // the last price it was sent at, whatever an order read would show (§4.5, §4.6).
      if (o.orderType === 'MARKET') {
        for (const leg of legs) await this.send(leg, this.resolver(instrument, market!.last, market!.contract));
        return this.timeout(orderId, account);
      }
      const entry = (await this.read('GetOrder', { account, orderId })) as OrderRead;
      if (entry.orderState === 'Filled') {
        // A limit or stop that filled at once: its legs come from its fill.
        const reference = entry.averageFillPrice || market!.last;
        const legQuantity = entry.filled || o.quantity;
        for (const leg of legs) await this.send({ ...leg, args: { ...leg.args, quantity: legQuantity } }, this.resolver(instrument, reference, market!.contract));
      } else if (!TERMINAL.has(entry.orderState ?? '') && host.holdBracket) {
        host.holdBracket({ account, instrument, orderId, action: o.action, legs, alertId: this.alertId });
      }
    }
    await this.timeout(orderId, account);
  }

  /** §4.7: a LIMIT entry still working is cancelled after `cancel_after` minutes. */
  private async timeout(orderId: string, account: string): Promise<void> {
    const minutes = this.alert.options.cancelAfterMinutes;
    if (minutes === undefined) return;
    const status = (await this.read('GetOrderStatus', { account, orderId })).status;
    if (!TERMINAL.has(status)) await this.host.cancelAfter(account, orderId, this.host.now().getTime() + minutes * 60_000);
  }
}

/** An outcome as a client answers it (`trade alert --json`, the MCP tool): the host's own errors left out. */
export function outcomeBody(outcome: AlertOutcome, ignoredFields: string[]): Record<string, unknown> {
  return {
    command: outcome.command,
    status: outcome.status,
    ...(outcome.error ? { error: outcome.error, detail: outcome.detail } : {}),
    results: outcome.results.map(({ cause: _cause, ...r }) => r),
    warnings: outcome.warnings,
    ignoredFields,
  };
}

/** What a held bracket does once its entry is read again (§4.5): places the legs at the fill, discards them, or waits. */
export async function settleHeldBracket(held: HeldBracket, host: Pick<AlertHost, 'call'>): Promise<'placed' | 'discarded' | 'waiting'> {
  const entry = (await host.call('GetOrder', { account: held.account, orderId: held.orderId })).value as OrderRead;
  if (entry.orderState !== 'Filled') return TERMINAL.has(entry.orderState ?? '') ? 'discarded' : 'waiting';
  const quote = (await host.call('GetQuote', { instrument: [held.instrument] })).value as QuoteRead | QuoteRead[];
  const q = Array.isArray(quote) ? quote[0] : quote;
  const contract = { tickSize: q?.tickSize ?? 0.01, pointValue: q?.pointValue ?? 1 };
  const fill = entry.averageFillPrice!;
  for (const leg of held.legs) {
    const raw = resolvedArgs({ ...leg, args: { ...leg.args, quantity: entry.filled || leg.args.quantity } }, (spec, field) => {
      const price = resolvePrice(spec, fill, contract);
      if (price === undefined) throw new AlertFailure('invalid_value', `${field}: '${spec.text}' from ${fill} is not a positive price`);
      return price;
    });
    await host.call(leg.operation, parseArgs(leg.operation, raw, 'client') as never);
  }
  return 'placed';
}
