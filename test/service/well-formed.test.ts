/**
 * The fields every order has are read without building their zod schemas when their input is
 * well-formed (src/service/order.ts WELL_FORMED: a MARKET `trade place` builds no schema, issue
 * 34). Each such reading must answer only where its schema answers, and then the same value; for
 * anything else it answers nothing and the schema speaks. And it must answer for what orders are
 * made of, or it saves nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ACTIONS, ORDER_TYPES, orderFieldSchema, TIMES_IN_FORCE, WELL_FORMED } from '../../src/service/order.js';
import { hostileNumber, hostileString, hostileValue } from '../helpers/fuzz.js';

const params = { seed: 20261127, numRuns: 3000 };
const FIELDS = ['account', 'instrument', 'action', 'orderType', 'timeInForce', 'quantity'] as const;

/** Strings near an enum's values: any case, spaces, `_` and `-` inside and around, other letters. */
const nearEnum = (values: readonly string[]) =>
  fc
    .tuple(fc.constantFrom(...values, 'BUYY', 'SEL', 'STOP', 'GTD', 'IOC', 'ſell', 'LİMİT'), fc.array(fc.constantFrom(' ', '_', '-', '\t', '\u00a0', '\u200b', ''), { maxLength: 3 }), fc.nat(), fc.boolean())
    .map(([value, seps, at, lower]) => {
      const text = lower ? value.toLowerCase() : value;
      const i = at % (text.length + 1);
      return `${text.slice(0, i)}${seps.join('')}${text.slice(i)}`;
    });

const instrumentLike = fc
  .tuple(fc.constantFrom('ES', 'NQ', 'cl', 'Mes', '6E', 'ZN', 'ZZZ', 'es1!', 'ESU5', 'ESU25', 'ES SEP25', ''), fc.constantFrom(' ', '  ', '', '-'), fc.integer({ min: -1, max: 13 }), fc.integer({ min: -1, max: 100 }))
  .map(([s, sep, m, y]) => `${s}${sep}${m}-${y}`);

const nameLike = fc.oneof(
  fc.constantFrom('Sim101', ' Sim101', 'Sim101 ', 'Sim 101', 'a'.repeat(64), 'a'.repeat(65), '', 'x\u0000', 'Sim\u200d101', '\ud800'),
  fc.string({ unit: 'grapheme-ascii', minLength: 0, maxLength: 70 }),
  hostileString,
);

const inputs: Record<(typeof FIELDS)[number], fc.Arbitrary<unknown>> = {
  account: fc.oneof(nameLike, hostileValue),
  instrument: fc.oneof(instrumentLike, hostileString, hostileValue),
  action: fc.oneof(nearEnum(ACTIONS), hostileValue),
  orderType: fc.oneof(nearEnum(ORDER_TYPES), hostileValue),
  timeInForce: fc.oneof(nearEnum(TIMES_IN_FORCE), hostileValue),
  quantity: fc.oneof(hostileNumber, fc.integer({ min: -2, max: 100_002 }), fc.constantFrom('1', true, null, 1n)),
};

describe('well-formed order fields, read without their schemas', () => {
  for (const field of FIELDS) {
    it(`${field}: answers only where its schema accepts, and the same value`, () => {
      const quick = WELL_FORMED[field]!;
      let answered = 0;
      fc.assert(
        fc.property(inputs[field], (raw) => {
          const value = quick(raw);
          if (value === undefined) return;
          answered++;
          const result = orderFieldSchema(field).safeParse(raw);
          expect(result.success, `${field} ${JSON.stringify(raw)}`).toBe(true);
          expect(value).toStrictEqual(result.data);
        }),
        params,
      );
      // Not vacuous: a good share of the generated inputs is well-formed.
      expect(answered).toBeGreaterThan(params.numRuns / 20);
    });
  }

  it('answers for what orders are made of: no schema is needed for a usual order', () => {
    const usual: Record<(typeof FIELDS)[number], unknown[]> = {
      account: ['Sim101', 'Sim102', 'Playback101', 'APEX-12345-01', 'My account'],
      instrument: ['ES 09-25', 'NQ 12-25', 'CL 4-26', 'MES 03-26'],
      action: ['BUY', 'SELL', 'buy', 'Sell'],
      orderType: ['MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT', 'stop_market', 'Stop Limit', 'market'],
      timeInForce: ['DAY', 'GTC', 'day', 'gtc'],
      quantity: [1, 2, 10, 100_000],
    };
    for (const field of FIELDS) {
      for (const raw of usual[field]) expect(WELL_FORMED[field]!(raw), `${field} ${String(raw)}`).toStrictEqual(orderFieldSchema(field).parse(raw));
    }
  });

  it('answers nothing for what its schema refuses, so the schema says why', () => {
    const refused: Record<(typeof FIELDS)[number], unknown[]> = {
      account: ['', ' Sim101', 'Sim101 ', 'a'.repeat(65), 'x\u0007', 42, undefined],
      instrument: ['', 'ES 13-25', 'ES 09/25', 42, undefined],
      action: ['BUYY', 'ſell', 1, undefined],
      orderType: ['STOP', 'LİMİT', undefined],
      timeInForce: ['IOC', 'GTD', undefined],
      quantity: [0, -1, 1.5, 100_001, Number.NaN, Number.POSITIVE_INFINITY, '1', undefined],
    };
    for (const field of FIELDS) {
      for (const raw of refused[field]) {
        expect(WELL_FORMED[field]!(raw), `${field} ${String(raw)}`).toBeUndefined();
        expect(orderFieldSchema(field).safeParse(raw).success, `${field} ${String(raw)}`).toBe(false);
      }
    }
  });
});
