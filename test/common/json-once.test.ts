import { describe, expect, it } from 'vitest';
import { answeredAgain, keptJson } from '../../src/common/json-once.js';

describe('a body answered again, serialised once', () => {
  it("gives a marked body's JSON, the same text at every call, and nothing for any other value", () => {
    const body = answeredAgain({ positions: [{ instrument: 'ES 09-25', quantity: -2 }], count: 1, success: true });
    const first = keptJson(body);
    expect(first).toBe('{"positions":[{"instrument":"ES 09-25","quantity":-2}],"count":1,"success":true}');
    expect(keptJson(body)).toBe(first);
    for (const other of [{ positions: [], count: 0, success: true }, [], 'text', 1, null, undefined]) expect(keptJson(other)).toBeUndefined();
  });

  it('keeps the JSON of the body as it was first serialised (a marked body is not to be changed)', () => {
    const body = answeredAgain({ count: 1 });
    expect(keptJson(body)).toBe('{"count":1}');
    body.count = 2;
    expect(keptJson(body)).toBe('{"count":1}');
  });
});
