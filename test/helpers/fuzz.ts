import assert from 'node:assert/strict';
/**
 * Hostile inputs for the fuzz tests of the schema and of `trade serve`: values of every JSON type
 * and a few that JSON does not have, numbers at the edges, long and odd unicode strings, keys that
 * reach for a prototype, deep nesting, and orders that are almost valid (one field broken at a
 * time, so the schema's rules are reached rather than refused at the first type check).
 */
import fc from 'fast-check';
import { ACTIONS, ORDER_FIELDS, ORDER_TYPES, TIMES_IN_FORCE } from '../../src/service/order.js';

/** Keys that have meaning to JavaScript objects, and the order's own field names. */
export const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];

/** What a pollution attempt sets; after any input, `({}).polluted` must still be undefined. */
export const POLLUTION = { polluted: 'yes', isAdmin: true };

/**
 * Characters outside ASCII that upper-case into ASCII letters (ſ → S, ı → I, ﬆ → ST…), computed
 * from the running engine's Unicode tables rather than typed in, so a new Node cannot add one
 * that the fuzzer never tries.
 */
export const ASCII_UPPERCASING: string[] = (() => {
  const found: string[] = [];
  for (let code = 0x80; code <= 0x10ffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const char = String.fromCodePoint(code);
    if (/^[A-Z]+$/.test(char.toUpperCase())) found.push(char);
  }
  return found;
})();

/** A few strings that have broken parsers before: empty, spaces, escapes, look-alikes, separators. */
const TRICKY_STRINGS = [
  '', ' ', '\t', '\n', '\u0000', '\u007f', '\u0085', '\u009b', '\u00a0', '\u200b', '\u200d', '\u2028', '\u202e', '\ufeff',
  '\ud800', '\udfff', '\ud83d\ude00', 'null', 'undefined', 'NaN', 'Infinity', '-0', '1e999', '0x10', '[]', '{}',
  '__proto__', 'constructor', '%00', '%', '../..', '\\', '"', "'", '<script>', 'Ｂｕｙ', 'BUY ', ' buy', 'ES 09-25 ',
  'ES 13-25', 'ES 00-25', 'es 9-25', 'ES  09-25', 'ES\t09-25', 'ESZ5', 'ES 09-2025',
];

const longString = fc
  .tuple(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 4 }), fc.integer({ min: 60, max: 5000 }))
  .map(([s, n]) => s.repeat(n));

export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) }, // lone surrogates included
  { weight: 2, arbitrary: fc.constantFrom(...TRICKY_STRINGS) },
  { weight: 1, arbitrary: longString },
);

export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.double(), // NaN, ±Infinity and -0 included
  fc.integer({ min: -10, max: 1_000_010 }),
  fc.constantFrom(
    Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, -0, 0, 1, -1, 0.5, 1e-320, 1e21, 1e308,
    Number.MAX_VALUE, Number.MIN_VALUE, Number.EPSILON, Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER + 2,
    2 ** 31, 2 ** 63, 1_000_000, 1_000_001, 1_000_000_000, 1_000_000_000.0000001, 0.1 + 0.2,
  ),
);

/** An object whose keys are own data properties even when one is `__proto__` (as JSON.parse makes them). */
function objectOf(entries: Array<[string, unknown]>, nullPrototype = false): Record<string, unknown> {
  const object: Record<string, unknown> = nullPrototype ? Object.create(null) : {};
  for (const [key, value] of entries) {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  }
  return object;
}

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...PROTO_KEYS),
  fc.constantFrom(...(ORDER_FIELDS as string[])),
  hostileString,
);

/** A pollution attempt in each of the shapes that have worked against merge functions. */
export const pollutionAttempt: fc.Arbitrary<Record<string, unknown>> = fc.constantFrom(
  objectOf([['__proto__', { ...POLLUTION }]]),
  objectOf([['constructor', { prototype: { ...POLLUTION } }]]),
  objectOf([['prototype', { ...POLLUTION }]]),
  objectOf([['__proto__', objectOf([['__proto__', { ...POLLUTION }]])]]),
);

/** Nested `depth` levels deep in arrays or objects, with a leaf at the bottom. */
export function nested(depth: number, leaf: unknown, inArrays: boolean): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = inArrays ? [value] : { a: value };
  return value;
}

