/**
 * The one order schema. CLI input, the server's request bodies and the remote responses are all
 * checked here, so the rules live in exactly one place.
 *
 * Every schema is built on its first use and then kept (`built`): a zod schema costs far more to
 * build than to run (zod clones it at every chained call), and a one-shot command builds only the
 * fields it checks — `trade place` of a MARKET order never builds the price, OCO, strategy or
 * order-id rules (issue 34). The six fields every order has are read without their schemas when
 * their input is well-formed (WELL_FORMED), so such a `place` builds none; the schemas still
 * decide, and word, everything else.
 */
import * as z from 'zod';
import { resolveInstrument } from './instruments.js';
import { type FieldIssue, ValidationError } from '../common/errors.js';

/** Told the name of every schema built, when installed (the start-up test's preload does). */
const SCHEMA_HOOK = Symbol.for('trade.schema');

/** Tells the hook, when one is installed, that the schema `name` was built. */
export function noteBuilt(name: string): void {
  (globalThis as { [SCHEMA_HOOK]?: (name: string) => void })[SCHEMA_HOOK]?.(name);
}

/** The schemas that WELL_FORMED reads for, by the field name its reading is under. */
const READ_WELL_FORMED = new WeakMap<object, string>();

/**
 * A schema built by `build` on the first call, then the same one at every call. `wellFormed`: the
 * schema is the one WELL_FORMED[name] answers for (wellFormedReader finds the reading by it).
 */
export function built<T>(name: string, build: () => T, wellFormed = false): () => T {
  let value: T | undefined;
  return () => {
    if (value === undefined) {
      value = build();
      if (wellFormed) READ_WELL_FORMED.set(value as object, name);
      noteBuilt(name);
    }
    return value;
  };
}

export const ACTIONS = ['BUY', 'SELL'] as const;
export const ORDER_TYPES = ['MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT'] as const;
export const TIMES_IN_FORCE = ['DAY', 'GTC'] as const;

export type Action = (typeof ACTIONS)[number];
export type OrderType = (typeof ORDER_TYPES)[number];
export type TimeInForce = (typeof TIMES_IN_FORCE)[number];

/** Bounds: the server refuses more than 100000 contracts (service-reference.md §3.1); the price bound guards against fat fingers and overflow. */
export const MAX_QUANTITY = 100_000;
export const MAX_PRICE = 1_000_000_000;
const MAX_NAME = 64;

/** Order types that need a limit price, and those that need a stop price. */
export const NEEDS_LIMIT: ReadonlySet<OrderType> = new Set(['LIMIT', 'STOPLIMIT']);
export const NEEDS_STOP: ReadonlySet<OrderType> = new Set(['STOPMARKET', 'STOPLIMIT']);

/**
 * Characters a terminal or a log would not show as themselves: controls (C0, DEL, C1), invisible
 * formatting (zero-width joiners, bidi overrides), line separators and lone surrogates.
 */
const UNSHOWABLE = '[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}]';
/** Made on first use: a Unicode-property pattern costs ~0.3 ms to make (issue 34), and most commands never print one. */
let unshowable: RegExp | undefined;

/** Text with every unshowable character written as a \uXXXX escape, so a message stays one honest line. */
export function printable(text: string): string {
  return text.replace((unshowable ??= new RegExp(UNSHOWABLE, 'gu')), (c) => {
    const code = c.codePointAt(0)!.toString(16);
    return code.length > 4 ? `\\u{${code}}` : `\\u${code.padStart(4, '0')}`;
  });
}

/** At most `max` characters (whole code points), with `...` when cut. */
function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  // Only the head is split into code points: 4 × max units hold more than max of them, whatever their width.
  const chars = Array.from(text.slice(0, 4 * max));
  return chars.length > max ? `${chars.slice(0, max - 3).join('')}...` : text;
}

/** A short, safe rendering of a rejected value for an error message or a log line. */
export function show(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = `'${value}'`;
  else if (typeof value === 'number' || typeof value === 'boolean' || value === null) text = String(value);
  else if (Array.isArray(value)) text = 'an array';
  else text = `a ${typeof value}`;
  return printable(clip(text, 40));
}

