/**
 * The guard's rules: their text forms (config keys `guard.<rule>`, TRADE_GUARD_<RULE>), parsed
 * once, and the one pure check of an order against them (`evaluate`), given the facts the guard
 * gathered (position, working orders, the day's P&L, the ledger's pace and duplicate counts, the
 * halt state, the time). Nothing here reads a backend, a file or the clock: the tests drive every
 * rule at its limit and one past it with plain data.
 *
 * Imports nothing heavy: the config validation reads the rule parsers.
 */

export const GUARD_RULES = [
  'max-order-qty',
  'max-position',
  'instruments',
  'accounts',
  'window',
  'max-orders',
  'daily-loss',
  'duplicate-window',
  'confirm-live',
  'sim-accounts',
] as const;
export type GuardRule = (typeof GUARD_RULES)[number];

export const RULE_HELP: Record<GuardRule, string> = {
  'max-order-qty': 'no single order above N contracts',
  'max-position': 'no order that could take an instrument\'s net position beyond N contracts either way',
  instruments: 'only these roots or contracts, comma-separated (ES,NQ,"ES 12-25")',
  accounts: 'only these accounts, comma-separated globs (Sim101,Sim*)',
  window: 'new orders only inside these windows ("Mon-Fri 08:30-15:00 America/Chicago"; several with ;)',
  'max-orders': 'order pace per account across every trade process ("5/s,60/min,500/day")',
  'daily-loss': "refuse new risk once the account's P&L for the trading day is at or below -N",
  'duplicate-window': 'refuse an order identical to one sent within this time (10s, 500ms, 2m)',
  'confirm-live': 'on: an account that is not a simulation account must be confirmed (typed at a terminal, --confirm-live in a script)',
  'sim-accounts': 'accounts confirm-live treats as simulation besides Sim*, comma-separated globs',
};

/** `max-order-qty` → `TRADE_GUARD_MAX_ORDER_QTY`. */
export const envForRule = (rule: GuardRule): string => `TRADE_GUARD_${rule.toUpperCase().replace(/-/g, '_')}`;

const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export interface TradingWindow {
  /** Days the window opens on (0 = Sunday). */
  days: ReadonlySet<number>;
  /** Minutes after midnight; a window whose end is not after its start runs past midnight. */
  from: number;
  to: number;
  zone: string;
  text: string;
}

export interface Pace {
  count: number;
  ms: number;
  text: string;
}

export interface Rules {
  maxOrderQty?: number;
  maxPosition?: number;
  instruments?: string[];
  accounts?: string[];
  windows?: TradingWindow[];
  maxOrders?: Pace[];
  dailyLoss?: number;
  duplicateWindowMs?: number;
  confirmLive?: boolean;
  simAccounts?: string[];
  /** Where each rule set came from, for messages: "profile default", "TRADE_GUARD_MAX_ORDER_QTY". */
  sources: Partial<Record<GuardRule, string>>;
  /** The normalized text of each rule that is set. */
  texts: Partial<Record<GuardRule, string>>;
}

export class RuleSyntaxError extends Error {}

const bad = (message: string): never => {
  throw new RuleSyntaxError(message);
};

function wholeNumber(raw: string, min: number, what: string): number {
  const text = raw.trim();
  if (!/^\d{1,9}$/.test(text) || Number(text) < min) bad(`must be a whole number of ${what} of at least ${min}, got '${raw}'`);
  return Number(text);
}

function list(raw: string, what: string): string[] {
  const items = raw
    .split(',')
    .map((item) => item.trim().replace(/\s+/g, ' '))
    .filter((item) => item !== '');
  if (items.length === 0) bad(`must name at least one ${what}, comma-separated`);
  for (const item of items) if (!/^[A-Za-z0-9 ._:*?-]{1,64}$/.test(item)) bad(`'${item}' is not a ${what} (letters, digits, space . _ : - and * ? globs)`);
  return items;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, sec: 1000, m: 60_000, min: 60_000, h: 3_600_000, hour: 3_600_000, d: 86_400_000, day: 86_400_000 };

