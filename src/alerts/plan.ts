/**
 * A read alert as the operation-table calls it stands for (webhook-reference.md §3.0's command →
 * REST mapping, §4.5's bracket legs), one account at a time, and the options that apply in words.
 * Pure: prices still relative stay PriceSpecs here, resolved by the runner from a quote; so are
 * the reads a command needs first (the position, an order's account), which the runner makes.
 */
import type { OperationName } from '../service/operations.js';
import type { Bracket, CommandAlert, OrderFields } from './message.js';
import { type PriceSpec, showPrice } from './prices.js';
import { showMinute } from './windows.js';

/** One call: the operation's name and its flat args, prices possibly still relative. */
export interface PlannedCall {
  operation: OperationName;
  args: Record<string, unknown>;
  /** What the call is for, when it is not the command's own operation (a bracket leg). */
  role?: 'take-profit' | 'stop-loss';
}

const isSpec = (value: unknown): value is PriceSpec => value !== null && typeof value === 'object' && 'kind' in value && 'text' in value;

/** Drops the undefined fields, so args carry only what the message gave. */
function defined(args: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(args).filter(([, value]) => value !== undefined));
}

/** The REST fields of the order a message describes (§3.0's field mapping). */
function orderArgs(alert: CommandAlert, account: string | undefined, o: OrderFields): Record<string, unknown> {
  return defined({
    account,
    instrument: alert.instrument,
    action: o.action,
    quantity: o.quantity,
    orderType: o.orderType,
    timeInForce: o.timeInForce,
    limitPrice: o.limitPrice,
    stopPrice: o.stopPrice,
    ocoId: o.ocoId,
    strategy: o.strategy,
  });
}

/** The position flatten filters of §3.6 that are not CLOSEPOSITION. */
function flattenCall(alert: CommandAlert, account: string | undefined): PlannedCall {
  if (account !== undefined && alert.instrument === undefined && alert.marketPosition === undefined) return { operation: 'Flatten', args: { account } };
  return { operation: 'FlattenEverything', args: defined({ account, instrument: alert.instrument, marketPosition: alert.marketPosition }) };
}

/**
 * The operation a command maps to for one account (undefined: the command names none). CANCEL,
 * CHANGE and CLOSESTRATEGY without an account get theirs from a lookup first (§3.8); their call
 * here has the account to fill in.
 */
export function mainCall(alert: CommandAlert, account: string | undefined): PlannedCall {
  const o = alert.order;
  const guards = defined({
    requireMarketPosition: alert.options.requireMarketPosition?.join(','),
    maxPositions: alert.options.maxPositions,
  });
  switch (alert.command) {
    case 'PLACE':
      return {
        operation: alert.options.flattenFirst ? 'FlatPlace' : 'PlaceOrder',
        args: { ...orderArgs(alert, account, o), ...defined({ orderId: o.orderId }), ...guards },
      };
    case 'FLATPLACE':
      return { operation: 'FlatPlace', args: { ...orderArgs(alert, account, o), ...defined({ orderId: o.orderId }), ...guards } };
    case 'REVERSEPOSITION':
      return { operation: 'ReversePosition', args: orderArgs(alert, account, o) };
    case 'CANCELREPLACE':
      // The new order carries no client id: the old one stays bound to the cancelled order (§3.10).
      return { operation: 'Replace', args: { ...orderArgs(alert, account, o), orderId: o.orderId } };
    case 'CLOSEPOSITION':
      return { operation: 'ClosePosition', args: defined({ account, instrument: alert.instrument, quantity: alert.closeQuantity, percent: alert.percent }) };
    case 'REVERSE':
      return { operation: 'Reverse', args: { account, instrument: alert.instrument } };
    case 'FLATTEN':
      // account + instrument is exactly CLOSEPOSITION (§3.6 [decision]).
      if (account !== undefined && alert.instrument !== undefined && alert.marketPosition === undefined)
        return { operation: 'ClosePosition', args: { account, instrument: alert.instrument } };
      return flattenCall(alert, account);
    case 'FLATTENEVERYTHING':
      return { operation: 'FlattenEverything', args: {} };
    case 'CANCEL':
      return { operation: 'Cancel', args: defined({ account, orderId: o.orderId }) };
    case 'CANCELORDERS':
      return { operation: 'CancelOrders', args: defined({ account, instrument: alert.instrument }) };
    case 'CANCELALLORDERS':
      return { operation: 'CancelAllOrders', args: defined({ instrument: alert.instrument }) };
    case 'CHANGE':
      return {
        operation: 'Change',
        args: defined({ account, orderId: o.orderId, quantity: o.quantity, limitPrice: o.limitPrice, stopPrice: o.stopPrice }),
      };
    case 'CLOSESTRATEGY':
      return { operation: 'CloseStrategy', args: defined({ account, strategyId: o.strategyId }) };
    case 'CANCELANDBRACKET': {
      const b = alert.options.bracket ?? {};
      return {
        operation: 'CancelAndBracket',
        args: defined({ account, instrument: alert.instrument, action: o.action, quantity: o.quantity, takeProfit: b.takeProfit, stopLoss: b.stopLoss }),
      };
    }
  }
}

const opposite = (action: 'BUY' | 'SELL') => (action === 'BUY' ? 'SELL' : 'BUY');

/**
 * A bracket's legs on an entry (§4.5): the take-profit an opposite LIMIT, the stop-loss an
 * opposite STOPMARKET (or STOPLIMIT with stop_loss_limit), same quantity, GTC, one OCO group.
 */