/**
 * Upper case for ASCII letters only. Case-insensitive matching means `buy`, `Buy` and `BUY`;
 * String#toUpperCase would also turn `ſell` into `SELL`, `lımıt` into `LIMIT` and `ß` into `SS`.
 */
export function asciiUpperCase(text: string): string {
  return text.replace(/[a-z]+/g, (letters) => letters.toUpperCase());
}

function required(input: unknown, otherwise: string): string {
  return input === undefined ? 'is required' : otherwise;
}

export function upperEnum<const T extends readonly string[]>(values: T) {
  const expected = values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(', ')}`;
  return z
    .string({ error: (iss) => required(iss.input, `must be ${expected}, got ${show(iss.input)}`) })
    .transform((raw, ctx) => {
      const upper = upperOf(values, raw);
      if (upper !== undefined) return upper;
      ctx.issues.push({ code: 'custom', input: raw, message: `must be ${expected} (any case), got ${show(raw)}` });
      return z.NEVER;
    });
}

/**
 * The value of `values` that `raw` names, or undefined. §1.5: any case, and spaces, `_` and `-`
 * inside the value ignored (`stop_market`, `Stop Market`).
 */
function upperOf<T extends readonly string[]>(values: T, raw: unknown): T[number] | undefined {
  if (typeof raw !== 'string') return undefined;
  const upper = asciiUpperCase(raw).replace(/[ \t_-]/g, '');
  return (values as readonly string[]).includes(upper) ? (upper as T[number]) : undefined;
}

/** What every instrument is once resolved: `SYMBOL MM-YY`. */
export const INSTRUMENT_PATTERN = /^([A-Z0-9]{1,12}) (0[1-9]|1[0-2])-(\d{2})$/;

/**
 * The instrument rule (service-reference.md §9): any of the forms `ES 09-25`, `CL 4-26`, `ES`,
 * `ES1!`, `ESU5`, `ESU25`, `ES SEP25`, resolved to one dated contract written `SYMBOL MM-YY`. The
 * forms that need a date resolve against today's date in America/Chicago.
 */
export const instrumentField = built('instrument', () =>
  z
    .string({ error: (iss) => required(iss.input, `must be a string like 'ES 09-25', got ${show(iss.input)}`) })
    .transform((raw, ctx) => {
      const resolved = resolveInstrument(raw, new Date());
      if (resolved.ok) return resolved.instrument;
      ctx.issues.push({ code: 'custom', input: raw, message: resolved.why });
      return z.NEVER;
    }),
  true,
);

const quantity = built('quantity', () =>
  z
    .number({ error: (iss) => required(iss.input, `must be a whole number, got ${show(iss.input)}`) })
    .int({ error: (iss) => `must be a whole number, got ${show(iss.input)}` })
    .min(1, { error: (iss) => `must be at least 1, got ${show(iss.input)}` })
    .max(MAX_QUANTITY, { error: (iss) => `must be at most ${MAX_QUANTITY}, got ${show(iss.input)}` }),
  true,
);

/** A price: positive, finite, at most MAX_PRICE. */
export const priceField = built('price', () =>
  z
    .number({ error: (iss) => `must be a positive number, got ${show(iss.input)}` })
    .positive({ error: (iss) => `must be a positive number, got ${show(iss.input)}` })
    .max(MAX_PRICE, { error: (iss) => `must be at most ${MAX_PRICE}, got ${show(iss.input)}` }),
);

/**
 * A name: account, OCO id, ATM strategy. Printable, bounded, and carried unchanged by the store
 * (UTF-8), a URL path and a terminal: no controls, no invisible formatting, no lone surrogates.
 */
export function nameField(what: string) {
  return z
    .string({ error: (iss) => required(iss.input, `must be a ${what}, got ${show(iss.input)}`) })
    .min(1, { error: 'must not be empty' })
    .max(MAX_NAME, { error: `must be at most ${MAX_NAME} characters` })
    // eslint-disable-next-line no-control-regex
    .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, { error: 'must not contain control characters' })
    .regex(/^[^\p{Cf}\p{Zl}\p{Zp}]*$/u, { error: 'must not contain invisible formatting characters' })
    .regex(/^[^\p{Cs}]*$/u, { error: 'must be well-formed Unicode (no lone surrogates)' })
    .refine((s) => s.trim() === s, { error: 'must not start or end with spaces' });
}

/** The characters and length of a client's own order id (§1.6). */
const CLIENT_ORDER_ID = /^[A-Za-z0-9._:-]{1,64}$/;

/** Words that are path segments under `/orders` and so cannot be an order id (§1.6). */
const ROUTE_WORDS = new Set(['place', 'flatplace', 'cancel', 'cancel_and_bracket']);

/**
 * A client's own order id (§1.6): 1–64 of `A–Z a–z 0–9 . _ : -`, case-sensitive, not a route
 * word. Unique per account: placing it twice is refused, which makes a resend safe.
 */
export const clientOrderIdField = built('clientOrderId', () =>
  z
    .string({ error: (iss) => `must be a string of 1-64 characters (A-Z a-z 0-9 . _ : -), got ${show(iss.input)}` })
    .regex(CLIENT_ORDER_ID, { error: (iss) => `must be 1-64 characters of A-Z a-z 0-9 . _ : -, got ${show(iss.input)}` })
    .refine((id) => !ROUTE_WORDS.has(id), { error: (iss) => `${show(iss.input)} is a word of the service's paths; choose another id` }),
);

