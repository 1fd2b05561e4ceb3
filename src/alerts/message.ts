/**
 * An alert message's fields given their meaning (webhook-reference.md §2.2–§2.6, §3, §4): the
 * command, its accounts, its order, and every option, each value checked and normalized. Pure:
 * the date an instrument like `ES1!` resolves on is given. What fails here is answered 200
 * *failed* by the webhook (`missing_field`, `unknown_command`, `invalid_value`, §6.3).
 */
import { ACTIONS, asciiUpperCase, type MarketSide, type OrderType, ORDER_TYPES, SIDES, TIMES_IN_FORCE } from '../service/order.js';
import { resolveInstrument } from '../service/instruments.js';
import { parsePrice, type PriceSpec } from './prices.js';
import { asciiLower, commandWord, type Fields, readFields } from './syntax.js';
import { type AlertWindow, parseTimeOfDay } from './windows.js';

export const COMMANDS = [
  'PLACE',
  'FLATPLACE',
  'CLOSEPOSITION',
  'REVERSE',
  'REVERSEPOSITION',
  'FLATTEN',
  'FLATTENEVERYTHING',
  'CANCEL',
  'CANCELORDERS',
  'CANCELALLORDERS',
  'CANCELREPLACE',
  'CHANGE',
  'CLOSESTRATEGY',
  'CANCELANDBRACKET',
] as const;
export type Command = (typeof COMMANDS)[number];

/** The codes of a message refused after it parsed (§6.3), answered 200 *failed*. */
export type FailureCode =
  | 'missing_field'
  | 'unknown_command'
  | 'invalid_value'
  | 'unknown_account'
  | 'kill_switch_on'
  | 'rate_limited'
  | 'outside_trade_window'
  | 'market_position_blocked'
  | 'max_positions_reached'
  | 'strategy_locked'
  | 'out_of_sync'
  | 'order_not_found'
  | 'no_market_data'
  | 'rejected'
  | 'not_supported';

/** A message (or one account's part of it) that is not carried out, with the code and text of §6.3. */
export class AlertFailure extends Error {
  constructor(
    readonly code: FailureCode,
    readonly detail: string,
  ) {
    super(`${code}: ${detail}`);
  }
}

const missing = (field: string) => new AlertFailure('missing_field', `Check message format, missing required field: ${field.toUpperCase()}`);
const invalid = (detail: string) => new AlertFailure('invalid_value', detail);

export type OpenSide = 'long' | 'short';
export type OutOfSync = 'block' | 'flatten' | 'resync';

/** The order a message describes (PLACE and the commands that take its fields). */
export interface OrderFields {
  action?: 'BUY' | 'SELL';
  quantity?: number;
  orderType?: OrderType;
  timeInForce?: 'DAY' | 'GTC';
  limitPrice?: PriceSpec;
  stopPrice?: PriceSpec;
  ocoId?: string;
  orderId?: string;
  strategy?: string;
  strategyId?: string;
}

export interface Bracket {
  takeProfit?: PriceSpec;
  stopLoss?: PriceSpec;
  /** A stop-limit stop-loss: its limit price, and its trigger (the limit when not given). */
  stopLossLimit?: PriceSpec;
  stopLossStop?: PriceSpec;
}

export interface AlertOptions {
  flattenFirst?: boolean;
  requireMarketPosition?: MarketSide[];
  maxPositions?: number;
  bracket?: Bracket;
  cancelAfterMinutes?: number;
  window?: AlertWindow;
  bypassTradeWindows?: boolean;
  delaySeconds?: number;
  rateLimit?: { id: string; count: number; seconds: number };
  strategyTag?: string;
  sync?: { marketPosition: MarketSide; prevMarketPosition: MarketSide; targetQuantity?: number; outOfSync: OutOfSync };
  notes?: string;
}

/** A message with a command, read whole. */
export interface CommandAlert {
  kind: 'command';
  command: Command;
  /** As written, trimmed; several for a multi-account message (§4.1); empty when none was given. */
  accounts: string[];
  /** Resolved, `SYMBOL MM-YY`. */
  instrument?: string;
  order: OrderFields;
  /** CLOSEPOSITION's part (§3.3). */
  closeQuantity?: number;
  percent?: number;
  /** FLATTEN's side filter (§3.6). */
  marketPosition?: OpenSide;
  options: AlertOptions;
}