export function parseDuration(raw: string): number {
  const match = /^\s*(\d{1,9}(?:\.\d+)?)\s*(ms|s|sec|m|min|h|hour|d|day)\s*$/i.exec(raw);
  if (!match) return bad(`must be a duration like 10s, 500ms, 2m or 1h, got '${raw}'`);
  const ms = Number(match[1]) * UNITS[match[2]!.toLowerCase()]!;
  if (ms < 1 || ms > 7 * 86_400_000) bad(`must be from 1ms to 7 days, got '${raw}'`);
  return Math.round(ms);
}

function parsePace(raw: string): Pace[] {
  return raw.split(',').map((part) => {
    const match = /^\s*(\d{1,9})\s*\/\s*(\d*)\s*(ms|s|sec|m|min|h|hour|d|day)\s*$/i.exec(part);
    if (!match || Number(match[1]) < 1) return bad(`each pace must be COUNT/UNIT like 5/s, 60/min, 500/day, got '${part.trim()}'`);
    const ms = (match[2] ? Number(match[2]) : 1) * UNITS[match[3]!.toLowerCase()]!;
    return { count: Number(match[1]), ms, text: part.trim().replace(/\s+/g, '') };
  });
}

function zoneOk(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

function parseDays(raw: string): Set<number> {
  const days = new Set<number>();
  for (const part of raw.toLowerCase().split(',')) {
    const [a, b] = part.split('-').map((d) => WEEKDAYS.indexOf(d.trim().slice(0, 3)));
    if (a === undefined || a < 0 || (b !== undefined && b < 0) || part.split('-').length > 2) bad(`'${raw}' is not a list of days like Mon-Fri or Mon,Wed,Fri`);
    for (let d = a!; ; d = (d + 1) % 7) {
      days.add(d);
      if (b === undefined || d === b) break;
    }
  }
  return days;
}

function minutes(raw: string): number {
  const match = /^(\d{1,2}):(\d{2})$/.exec(raw);
  if (!match || Number(match[1]) > 24 || Number(match[2]) > 59 || (Number(match[1]) === 24 && match[2] !== '00'))
    return bad(`'${raw}' is not a time of day like 08:30`);
  return Number(match[1]) * 60 + Number(match[2]);
}

export function parseWindows(raw: string): TradingWindow[] {
  return raw.split(';').map((part) => {
    const text = part.trim().replace(/\s+/g, ' ');
    const match = /^(\S+) (\d{1,2}:\d{2})-(\d{1,2}:\d{2}) (\S+)$/.exec(text);
    if (!match) return bad(`each window must be DAYS HH:MM-HH:MM ZONE like "Mon-Fri 08:30-15:00 America/Chicago", got '${text}'`);
    const zone = match[4]!;
    if (!zoneOk(zone)) bad(`'${zone}' is not a time zone (an IANA name like America/Chicago or UTC)`);
    const from = minutes(match[2]!);
    const to = minutes(match[3]!);
    if (from === to) bad(`the window ${match[2]}-${match[3]} is empty`);
    return { days: parseDays(match[1]!), from, to, zone, text };
  });
}

function onOff(raw: string): boolean {
  const text = raw.trim().toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(text)) return true;
  if (['off', 'false', 'no', '0'].includes(text)) return false;
  return bad(`must be on or off, got '${raw}'`);
}

function money(raw: string): number {
  const text = raw.trim();
  if (!/^\d{1,12}(\.\d{1,2})?$/.test(text) || Number(text) <= 0) bad(`must be an amount above 0 like 500 or 1250.50, got '${raw}'`);
  return Number(text);
}

