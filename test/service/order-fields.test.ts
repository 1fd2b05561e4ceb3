/**
 * Every field rule of src/service/order.ts on its own, with the exact words of each refusal and
 * the exact value of each answer: the operations' argument fields (booleans and whole numbers that
 * may come from a query string, names, client order ids, sides, times, instrument lists), the
 * order's own fields and PlaceOrder's guards, and the helpers that render a rejected value
 * (`show`, `printable`) or an order (`describeOrder`). The order as a whole is
 * test/service/order.test.ts; its fuzzing order-fuzz.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { ValidationError } from '../../src/common/errors.js';
import {
  asciiUpperCase,
  booleanField,
  clientOrderIdField,
  describeOrder,
  fieldError,
  instrumentListField,
  isoTimeField,
  nameField,
  type Order,
  parseAccountName,
  parseOrder,
  parseOrderId,
  parsePrice,
  printable,
  show,
  sideField,
  splitOrder,
  upperEnum,
  wholeNumberField,
} from '../../src/service/order.js';

/** `{ ok: value }` or `{ error: the first issue's words }`. */
function answer(schema: z.ZodType, input: unknown): { ok: unknown } | { error: string } {
  const result = schema.safeParse(input);
  return result.success ? { ok: result.data } : { error: result.error.issues[0]!.message };
}

/** The issues an order is refused with, as `field: message`. */
function refusal(input: Record<string, unknown>): string[] {
  try {
    parseOrder(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).issues.map((i) => `${i.field}: ${i.message}`);
  }
  return [];
}