export function bracketLegs(
  bracket: Bracket,
  entry: { account: string; instrument: string; action: 'BUY' | 'SELL'; quantity: number },
  ocoId: string,
): PlannedCall[] {
  const base = { account: entry.account, instrument: entry.instrument, action: opposite(entry.action), quantity: entry.quantity, timeInForce: 'GTC', ocoId };
  const legs: PlannedCall[] = [];
  if (bracket.takeProfit) legs.push({ operation: 'PlaceOrder', role: 'take-profit', args: { ...base, orderType: 'LIMIT', limitPrice: bracket.takeProfit } });
  if (bracket.stopLoss) legs.push({ operation: 'PlaceOrder', role: 'stop-loss', args: { ...base, orderType: 'STOPMARKET', stopPrice: bracket.stopLoss } });
  if (bracket.stopLossLimit)
    legs.push({
      operation: 'PlaceOrder',
      role: 'stop-loss',
      args: { ...base, orderType: 'STOPLIMIT', limitPrice: bracket.stopLossLimit, stopPrice: bracket.stopLossStop ?? bracket.stopLossLimit },
    });
  return legs;
}

/** Has a call a price still to work out from a quote? */
export const hasRelativePrice = (call: PlannedCall): boolean => Object.values(call.args).some((v) => isSpec(v) && v.kind === 'relative');

/** The args with every price worked out (`resolve` answers a relative one; an absolute one is its value). */
export function resolvedArgs(call: PlannedCall, resolve: (spec: PriceSpec, field: string) => number): Record<string, unknown> {
  return Object.fromEntries(Object.entries(call.args).map(([k, v]) => [k, isSpec(v) ? (v.kind === 'absolute' ? v.value : resolve(v, k)) : v]));
}

/** The args as `--check` shows them: a relative price as its text (`-10 ticks`). */
export function shownArgs(call: PlannedCall): Record<string, unknown> {
  return Object.fromEntries(Object.entries(call.args).map(([k, v]) => [k, isSpec(v) ? (v.kind === 'absolute' ? v.value : showPrice(v)) : v]));
}

/** Each account's call as `--check` shows it (`account` absent: the command names none). */
export function checkedCalls(alert: CommandAlert): Array<{ account?: string; operation: OperationName; args: Record<string, unknown> }> {
  return (alert.accounts.length > 0 ? alert.accounts : [undefined]).map((account) => {
    const call = mainCall(alert, account);
    return { ...(account === undefined ? {} : { account }), operation: call.operation, args: shownArgs(call) };
  });
}

/** The commands that do not open a position (§4.8 [decision]: they pass a *closing only* window). */
export const CLOSING_COMMANDS: ReadonlySet<string> = new Set([
  'CLOSEPOSITION', 'FLATTEN', 'FLATTENEVERYTHING', 'CANCEL', 'CANCELORDERS', 'CANCELALLORDERS', 'CHANGE', 'CLOSESTRATEGY', 'CANCELANDBRACKET',
]);

/** The options of a message that act, in words, in §5's order. */
export function optionNotes(alert: CommandAlert): string[] {
  const o = alert.options;
  const notes: string[] = [];
  if (o.delaySeconds) notes.push(`delay: ${o.delaySeconds} s before anything else`);
  if (o.rateLimit) notes.push(`rate limit: at most ${o.rateLimit.count} per ${o.rateLimit.seconds} s for id '${o.rateLimit.id}'`);
  if (o.window) {
    const w = o.window;
    const range = [w.start === undefined ? undefined : `from ${showMinute(w.start)}`, w.end === undefined ? undefined : `until ${showMinute(w.end)}`].filter(Boolean).join(' ');
    notes.push(`trading window: ${range} ET${w.closingOnlyAfter === undefined ? '' : `, closing only after ${showMinute(w.closingOnlyAfter)}`}${o.bypassTradeWindows ? ' (bypassed)' : ''}`);
  } else if (o.bypassTradeWindows) notes.push('trading windows bypassed');
  if (alert.accounts.length > 1) notes.push(`multi-account: the command once per account (${alert.accounts.join(', ')})`);
  if (o.requireMarketPosition) notes.push(`only if the position is ${o.requireMarketPosition.join(' or ')}`);
  if (o.maxPositions !== undefined) notes.push(`only if the account holds fewer than ${o.maxPositions} open positions (or adds to one)`);
  if (o.sync)
    notes.push(
      `strategy sync: expected ${o.sync.prevMarketPosition} before, ${o.sync.marketPosition} after; out of sync: ${o.sync.outOfSync}${o.sync.targetQuantity === undefined ? '' : `, target quantity ${o.sync.targetQuantity}`}`,
    );
  if (o.strategyTag !== undefined) notes.push(`strategy lock: the instrument belongs to strategy '${o.strategyTag}'`);
  if (o.flattenFirst) notes.push('flatten first: the instrument\'s orders cancelled and its position closed, then the order placed (FlatPlace)');
  if (o.bracket && alert.command !== 'CANCELANDBRACKET') {
    const b = o.bracket;
    const legs = [
      b.takeProfit && `take-profit LIMIT at ${showPrice(b.takeProfit)}`,
      b.stopLoss && `stop-loss STOPMARKET at ${showPrice(b.stopLoss)}`,
      b.stopLossLimit && `stop-loss STOPLIMIT limit ${showPrice(b.stopLossLimit)} stop ${showPrice(b.stopLossStop ?? b.stopLossLimit)}`,
    ].filter(Boolean);
    const when = alert.order.orderType === 'MARKET' ? 'after the entry, from the last price' : 'when the entry fills, from the fill price';
    notes.push(`bracket: ${legs.join(', ')}, GTC, one OCO group, placed ${when}`);
  }
  if (o.cancelAfterMinutes !== undefined) notes.push(`cancel after: the order is cancelled if not filled within ${o.cancelAfterMinutes} min`);
  if (o.notes !== undefined) notes.push(`notes: ${o.notes}`);
  return notes;
}