/** One rule's text made canonical, or a RuleSyntaxError saying what it must be. */
export function normalizeRule(rule: GuardRule, raw: string): string {
  switch (rule) {
    case 'max-order-qty':
      return String(wholeNumber(raw, 1, 'contracts'));
    case 'max-position':
      return String(wholeNumber(raw, 0, 'contracts'));
    case 'instruments':
      return list(raw, 'root or contract').map((i) => i.toUpperCase()).join(',');
    case 'accounts':
    case 'sim-accounts':
      return list(raw, 'account glob').join(',');
    case 'window':
      return parseWindows(raw).map((w) => w.text).join('; ');
    case 'max-orders':
      return parsePace(raw).map((p) => p.text).join(',');
    case 'daily-loss':
      return String(money(raw));
    case 'duplicate-window':
      parseDuration(raw);
      return raw.trim().toLowerCase();
    case 'confirm-live':
      return onOff(raw) ? 'on' : 'off';
  }
}

/** The rules from their texts (each already normalized) and where each came from. */
export function buildRules(texts: Partial<Record<GuardRule, string>>, sources: Partial<Record<GuardRule, string>> = {}): Rules {
  const rules: Rules = { sources, texts };
  const t = texts;
  if (t['max-order-qty'] !== undefined) rules.maxOrderQty = Number(t['max-order-qty']);
  if (t['max-position'] !== undefined) rules.maxPosition = Number(t['max-position']);
  if (t.instruments !== undefined) rules.instruments = t.instruments.split(',');
  if (t.accounts !== undefined) rules.accounts = t.accounts.split(',');
  if (t.window !== undefined) rules.windows = parseWindows(t.window);
  if (t['max-orders'] !== undefined) rules.maxOrders = parsePace(t['max-orders']);
  if (t['daily-loss'] !== undefined) rules.dailyLoss = Number(t['daily-loss']);
  if (t['duplicate-window'] !== undefined) rules.duplicateWindowMs = parseDuration(t['duplicate-window']);
  if (t['confirm-live'] !== undefined) rules.confirmLive = t['confirm-live'] === 'on';
  if (t['sim-accounts'] !== undefined) rules.simAccounts = t['sim-accounts'].split(',');
  return rules;
}

export const anyRuleSet = (rules: Rules): boolean => Object.keys(rules.texts).length > 0;