/** The order request body of the service (section 2.2, and PlaceOrder's `orderId` of §3.1): each field's schema, built when first checked. */
const ORDER_BODY_FIELDS = {
  instrument: instrumentField,
  action: built('action', () => upperEnum(ACTIONS), true),
  quantity,
  orderType: built('orderType', () => upperEnum(ORDER_TYPES), true),
  timeInForce: built('timeInForce', () => upperEnum(TIMES_IN_FORCE), true),
  limitPrice: built('limitPrice', () => priceField().optional()),
  stopPrice: built('stopPrice', () => priceField().optional()),
  ocoId: built('ocoId', () => nameField('string').optional()),
  strategy: built('strategy', () => nameField('string').optional()),
  orderId: built('orderId', () => clientOrderIdField().optional(), true),
};

/** The sides a position can be on (PlaceOrder's requireMarketPosition). */
export const SIDES = ['flat', 'long', 'short'] as const;
export type MarketSide = (typeof SIDES)[number];
/** The sides a filtered flatten closes (§3.14). */
export const OPEN_SIDES = ['long', 'short'] as const;

/**
 * PlaceOrder's guards (§3.1): the position the instrument must be in (a comma list of flat, long,
 * short), and the most open positions the account may hold before this order opens another.
 */
const PLACE_GUARD_FIELDS = {
  requireMarketPosition: built('requireMarketPosition', () =>
    z
      .string({ error: (iss) => `must be a comma list of flat, long, short, got ${show(iss.input)}` })
      .transform((raw, ctx) => {
        const sides = raw.split(',').map((s) => s.trim().replace(/[A-Z]+/g, (l) => l.toLowerCase()));
        if (sides.length > 0 && sides.every((s): s is MarketSide => (SIDES as readonly string[]).includes(s))) return [...new Set(sides)];
        ctx.issues.push({ code: 'custom', input: raw, message: `must be a comma list of flat, long, short, got ${show(raw)}` });
        return z.NEVER;
      })
      .optional(),
  ),
  maxPositions: built('maxPositions', () =>
    z
      .number({ error: (iss) => `must be a whole number from 1, got ${show(iss.input)}` })
      .int({ error: (iss) => `must be a whole number from 1, got ${show(iss.input)}` })
      .min(1, { error: (iss) => `must be a whole number from 1, got ${show(iss.input)}` })
      .max(MAX_QUANTITY, { error: (iss) => `must be at most ${MAX_QUANTITY}, got ${show(iss.input)}` })
      .optional(),
  ),
};