export interface KillSwitchAlert {
  kind: 'kill_switch';
  on: boolean;
}

export type Alert = (CommandAlert | KillSwitchAlert) & {
  /** The `key` as written (the serve token on the webhook); never shown. */
  key?: string;
  /** Said in the reply: repeated fields, price fields the order type does not use (§2.3, §3.1). */
  warnings: string[];
  /** Names the language does not know, ignored (§2.3). */
  ignoredFields: string[];
  /** Every field as parsed, the key left out (Alert History's `fields`, §6.2). */
  fields: Record<string, string>;
};

/** Every field name the language knows (§3, §4); anything else is ignored and listed. */
export const KNOWN_FIELDS: ReadonlySet<string> = new Set([
  'key', 'command', 'account', 'instrument', 'action', 'qty', 'quantity', 'percent', 'order_type', 'tif', 'limit_price',
  'stop_price', 'oco_id', 'order_id', 'strategy', 'atm_strategy', 'strategy_id', 'flatten_first', 'require_market_position',
  'max_positions', 'max_position', 'take_profit', 'stop_loss', 'stop_loss_limit', 'stop_loss_stop', 'append_atm', 'cancel_after',
  'start_time', 'end_time', 'closing_only_after', 'bypass_trade_windows', 'delay', 'rate_limit', 'id', 'kill_switch',
  'strategy_tag', 'sync_strategy', 'market_position', 'prev_market_position', 'target_quantity', 'out_of_sync',
  'destination', 'notes', 'trail_offset',
]);

/** The commands that take the order's fields (§3.0: "as PLACE"). */
const PLACING: ReadonlySet<Command> = new Set(['PLACE', 'FLATPLACE', 'REVERSEPOSITION', 'CANCELREPLACE']);
/** The commands a bracket may ride on (§4.5); CANCELANDBRACKET has its own (§3.13). */
const BRACKETED: ReadonlySet<Command> = new Set(['PLACE', 'FLATPLACE']);
/** §4.3 */
const REQUIRE_POSITION: ReadonlySet<Command> = new Set(['PLACE', 'FLATPLACE', 'CANCELREPLACE', 'CANCELORDERS', 'CLOSEPOSITION', 'REVERSEPOSITION', 'FLATTEN']);
/** §4.4 [decision] */
const MAX_POSITIONS: ReadonlySet<Command> = new Set(['PLACE', 'FLATPLACE', 'REVERSEPOSITION', 'CANCELREPLACE']);

/** The fields each command requires, in the order they are named when missing (§3.0). */
const REQUIRED: Record<Command, readonly string[]> = {
  PLACE: ['account', 'instrument', 'action', 'qty', 'order_type', 'tif'],
  FLATPLACE: ['account', 'instrument', 'action', 'qty', 'order_type', 'tif'],
  CLOSEPOSITION: ['account', 'instrument'],
  REVERSE: ['account', 'instrument'],
  REVERSEPOSITION: ['account', 'instrument', 'action', 'qty', 'order_type', 'tif'],
  FLATTEN: [],
  FLATTENEVERYTHING: [],
  CANCEL: ['order_id'],
  CANCELORDERS: ['account'],
  CANCELALLORDERS: [],
  CANCELREPLACE: ['order_id', 'account', 'instrument', 'action', 'qty', 'order_type', 'tif'],
  CHANGE: ['order_id'],
  CLOSESTRATEGY: ['strategy_id'],
  CANCELANDBRACKET: ['account', 'instrument', 'action', 'qty'],
};

/** At most this many accounts in one message (§4.1 [decision]). */
export const MAX_ACCOUNTS = 20;
const MAX_NOTES = 500;
const MAX_QUANTITY = 100_000;
/** Free strings (ids, names, tags): printable, at most 64 characters, as the REST fields they become. */
const MAX_NAME = 64;

/** Order types that only the Tradovate destination has (§3.1 [decision], W35). */
const TRADOVATE_TYPES = new Set(['TRAILINGSTOP', 'TRAILINGSTOPLIMIT', 'MIT', 'MARKETIFTOUCHED', 'LIT', 'LIMITIFTOUCHED']);