const deepValue = fc
  .tuple(fc.integer({ min: 20, max: 3000 }), fc.boolean())
  .map(([depth, inArrays]) => nested(depth, 'ES 09-25', inArrays));

/** Any JSON value (and the JSON-less values the CLI's own code could pass), of any shape. */
export const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: hostileString },
    { weight: 4, arbitrary: hostileNumber },
    { weight: 1, arbitrary: fc.constantFrom(true, false, null, undefined) },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.array(fc.tuple(hostileKey, tie('value')), { maxLength: 4 }), fc.boolean())
        .map(([entries, nullPrototype]) => objectOf(entries, nullPrototype)),
    },
    { weight: 1, arbitrary: pollutionAttempt },
    { weight: 1, arbitrary: deepValue },
  ),
})).value;

/** Values a JavaScript caller could pass that JSON never carries. */
export const nonJsonValue: fc.Arbitrary<unknown> = fc.anything({
  withBigInt: true, withBoxedValues: true, withDate: true, withMap: true, withSet: true, withNullPrototype: true,
  withObjectString: true, withSparseArray: true, withTypedArray: true, stringUnit: 'binary', maxDepth: 3,
});

/** A valid enum value in a random case. */
function enumValue(values: readonly string[]): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...values), fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }))
    .map(([value, lower]) => [...value].map((c, i) => (lower[i]! ? c.toLowerCase() : c)).join(''));
}

/** A value with one letter swapped for a non-ASCII character that toUpperCase() turns into it (ſ for S). */
function lookAlike(value: string): fc.Arbitrary<string> {
  const swaps = ASCII_UPPERCASING.filter((c) => value.toUpperCase().includes(c.toUpperCase()));
  if (swaps.length === 0) return fc.constant(value);
  return fc.constantFrom(...swaps).map((swap) => value.toUpperCase().replace(swap.toUpperCase(), swap));
}

/**
 * A price valid for every instrument below: whole numbers and quarters are on each one's tick grid
 * (ES 0.25, CL 0.01, 6E 0.00005, ZN 1/64), which the engine checks (§3.1). Off-grid prices are
 * the schema fuzz's hostile numbers.
 */
const validPrice = fc.oneof(fc.integer({ min: 1, max: 10_000 }), fc.integer({ min: 1, max: 4_000_000_000 }).map((quarters) => quarters / 4));
const validName = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('Sim101', 'Sim102', 'sim101', 'g1', 'Scalp') },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }) },
);
const validInstrument = fc
  .tuple(fc.constantFrom('ES', 'NQ', 'cl', 'Mes', '6E', 'ZN'), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 99 }))
  .map(([s, m, y]) => `${s} ${String(m).padStart(2, '0')}-${String(y).padStart(2, '0')}`);

/** A valid order (with the prices its type needs and no others), enums in random case. */
export function validOrder({ withAccount }: OrderLikeOptions): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .record({
      account: validName,
      instrument: validInstrument,
      action: enumValue(ACTIONS),
      quantity: fc.integer({ min: 1, max: 100_000 }),
      orderType: enumValue(ORDER_TYPES),
      timeInForce: enumValue(TIMES_IN_FORCE),
      limitPrice: validPrice,
      stopPrice: validPrice,
      ocoId: fc.option(validName, { nil: undefined }),
      strategy: fc.option(validName, { nil: undefined }),
    })
    .map(({ account, limitPrice, stopPrice, ocoId, strategy, ...order }) => {
      const type = (order.orderType as string).toUpperCase();
      return {
        ...(withAccount ? { account } : {}),
        ...order,
        ...(type === 'LIMIT' || type === 'STOPLIMIT' ? { limitPrice } : {}),
        ...(type === 'STOPMARKET' || type === 'STOPLIMIT' ? { stopPrice } : {}),
        ...(ocoId === undefined ? {} : { ocoId }),
        ...(strategy === undefined ? {} : { strategy }),
      };
    });
}

export interface OrderLikeOptions {
  /** Include `account` (the WebSocket args and the CLI's orders have it; an HTTP body does not). */
  withAccount: boolean;
}

type Mutation = (order: Array<[string, unknown]>) => fc.Arbitrary<Array<[string, unknown]>>;

const pick = (entries: Array<[string, unknown]>) => fc.nat(Math.max(0, entries.length - 1));

