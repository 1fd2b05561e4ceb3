import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/common/errors.js';
import {
  describeOrder,
  fieldError,
  parseAccountName,
  parseOrder,
  parseOrderBody,
} from '../../src/service/order.js';

const base = {
  account: 'Sim101',
  instrument: 'ES 09-25',
  action: 'BUY',
  quantity: 1,
  orderType: 'MARKET',
  timeInForce: 'DAY',
};

function rejection(input: unknown): string {
  try {
    parseOrder(input);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as Error).message;
  }
  throw new Error('expected a rejection');
}

describe('order schema', () => {
  it('accepts a minimal market order unchanged', () => {
    expect(parseOrder(base)).toEqual(base);
  });

  it.each([
    ['Buy', 'BUY'],
    ['buy', 'BUY'],
    ['SELL', 'SELL'],
    ['sElL', 'SELL'],
  ])('matches action %s in any case and normalizes it to %s', (action, expected) => {
    expect(parseOrder({ ...base, action }).action).toBe(expected);
  });

  it('normalizes order type, time in force and instrument to upper case', () => {
    const order = parseOrder({ ...base, orderType: 'Limit', limitPrice: 4500.25, timeInForce: 'Gtc', instrument: 'es 12-25' });
    expect(order).toMatchObject({ orderType: 'LIMIT', timeInForce: 'GTC', instrument: 'ES 12-25', limitPrice: 4500.25 });
  });

  it.each(['MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT'])('knows order type %s', (orderType) => {
    const prices: Record<string, object> = {
      MARKET: {},
      LIMIT: { limitPrice: 1 },
      STOPMARKET: { stopPrice: 1 },
      STOPLIMIT: { limitPrice: 1, stopPrice: 1 },
    };
    expect(parseOrder({ ...base, orderType, ...prices[orderType] }).orderType).toBe(orderType);
  });

  it('names every missing required field', () => {
    expect(rejection({ account: 'Sim101' })).toBe(
      'Invalid request: instrument: is required; action: is required; quantity: is required; orderType: is required; timeInForce: is required',
    );
  });

  it('requires the account', () => {
    const { account: _, ...body } = base;
    expect(rejection(body)).toBe('Invalid request: account: is required');
  });

  it.each([
    [{ action: 'HOLD' }, "Invalid request: action: must be BUY or SELL (any case), got 'HOLD'"],
    [{ action: 1 }, 'Invalid request: action: must be BUY or SELL, got 1'],
    [{ orderType: 'STOP' }, "Invalid request: orderType: must be one of MARKET, LIMIT, STOPMARKET, STOPLIMIT (any case), got 'STOP'"],
    [{ timeInForce: 'IOC' }, "Invalid request: timeInForce: must be DAY or GTC (any case), got 'IOC'"],
    [{ quantity: 0 }, 'Invalid request: quantity: must be at least 1, got 0'],
    [{ quantity: -3 }, 'Invalid request: quantity: must be at least 1, got -3'],
    [{ quantity: 1.5 }, 'Invalid request: quantity: must be a whole number, got 1.5'],
    [{ quantity: '1' }, "Invalid request: quantity: must be a whole number, got '1'"],
    [{ quantity: 100_001 }, 'Invalid request: quantity: must be at most 100000, got 100001'],
    [{ quantity: Number.NaN }, 'Invalid request: quantity: must be a whole number, got NaN'],
    [{ quantity: Number.POSITIVE_INFINITY }, 'Invalid request: quantity: must be a whole number, got Infinity'],
    [{ instrument: 'ES2!' }, "Invalid request: instrument: 'ES2!' is not supported; only the front month (ES1!) is"],
    [{ instrument: 'XYZ1!' }, "Invalid request: instrument: unknown root 'XYZ' in 'XYZ1!'; known roots: ES, MES, NQ, MNQ, YM, MYM, RTY, M2K, ZN, ZB, CL, MCL, NG, GC, MGC, SI, 6E, ZC, ZS"],
    [{ instrument: 'ES 13-25' }, "Invalid request: instrument: month must be 01-12, got '13' in 'ES 13-25'"],
    [{ instrument: 'ES 00-25' }, "Invalid request: instrument: month must be 01-12, got '00' in 'ES 00-25'"],
    [{ instrument: 'E$ 09-25' }, "Invalid request: instrument: must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), or ES, ES1!, ESH26, ESH6, ES MAR26; got 'E$ 09-25'"],
    [{ account: '' }, 'Invalid request: account: must not be empty'],
    [{ account: 'a\nb' }, 'Invalid request: account: must not contain control characters'],
    [{ account: ' Sim101' }, 'Invalid request: account: must not start or end with spaces'],
    [{ account: 'x'.repeat(65) }, 'Invalid request: account: must be at most 64 characters'],
    [{ extra: 1 }, 'Invalid request: extra: is not a known field'],
    [{ ocoId: '' }, 'Invalid request: ocoId: must not be empty'],
    [{ strategy: 7 }, 'Invalid request: strategy: must be a string, got 7'],
  ])('rejects %j naming the field', (change, message) => {
    expect(rejection({ ...base, ...change })).toBe(message);
  });

  it('rejects prices that are not positive finite numbers', () => {
    for (const limitPrice of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, '4500', null]) {
      expect(rejection({ ...base, orderType: 'LIMIT', limitPrice })).toMatch(/^Invalid request: limitPrice: must be a positive number/);
    }
    expect(rejection({ ...base, orderType: 'LIMIT', limitPrice: 2e9 })).toBe(
      'Invalid request: limitPrice: must be at most 1000000000, got 2000000000',
    );
  });

  it('requires the prices each order type needs', () => {
    expect(rejection({ ...base, orderType: 'LIMIT' })).toBe('Invalid request: limitPrice: is required for LIMIT orders');
    expect(rejection({ ...base, orderType: 'STOPMARKET' })).toBe('Invalid request: stopPrice: is required for STOPMARKET orders');
    expect(rejection({ ...base, orderType: 'STOPLIMIT' })).toBe(
      'Invalid request: limitPrice: is required for STOPLIMIT orders; stopPrice: is required for STOPLIMIT orders',
    );
  });

  it('rejects a price the order type does not use, saying so', () => {
    expect(rejection({ ...base, limitPrice: 10 })).toBe('Invalid request: limitPrice: is not used by MARKET orders; remove it');
    expect(rejection({ ...base, orderType: 'LIMIT', limitPrice: 1, stopPrice: 2 })).toBe(
      'Invalid request: stopPrice: is not used by LIMIT orders; remove it',
    );
    expect(rejection({ ...base, orderType: 'STOPMARKET', stopPrice: 1, limitPrice: 2 })).toBe(
      'Invalid request: limitPrice: is not used by STOPMARKET orders; remove it',
    );
  });

  it('rejects bodies that are not objects', () => {
    for (const input of [null, [], 'x', 3, undefined]) {
      expect(rejection(input)).toMatch(/^Invalid request: the body must be a JSON object/);
    }
  });

  it('rejects __proto__ and constructor keys without polluting prototypes', () => {
    const hostile = JSON.parse('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}');
    expect(rejection({ ...base, ...hostile })).toContain('is not a known field');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('parses a body without account, and rejects an account in it', () => {
    const { account: _, ...body } = base;
    expect(parseOrderBody(body)).toEqual(body);
    expect(() => parseOrderBody(base)).toThrow('Invalid request: account: is not a known field');
  });

  it('validates account names on their own', () => {
    expect(parseAccountName('Sim102')).toBe('Sim102');
    expect(() => parseAccountName('')).toThrow('Invalid request: account: must not be empty');
  });

  it('matches enum values in any case, with spaces, _ and - ignored (§1.5)', () => {
    expect(parseOrder({ ...base, orderType: 'stop_market', stopPrice: 1 }).orderType).toBe('STOPMARKET');
    expect(parseOrder({ ...base, orderType: 'Stop Limit', stopPrice: 1, limitPrice: 1 }).orderType).toBe('STOPLIMIT');
    expect(parseOrder({ ...base, orderType: 'Stop-Market', stopPrice: 1 }).orderType).toBe('STOPMARKET');
    expect(() => parseOrder({ ...base, orderType: 'STOP' })).toThrow("orderType: must be one of MARKET, LIMIT, STOPMARKET, STOPLIMIT (any case), got 'STOP'");
  });

  it('describes an order on one line', () => {
    expect(
      describeOrder(parseOrder({ ...base, orderType: 'STOPLIMIT', stopPrice: 10, limitPrice: 9.5, ocoId: 'g1', strategy: 'ATM1' })),
    ).toBe('BUY 1 ES 09-25 STOPLIMIT stop 10 limit 9.5 DAY OCO g1 ATM ATM1');
  });
});

describe('what the fuzzer found (test/service/order-fuzz.test.ts)', () => {
  it('matches enums and instruments in ASCII case only: a look-alike letter that upper-cases into one is refused', () => {
    // String#toUpperCase turns ſ into S, ı into I, ß into SS and ﬆ into ST.
    expect(rejection({ ...base, action: 'ſell' })).toBe("Invalid request: action: must be BUY or SELL (any case), got 'ſell'");
    expect(rejection({ ...base, orderType: 'lımıt', limitPrice: 1 })).toMatch(/^Invalid request: orderType: must be one of MARKET/);
    expect(rejection({ ...base, orderType: 'ﬆopmarket', stopPrice: 1 })).toMatch(/^Invalid request: orderType: /);
    expect(rejection({ ...base, instrument: 'eſ 09-25' })).toMatch(/^Invalid request: instrument: must be <SYMBOL> <MM-YY>/);
    expect(rejection({ ...base, instrument: 'ßs 09-25' })).toMatch(/^Invalid request: instrument: /);
    expect(parseOrder({ ...base, action: 'sElL', instrument: 'es 09-25' })).toMatchObject({ action: 'SELL', instrument: 'ES 09-25' });
  });

  it.each([
    ['\u0085', 'must not contain control characters'], // C1 control (NEL)
    ['\u009b', 'must not contain control characters'], // C1 CSI: a terminal escape
    ['\u200d', 'must not contain invisible formatting characters'], // zero-width joiner
    ['\u202e', 'must not contain invisible formatting characters'], // right-to-left override
    ['\ufeff', 'must not contain invisible formatting characters'], // byte-order mark
    ['\u2028', 'must not contain invisible formatting characters'], // line separator
    ['\ud800', 'must be well-formed Unicode (no lone surrogates)'], // becomes U+FFFD in SQLite, throws in encodeURIComponent
  ])('refuses a name holding %j: the store, a URL and a terminal would not carry it unchanged', (char, why) => {
    for (const field of ['account', 'ocoId', 'strategy']) {
      expect(rejection({ ...base, [field]: `Sim${char}101` })).toBe(`Invalid request: ${field}: ${why}`);
    }
    expect(() => parseAccountName(`a${char}b`)).toThrow(`Invalid request: account: ${why}`);
    expect(parseAccountName('Compte-Été 😀')).toBe('Compte-Été 😀');
  });

  it('keeps a rejection short and on one line, whatever the body held', () => {
    const many: Record<string, unknown> = { ...base };
    for (let i = 0; i < 50; i++) many[`k${i}`] = i;
    expect(rejection(many)).toBe(
      `Invalid request: ${Array.from({ length: 10 }, (_, i) => `k${i}: is not a known field`).join('; ')}; and 40 more`,
    );
    const longKey = rejection({ ...base, ['𐀀'.repeat(5000)]: 1 });
    expect(longKey).toBe(`Invalid request: ${'𐀀'.repeat(37)}...: is not a known field`);
    expect(rejection({ ...base, 'a\nb\u001b[2J': 1 })).toBe('Invalid request: a\\u000ab\\u001b[2J: is not a known field');
    expect(rejection({ ...base, action: 'x\r\ny' })).toBe("Invalid request: action: must be BUY or SELL (any case), got 'x\\u000d\\u000ay'");
  });
});

describe('fieldError (one field at a time, for prompts)', () => {
  it('gives the same message the whole order gets for that field', () => {
    const cases: Array<[keyof typeof base | 'limitPrice' | 'ocoId', unknown]> = [
      ['account', ' Sim101'],
      ['instrument', 'ES 13-25'],
      ['instrument', 'ES2!'],
      ['action', 'HOLD'],
      ['quantity', 1.5],
      ['quantity', 0],
      ['quantity', 'two'],
      ['orderType', 'MKT'],
      ['timeInForce', 'IOC'],
      ['limitPrice', -1],
      ['ocoId', 'x'.repeat(65)],
    ];
    for (const [field, value] of cases) {
      const whole = rejection({ ...base, orderType: 'LIMIT', limitPrice: 1, [field]: value });
      expect(`Invalid request: ${field}: ${fieldError(field, value)}`).toBe(whole);
    }
  });

  it('passes good values, normalizing nothing', () => {
    expect(fieldError('instrument', 'es 09-25')).toBeUndefined();
    expect(fieldError('action', 'sell')).toBeUndefined();
    expect(fieldError('quantity', 3)).toBeUndefined();
    expect(fieldError('strategy', undefined)).toBeUndefined();
  });

  it('says "is required" for a required field left empty', () => {
    expect(fieldError('instrument', undefined)).toBe('is required');
    expect(fieldError('quantity', undefined)).toBe('is required');
  });

  it('checks a price against the order type when one is given', () => {
    expect(fieldError('limitPrice', undefined, 'LIMIT')).toBe('is required for LIMIT orders');
    expect(fieldError('stopPrice', undefined, 'STOPLIMIT')).toBe('is required for STOPLIMIT orders');
    expect(fieldError('limitPrice', 5, 'MARKET')).toBe('is not used by MARKET orders; remove it');
    expect(fieldError('stopPrice', 5, 'STOPMARKET')).toBeUndefined();
    expect(fieldError('limitPrice', undefined)).toBeUndefined();
  });
});