function upperWord(value: string): string {
  return asciiUpperCase(value).replace(/[ \t_-]/g, '');
}

function oneOf<const T extends readonly string[]>(name: string, value: string, values: T, normalize = (v: string) => asciiUpperCase(v.trim())): T[number] {
  const word = normalize(value);
  if ((values as readonly string[]).includes(word)) return word as T[number];
  throw invalid(`${name}: '${value}' is not one of ${values.join(', ')}`);
}

/** §2.4: true or false in any case; anything else is an error, except where `lenient` (bypass_trade_windows). */
function flag(name: string, value: string | undefined, lenient = false): boolean | undefined {
  if (value === undefined) return undefined;
  const word = asciiLower(value);
  if (word === 'true') return true;
  if (word === 'false' || lenient) return false;
  throw invalid(`${name}: '${value}' is not true or false`);
}

/** §2.4: digits with an optional `+`; `2.0` (a zero fraction, as TradingView prints contracts) is 2. */
function wholeNumber(name: string, value: string, min: number, max: number): number {
  const match = /^\+?(\d+)(?:\.0*)?$/.exec(value);
  const n = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) throw invalid(`${name}: '${value}' is not a whole number from ${min} to ${max}`);
  return n;
}

function decimal(name: string, value: string, min: number, max: number, unit: string): number {
  const n = /^\+?(\d+(\.\d*)?|\.\d+)$/.test(value) ? Number(value) : NaN;
  if (!Number.isFinite(n)) throw invalid(`${name}: '${value}' is not a number of ${unit}`);
  if (n < min || n > max) throw invalid(`${name}: ${value} is ${n < min ? `less than ${min}` : `more than ${max}`} ${unit}`);
  return n;
}

function price(name: string, value: string): PriceSpec {
  const spec = parsePrice(value);
  if (typeof spec === 'string') throw invalid(`${name}: ${spec}`);
  return spec;
}

function timeOfDay(name: string, value: string): number {
  const minute = parseTimeOfDay(value);
  if (typeof minute === 'string') throw invalid(`${name}: ${minute}`);
  return minute;
}

