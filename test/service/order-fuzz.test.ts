/**
 * Fuzzing the order schema: random JSON values, wrong types, NaN/Infinity/huge numbers, long and
 * unicode strings, `__proto__`/`constructor` keys and deep nesting go into every parser. Whatever
 * comes in, a parser either returns a value that keeps every rule or throws a ValidationError,
 * and nothing reaches Object.prototype. Seeded, so a failure replays with the same seed.
 */
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/common/errors.js';
import {
  ACTIONS,
  INSTRUMENT_PATTERN,
  MAX_PRICE,
  MAX_QUANTITY,
  MAX_TICKS,
  NEEDS_LIMIT,
  NEEDS_STOP,
  ORDER_FIELDS,
  ORDER_TYPES,
  parseAccountName,
  parseAtmTemplate,
  parseInstrument,
  parseOrder,
  parseOrderBody,
  parseOrderId,
  parsePrice,
  TIMES_IN_FORCE,
  type OrderType,
} from '../../src/service/order.js';
import { OPERATION_NAMES, OPERATIONS, parseArgs } from '../../src/service/operations.js';
import {
  ASCII_UPPERCASING,
  assertNoPollution,
  hostileKey,
  hostileNumber,
  hostileString,
  hostileValue,
  nested,
  nonJsonValue,
  orderLike,
  pollutionAttempt,
} from '../helpers/fuzz.js';

const SEED = 20250908;
/** Cases per property: 2000 in the suite; `npm run mutate` runs fewer (TRADE_FUZZ_RUNS), once per mutant. */
const RUNS = Number(process.env.TRADE_FUZZ_RUNS ?? 2000);
const params = (numRuns = RUNS) => ({ seed: SEED, numRuns });

/** Rejections are short enough to read on one screen, whatever the input held. */
const MAX_MESSAGE = 2000;

afterEach(() => assertNoPollution());

/** Runs a parser; a throw must be a ValidationError with the service's message form. */
function attempt<T>(parse: () => T): { ok: true; value: T } | { ok: false } {
  try {
    return { ok: true, value: parse() };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw new Error(`threw ${String(error)} instead of a ValidationError`, { cause: error });
    assert.match(error.message, /^Invalid request: /);
    assert.ok(error.issues.length > 0, 'a rejection names at least one issue');
    assert.ok(error.message.length <= MAX_MESSAGE, `a ${error.message.length}-character message`);
    assert.doesNotMatch(error.message, UNSHOWABLE, 'the message is one printable line');
    return { ok: false };
  }
}

// Plain node:assert below rather than expect(): these run tens of thousands of times per file.
const UNSHOWABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const asciiUpper = (text: string) => text.replace(/[a-z]+/g, (m) => m.toUpperCase());

/** A name the store, a URL path and a terminal all carry unchanged. */
function assertGoodName(name: unknown): void {
  assert.equal(typeof name, 'string');
  const text = name as string;
  assert.ok(text.length >= 1 && Array.from(text).length <= 64, `${text.length} characters`); // code points, as a person counts
  assert.equal(text.trim(), text);
  assert.doesNotMatch(text, UNSHOWABLE);
  assert.equal(Buffer.from(text, 'utf8').toString('utf8'), text, 'survives UTF-8 (the store)');
  assert.equal(decodeURIComponent(encodeURIComponent(text)), text, 'survives a URL path');
}

function assertPrice(value: unknown): void {
  assert.equal(typeof value, 'number');
  assert.ok(Number.isFinite(value) && (value as number) > 0 && (value as number) <= MAX_PRICE, `price ${String(value)}`);
}

/** Every rule an accepted order keeps, checked against the input it came from. */
function assertGoodOrder(out: Record<string, unknown>, input: Record<string, unknown>, withAccount: boolean): void {
  assert.equal(Object.getPrototypeOf(out), Object.prototype);
  const allowed = (ORDER_FIELDS as string[]).filter((f) => withAccount || f !== 'account');
  for (const key of Object.keys(out)) assert.ok(allowed.includes(key), `unexpected key ${key}`);
  if (withAccount) assertGoodName(out.account);
  assert.match(out.instrument as string, INSTRUMENT_PATTERN);
  assert.ok((ACTIONS as readonly unknown[]).includes(out.action));
  assert.ok((ORDER_TYPES as readonly unknown[]).includes(out.orderType));
  assert.ok((TIMES_IN_FORCE as readonly unknown[]).includes(out.timeInForce));
  // Case-insensitive means ASCII case: a look-alike letter (ſ, ı, ß, ﬆ) is not the letter it upper-cases to.
  // Enum values also ignore spaces, `_` and `-` (§1.5); a dated instrument is kept as typed.
  for (const field of ['action', 'orderType', 'timeInForce']) assert.equal(out[field], asciiUpper(input[field] as string).replace(/[ \t_-]/g, ''));
  const typed = asciiUpper((input.instrument as string).trim().replace(/\s+/g, ' '));
  if (/^\S+ \d\d-\d\d$/.test(typed)) assert.equal(out.instrument, typed);
  const quantity = out.quantity as number;
  assert.ok(Number.isSafeInteger(quantity) && quantity >= 1 && quantity <= MAX_QUANTITY, `quantity ${quantity}`);
  const type = out.orderType as OrderType;
  assert.equal(out.limitPrice !== undefined, NEEDS_LIMIT.has(type), `limitPrice with ${type}`);
  assert.equal(out.stopPrice !== undefined, NEEDS_STOP.has(type), `stopPrice with ${type}`);
  if (out.limitPrice !== undefined) assertPrice(out.limitPrice);
  if (out.stopPrice !== undefined) assertPrice(out.stopPrice);
  if (out.ocoId !== undefined) assertGoodName(out.ocoId);
  if (out.strategy !== undefined) assertGoodName(out.strategy);
}

