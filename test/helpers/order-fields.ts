/**
 * Generated values for the order fields that WELL_FORMED reads without their schemas
 * (src/service/order.ts): near the well-formed ones and hostile. Shared by the tests that hold
 * those readings to zod's answers.
 */
import fc from 'fast-check';
import { ACTIONS, ORDER_TYPES, TIMES_IN_FORCE } from '../../src/service/order.js';
import { hostileNumber, hostileString, hostileValue } from './fuzz.js';

export const FIELDS = ['account', 'instrument', 'action', 'orderType', 'timeInForce', 'quantity', 'orderId'] as const;
export type Field = (typeof FIELDS)[number];

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

/** Client order ids: the guard's 32 hex digits, the service's path words in any case, the edges of the allowed set and length. */
const clientIdLike = fc.oneof(
  fc.constantFrom('place', 'PLACE', 'flatplace', 'cancel', 'cancel_and_bracket', 'Cancel', 'ex-1', 'a.b:c_d-e', 'x'.repeat(64), 'x'.repeat(65), '', ' ex-1', 'ex 1', 'ex/1', 'é', '0'),
  fc.stringMatching(/^[0-9a-f]{32}$/),
  fc.string({ unit: fc.constantFrom('a', 'Z', '0', '.', '_', ':', '-', ' ', '/', '\u00e9'), minLength: 0, maxLength: 66 }),
  hostileString,
);

/** Per field: values near the well-formed ones, and anything at all. */
export const nearWellFormed: Record<Field, fc.Arbitrary<unknown>> = {
  account: fc.oneof(nameLike, hostileValue),
  instrument: fc.oneof(instrumentLike, hostileString, hostileValue),
  action: fc.oneof(nearEnum(ACTIONS), hostileValue),
  orderType: fc.oneof(nearEnum(ORDER_TYPES), hostileValue),
  timeInForce: fc.oneof(nearEnum(TIMES_IN_FORCE), hostileValue),
  quantity: fc.oneof(hostileNumber, fc.integer({ min: -2, max: 100_002 }), fc.constantFrom('1', true, null, 1n)),
  orderId: fc.oneof(clientIdLike, hostileValue),
};

/** What orders are usually made of: each must be read without a schema. */
export const USUAL: Record<Field, unknown[]> = {
  account: ['Sim101', 'Sim102', 'Playback101', 'APEX-12345-01', 'My account'],
  instrument: ['ES 09-25', 'NQ 12-25', 'CL 4-26', 'MES 03-26'],
  action: ['BUY', 'SELL', 'buy', 'Sell'],
  orderType: ['MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT', 'stop_market', 'Stop Limit', 'market'],
  timeInForce: ['DAY', 'GTC', 'day', 'gtc'],
  quantity: [1, 2, 10, 100_000],
  orderId: ['0f3c9a7e5b2d4c6e8a1b3d5f7092e4c6', 'ex-1', 'strategy.A:42_b-1'],
};