const MUTATIONS: Mutation[] = [
  // A field dropped.
  (entries) => pick(entries).map((i) => entries.filter((_, j) => j !== i)),
  // A field's value replaced by anything at all.
  (entries) => fc.tuple(pick(entries), hostileValue).map(([i, v]) => entries.map((e, j): [string, unknown] => (j === i ? [e[0], v] : e))),
  // An enum or the instrument with a look-alike letter.
  (entries) => {
    const spoofable = entries.filter(([k, v]) => typeof v === 'string' && ['instrument', 'action', 'orderType', 'timeInForce'].includes(k));
    if (spoofable.length === 0) return fc.constant(entries);
    return fc
      .constantFrom(...spoofable)
      .chain(([key, value]) => lookAlike(value as string).map((v) => entries.map((e): [string, unknown] => (e[0] === key ? [key, v] : e))));
  },
  // A price the type does not use, or a price at the edges.
  (entries) =>
    fc.tuple(fc.constantFrom('limitPrice', 'stopPrice'), fc.oneof(validPrice, hostileNumber)).map(([key, v]) => [
      ...entries.filter(([k]) => k !== key),
      [key, v] as [string, unknown],
    ]),
  // An extra key, sometimes one that reaches for a prototype.
  (entries) => fc.tuple(hostileKey, hostileValue).map((extra) => [...entries, extra]),
  (entries) => pollutionAttempt.map((p) => [...entries, ...Object.keys(p).map((k): [string, unknown] => [k, p[k]])]),
];

/**
 * An order that is valid or nearly so: a valid one with up to three mutations (a field dropped
 * or replaced by a hostile value, a look-alike letter, a stray price, an extra or `__proto__` key),
 * so that every rule is reached and a good share of cases is accepted.
 */
export function orderLike(options: OrderLikeOptions): fc.Arbitrary<Record<string, unknown>> {
  return fc
    .tuple(validOrder(options), fc.array(fc.nat(MUTATIONS.length - 1), { maxLength: 3 }))
    .chain(([order, mutations]) => {
      let entries: fc.Arbitrary<Array<[string, unknown]>> = fc.constant(Object.entries(order));
      for (const m of mutations) entries = entries.chain((e) => MUTATIONS[m]!(e));
      return entries.map((e) => objectOf(e));
    });
}

/** JSON text of a value, keeping own `__proto__` keys (JSON.stringify does; this is for the record). */
export function toJson(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined; // BigInt, cycles: not JSON
  }
}

/** Throws if anything reached Object.prototype or Array.prototype. */
export function assertNoPollution(): void {
  const probe = {} as Record<string, unknown>;
  for (const key of Object.keys(POLLUTION)) {
    if (probe[key] !== undefined || ([] as unknown as Record<string, unknown>)[key] !== undefined) {
      throw new Error(`prototype polluted: ({}).${key} is ${String(probe[key])}`);
    }
  }
  const own = Object.getOwnPropertyNames(Object.prototype).sort().join(',');
  if (own !== OBJECT_PROTOTYPE_KEYS) throw new Error(`Object.prototype changed: ${own}`);
}

const OBJECT_PROTOTYPE_KEYS = Object.getOwnPropertyNames(Object.prototype).sort().join(',');

const UNPRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/**
 * A refusal's body, in one of the service's error forms (service-reference.md §6.1): `{error}`,
 * `{success: false, error, detail}`, or the 404's `{..., did_you_mean}`; every text one printable line.
 */
export function assertErrorBody(parsed: Record<string, unknown>, context: string): void {
  const keys = Object.keys(parsed);
  const forms = [['error'], ['success', 'error', 'detail'], ['success', 'error', 'detail', 'did_you_mean']];
  assert.ok(forms.some((form) => JSON.stringify(form) === JSON.stringify(keys)), `${context}: a body of the keys ${keys.join(', ')}`);
  assert.equal(typeof parsed.error, 'string');
  if (keys.length > 1) {
    assert.equal(parsed.success, false);
    assert.equal(typeof parsed.detail, 'string');
  }
  for (const text of [parsed.error, parsed.detail, ...((parsed.did_you_mean as unknown[] | undefined) ?? [])]) {
    if (text !== undefined) assert.doesNotMatch(String(text), UNPRINTABLE, `${context}: a message that is not one printable line`);
  }
}