const MARKET = { account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

describe('show and printable: a rejected value, short and on one line', () => {
  it.each([
    ['buy', "'buy'"],
    [12.5, '12.5'],
    [true, 'true'],
    [false, 'false'],
    [null, 'null'],
    [[1, 2], 'an array'],
    [{ a: 1 }, 'a object'],
    [undefined, 'a undefined'],
  ] as const)('%j is shown as %s', (value, shown) => {
    expect(show(value)).toBe(shown);
  });

  it('a bigint, a function', () => {
    expect(show(10n)).toBe('a bigint');
    expect(show(() => 1)).toBe('a function');
  });

  it('cuts at 40 characters with ... (whole code points), and not one before', () => {
    expect(show('x'.repeat(38))).toBe(`'${'x'.repeat(38)}'`);
    expect(show('x'.repeat(39))).toBe(`'${'x'.repeat(36)}...`);
    expect(show('😀'.repeat(50))).toBe(`'${'😀'.repeat(36)}...`);
    // 20 emoji are 40 UTF-16 units but 22 characters with the quotes: not cut.
    expect(show('😀'.repeat(20))).toBe(`'${'😀'.repeat(20)}'`);
  });

  it('writes controls, invisible formatting and separators as escapes', () => {
    expect(printable('a\u0000b\u001bc\u007fd\u200be\u2028f')).toBe('a\\u0000b\\u001bc\\u007fd\\u200be\\u2028f');
    expect(printable('\u{e0001}tag')).toBe('\\u{e0001}tag');
    expect(printable('\ud800x')).toBe('\\ud800x');
    expect(printable('plain é 😀')).toBe('plain é 😀');
    expect(show('a\nb')).toBe("'a\\u000ab'");
  });

  it('asciiUpperCase leaves every other letter as it is', () => {
    expect(asciiUpperCase('stop market ſell ß lımıt')).toBe('STOP MARKET ſELL ß LıMıT');
  });
});

describe('upperEnum: the order type, action and time in force words', () => {
  const type = upperEnum(['MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT'] as const);
  const action = upperEnum(['BUY', 'SELL'] as const);
  it.each([
    ['stop_market', 'STOPMARKET'],
    ['Stop Market', 'STOPMARKET'],
    ['stop-limit', 'STOPLIMIT'],
    ['\tlimit', 'LIMIT'],
  ])('%j is %s', (raw, word) => {
    expect(answer(type, raw)).toEqual({ ok: word });
  });

  it('says what it must be: two values with "or", more with "one of"; a missing one is required', () => {
    expect(answer(action, 'hold')).toEqual({ error: "must be BUY or SELL (any case), got 'hold'" });
    expect(answer(type, 'stop.market')).toEqual({ error: "must be one of MARKET, LIMIT, STOPMARKET, STOPLIMIT (any case), got 'stop.market'" });
    expect(answer(action, 1)).toEqual({ error: 'must be BUY or SELL, got 1' });
    expect(answer(action, undefined)).toEqual({ error: 'is required' });
    expect(answer(action, 'ſell')).toEqual({ error: "must be BUY or SELL (any case), got 'ſell'" });
  });
});

describe('booleanField: JSON or a query string', () => {
  it.each([
    [true, true],
    [false, false],
    ['true', true],
    ['TRUE', true],
    ['True', true],
    ['1', true],
    [1, true],
    ['false', false],
    ['FALSE', false],
    ['0', false],
    [0, false],
  ] as const)('%j is %s', (raw, value) => {
    expect(answer(booleanField(), raw)).toEqual({ ok: value });
  });

  it.each([
    ['yes', "must be true or false (or 1 or 0), got 'yes'"],
    ['', "must be true or false (or 1 or 0), got ''"],
    [2, 'must be true or false (or 1 or 0), got 2'],
    ['01', "must be true or false (or 1 or 0), got '01'"],
    [null, 'must be true or false, got null'],
    [[true], 'must be true or false, got an array'],
  ] as const)('%j is refused: %s', (raw, message) => {
    expect(answer(booleanField(), raw)).toEqual({ error: message });
  });
});

describe('wholeNumberField: JSON numbers, or digits in a query string', () => {
  const field = wholeNumberField(1, 500);
  it.each([
    [1, 1],
    [500, 500],
    ['1', 1],
    ['500', 500],
    ['007', 7],
    [2.0, 2],
  ] as const)('%j is %i', (raw, value) => {
    expect(answer(field, raw)).toEqual({ ok: value });
  });

  it.each([
    [0, 'must be a whole number from 1 to 500, got 0'],
    [501, 'must be a whole number from 1 to 500, got 501'],
    ['0', "must be a whole number from 1 to 500, got '0'"],
    ['501', "must be a whole number from 1 to 500, got '501'"],
    [1.5, 'must be a whole number from 1 to 500, got 1.5'],
    ['', "must be a whole number from 1 to 500, got ''"],
    [' 1', "must be a whole number from 1 to 500, got ' 1'"],
    ['1 ', "must be a whole number from 1 to 500, got '1 '"],
    ['1e2', "must be a whole number from 1 to 500, got '1e2'"],
    ['0x10', "must be a whole number from 1 to 500, got '0x10'"],
    ['-1', "must be a whole number from 1 to 500, got '-1'"],
    [true, 'must be a whole number from 1 to 500, got true'],
    [null, 'must be a whole number from 1 to 500, got null'],
  ] as const)('%j is refused: %s', (raw, message) => {
    expect(answer(field, raw)).toEqual({ error: message });
  });

  it('says its own words when given them', () => {
    expect(answer(wholeNumberField(0, 10, 'must be a number of days from 0 to 10'), 11)).toEqual({ error: 'must be a number of days from 0 to 10, got 11' });
    expect(answer(wholeNumberField(0, 10), 0)).toEqual({ ok: 0 });
    expect(answer(wholeNumberField(0, 10), -1)).toEqual({ error: 'must be a whole number from 0 to 10, got -1' });
  });
});

describe('nameField: accounts, OCO ids, strategies', () => {
  const field = nameField('account name');
  it('takes any printable text of 1-64 characters, unchanged', () => {
    expect(answer(field, 'Sim 101 é')).toEqual({ ok: 'Sim 101 é' });
    expect(answer(field, 'x'.repeat(64))).toEqual({ ok: 'x'.repeat(64) });
  });

  it.each([
    ['', 'must not be empty'],
    ['x'.repeat(65), 'must be at most 64 characters'],
    ['Sim\u0000101', 'must not contain control characters'],
    ['Sim\u0085101', 'must not contain control characters'],
    ['Sim\u007f', 'must not contain control characters'],
    ['Sim\u200b101', 'must not contain invisible formatting characters'],
    ['Sim\u2029', 'must not contain invisible formatting characters'],
    ['Sim\ud800', 'must be well-formed Unicode (no lone surrogates)'],
    [' Sim101', 'must not start or end with spaces'],
    ['Sim101 ', 'must not start or end with spaces'],
    [101, 'must be a account name, got 101'],
    [undefined, 'is required'],
  ] as const)('%j is refused: %s', (raw, message) => {
    expect(answer(field, raw)).toEqual({ error: message });
  });

  it('parseAccountName and parseOrderId name their field', () => {
    expect(parseAccountName('Sim101')).toBe('Sim101');
    const issues = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        expect(error).toBeInstanceOf(ValidationError);
        return (error as ValidationError).issues;
      }
      return [];
    };
    expect(issues(() => parseAccountName(''))).toEqual([{ field: 'account', message: 'must not be empty' }]);
    expect(issues(() => parseOrderId(' x'))).toEqual([{ field: 'orderId', message: 'must not start or end with spaces' }]);
    expect(issues(() => parsePrice(-1))).toEqual([{ field: 'price', message: 'must be a positive number, got -1' }]);
    expect(parseOrderId('o-1')).toBe('o-1');
    expect(parsePrice(4500.25)).toBe(4500.25);
  });
});

