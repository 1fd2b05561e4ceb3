/**
 * The order's fields are built on first use, and parseOrder checks an order field by field so that
 * an absent optional field is never built (issue 34). That must change nothing a client sees: for
 * every input, parseOrder and parseOrderBody answer exactly what zod's own strict object of the same
 * fields answers (the same value, or the same issues in the same order), and the fields skipped
 * when absent are exactly those whose schema accepts nothing.
 */
import fc from 'fast-check';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/common/errors.js';
import {
  OPTIONAL_ORDER_FIELDS,
  ORDER_FIELDS,
  orderFieldSchema,
  parseOrder,
  parseOrderBody,
  priceRules,
  toIssues,
  type OrderBody,
} from '../../src/service/order.js';
import { hostileKey, hostileValue, orderLike } from '../helpers/fuzz.js';

const params = { seed: 20261127, numRuns: 1500 };

/** What the strict zod object of `fields` answers for `input`, in parseOrder's terms. */
function byZod(fields: readonly string[], input: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  const schema = z.strictObject(Object.fromEntries(fields.map((f) => [f, orderFieldSchema(f as (typeof ORDER_FIELDS)[number])])));
  if (input === null || typeof input !== 'object' || Array.isArray(input)) return { ok: false, message: 'not an object' };
  const result = schema.safeParse(input);
  if (!result.success) return { ok: false, message: new ValidationError(toIssues(result.error)).message };
  const issues = priceRules(result.data as OrderBody);
  if (issues.length > 0) return { ok: false, message: new ValidationError(issues).message };
  return { ok: true, value: result.data };
}

function byParser(parse: (input: unknown) => unknown, input: unknown): { ok: true; value: unknown } | { ok: false; message: string } {
  try {
    return { ok: true, value: parse(input) };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    if (error.message.includes('the body must be a JSON object')) return { ok: false, message: 'not an object' };
    return { ok: false, message: error.message };
  }
}

const BODY_FIELDS = ORDER_FIELDS.filter((f) => f !== 'account' && f !== 'requireMarketPosition' && f !== 'maxPositions');

/** An order-like object, or one with a field of any value or an unknown key added. */
const input = (withAccount: boolean) =>
  fc.oneof(
    orderLike({ withAccount }),
    fc
      .tuple(orderLike({ withAccount }), fc.constantFrom(...(ORDER_FIELDS as string[])), hostileValue)
      .map(([order, key, value]) => Object.assign(Object.create(null) as object, order, { [key]: value })),
    fc.tuple(orderLike({ withAccount }), hostileKey, hostileValue).map(([order, key, value]) => ({ ...order, [key]: value })),
    hostileValue,
  );

describe('the order checked field by field', () => {
  it('skips, when absent, exactly the fields whose schema accepts no value', () => {
    const optional = ORDER_FIELDS.filter((f) => orderFieldSchema(f).safeParse(undefined).success);
    expect(new Set(optional)).toEqual(OPTIONAL_ORDER_FIELDS);
  });

  it("parseOrder answers what zod's strict object of every field answers: the same value, or the same words", () => {
    fc.assert(
      fc.property(input(true), (order) => {
        expect(byParser(parseOrder, order)).toStrictEqual(byZod(ORDER_FIELDS, order));
      }),
      params,
    );
  });

  it("parseOrderBody answers what zod's strict object of the body's fields answers", () => {
    fc.assert(
      fc.property(input(false), (body) => {
        expect(byParser(parseOrderBody, body)).toStrictEqual(byZod(BODY_FIELDS, body));
      }),
      params,
    );
  });

  it('keeps the fields in the order a person reads them, whatever order they came in', () => {
    const order = parseOrder({ timeInForce: 'day', limitPrice: 4500, orderType: 'limit', quantity: 2, action: 'buy', instrument: 'ES 09-25', account: 'Sim101' });
    expect(Object.keys(order)).toEqual(['account', 'instrument', 'action', 'quantity', 'orderType', 'timeInForce', 'limitPrice']);
  });
});
