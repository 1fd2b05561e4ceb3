/**
 * The syntax of the guard's rules: their names, their config keys (`guard.<rule>`) and environment
 * variables (TRADE_GUARD_<RULE>), and the one parser of each rule's text. The config checks a
 * `guard.*` key with these parsers when it is set; the guard (src/guard/rules.ts) evaluates the
 * parsed rules. Declared here, below both, so that the config never imports the guard.
 *
 * Imports nothing: a pure module of text and parsers.
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

export const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

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
