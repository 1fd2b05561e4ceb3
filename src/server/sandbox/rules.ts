/**
 * Scenario rules of `trade serve` as a test bench (issue 22): which requests a rule matches
 * (operation, account, instrument, transport), when it fires (the nth matching call, every nth,
 * with a seeded probability, or always; at most `times` times), and its effect. One zod schema
 * checks rules from a scenario file, from the control routes and from `trade sandbox inject`.
 */
import * as z from 'zod';
import { OPERATIONS } from '../../service/operations.js';
import { parseInstrument } from '../../service/order.js';

export const STREAM_ACTIONS = ['subscribe', 'unsubscribe', 'streamPnl'] as const;
/** `Webhook`: a message to trade serve's TradingView webhook (issue 32). */
const OPERATION_NAMES: readonly string[] = [...Object.keys(OPERATIONS), 'Webhook', ...STREAM_ACTIONS];

export type Effect =
  | { kind: 'status'; status: 408 | 429 | 500; retryAfter: number }
  | { kind: 'delay'; ms: number }
  | { kind: 'drop-before' }
  | { kind: 'drop-after' }
  | { kind: 'reject-late'; ms: number; reason: string }
  | { kind: 'partial'; quantity: number }
  | { kind: 'ws-close'; code: number; afterMs?: number };

/** The operations an effect can act on, when it cannot act on all. */
const PLACING: readonly string[] = ['PlaceOrder'];

/** `500ms`, `2s`, `1.5s`, `1m`, or a bare number of milliseconds. */
export function parseDuration(text: string): number | undefined {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(text.trim());
  if (!match) return undefined;
  const ms = Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[(match[2] ?? 'ms') as 'ms' | 's' | 'm'];
  return Number.isFinite(ms) && ms <= 3_600_000 ? Math.round(ms) : undefined;
}

const EFFECT_FORMS =
  "status 408|429|500 [RETRY_AFTER_S], delay DURATION, drop-before, drop-after, reject-late DURATION REASON, partial QTY, ws-close CODE [DURATION]";

/** One effect from its text, e.g. `reject-late 2s Insufficient margin`; a string is what is wrong. */
export function parseEffect(text: string): Effect | string {
  const words = text.trim().split(/\s+/);
  const [kind, a, b] = words;
  const whole = (value: string | undefined, min: number, max: number) =>
    value !== undefined && /^\d+$/.test(value) && Number(value) >= min && Number(value) <= max ? Number(value) : undefined;
  switch (kind) {
    case 'status': {
      const status = whole(a, 0, 999);
      if (status !== 408 && status !== 429 && status !== 500) return `status takes 408, 429 or 500, got '${a ?? ''}'`;
      const retryAfter = b === undefined ? 1 : whole(b, 1, 3600);
      if (retryAfter === undefined) return `status 429's Retry-After is whole seconds from 1 to 3600, got '${b}'`;
      if (words.length > 3) return `status takes a status and a Retry-After at most`;
      return { kind: 'status', status, retryAfter };
    }
    case 'delay': {
      const ms = a === undefined ? undefined : parseDuration(a);
      if (ms === undefined || words.length !== 2) return `delay takes one DURATION (500ms, 2s; at most 1h), got '${words.slice(1).join(' ')}'`;
      return { kind: 'delay', ms };
    }
    case 'drop-before':
    case 'drop-after':
      if (words.length !== 1) return `${kind} takes nothing more`;
      return { kind };
    case 'reject-late': {
      const ms = a === undefined ? undefined : parseDuration(a);
      const reason = words.slice(2).join(' ');
      if (ms === undefined) return `reject-late takes a DURATION (500ms, 2s), got '${a ?? ''}'`;
      if (reason === '' || reason.length > 200) return 'reject-late takes a REASON after its DURATION (1 to 200 characters)';
      return { kind: 'reject-late', ms, reason };
    }
    case 'partial': {
      const quantity = whole(a, 1, 100_000);
      if (quantity === undefined || words.length !== 2) return `partial takes one QTY, a whole number from 1, got '${words.slice(1).join(' ')}'`;
      return { kind: 'partial', quantity };
    }
    case 'ws-close': {
      const code = whole(a, 1000, 4999);
      if (code === undefined || code === 1005 || code === 1006 || code === 1015) return `ws-close takes a close code from 1000 to 4999 (not 1005, 1006, 1015), got '${a ?? ''}'`;
      if (words.length > 3) return 'ws-close takes a CODE and a DURATION at most';
      if (b === undefined) return { kind: 'ws-close', code };
      const afterMs = parseDuration(b);
      if (afterMs === undefined) return `ws-close's delay is a DURATION (500ms, 2s), got '${b}'`;
      return { kind: 'ws-close', code, afterMs };
    }
    default:
      return `unknown effect '${kind ?? ''}'; one of: ${EFFECT_FORMS}`;
  }
}

const name = z.string().regex(/^[A-Za-z0-9._:-]{1,64}$/, 'must be 1-64 of A-Z a-z 0-9 . _ : -');

/** Rules in force at once (a file's, the control route's): each request is tried against every one. */
export const MAX_RULES = 1000;
/** The largest nth, every and times: a rule that should fire for ever leaves `times` out. */
export const MAX_COUNT = 1_000_000;
const count = (what: string) =>
  z
    .number()
    .int()
    .min(1)
    .max(MAX_COUNT, { error: `must be at most ${MAX_COUNT.toLocaleString('en-US')}${what === 'times' ? ' (leave times out for a rule that never stops)' : ''}` });