type Built<F> = { [K in keyof F]: F[K] extends () => infer S ? S : never };

/** Every field of a table, built. */
function buildAll<F extends Record<string, () => z.ZodType>>(fields: F): Built<F> {
  return Object.fromEntries(Object.entries(fields).map(([key, field]) => [key, field()])) as Built<F>;
}

/** The order body's fields, built (the operation table's rows use them whole). */
export const orderBodyShape = () => buildAll(ORDER_BODY_FIELDS);
/** PlaceOrder's guards, built. */
export const placeGuardsShape = () => buildAll(PLACE_GUARD_FIELDS);

export const accountNameField = built('account', () => nameField('account name'), true);
export const orderIdField = built('existingOrderId', () => nameField('order id'));

/**
 * A whole number from JSON or from a query string (`lookbackTime=320`): the string form is
 * read only where a query string can carry it; a JSON string is refused as any string is (§1.3).
 */
export function wholeNumberField(min: number, max: number, why = `must be a whole number from ${min} to ${max}`) {
  return z
    .union([z.number(), z.string()], { error: (iss) => `${why}, got ${show(iss.input)}` })
    .transform((raw, ctx) => {
      // Digits only in a string (a query string's value): not '', ' 1', '1e3' or '0x10'.
      const n = typeof raw === 'string' && !/^\d+$/.test(raw) ? NaN : Number(raw);
      if (Number.isInteger(n) && n >= min && n <= max) return n;
      ctx.issues.push({ code: 'custom', input: raw, message: `${why}, got ${show(raw)}` });
      return z.NEVER;
    });
}

/** One instrument or a comma list of them (GetQuote, §3.17), each resolved as `instrumentField` does. */
export const instrumentListField = built('instrumentList', () =>
  z
    .string({ error: (iss) => required(iss.input, `must be an instrument or a comma list of them, got ${show(iss.input)}`) })
    .transform((raw, ctx) => {
      const resolved = raw.split(',').map((part) => resolveInstrument(part, new Date()));
      const bad = resolved.find((r) => !r.ok);
      if (bad && !bad.ok) {
        ctx.issues.push({ code: 'custom', input: raw, message: bad.why });
        return z.NEVER;
      }
      return resolved.map((r) => (r.ok ? r.instrument : ''));
    }),
);

/** `long` or `short`, any case: the side a filtered flatten closes (§3.14). */
export const sideField = built('side', () =>
  z
    .string({ error: (iss) => `must be long or short, got ${show(iss.input)}` })
    .transform((raw, ctx) => {
      const side = raw.trim().replace(/[A-Z]+/g, (l) => l.toLowerCase());
      if ((OPEN_SIDES as readonly string[]).includes(side)) return side as (typeof OPEN_SIDES)[number];
      ctx.issues.push({ code: 'custom', input: raw, message: `must be long or short, got ${show(raw)}` });
      return z.NEVER;
    }),
);

/** A time as an ISO 8601 string (GetBars' `from`, `to`). */
export const isoTimeField = built('isoTime', () =>
  z
    .string({ error: (iss) => `must be a time like 2026-03-18T20:00:00Z, got ${show(iss.input)}` })
    .refine((t) => !Number.isNaN(Date.parse(t)), { error: (iss) => `must be a time like 2026-03-18T20:00:00Z, got ${show(iss.input)}` })
    .transform((t) => new Date(t).toISOString()),
);

/**
 * A boolean from JSON or from a query string (§1.3): `true`/`false` in any case, or `1`/`0`.
 * Anything else is refused, so `activeOnly=yes` is not silently read as false.
 */
