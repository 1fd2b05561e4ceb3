/**
 * Strict JSON for everything a client sends (service-reference.md §1.3): a request body of
 * `trade serve`, a WebSocket message, a `trade batch` line. JSON.parse keeps the last of two
 * equal keys, so `{"action":"BUY", …, "action":"SELL"}` would sell while a reader of the text
 * (a person, a log, a proxy that keeps the first) sees a buy. A duplicate key anywhere is
 * therefore refused, and nothing is executed.
 *
 * JSON.parse still does the parsing (native, and the judge of what is valid); a single pass
 * over the same text then looks for duplicate keys. That pass may assume the text is valid
 * JSON, which keeps it to a small tokenizer: strings are skipped with indexOf, everything
 * between them is structure or a scalar. It keeps an explicit stack, so nesting as deep as
 * JSON.parse accepts cannot overflow it.
 */
import type { FieldIssue } from '../common/errors.js';
import { show } from './order.js';

/** Where a key sits: object keys and array indexes from the top down. */
export type KeyPath = ReadonlyArray<string | number>;

/** At most this many duplicates are reported (the message names each, like formatIssues). */
export const MAX_REPORTED_DUPLICATES = 10;

export type StrictJson =
  | { ok: true; value: unknown }
  | { ok: false; invalid: true }
  /** `value` as JSON.parse reads it (the last of equal keys), to tell what the text was meant to be. */
  | { ok: false; invalid: false; value: unknown; duplicates: KeyPath[] };

/** U+FEFF, the byte-order mark: RFC 8259 §8.1 lets a parser ignore one before the JSON text. */
const BOM = 0xfeff;

/**
 * Parses `text`; a text that is not JSON, or JSON with a duplicate key, is not ok. One byte-order
 * mark before the JSON is ignored (.NET's UTF-8 writers put one there by default).
 */
export function parseStrictJson(text: string): StrictJson {
  if (text.charCodeAt(0) === BOM) text = text.slice(1);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, invalid: true };
  }
  // Only an object can hold a key; `"{"` in a string or a bare scalar costs this one test.
  if (value === null || typeof value !== 'object') return { ok: true, value };
  const duplicates = duplicateKeys(text);
  return duplicates.length === 0 ? { ok: true, value } : { ok: false, invalid: false, value, duplicates };
}

interface Frame {
  /** The object's keys so far; undefined for an array. */
  keys?: Set<string>;
  /** The current key, or the current index of an array. */
  at: string | number;
  /** In an object: true when the next string is a key. */
  expectKey: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The paths of the duplicate keys of `text`, which must be valid JSON, in the order met (up to
 * `limit`). Other text ends without error or hang, but what it reports then means nothing. Keys are compared as JSON.parse decodes them: `"a"` and `"\u0061"` are the same key.
 */
export function duplicateKeys(text: string, limit = MAX_REPORTED_DUPLICATES): KeyPath[] {
  const found: KeyPath[] = [];
  const stack: Frame[] = [];
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      const top = stack.at(-1);
      if (top?.keys && top.expectKey) {
        const raw = text.slice(i + 1, end);
        const key = raw.includes('\\') ? (JSON.parse(text.slice(i, end + 1)) as string) : raw;
        if (top.keys.has(key)) {
          found.push([...stack.slice(0, -1).map((f) => f.at), key]);
          if (found.length >= limit) return found;
        } else top.keys.add(key);
        top.at = key;
        top.expectKey = false;
      }
      i = end;
    } else if (c === 0x7b /* { */) stack.push({ keys: new Set(), at: '', expectKey: true });
    else if (c === 0x5b /* [ */) stack.push({ at: 0, expectKey: false });
    else if (c === 0x7d /* } */ || c === 0x5d /* ] */) stack.pop();
    else if (c === 0x2c /* , */) {
      const top = stack.at(-1)!;
      if (top.keys) top.expectKey = true;
      else (top.at as number)++;
    }
  }
  return found;
}

/** The index of the quote that closes the string opening at `start` (the end, for text that is not JSON). */
function stringEnd(text: string, start: number): number {
  for (let end = text.indexOf('"', start + 1); ; end = text.indexOf('"', end + 1)) {
    if (end === -1) return text.length;
    // A quote preceded by an odd run of backslashes is escaped.
    let slashes = 0;
    while (text.charCodeAt(end - 1 - slashes) === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return end;
  }
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/** `args.action`, `legs[0].price`, `["odd key"]`: a path as a reader of the JSON would write it. */
export function pathText(path: KeyPath): string {
  return path
    .map((part, index) => {
      if (typeof part === 'number') return `[${part}]`;
      if (IDENTIFIER.test(part)) return index === 0 ? part : `.${part}`;
      return `[${JSON.stringify(part)}]`;
    })
    .join('');
}

/**
 * The issues of a refused text, in the service's form (§6.2: `Invalid request: <field>: <why>`,
 * several joined by `; `): `body: duplicate key 'action'`, `message: duplicate key 'args.action'`.
 */
export function duplicateKeyIssues(field: string, duplicates: KeyPath[]): FieldIssue[] {
  return duplicates.map((path) => ({ field, message: `duplicate key ${show(pathText(path))}` }));
}
