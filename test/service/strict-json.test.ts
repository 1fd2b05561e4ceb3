import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { duplicateKeyIssues, duplicateKeys, parseStrictJson, pathText } from '../../src/service/strict-json.js';

describe('duplicateKeys', () => {
  it('finds a key given twice at the top, in nested objects and in objects inside arrays, with its path', () => {
    expect(duplicateKeys('{"action":"BUY","quantity":1,"action":"SELL"}')).toEqual([['action']]);
    expect(duplicateKeys('{"args":{"a":1,"b":{"c":1,"c":2}},"x":[0,{"d":1,"d":1}]}')).toEqual([
      ['args', 'b', 'c'],
      ['x', 1, 'd'],
    ]);
    expect(duplicateKeys('[{"a":1},{"a":1,"b":[{"a":2,"a":3}]}]')).toEqual([[1, 'b', 0, 'a']]);
  });

  it('compares keys as JSON.parse decodes them, and is not fooled by quotes, braces and commas inside strings', () => {
    expect(duplicateKeys('{"a":1,"\\u0061":2}')).toEqual([['a']]);
    expect(duplicateKeys('{"a\\"b":1,"a\\u0022b":2}')).toEqual([['a"b']]);
    expect(duplicateKeys('{"a":"},{\\"a\\":1,","b":"\\\\","a\\\\":1}')).toEqual([]);
    expect(duplicateKeys('{"a":{"a":{"a":1}},"b":[{"a":1},{"a":1}]}')).toEqual([]);
    expect(duplicateKeys('{ "a" : 1 , "b" : { } , "a" : [ ] }')).toEqual([['a']]);
  });

  it('reports at most ten, and survives nesting as deep as JSON.parse takes', () => {
    const many = `{${Array.from({ length: 30 }, (_, i) => `"k${i % 15}":1`).join(',')}}`;
    expect(duplicateKeys(many)).toHaveLength(10);
    const deep = `${'{"a":'.repeat(100_000)}{"b":1,"b":2}${'}'.repeat(100_000)}`;
    expect(duplicateKeys(deep)).toEqual([[...Array.from({ length: 100_000 }, () => 'a'), 'b']]);
  });

  it('agrees with a reference on any JSON: a duplicate is reported exactly when the text has one', () => {
    // JSON with keys drawn from a small set (escapes included), so duplicates are common.
    const key = fc.constantFrom('a', 'b', 'c', '\\u0061', 'a\\"', 'a\\u0022');
    const text: fc.Arbitrary<string> = fc.letrec((tie) => ({
      value: fc.oneof({ depthSize: 'small' }, fc.constantFrom('1', 'true', 'null', '"x,}{"', '"\\\\"'), tie('object'), tie('array')),
      object: fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }).map((entries) => `{${entries.map(([k, v]) => `"${k}":${v as string}`).join(',')}}`),
      array: fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${(items as string[]).join(',')}]`),
    })).object as fc.Arbitrary<string>;
    const seen = { with: 0, without: 0 };
    fc.assert(
      fc.property(text, (json) => {
        JSON.parse(json); // the generator makes valid JSON only
        const expected = hasDuplicate(json);
        seen[expected ? 'with' : 'without'] += 1;
        expect(duplicateKeys(json).length > 0).toBe(expected);
      }),
      { numRuns: 500, seed: 20250912 },
    );
    // Both kinds were tried often enough to mean something.
    expect(Math.min(seen.with, seen.without)).toBeGreaterThan(50);
  });
});

/**
 * The reference: JSON.parse merges equal keys, so this counts each object's keys with a small
 * recursive-descent parser of its own (each key decoded by JSON.parse), independent of the
 * scanner under test. Valid JSON only.
 */
function hasDuplicate(json: string): boolean {
  let i = 0;
  const ws = () => {
    while (/\s/.test(json[i] ?? '')) i++;
  };
  const str = (): string => {
    const start = i++;
    while (json[i] !== '"') i += json[i] === '\\' ? 2 : 1;
    i++;
    return JSON.parse(json.slice(start, i)) as string;
  };
  let found = false;
  const value = (): void => {
    ws();
    if (json[i] === '{') {
      i++;
      const keys = new Set<string>();
      ws();
      while (json[i] !== '}') {
        ws();
        const k = str();
        if (keys.has(k)) found = true;
        keys.add(k);
        ws();
        i++; // :
        value();
        ws();
        if (json[i] === ',') i++;
        ws();
      }
      i++;
    } else if (json[i] === '[') {
      i++;
      ws();
      while (json[i] !== ']') {
        value();
        ws();
        if (json[i] === ',') i++;
        ws();
      }
      i++;
    } else if (json[i] === '"') str();
    else while (i < json.length && !/[,\]}\s]/.test(json[i]!)) i++;
  };
  value();
  return found;
}

describe('parseStrictJson', () => {
  it('is JSON.parse for text without duplicates, tells invalid text apart, and keeps the value of a refused one', () => {
    expect(parseStrictJson('{"a":[1,{"b":2}]}')).toEqual({ ok: true, value: { a: [1, { b: 2 }] } });
    expect(parseStrictJson('"{\\"a\\":1,\\"a\\":2}"')).toEqual({ ok: true, value: '{"a":1,"a":2}' });
    expect(parseStrictJson('{"a":1,}')).toEqual({ ok: false, invalid: true });
    expect(parseStrictJson('{"a":1,"a":2}')).toEqual({ ok: false, invalid: false, value: { a: 2 }, duplicates: [['a']] });
  });

  it('reads a 64 KiB body with thousands of keys, and finds a duplicate deep inside it', () => {
    // How fast it reads is measured in bench/, never asserted here.
    const tags = Array.from({ length: 2_000 }, (_, i) => ({ i, k: `v${i}` }));
    const body = JSON.stringify({ account: 'Sim101', strategy: 'x'.repeat(30_000), tags });
    expect(body.length).toBeGreaterThan(60_000);
    expect(parseStrictJson(body)).toEqual({ ok: true, value: JSON.parse(body) });
    const doubled = body.replace('{"i":1999,"k":"v1999"}', '{"i":1999,"k":"v1999","i":0}');
    expect(parseStrictJson(doubled)).toMatchObject({ ok: false, invalid: false, duplicates: [['tags', 1999, 'i']] });
  });
});

describe('the messages', () => {
  it('name the path as a reader of the JSON writes it, quoted and clipped as every refused value is', () => {
    expect(pathText(['action'])).toBe('action');
    expect(pathText(['args', 'legs', 0, 'price'])).toBe('args.legs[0].price');
    expect(pathText(['a.b', 'c d', 'ok'])).toBe('["a.b"]["c d"].ok');
    expect(duplicateKeyIssues('body', [['action'], ['args', 'quantity']])).toEqual([
      { field: 'body', message: "duplicate key 'action'" },
      { field: 'body', message: "duplicate key 'args.quantity'" },
    ]);
    expect(duplicateKeyIssues('body', [['\u001b[31m']])).toEqual([{ field: 'body', message: `duplicate key '["\\u001b[31m"]'` }]);
  });
});