export const booleanField = built('boolean', () =>
  z
    .union([z.boolean(), z.string(), z.number()], {
      error: (iss) => `must be true or false, got ${show(iss.input)}`,
    })
    .transform((raw, ctx) => {
      if (typeof raw === 'boolean') return raw;
      const text = String(raw).toLowerCase();
      if (text === 'true' || text === '1') return true;
      if (text === 'false' || text === '0') return false;
      ctx.issues.push({ code: 'custom', input: raw, message: `must be true or false (or 1 or 0), got ${show(raw)}` });
      return z.NEVER;
    }),
);

/** The body plus the account: what the CLI builds and the WebSocket `args` carry; each field built when first checked. */
const ORDER_FIELD_TABLE = { account: accountNameField, ...ORDER_BODY_FIELDS, ...PLACE_GUARD_FIELDS };

export type OrderBody = z.output<z.ZodObject<Built<typeof ORDER_BODY_FIELDS>, z.core.$strict>>;
export type Order = z.output<z.ZodObject<Built<typeof ORDER_FIELD_TABLE>, z.core.$strict>>;
/** Every field the order may have, in the order a person reads them. */
export const ORDER_FIELDS = Object.keys(ORDER_FIELD_TABLE) as Array<keyof Order>;

/**
 * The fields an order may leave out. An absent one is skipped without building its schema; a
 * test checks that this is exactly the fields whose schema is optional.
 */
export const OPTIONAL_ORDER_FIELDS: ReadonlySet<string> = new Set(['limitPrice', 'stopPrice', 'ocoId', 'strategy', 'orderId', 'requireMarketPosition', 'maxPositions']);

/** The schema of one order field, built if it was not yet (tests compare it with OPTIONAL_ORDER_FIELDS). */
export function orderFieldSchema(field: keyof Order): z.ZodType {
  return ORDER_FIELD_TABLE[field]();
}

export function toIssues(error: z.ZodError): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      // The key is the client's own text: shown short and printable, like any rejected value.
      for (const key of issue.keys) issues.push({ field: printable(clip(key, 40)), message: 'is not a known field' });
    } else {
      issues.push({ field: issue.path.map(String).join('.'), message: issue.message });
    }
  }
  return issues;
}

/** The price rule of one field for an order type: required where the type uses it, refused elsewhere. */
function priceIssue(field: 'limitPrice' | 'stopPrice', type: OrderType, value: number | undefined): string | undefined {
  const needed = (field === 'limitPrice' ? NEEDS_LIMIT : NEEDS_STOP).has(type);
  if (needed && value === undefined) return `is required for ${type} orders`;
  if (!needed && value !== undefined) return `is not used by ${type} orders; remove it`;
  return undefined;
}

/**
 * The rules across an order's fields: the prices its type needs, and only those. A client is told
 * to remove a price its order type does not use (a slip worth catching); the service ignores one
 * (service-reference.md §3.1: "ignored, reported 0.0, for other types"), so for `server` it is
 * dropped from the order instead, which is what a typed client writing every field relies on.
 */
export function priceRules(order: OrderBody, mode: 'client' | 'server' = 'client'): FieldIssue[] {
  const issues: FieldIssue[] = [];
  for (const field of ['limitPrice', 'stopPrice'] as const) {
    const message = priceIssue(field, order.orderType, order[field]);
    if (!message) continue;
    if (mode === 'server' && order[field] !== undefined) delete order[field];
    else issues.push({ field, message });
  }
  return issues;
}

/**
 * The schema's own message for one field's value, or undefined when the value passes. Prompts use
 * it to refuse a typed value with exactly the words the flag would get. With `orderType`, a price
 * is also checked against the type (required for the types that use it).
 */
export function fieldError(field: keyof Order, value: unknown, orderType?: OrderType): string | undefined {
  const result = orderFieldSchema(field).safeParse(value);
  if (!result.success) return result.error.issues[0]!.message;
  if (orderType && (field === 'limitPrice' || field === 'stopPrice')) return priceIssue(field, orderType, result.data as number | undefined);
  return undefined;
}

function notAnObject(input: unknown): ValidationError | undefined {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    return new ValidationError([{ field: '', message: `the body must be a JSON object, got ${show(input)}` }]);
  return undefined;
}