/** A rule as written (file, control route, CLI): every field but `effect` optional. */
export const RuleInput = z
  .object({
    name: name.optional(),
    operation: z
      .string()
      .refine((op) => OPERATION_NAMES.includes(op), { message: `must be an operation of the table (PlaceOrder, Flatten, ...), Webhook, or ${STREAM_ACTIONS.join(', ')}` })
      .optional(),
    account: z.string().min(1).max(100).optional(),
    instrument: z.string().min(1).max(100).optional(),
    transport: z.enum(['http', 'ws']).optional(),
    nth: count('nth').optional(),
    every: count('every').optional(),
    probability: z.number().min(0).max(1).optional(),
    seed: z.number().int().min(0).max(2 ** 32 - 1).optional(),
    times: count('times').optional(),
    effect: z.string().min(1),
  })
  .strict()
  .superRefine((rule, ctx) => {
    const when = (['nth', 'every', 'probability'] as const).filter((k) => rule[k] !== undefined);
    if (when.length > 1) ctx.addIssue({ code: 'custom', path: [when[1]!], message: `give one of nth, every and probability, not ${when.join(' and ')}` });
    if (rule.seed !== undefined && rule.probability === undefined) ctx.addIssue({ code: 'custom', path: ['seed'], message: 'goes with probability' });
    const effect = parseEffect(rule.effect);
    if (typeof effect === 'string') return ctx.addIssue({ code: 'custom', path: ['effect'], message: effect });
    if ((effect.kind === 'reject-late' || effect.kind === 'partial') && !PLACING.includes(rule.operation ?? ''))
      ctx.addIssue({ code: 'custom', path: ['operation'], message: `${effect.kind} needs operation: PlaceOrder` });
    if (effect.kind === 'ws-close' && rule.transport === 'http') ctx.addIssue({ code: 'custom', path: ['transport'], message: 'ws-close needs transport ws (or none)' });
    if (rule.instrument !== undefined) {
      try {
        parseInstrument(rule.instrument);
      } catch (error) {
        ctx.addIssue({ code: 'custom', path: ['instrument'], message: (error as Error).message.replace(/^Invalid request: (instrument: )?/, '') });
      }
    }
  });
export type RuleInput = z.infer<typeof RuleInput>;

/** A rule in force, with its counters. */
export interface Rule {
  id: number;
  name: string;
  input: RuleInput;
  effect: Effect;
  /** Resolved to a dated contract once, as the requests' instruments are. */
  instrument?: string;
  account?: string;
  /** Matching calls seen, and times fired. */
  seen: number;
  fired: number;
  random?: () => number;
}

/** What a rule is shown as (control route, `trade sandbox rules --json`). */
export interface RuleView extends RuleInput {
  id: number;
  name: string;
  seen: number;
  fired: number;
}

/** mulberry32: a small seeded generator, so a seed fires on the same calls in every run. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What a request offers a rule to match. */
export interface RequestFacts {
  operation: string;
  transport: 'http' | 'ws';
  account?: unknown;
  instrument?: unknown;
}

export interface RuleSet {
  /** True when a rule is in force: the one check a request pays when there is none. */
  readonly active: boolean;
  add(input: RuleInput): Rule;
  list(): RuleView[];
  /** How many rules are in force. */
  count(): number;
  clear(): number;
  /** The first rule that fires for this request, its counters moved; undefined when none does. */
  fire(facts: RequestFacts): Rule | undefined;
}

const lower = (value: unknown) => (typeof value === 'string' ? value.replace(/[A-Z]+/g, (c) => c.toLowerCase()) : undefined);

function resolvedInstrument(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    return parseInstrument(value);
  } catch {
    return value;
  }
}

export function createRuleSet(): RuleSet {
  let rules: Rule[] = [];
  let nextId = 1;
  const set: RuleSet = {
    active: false,
    add(raw) {
      const input = RuleInput.parse(raw);
      const id = nextId++;
      const rule: Rule = {
        id,
        name: input.name ?? `rule-${id}`,
        input,
        effect: parseEffect(input.effect) as Effect,
        instrument: input.instrument === undefined ? undefined : parseInstrument(input.instrument),
        account: lower(input.account),
        seen: 0,
        fired: 0,
        random: input.probability === undefined ? undefined : seeded(input.seed ?? 1),
      };
      rules.push(rule);
      (set as { active: boolean }).active = true;
      return rule;
    },
    list: () => rules.map((r) => ({ id: r.id, ...r.input, name: r.name, seen: r.seen, fired: r.fired })),
    count: () => rules.length,
    clear() {
      const n = rules.length;
      rules = [];
      (set as { active: boolean }).active = false;
      return n;
    },
    fire(facts) {
      for (const rule of rules) {
        const { input } = rule;
        if (input.operation !== undefined && input.operation !== facts.operation) continue;
        if (input.transport !== undefined && input.transport !== facts.transport) continue;
        if (rule.account !== undefined && rule.account !== lower(facts.account)) continue;
        if (rule.instrument !== undefined && rule.instrument !== resolvedInstrument(facts.instrument)) continue;
        if (rule.effect.kind === 'ws-close' && facts.transport !== 'ws') continue;
        const n = ++rule.seen;
        if (input.times !== undefined && rule.fired >= input.times) continue;
        // Synchronous from the match to the count, so concurrent requests cannot both take the last `times`.
        const fires =
          input.nth !== undefined ? n === input.nth : input.every !== undefined ? n % input.every === 0 : rule.random ? rule.random() < input.probability! : true;
        if (!fires) continue;
        rule.fired++;
        return rule;
      }
      return undefined;
    },
  };
  return set;
}
