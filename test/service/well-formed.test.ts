/**
 * The fields every order has are read without building their zod schemas when their input is
 * well-formed (src/service/order.ts WELL_FORMED: a MARKET `trade place` builds no schema, issue
 * 34). Each such reading must answer only where its schema answers, and then the same value; for
 * anything else it answers nothing and the schema speaks. And it must answer for what orders are
 * made of, or it saves nothing.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { orderFieldSchema, WELL_FORMED } from '../../src/service/order.js';
import { FIELDS, nearWellFormed as inputs, USUAL } from '../helpers/order-fields.js';

const params = { seed: 20261127, numRuns: 3000 };

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
    for (const field of FIELDS) {
      for (const raw of USUAL[field]) expect(WELL_FORMED[field]!(raw), `${field} ${String(raw)}`).toStrictEqual(orderFieldSchema(field).parse(raw));
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
      orderId: ['', 'place', 'cancel_and_bracket', 'x'.repeat(65), 'ex 1', 'ex/1', 'é', 1, null],
    };
    for (const field of FIELDS) {
      for (const raw of refused[field]) {
        expect(WELL_FORMED[field]!(raw), `${field} ${String(raw)}`).toBeUndefined();
        expect(orderFieldSchema(field).safeParse(raw).success, `${field} ${String(raw)}`).toBe(false);
      }
    }
  });
});