export function globMatch(glob: string, text: string): boolean {
  const pattern = glob.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${pattern}$`, 'i').test(text);
}

export const isSimAccount = (account: string, rules: Rules): boolean =>
  /^sim/i.test(account) || (rules.simAccounts ?? []).some((glob) => globMatch(glob, account));

/** The root of a contract: `ES 12-25` → `ES`. */
const rootOf = (instrument: string): string => instrument.split(' ')[0]!.toUpperCase();

/** What the guard is asked about: one request that moves money. */
export interface Intent {
  operation: string;
  /** `order`: may add risk (place, change, replace, bracket, reverse); `exit`: cancel, close, flatten. */
  kind: 'order' | 'exit';
  account?: string;
  instrument?: string;
  action?: 'BUY' | 'SELL';
  quantity?: number;
  orderType?: string;
  limitPrice?: number;
  stopPrice?: number;
  /** A change: the order's quantity before it (a change that does not raise it adds no size). */
  quantityBefore?: number;
}

export type HaltMode = 'halted' | 'reducing';

export interface Halt {
  mode: HaltMode;
  scope: string;
  reason?: string;
  at: string;
}

/** What the guard found out for one intent; what a rule needs and was not gathered is undefined. */
export interface Facts {
  now: Date;
  halt?: Halt;
  /** The instrument's net position (long > 0), when read. */
  position?: number;
  /** Working orders of the same instrument and side, in contracts, when read. */
  workingSameSide?: number;
  /** The account's realized + unrealized P&L for the trading day, when read. */
  dayPnl?: number;
  /** A daily-loss halt already latched for this account today (or cleared by resume). */
  lossLatched?: boolean;
  lossResumed?: boolean;
  /** Orders the ledger counted for the account in each pace's window. */
  paceCounts?: number[];
  /** When an identical order was last sent, if within the duplicate window. */
  duplicateAt?: number;
  /** confirm-live: the person typed the account, or --confirm-live was given. */
  liveConfirmed?: boolean;
  /** Orders of this process in flight on the instrument, not yet in the position: they use up what another may reduce. */
  flying?: { BUY: number; SELL: number };
}

export interface Refusal {
  rule: GuardRule | 'halt';
  error: string;
  limit: unknown;
  value: unknown;
  /** "quantity 50 is above the limit of 10": the line's middle. */
  reason: string;
  source?: string;
}

const refusal = (rule: GuardRule | 'halt', limit: unknown, value: unknown, reason: string, rules: Rules): Refusal => ({
  rule,
  error: `guard_${rule.replace(/-/g, '_')}`,
  limit,
  value,
  reason,
  source: rule === 'halt' ? undefined : rules.sources[rule],
});

const signed = (action: 'BUY' | 'SELL' | undefined, quantity: number) => (action === 'SELL' ? -quantity : quantity);

/** The order only reduces the position it is against (opposite side, no larger). */
export function reduces(intent: Intent, position: number | undefined): boolean {
  if (intent.kind === 'exit') return true;
  if (position === undefined || position === 0 || intent.action === undefined || intent.quantity === undefined) return false;
  const opposite = (position > 0 && intent.action === 'SELL') || (position < 0 && intent.action === 'BUY');
  return opposite && intent.quantity <= Math.abs(position);
}

/** The position an order may reduce: less what orders in flight on the reducing side already take. */
export function reducible(facts: Facts): number | undefined {
  const { position, flying } = facts;
  if (position === undefined || !flying) return position;
  if (position > 0) return Math.max(0, position - flying.SELL);
  if (position < 0) return Math.min(0, position + flying.BUY);
  return position;
}

/** Does the intent need the position to be judged (a rule that reads it, or one that would refuse unless it reduces)? */
export function needsPosition(intent: Intent, rules: Rules, facts: Facts): boolean {
  if (intent.kind === 'exit' || facts.position !== undefined) return false;
  return rules.maxPosition !== undefined || evaluate(intent, rules, facts, { assumeAddsRisk: true }) !== undefined;
}

interface ZonedTime {
  day: number;
  minute: number;
}

const zoned = new Map<string, Intl.DateTimeFormat>();
function inZone(now: Date, zone: string): ZonedTime {
  let format = zoned.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', { timeZone: zone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
    zoned.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(now).map((p) => [p.type, p.value]));
  return { day: WEEKDAYS.indexOf(String(parts.weekday).toLowerCase().slice(0, 3)), minute: Number(parts.hour) * 60 + Number(parts.minute) };
}

export function insideWindow(window: TradingWindow, now: Date): boolean {
  const { day, minute } = inZone(now, window.zone);
  if (window.from < window.to) return window.days.has(day) && minute >= window.from && minute < window.to;
  // Past midnight: from `from` on an open day, or before `to` on the day after one.
  return (window.days.has(day) && minute >= window.from) || (window.days.has((day + 6) % 7) && minute < window.to);
}

const n = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(2));

/**
 * The verdict on one intent: undefined to let it through, else the first rule that refuses it:
 * who and what first (accounts, the halt, confirm-live, instruments), then the order's own size
 * (max-order-qty, max-position), then the time and the day (window, daily-loss, pace, duplicates).
 * Exits (cancel, close, flatten) and orders that only reduce a position pass every rule but
 * `accounts`: getting flat is never blocked.
 */
export function evaluate(intent: Intent, rules: Rules, facts: Facts, options: { assumeAddsRisk?: boolean } = {}): Refusal | undefined {
  const account = intent.account;
  if (rules.accounts && account !== undefined && !rules.accounts.some((glob) => globMatch(glob, account)))
    return refusal('accounts', rules.texts.accounts, account, `account ${account} is not in ${rules.texts.accounts}`, rules);
  if (intent.kind === 'exit') return undefined;
  if (!options.assumeAddsRisk && reduces(intent, reducible(facts))) return undefined;

  const change = intent.quantityBefore !== undefined;
  const addsSize = !change || (intent.quantity !== undefined && intent.quantity > intent.quantityBefore!);
  if (facts.halt) {
    // REDUCING lets a change that adds no size through (moving a protective stop); HALTED nothing new.
    if (facts.halt.mode === 'halted' || addsSize)
      return refusal(
        'halt',
        facts.halt.mode,
        facts.halt.scope,
        `${facts.halt.scope.replace(':', ' ')} is ${facts.halt.mode === 'halted' ? 'HALTED' : 'REDUCING (only orders that reduce a position)'} since ${facts.halt.at}${facts.halt.reason ? ` (${facts.halt.reason})` : ''}`,
        rules,
      );
  }
  if (rules.confirmLive && account !== undefined && !isSimAccount(account, rules) && !facts.liveConfirmed)
    return refusal('confirm-live', 'on', account, `account ${account} is not a simulation account and was not confirmed (type its name at the prompt, or --confirm-live)`, rules);
  if (rules.instruments && intent.instrument !== undefined) {
    const instrument = intent.instrument.toUpperCase();
    if (!rules.instruments.some((allowed) => allowed === instrument || allowed === rootOf(instrument)))
      return refusal('instruments', rules.texts.instruments, intent.instrument, `${intent.instrument} is not in ${rules.texts.instruments}`, rules);
  }
  if (rules.maxOrderQty !== undefined && intent.quantity !== undefined && addsSize && intent.quantity > rules.maxOrderQty)
    return refusal('max-order-qty', rules.maxOrderQty, intent.quantity, `quantity ${intent.quantity} is above the limit of ${rules.maxOrderQty}`, rules);
  if (rules.maxPosition !== undefined && intent.quantity !== undefined && addsSize && facts.position !== undefined) {
    const added = change ? intent.quantity - intent.quantityBefore! : intent.quantity;
    const projected = facts.position + signed(intent.action, (facts.workingSameSide ?? 0) + added);
    if (Math.abs(projected) > rules.maxPosition)
      return refusal(
        'max-position',
        rules.maxPosition,
        Math.abs(projected),
        `position ${facts.position}${facts.workingSameSide ? ` + working ${signed(intent.action, facts.workingSameSide)}` : ''} + this order ${signed(intent.action, added)} could reach ${Math.abs(projected)}, above the limit of ${rules.maxPosition}`,
        rules,
      );
  }
  if (rules.windows && !rules.windows.some((w) => insideWindow(w, facts.now)))
    return refusal('window', rules.texts.window, facts.now.toISOString(), `${facts.now.toISOString()} is outside ${rules.texts.window}`, rules);
  if (rules.dailyLoss !== undefined && !facts.lossResumed && (facts.lossLatched || (facts.dayPnl !== undefined && facts.dayPnl <= -rules.dailyLoss)))
    return refusal(
      'daily-loss',
      rules.dailyLoss,
      facts.dayPnl,
      facts.dayPnl !== undefined
        ? `the day's P&L of ${account} is ${n(facts.dayPnl)}, at or below -${n(rules.dailyLoss)}; new risk waits for the next trading day or trade resume`
        : `${account} reached the daily loss of -${n(rules.dailyLoss)} earlier today; new risk waits for the next trading day or trade resume`,
      rules,
    );
  if (rules.maxOrders && facts.paceCounts) {
    for (const [i, pace] of rules.maxOrders.entries()) {
      const count = facts.paceCounts[i] ?? 0;
      if (count >= pace.count)
        return refusal('max-orders', pace.text, count + 1, `this would be order ${count + 1} of ${account} within ${pace.text.split('/')[1]}, above ${pace.text}`, rules);
    }
  }
  if (rules.duplicateWindowMs !== undefined && facts.duplicateAt !== undefined) {
    // Another process may have sent it after this one read its clock: that is no time ago, not less.
    const ago = Math.max(0, facts.now.getTime() - facts.duplicateAt);
    return refusal('duplicate-window', rules.texts['duplicate-window'], ago, `an identical order was sent ${n(ago / 1000)}s ago, within ${rules.texts['duplicate-window']}`, rules);
  }
  return undefined;
}

/** The identity of an order for the duplicate window. */
export function fingerprint(intent: Intent): string {
  return [intent.operation, intent.account, intent.instrument, intent.action, intent.quantity, intent.orderType, intent.limitPrice, intent.stopPrice].join('|');
}
