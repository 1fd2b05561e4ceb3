/**
 * The guard's rules: the one pure check of an order against them (`evaluate`), given the facts the
 * guard gathered (position, working orders, the day's P&L, the ledger's pace and duplicate counts,
 * the halt state, the time). Nothing here reads a backend, a file or the clock: the tests drive
 * every rule at its limit and one past it with plain data. The rules' text forms and their parsers
 * are declared with the config keys (src/config/guard-syntax.ts), re-exported here.
 */
import { type GuardRule, type Rules, type TradingWindow, WEEKDAYS } from '../config/guard-syntax.js';

export {
  buildRules,
  envForRule,
  GUARD_RULES,
  type GuardRule,
  normalizeRule,
  type Pace,
  parseDuration,
  parseWindows,
  RULE_HELP,
  type Rules,
  RuleSyntaxError,
  type TradingWindow,
} from '../config/guard-syntax.js';

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