/** Near-valid orders most of the time (to reach every rule), any value at all the rest. */
const orderInput = (withAccount: boolean) =>
  fc.oneof(
    { weight: 6, arbitrary: orderLike({ withAccount }) },
    { weight: 2, arbitrary: hostileValue },
    { weight: 1, arbitrary: nonJsonValue },
  );

describe.each([
  { name: 'parseOrder', parse: parseOrder, withAccount: true },
  { name: 'parseOrderBody', parse: parseOrderBody, withAccount: false },
])('$name, fuzzed', ({ parse, withAccount }) => {
  it(`accepts only orders that keep every rule, and re-parsing one changes nothing (${RUNS} cases)`, () => {
    let accepted = 0;
    fc.assert(
      fc.property(orderInput(withAccount), (input) => {
        const result = attempt(() => parse(input));
        if (!result.ok) return;
        accepted++;
        const out = result.value as Record<string, unknown>;
        assertGoodOrder(out, input as Record<string, unknown>, withAccount);
        assert.deepEqual(parse(out), out);
        assert.deepEqual(parse(JSON.parse(JSON.stringify(out))), out);
      }),
      params(),
    );
    // The generator is only useful if it reaches acceptance as well as each rejection.
    expect(accepted).toBeGreaterThan(RUNS / 10);
  });

  it('refuses pollution attempts in any field or as extra keys, and Object.prototype stays clean', () => {
    fc.assert(
      fc.property(orderLike({ withAccount }), hostileKey, pollutionAttempt, (order, key, pollution) => {
        const input = { ...order };
        Object.defineProperty(input, key, { value: pollution, enumerable: true, writable: true, configurable: true });
        const result = attempt(() => parse(input));
        // Only a value that is itself a valid field value could pass; a pollution object never is.
        assert.equal(result.ok, false);
        assertNoPollution();
      }),
      params(500),
    );
  });
});

describe('the single-field parsers, fuzzed', () => {
  it(`parseAccountName and parseOrderId accept only names a store, a URL and a terminal carry unchanged (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(fc.oneof(hostileString, hostileValue), (input) => {
        for (const parse of [parseAccountName, parseOrderId]) {
          const result = attempt(() => parse(input));
          if (result.ok) {
            assert.equal(result.value, input);
            assertGoodName(result.value);
          }
        }
      }),
      params(),
    );
  });

  it(`parseInstrument always answers <SYMBOL> <MM-YY> in ASCII, and a dated form as typed, upper-cased (${RUNS} cases)`, () => {
    const near = fc
      .tuple(fc.string({ unit: 'grapheme-ascii', maxLength: 4 }), fc.constantFrom(...ASCII_UPPERCASING, 'e', 's', ' '), fc.nat(99))
      .map(([prefix, odd, month]) => `${prefix}${odd}s ${String(month).padStart(2, '0')}-25`);
    fc.assert(
      fc.property(fc.oneof(near, hostileString, hostileValue), (input) => {
        const result = attempt(() => parseInstrument(input));
        if (result.ok) {
          assert.match(result.value, INSTRUMENT_PATTERN);
          const typed = asciiUpper((input as string).trim().replace(/\s+/g, ' '));
          if (/^\S+ \d\d-\d\d$/.test(typed)) assert.equal(result.value, typed);
          assert.equal(parseInstrument(result.value), result.value);
        }
      }),
      params(),
    );
  });

  it(`parsePrice accepts only finite positive numbers up to ${MAX_PRICE} (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(fc.oneof(hostileNumber, hostileValue), (input) => {
        const result = attempt(() => parsePrice(input));
        if (result.ok) {
          assert.equal(result.value, input);
          assertPrice(result.value);
        }
      }),
      params(),
    );
  });

  it(`parseAtmTemplate accepts only whole tick distances and a valid tick size (${RUNS} cases)`, () => {
    const template = fc.record(
      {
        name: fc.oneof(fc.constant('Scalp'), hostileString),
        stopLossTicks: fc.oneof(fc.integer({ min: 1, max: MAX_TICKS }), hostileNumber, hostileValue),
        profitTargetTicks: fc.oneof(fc.integer({ min: 1, max: MAX_TICKS }), hostileNumber),
        tickSize: fc.oneof(fc.constant(0.25), hostileNumber),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof({ weight: 4, arbitrary: template }, hostileValue), (input) => {
        const result = attempt(() => parseAtmTemplate(input));
        if (result.ok) {
          assertGoodName(result.value.name);
          for (const ticks of [result.value.stopLossTicks, result.value.profitTargetTicks]) {
            assert.ok(Number.isSafeInteger(ticks) && ticks >= 1 && ticks <= MAX_TICKS, `ticks ${ticks}`);
          }
          assertPrice(result.value.tickSize);
        }
      }),
      params(),
    );
  });
});