/** Printable ASCII, 1-64 characters, no space at either end: a name every rule of nameField passes. */
const PLAIN_NAME = /^[\x21-\x7e](?:[\x20-\x7e]{0,62}[\x21-\x7e])?$/;

/**
 * The value of a field whose input is well-formed, found without building its schema, or
 * undefined: the schema then checks it and says what is wrong. For the fields every order has (a
 * MARKET place builds no schema at all). Each answers only where the schema answers the same
 * value (test/service/well-formed.test.ts holds them to it on generated input).
 */
export const WELL_FORMED: Record<string, ((raw: unknown) => unknown) | undefined> = {
  account: (raw) => (typeof raw === 'string' && PLAIN_NAME.test(raw) ? raw : undefined),
  instrument: (raw) => {
    if (typeof raw !== 'string') return undefined;
    const resolved = resolveInstrument(raw, new Date());
    return resolved.ok ? resolved.instrument : undefined;
  },
  action: (raw) => upperOf(ACTIONS, raw),
  orderType: (raw) => upperOf(ORDER_TYPES, raw),
  timeInForce: (raw) => upperOf(TIMES_IN_FORCE, raw),
  quantity: (raw) => (typeof raw === 'number' && Number.isInteger(raw) && raw >= 1 && raw <= MAX_QUANTITY ? raw : undefined),
  // A client's order id: what the guard adds to every order it sends to a service (32 hex digits).
  orderId: (raw) => (typeof raw === 'string' && CLIENT_ORDER_ID.test(raw) && !ROUTE_WORDS.has(raw) ? raw : undefined),
};

/**
 * WELL_FORMED's reading for `schema` when it is one of those order fields' own schemas (the
 * operation rows share them), else undefined: another schema of the same name (GetQuote's
 * `instrument` is a list) reads its input its own way.
 */
export function wellFormedReader(schema: unknown): ((raw: unknown) => unknown) | undefined {
  const name = READ_WELL_FORMED.get(schema as object);
  return name === undefined ? undefined : WELL_FORMED[name];
}

/**
 * What `z.strictObject(fields).safeParse(input)` answers, with each field's schema built only when
 * there is something to check: an optional field that is absent is skipped unbuilt. The same
 * issues in the same order (the fields in table order, then the unknown keys) and the same value
 * (fields in table order; a field given as undefined is kept as undefined), as zod's object does.
 */
function parseFields(fields: Record<string, () => z.ZodType>, input: Record<string, unknown>): { data: Record<string, unknown>; issues: FieldIssue[] } {
  const data: Record<string, unknown> = {};
  const issues: FieldIssue[] = [];
  for (const key of Object.keys(fields)) {
    const present = key in input;
    if (!present && OPTIONAL_ORDER_FIELDS.has(key)) continue;
    const quick = WELL_FORMED[key]?.(input[key]);
    if (quick !== undefined) {
      data[key] = quick;
      continue;
    }
    const result = fields[key]!().safeParse(input[key]);
    if (!result.success) {
      for (const issue of result.error.issues) issues.push({ field: [key, ...issue.path].map(String).join('.'), message: issue.message });
    } else if (result.data !== undefined || present) {
      data[key] = result.data;
    }
  }
  for (const key in input) {
    // The key is the client's own text: shown short and printable, like any rejected value.
    if (!Object.hasOwn(fields, key)) issues.push({ field: printable(clip(key, 40)), message: 'is not a known field' });
  }
  return { data, issues };
}

function parseWith<T extends OrderBody>(fields: Record<string, () => z.ZodType>, input: unknown): T {
  const wrong = notAnObject(input);
  if (wrong) throw wrong;
  const { data, issues } = parseFields(fields, input as Record<string, unknown>);
  if (issues.length > 0) throw new ValidationError(issues);
  const priceIssues = priceRules(data as T);
  if (priceIssues.length > 0) throw new ValidationError(priceIssues);
  return data as T;
}