describe("clientOrderIdField: a client's own order id (§1.6)", () => {
  it.each(['a', 'A-z_0.9:x', 'x'.repeat(64), 'Place', 'cancel-and-bracket'])('%j is taken', (id) => {
    expect(answer(clientOrderIdField(), id)).toEqual({ ok: id });
  });

  it.each([
    ['', "must be 1-64 characters of A-Z a-z 0-9 . _ : -, got ''"],
    ['x'.repeat(65), `must be 1-64 characters of A-Z a-z 0-9 . _ : -, got '${'x'.repeat(36)}...`],
    ['a b', "must be 1-64 characters of A-Z a-z 0-9 . _ : -, got 'a b'"],
    ['a/b', "must be 1-64 characters of A-Z a-z 0-9 . _ : -, got 'a/b'"],
    [42, 'must be a string of 1-64 characters (A-Z a-z 0-9 . _ : -), got 42'],
    ['place', "'place' is a word of the service's paths; choose another id"],
    ['flatplace', "'flatplace' is a word of the service's paths; choose another id"],
    ['cancel', "'cancel' is a word of the service's paths; choose another id"],
    ['cancel_and_bracket', "'cancel_and_bracket' is a word of the service's paths; choose another id"],
  ] as const)('%j is refused: %s', (raw, message) => {
    expect(answer(clientOrderIdField(), raw)).toEqual({ error: message });
  });
});

describe('sideField: the side a filtered flatten closes', () => {
  it.each([
    ['long', 'long'],
    ['SHORT', 'short'],
    [' Long ', 'long'],
    ['sHoRt', 'short'],
  ])('%j is %s', (raw, side) => {
    expect(answer(sideField(), raw)).toEqual({ ok: side });
  });

  it.each([
    ['flat', "must be long or short, got 'flat'"],
    ['longs', "must be long or short, got 'longs'"],
    ['', "must be long or short, got ''"],
    [1, 'must be long or short, got 1'],
  ] as const)('%j is refused: %s', (raw, message) => {
    expect(answer(sideField(), raw)).toEqual({ error: message });
  });
});

describe('isoTimeField: GetBars from and to', () => {
  it('reads any time Date can, written back in ISO 8601 UTC', () => {
    expect(answer(isoTimeField(), '2026-03-18T15:00:00-05:00')).toEqual({ ok: '2026-03-18T20:00:00.000Z' });
    expect(answer(isoTimeField(), '2026-03-18')).toEqual({ ok: '2026-03-18T00:00:00.000Z' });
  });

  it.each([
    ['yesterday', "must be a time like 2026-03-18T20:00:00Z, got 'yesterday'"],
    ['', "must be a time like 2026-03-18T20:00:00Z, got ''"],
    [1_700_000_000_000, 'must be a time like 2026-03-18T20:00:00Z, got 1700000000000'],
  ] as const)('%j is refused: %s', (raw, message) => {
    expect(answer(isoTimeField(), raw)).toEqual({ error: message });
  });
});

describe('instrumentListField: GetQuote of one or several instruments', () => {
  it('resolves each, in order', () => {
    expect(answer(instrumentListField(), 'ES 09-25,NQ 12-25')).toEqual({ ok: ['ES 09-25', 'NQ 12-25'] });
    expect(answer(instrumentListField(), 'CL 4-26')).toEqual({ ok: ['CL 04-26'] });
  });

  it('one that does not resolve refuses the list with its reason', () => {
    const one = answer(instrumentListField(), 'ES 13-25');
    const list = answer(instrumentListField(), 'NQ 12-25,ES 13-25');
    expect(list).toEqual(one);
    expect('error' in list && list.error).toMatch(/ES 13-25/);
    expect(answer(instrumentListField(), 7)).toEqual({ error: 'must be an instrument or a comma list of them, got 7' });
    expect(answer(instrumentListField(), undefined)).toEqual({ error: 'is required' });
  });
});

