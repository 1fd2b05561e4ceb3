/**
 * parseArgs answers args whose every field is well-formed without running zod (quickArgs, issue
 * 34: zod's parse was ~8 % of `trade serve`'s CPU on a placement). Whatever it answers must be
 * exactly what the operation's zod object answers — the same value, with its keys in the same
 * order — for every operation of the table, in both modes; anything else it leaves to zod.
 */
import fc from 'fast-check';
import * as z from 'zod';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/common/errors.js';
import { type ArgsMode, OPERATION_NAMES, OPERATIONS, parseArgs, quickArgs } from '../../src/service/operations.js';
import { wellFormedReader } from '../../src/service/order.js';
import { FIELDS, nearWellFormed, USUAL } from '../helpers/order-fields.js';
import { hostileKey, hostileValue } from '../helpers/fuzz.js';

const params = { seed: 20261128, numRuns: 400 };
const MODES: ArgsMode[] = ['client', 'server'];

/** The operation's own args schema, as parseArgs builds it. */
function zodOf(name: (typeof OPERATION_NAMES)[number], mode: ArgsMode): z.ZodObject {
  const fields = OPERATIONS[name].fields() as Record<string, z.ZodType>;
  return mode === 'client' ? z.strictObject(fields) : z.object(fields);
}

const isWellFormedField = (key: string): key is (typeof FIELDS)[number] => (FIELDS as readonly string[]).includes(key);

/** An object of the operation's keys: each absent, usual, near a usual value or anything; now and then a key it does not know. */
function argsFor(keys: string[]): fc.Arbitrary<Record<string, unknown>> {
  const valueOf = (key: string): fc.Arbitrary<unknown> =>
    isWellFormedField(key)
      ? fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...USUAL[key]) }, { weight: 2, arbitrary: nearWellFormed[key] }, { weight: 1, arbitrary: hostileValue })
      : hostileValue;
  // The fields it reads mostly present, the others mostly absent: args it could answer are common.
  const fields = keys.map((key) => {
    const [present, absent] = isWellFormedField(key) ? [12, 1] : [1, 10];
    return fc.oneof({ weight: absent, arbitrary: fc.constant(undefined) }, { weight: present, arbitrary: valueOf(key).map((value) => [key, value] as const) });
  });
  return fc.tuple(fc.tuple(...fields), fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.tuple(hostileKey, hostileValue) })).map(([entries, extra]) => {
    const input: Record<string, unknown> = {};
    for (const entry of [...entries, extra]) {
      if (entry) Object.defineProperty(input, entry[0], { value: entry[1], enumerable: true, writable: true, configurable: true });
    }
    return input;
  });
}

describe('quickArgs: zod\'s answer for well-formed args, or none', () => {
  for (const name of OPERATION_NAMES) {
    for (const mode of MODES) {
      it(`${name} (${mode})`, () => {
        const schema = zodOf(name, mode);
        const keys = Object.keys(schema.shape);
        let answered = 0;
        fc.assert(
          fc.property(argsFor(keys), (input) => {
            const quick = quickArgs(schema.shape, input, mode);
            if (quick === undefined) return;
            answered++;
            const result = schema.safeParse(input);
            expect(result.success, JSON.stringify(input)).toBe(true);
            expect(quick).toStrictEqual(result.data);
            expect(Object.keys(quick)).toStrictEqual(Object.keys(result.data as object));
          }),
          params,
        );
        // Not vacuous: where every field it must have is one it reads (the order's own schema), it answers often.
        const required = keys.filter((key) => !(schema.shape[key]!._zod.optin === 'optional' && schema.shape[key]!._zod.optout === 'optional'));
        const read = (key: string) => wellFormedReader(schema.shape[key]) !== undefined;
        if (keys.some(read) && required.every(read)) expect(answered).toBeGreaterThan(params.numRuns / 50);
      });
    }
  }

  it('answers for a usual placement, over either transport, and for a read naming its account', () => {
    const order = { account: 'Sim101', instrument: 'ES 09-25', action: 'buy', quantity: 1, orderType: 'market', timeInForce: 'day' };
    for (const mode of MODES) {
      const schema = zodOf('PlaceOrder', mode);
      expect(quickArgs(schema.shape, order, mode)).toStrictEqual(schema.parse(order));
      expect(quickArgs(zodOf('GetPositions', mode).shape, { account: 'Sim101' }, mode)).toStrictEqual({ account: 'Sim101' });
    }
    // A field it does not read (a price), a key the row does not know (client), a missing one: zod's.
    expect(quickArgs(zodOf('PlaceOrder', 'server').shape, { ...order, orderType: 'LIMIT', limitPrice: 5000 }, 'server')).toBeUndefined();
    expect(quickArgs(zodOf('PlaceOrder', 'client').shape, { ...order, note: 'x' }, 'client')).toBeUndefined();
    expect(quickArgs(zodOf('PlaceOrder', 'server').shape, { ...order, note: 'x' }, 'server')).toStrictEqual(zodOf('PlaceOrder', 'server').parse({ ...order, note: 'x' }));
    const { quantity: _, ...noQuantity } = order;
    expect(quickArgs(zodOf('PlaceOrder', 'server').shape, noQuantity, 'server')).toBeUndefined();
  });

  it('leaves the row\'s own check to run after it: a LIMIT order without its price is refused', () => {
    const limit = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'LIMIT', timeInForce: 'DAY' };
    expect(quickArgs(zodOf('PlaceOrder', 'server').shape, limit, 'server')).toBeDefined();
    expect(() => parseArgs('PlaceOrder', limit, 'server')).toThrow(ValidationError);
    expect(() => parseArgs('PlaceOrder', limit, 'server')).toThrow(/limitPrice/);
  });
});