/** Validates and normalizes an order (account + body). Throws ValidationError naming every bad field. */
export function parseOrder(input: unknown): Order {
  return parseWith<Order>(ORDER_FIELD_TABLE, input);
}

/** Validates and normalizes a request body (no account: it comes from the path). */
export function parseOrderBody(input: unknown): OrderBody {
  return parseWith<OrderBody>(ORDER_BODY_FIELDS, input);
}

/** One value checked by one field rule; a ValidationError names the field. */
function parseField<T>(schema: z.ZodType<T>, field: string, input: unknown): T {
  const result = schema.safeParse(input);
  if (!result.success) throw new ValidationError([{ field, message: result.error.issues[0]!.message }]);
  return result.data;
}

/** Validates an account name on its own (path parameters, `accounts add`). */
export function parseAccountName(input: unknown): string {
  return parseField(accountNameField(), 'account', input);
}

/** Validates and normalizes an instrument on its own (`price set`, `close`). */
export function parseInstrument(input: unknown): string {
  return parseField(instrumentField(), 'instrument', input);
}

/** Validates a price on its own (`price set`). */
export function parsePrice(input: unknown): number {
  return parseField(priceField(), 'price', input);
}

/** Validates an order id given by a client (`cancel`). Unknown ids are the engine's to reject. */
export function parseOrderId(input: unknown): string {
  return parseField(orderIdField(), 'orderId', input);
}

/** Sanity bound for ATM distances, in ticks. */
export const MAX_TICKS = 100_000;

/** An ATM strategy template: a stop-loss and a profit-target, in ticks from the entry fill. */
export const atmTemplateSchema = built('atmTemplate', () => {
  const ticks = z
    .number({ error: (iss) => required(iss.input, `must be a whole number of ticks, got ${show(iss.input)}`) })
    .int({ error: (iss) => `must be a whole number of ticks, got ${show(iss.input)}` })
    .min(1, { error: (iss) => `must be at least 1 tick, got ${show(iss.input)}` })
    .max(MAX_TICKS, { error: (iss) => `must be at most ${MAX_TICKS} ticks, got ${show(iss.input)}` });
  return z.strictObject({
    name: nameField('strategy name'),
    stopLossTicks: ticks,
    profitTargetTicks: ticks,
    tickSize: priceField(),
  });
});
export type AtmTemplate = z.output<ReturnType<typeof atmTemplateSchema>>;

/** Validates an ATM template. Throws ValidationError naming every bad field. */
export function parseAtmTemplate(input: unknown): AtmTemplate {
  const wrong = notAnObject(input);
  if (wrong) throw wrong;
  const result = atmTemplateSchema().safeParse(input);
  if (!result.success) throw new ValidationError(toIssues(result.error));
  return result.data;
}

/** Splits an order into the service's body and its account. */
export function splitOrder(order: Order): { account: string; body: OrderBody } {
  const { account, ...body } = order;
  return { account, body };
}

/** `BUY 1 ES 09-25 LIMIT @ 4500 DAY` — one line a person can check. */
export function describeOrder(order: OrderBody): string {
  const parts: string[] = [order.action, String(order.quantity), order.instrument, order.orderType];
  if (order.stopPrice !== undefined) parts.push(`stop ${order.stopPrice}`);
  if (order.limitPrice !== undefined) parts.push(`limit ${order.limitPrice}`);
  parts.push(order.timeInForce);
  if (order.ocoId !== undefined) parts.push(`OCO ${order.ocoId}`);
  if (order.strategy !== undefined) parts.push(`ATM ${order.strategy}`);
  if (order.orderId !== undefined) parts.push(`id ${order.orderId}`);
  const guards = order as Partial<Order>;
  if (guards.requireMarketPosition !== undefined) parts.push(`(only if ${guards.requireMarketPosition.join(' or ')})`);
  if (guards.maxPositions !== undefined) parts.push(`(at most ${guards.maxPositions} open position${guards.maxPositions === 1 ? '' : 's'})`);
  return parts.join(' ');
}