describe("PlaceOrder's guards and the order's own fields, through parseOrder", () => {
  it.each([
    ['flat', ['flat']],
    ['Flat, LONG', ['flat', 'long']],
    ['short,short', ['short']],
    [' long ,flat', ['long', 'flat']],
  ])('requireMarketPosition %j is %j', (raw, sides) => {
    expect(parseOrder({ ...MARKET, requireMarketPosition: raw }).requireMarketPosition).toEqual(sides);
  });

  it.each([
    [{ requireMarketPosition: 'flat;long' }, "requireMarketPosition: must be a comma list of flat, long, short, got 'flat;long'"],
    [{ requireMarketPosition: '' }, "requireMarketPosition: must be a comma list of flat, long, short, got ''"],
    [{ requireMarketPosition: 'flat,' }, "requireMarketPosition: must be a comma list of flat, long, short, got 'flat,'"],
    [{ requireMarketPosition: ['flat'] }, 'requireMarketPosition: must be a comma list of flat, long, short, got an array'],
    [{ maxPositions: 0 }, 'maxPositions: must be a whole number from 1, got 0'],
    [{ maxPositions: 1.5 }, 'maxPositions: must be a whole number from 1, got 1.5'],
    [{ maxPositions: '2' }, "maxPositions: must be a whole number from 1, got '2'"],
    [{ maxPositions: 100_001 }, 'maxPositions: must be at most 100000, got 100001'],
    [{ quantity: 0 }, 'quantity: must be at least 1, got 0'],
    [{ quantity: 100_001 }, 'quantity: must be at most 100000, got 100001'],
    [{ quantity: 2.5 }, 'quantity: must be a whole number, got 2.5'],
    [{ quantity: '1' }, "quantity: must be a whole number, got '1'"],
    [{ quantity: undefined }, 'quantity: is required'],
    [{ orderType: 'LIMIT', limitPrice: 0 }, 'limitPrice: must be a positive number, got 0'],
    [{ orderType: 'LIMIT', limitPrice: 1_000_000_001 }, 'limitPrice: must be at most 1000000000, got 1000000001'],
    [{ orderType: 'LIMIT', limitPrice: '4500' }, "limitPrice: must be a positive number, got '4500'"],
    [{ orderType: 'LIMIT' }, 'limitPrice: is required for LIMIT orders'],
    [{ stopPrice: 4400 }, 'stopPrice: is not used by MARKET orders; remove it'],
    [{ instrument: 9 }, "instrument: must be a string like 'ES 09-25', got 9"],
    [{ ocoId: '' }, 'ocoId: must not be empty'],
    [{ strategy: 7 }, 'strategy: must be a string, got 7'],
    [{ orderId: 'place' }, "orderId: 'place' is a word of the service's paths; choose another id"],
    [{ side: 'BUY' }, 'side: is not a known field'],
  ])('%j is refused: %s', (change, message) => {
    expect(refusal({ ...MARKET, ...change })).toEqual([message]);
  });

  it('maxPositions at its limits', () => {
    expect(parseOrder({ ...MARKET, maxPositions: 1 }).maxPositions).toBe(1);
    expect(parseOrder({ ...MARKET, maxPositions: 100_000 }).maxPositions).toBe(100_000);
  });

  it('fieldError gives a prompt the same words, and the price rule of the type', () => {
    expect(fieldError('quantity', 0)).toBe('must be at least 1, got 0');
    expect(fieldError('quantity', 3)).toBeUndefined();
    expect(fieldError('limitPrice', undefined, 'LIMIT')).toBe('is required for LIMIT orders');
    expect(fieldError('limitPrice', 4500, 'MARKET')).toBe('is not used by MARKET orders; remove it');
    expect(fieldError('stopPrice', 4400, 'STOPLIMIT')).toBeUndefined();
    expect(fieldError('limitPrice', 4500)).toBeUndefined();
  });
});

describe('describeOrder and splitOrder', () => {
  const full = parseOrder({
    ...MARKET,
    action: 'sell',
    quantity: 2,
    orderType: 'STOPLIMIT',
    stopPrice: 4400,
    limitPrice: 4399.5,
    timeInForce: 'gtc',
    ocoId: 'oco-1',
    strategy: 'ATM 2',
    orderId: 'my-1',
    requireMarketPosition: 'flat,long',
    maxPositions: 1,
  });

  it('one line with every field given, in the order a person reads them', () => {
    expect(describeOrder(full)).toBe('SELL 2 ES 09-25 STOPLIMIT stop 4400 limit 4399.5 GTC OCO oco-1 ATM ATM 2 id my-1 (only if flat or long) (at most 1 open position)');
    expect(describeOrder({ ...full, maxPositions: 3 } as Order)).toMatch(/\(at most 3 open positions\)$/);
    expect(describeOrder(parseOrder(MARKET))).toBe('BUY 1 ES 09-25 MARKET DAY');
  });

  it('splitOrder: the account apart, the body without it', () => {
    const { account, body } = splitOrder(parseOrder(MARKET));
    expect(account).toBe('Sim101');
    expect(body).toEqual({ instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });
  });
});