describe("every operation's args, fuzzed", () => {
  const FIELDS = ['account', 'instrument', 'orderId', 'activeOnly', 'includeFlat', 'extra', '__proto__'];
  const args = fc
    .array(
      fc.tuple(
        fc.constantFrom(...FIELDS),
        fc.oneof(fc.constantFrom('es 09-25', 'ES1!', 'Sim101', 'true', 'FALSE', '0', true, 'ex-1'), hostileValue),
      ),
      { maxLength: 4 },
    )
    .map((entries) => {
      // Query strings arrive as objects without a prototype (fastify's parser makes them so).
      const object = Object.create(null) as Record<string, unknown>;
      for (const [k, v] of entries) Object.defineProperty(object, k, { value: v, enumerable: true, writable: true, configurable: true });
      return object;
    });

  it(`accepts only the fields each operation knows (a client), or ignores the rest (the server), with valid values (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: args }, hostileValue), fc.constantFrom(...OPERATION_NAMES), fc.constantFrom('client', 'server' as const), (input, name, mode) => {
        const result = attempt(() => parseArgs(name, input, mode as 'client' | 'server'));
        if (!result.ok) return;
        const out = result.value as Record<string, unknown>;
        const known = Object.keys(OPERATIONS[name].fields());
        for (const key of Object.keys(out)) assert.ok(known.includes(key), `unexpected key ${key}`);
        if (mode === 'client') for (const key of Object.keys(input as object)) assert.ok(known.includes(key), `accepted an unknown ${key}`);
        // GetQuote's instrument is a list of them.
        for (const instrument of [out.instrument].flat()) if (instrument !== undefined) assert.match(instrument as string, INSTRUMENT_PATTERN);
        if (out.account !== undefined) assertGoodName(out.account);
        for (const flag of ['activeOnly', 'includeFlat']) if (flag in out) assert.equal(typeof out[flag], 'boolean');
      }),
      params(),
    );
  });
});

describe('deep nesting and sheer size', () => {
  /** `target` behind a proxy that counts each look the parser takes (a read, a key listed, a key tested). */
  function counted<T extends object>(target: T, tally: { looks: number }): T {
    const look = <A extends unknown[], R>(trap: (...args: A) => R) => (...args: A): R => (tally.looks++, trap(...args));
    return new Proxy<T>(target, {
      get: look(Reflect.get),
      has: look(Reflect.has),
      ownKeys: look(Reflect.ownKeys),
      getOwnPropertyDescriptor: look(Reflect.getOwnPropertyDescriptor),
    });
  }

  /** helpers/fuzz.ts's nested(), each level counted: the work a parse does, counted instead of timed. */
  function countedNested(depth: number, leaf: unknown, inArrays: boolean, tally: { looks: number }): unknown {
    let value = leaf;
    for (let i = 0; i < depth; i++) value = counted(inArrays ? [value] : { a: value }, tally);
    return value;
  }

  it('a field nested 100,000 levels deep, or an order with 10,000 unknown keys, is refused with work bounded by its size', () => {
    const order = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };
    for (const inArrays of [true, false]) {
      const tally = { looks: 0 };
      const deep = countedNested(100_000, 'ES 09-25', inArrays, tally);
      for (const field of ['instrument', 'quantity', 'ocoId']) {
        tally.looks = 0;
        const input = counted({ ...order, [field]: deep }, tally);
        expect(attempt(() => parseOrder(input)).ok).toBe(false);
        // The order's own keys, and a few levels of the nested field (to show it in the message):
        // not the 100,000 levels, let alone a walk that grows faster than them.
        expect(tally.looks, `${field} nested in ${inArrays ? 'arrays' : 'objects'}`).toBeLessThan(1_000);
      }
    }
    const wide: Record<string, unknown> = { ...order };
    for (let i = 0; i < 10_000; i++) wide[`k${i}${'x'.repeat(100)}`] = i;
    const tally = { looks: 0 };
    expect(attempt(() => parseOrder(counted(wide, tally))).ok).toBe(false);
    // A few looks a key at most: a check that went over the keys again for each key would take 10^8.
    expect(tally.looks).toBeLessThan(10 * 10_000);
  });
});