/** A free string that becomes a REST field: printable, trimmed already, at most 64 characters. */
function name(field: string, value: string): string {
  // eslint-disable-next-line no-control-regex
  if (value.length > MAX_NAME || /[\u0000-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/u.test(value))
    throw invalid(`${field}: must be at most ${MAX_NAME} printable characters`);
  return value;
}

function sides(name: string, value: string): MarketSide[] {
  const list = value.split(/[,/]/).map((s) => asciiLower(s.trim()));
  if (list.length === 0 || list.some((s) => !(SIDES as readonly string[]).includes(s)))
    throw invalid(`${name}: '${value}' is not a list of flat, long, short`);
  return [...new Set(list)] as MarketSide[];
}

function side(name: string, value: string, allowed: readonly string[]): MarketSide {
  const word = asciiLower(value.trim());
  if (!allowed.includes(word)) throw invalid(`${name}: '${value}' is not one of ${allowed.join(', ')}`);
  return word as MarketSide;
}

/** §4.1: names split on `,`, trimmed; none empty, none twice (any case), at most 20. */
function accountList(value: string): string[] {
  const names = value.split(',').map((n) => n.trim());
  if (names.some((n) => n === '')) throw invalid(`account: '${value}' has an empty account name`);
  const seen = new Set<string>();
  for (const n of names) {
    const key = asciiLower(n);
    if (seen.has(key)) throw invalid(`account: '${n}' is listed twice`);
    seen.add(key);
    name('account', n);
  }
  if (names.length > MAX_ACCOUNTS) throw invalid(`account: ${names.length} accounts; at most ${MAX_ACCOUNTS} in one message`);
  return names;
}

function instrument(value: string, now: Date): string {
  const resolved = resolveInstrument(value, now);
  if (!resolved.ok) throw invalid(`instrument: ${resolved.why}`);
  return resolved.instrument;
}

/**
 * The order type (§3.1): the four of REST, any case, `_`, `-` and spaces ignored; `STOP` alone is
 * refused as REST refuses it; the Tradovate-only types say which destination has them.
 */
function orderType(value: string): OrderType {
  const word = upperWord(value);
  if ((ORDER_TYPES as readonly string[]).includes(word)) return word as OrderType;
  if (TRADOVATE_TYPES.has(word)) throw invalid(`order_type '${value}' is only available with destination=tradovate`);
  throw invalid(`order_type: '${value}' is not one of ${ORDER_TYPES.join(', ')}`);
}

/**
 * Reads the fields of a message that passed its format (syntax.ts) into an Alert; throws an
 * AlertFailure with the first thing wrong, in the order of §5 step 5: placeholders, the command,
 * the fields it requires, then each value.
 */
export function interpret(parsed: Fields, options: { now?: Date } = {}): Alert {
  const now = options.now ?? new Date();
  const v = parsed.values;
  const warnings = parsed.repeated.map((n) => `field '${n}' given twice; the last value was used`);
  const ignoredFields = parsed.order.filter((n) => !KNOWN_FIELDS.has(n));
  const { key, ...fields } = v;
  const common = { key, warnings, ignoredFields, fields };

  // §2.6: a placeholder TradingView did not expand (an indicator alert using strategy.* ones).
  for (const n of parsed.order) {
    if (KNOWN_FIELDS.has(n) && n !== 'key' && v[n]!.includes('{{')) throw invalid(`unexpanded TradingView placeholder in '${n}'`);
  }

  if (v.kill_switch !== undefined) {
    const word = asciiLower(v.kill_switch);
    if (word !== 'on' && word !== 'off') throw invalid(`kill_switch: '${v.kill_switch}' is not on or off`);
    return { kind: 'kill_switch', on: word === 'on', ...common };
  }
  if (v.command === undefined) throw missing('command');
  const word = commandWord(v.command);
  if (!(COMMANDS as readonly string[]).includes(word)) throw new AlertFailure('unknown_command', `Unknown command '${v.command}'`);
  const command = word as Command;

  for (const field of REQUIRED[command]) if (v[field] === undefined) throw missing(field);

  // §4.16, §4.17: what this imitation does not serve, before anything else is judged.
  if (v.destination !== undefined) {
    const destination = asciiLower(v.destination);
    if (destination === 'tradovate') throw invalid(`destination 'tradovate' is not served by this server`);
    if (destination !== 'nt8') throw invalid(`destination: '${v.destination}' is not one of nt8, tradovate`);
  }
  if (v.trail_offset !== undefined) throw invalid('trail_offset is only available with destination=tradovate');

  const accounts = v.account === undefined ? [] : accountList(v.account);
  const alert: CommandAlert = { kind: 'command', command, accounts, order: {}, options: {} };
  if (v.instrument !== undefined) alert.instrument = instrument(v.instrument, now);

  const o = alert.order;
  const takesOrder = PLACING.has(command);
  if (takesOrder || command === 'CANCELANDBRACKET') {
    if (v.action !== undefined) o.action = oneOf('action', v.action, ACTIONS);
    if (v.qty !== undefined) o.quantity = wholeNumber('qty', v.qty, 1, MAX_QUANTITY);
  }
  if (takesOrder) {
    o.orderType = orderType(v.order_type!);
    o.timeInForce = oneOf('tif', v.tif!, TIMES_IN_FORCE);
    const strategy = v.strategy ?? v.atm_strategy;
    if (strategy !== undefined && v.strategy_id !== undefined) throw invalid('strategy and strategy_id: give one (a template to start, or a running strategy to join)');
    if (strategy !== undefined) o.strategy = name('strategy', strategy);
    if (v.strategy_id !== undefined) o.strategyId = name('strategy_id', v.strategy_id);
    if (v.oco_id !== undefined) o.ocoId = name('oco_id', v.oco_id);
    if (v.order_id !== undefined) o.orderId = name('order_id', v.order_id);
    const usesLimit = o.orderType === 'LIMIT' || o.orderType === 'STOPLIMIT';
    const usesStop = o.orderType === 'STOPMARKET' || o.orderType === 'STOPLIMIT';
    if (usesLimit && v.limit_price === undefined) throw missing('limit_price');
    if (usesStop && v.stop_price === undefined) throw missing('stop_price');
    for (const [field, uses] of [['limit_price', usesLimit], ['stop_price', usesStop]] as const) {
      if (v[field] === undefined) continue;
      if (!uses) warnings.push(`${field} is not used by ${o.orderType} orders; it was ignored`);
      else o[field === 'limit_price' ? 'limitPrice' : 'stopPrice'] = price(field, v[field]);
    }
  }
  if (command === 'CANCEL' || command === 'CHANGE') {
    o.orderId = name('order_id', v.order_id!);
    if (v.strategy_id !== undefined) o.strategyId = name('strategy_id', v.strategy_id);
  }
  if (command === 'CHANGE') {
    // 0 or nothing leaves a value as it is (§3.11).
    if (v.qty !== undefined) o.quantity = wholeNumber('qty', v.qty, 0, MAX_QUANTITY);
    for (const field of ['limit_price', 'stop_price'] as const) {
      if (v[field] === undefined || /^\+?0*(\.0*)?$/.test(v[field])) continue;
      o[field === 'limit_price' ? 'limitPrice' : 'stopPrice'] = price(field, v[field]);
    }
    if (o.quantity === undefined && o.limitPrice === undefined && o.stopPrice === undefined)
      throw invalid('CHANGE needs qty, limit_price or stop_price to change');
  }
  if (command === 'CLOSESTRATEGY') o.strategyId = name('strategy_id', v.strategy_id!);
  if (command === 'CLOSEPOSITION') {
    // §3.3: `qty` is taken as `quantity`; `quantity` wins when both are there.
    if (v.qty !== undefined && v.quantity !== undefined) warnings.push('qty and quantity given; quantity was used');
    const quantity = v.quantity ?? v.qty;
    if (quantity !== undefined) alert.closeQuantity = wholeNumber('quantity', quantity, 1, MAX_QUANTITY);
    else if (v.percent !== undefined) {
      const percent = decimal('percent', v.percent, 0, 1, 'as a fraction (0.25 = 25 %)');
      if (percent === 0) throw invalid('percent: must be greater than 0');
      alert.percent = percent;
    }
  }
  if (command === 'FLATTEN' && v.market_position !== undefined) alert.marketPosition = side('market_position', v.market_position, ['long', 'short']) as OpenSide;

  readOptions(alert, v, warnings);
  return { ...alert, ...common };
}

function readOptions(alert: CommandAlert, v: Record<string, string>, warnings: string[]): void {
  const { command } = alert;
  const opt = alert.options;
  const here = `on ${command}`;

  const flattenFirst = flag('flatten_first', v.flatten_first);
  if (flattenFirst && command === 'PLACE') opt.flattenFirst = true;

  if (v.require_market_position !== undefined) {
    if (!REQUIRE_POSITION.has(command)) throw invalid(`require_market_position is not available ${here}`);
    if (alert.instrument === undefined) throw invalid(`require_market_position needs instrument (the position it reads)`);
    opt.requireMarketPosition = sides('require_market_position', v.require_market_position);
  }
  const maxPositions = v.max_positions ?? v.max_position;
  if (maxPositions !== undefined) {
    if (!MAX_POSITIONS.has(command)) throw invalid(`max_positions is not available ${here}`);
    opt.maxPositions = wholeNumber(v.max_positions !== undefined ? 'max_positions' : 'max_position', maxPositions, 1, MAX_QUANTITY);
  }

  const bracket: Bracket = {};
  for (const [field, keyName] of [
    ['take_profit', 'takeProfit'],
    ['stop_loss', 'stopLoss'],
    ['stop_loss_limit', 'stopLossLimit'],
    ['stop_loss_stop', 'stopLossStop'],
  ] as const) {
    if (v[field] === undefined) continue;
    if (!BRACKETED.has(command) && command !== 'CANCELANDBRACKET') throw invalid(`${field} is not available ${here}`);
    bracket[keyName] = price(field, v[field]);
  }
  if (bracket.stopLoss && bracket.stopLossLimit) throw invalid('stop_loss and stop_loss_limit: give one (a stop-market or a stop-limit stop-loss)');
  if (bracket.stopLossStop && !bracket.stopLossLimit) {
    warnings.push('stop_loss_stop is used only with stop_loss_limit; it was ignored');
    delete bracket.stopLossStop;
  }
  if (command === 'CANCELANDBRACKET') {
    if (!bracket.takeProfit && !bracket.stopLoss && !bracket.stopLossLimit) throw missing('take_profit');
    if (bracket.stopLossLimit) throw invalid('stop_loss_limit is not available on CANCELANDBRACKET (its stop-loss is a stop-market order); use stop_loss');
  }
  if (Object.keys(bracket).length > 0) opt.bracket = bracket;
  const appendAtm = flag('append_atm', v.append_atm);
  if (appendAtm) throw invalid('append_atm is not served by this server: the service API has no way to add orders to a running ATM strategy');
  if (alert.order.strategyId !== undefined && command !== 'CANCEL' && command !== 'CHANGE' && command !== 'CLOSESTRATEGY')
    throw invalid('strategy_id on an order is not served by this server: the service API has no way to add an order to a running ATM strategy');

  if (v.cancel_after !== undefined) {
    if (!BRACKETED.has(command) || alert.order.orderType !== 'LIMIT') throw invalid(`cancel_after applies to LIMIT orders of PLACE and FLATPLACE only`);
    opt.cancelAfterMinutes = decimal('cancel_after', v.cancel_after, 1, 60, 'minutes');
  }

  const window: AlertWindow = {};
  if (v.start_time !== undefined) window.start = timeOfDay('start_time', v.start_time);
  if (v.end_time !== undefined) window.end = timeOfDay('end_time', v.end_time);
  if (v.closing_only_after !== undefined) {
    if (window.start === undefined || window.end === undefined) throw invalid('closing_only_after needs both start_time and end_time');
    window.closingOnlyAfter = timeOfDay('closing_only_after', v.closing_only_after);
  }
  if (Object.keys(window).length > 0) opt.window = window;
  if (flag('bypass_trade_windows', v.bypass_trade_windows, true)) opt.bypassTradeWindows = true;

  if (v.delay !== undefined) {
    const seconds = decimal('delay', v.delay, 0, 60, 'seconds');
    if (seconds > 0) opt.delaySeconds = seconds;
  }
  if (v.rate_limit !== undefined) {
    if (v.id === undefined) throw invalid('rate_limit needs id (the alerts it counts together)');
    const match = /^\s*\+?(\d+)\s*(?:\/\s*\+?(\d+))?\s*$/.exec(v.rate_limit);
    const count = match ? Number(match[1]) : NaN;
    const seconds = match?.[2] === undefined ? 60 : Number(match[2]);
    if (!(count >= 1 && count <= 1000 && seconds >= 1 && seconds <= 86_400))
      throw invalid(`rate_limit: '${v.rate_limit}' is not N or N/SECONDS with N from 1 to 1000 and SECONDS from 1 to 86400`);
    opt.rateLimit = { id: name('id', v.id), count, seconds };
  }
  if (v.strategy_tag !== undefined) opt.strategyTag = name('strategy_tag', v.strategy_tag);

  if (flag('sync_strategy', v.sync_strategy)) {
    if (command !== 'PLACE') throw invalid(`sync_strategy is available on PLACE only`);
    if (v.market_position === undefined) throw missing('market_position');
    if (v.prev_market_position === undefined) throw missing('prev_market_position');
    opt.sync = {
      marketPosition: side('market_position', v.market_position, SIDES),
      prevMarketPosition: side('prev_market_position', v.prev_market_position, SIDES),
      outOfSync: v.out_of_sync === undefined ? 'block' : oneOf('out_of_sync', v.out_of_sync, ['BLOCK', 'FLATTEN', 'RESYNC'] as const).toLowerCase() as OutOfSync,
    };
    // {{strategy.position_size}} is signed (negative when short): the size is what counts.
    if (v.target_quantity !== undefined) opt.sync.targetQuantity = wholeNumber('target_quantity', v.target_quantity.replace(/^-/, ''), 0, MAX_QUANTITY);
  }
  if (v.notes !== undefined) {
    if (v.notes.length > MAX_NOTES) throw invalid(`notes: ${v.notes.length} characters; at most ${MAX_NOTES}`);
    opt.notes = v.notes;
  }
}

/** A message's text read whole: its format (AlertFormatError), then its meaning (AlertFailure). */
export function parseAlert(message: string, options: { now?: Date } = {}): Alert {
  return interpret(readFields(message), options);
}
