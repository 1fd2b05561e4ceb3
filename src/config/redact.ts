/**
 * Redaction of known secrets (the token) from text about to be written: every line the CLI prints
 * and every line of `trade serve --log`. A hostile server can echo the token back in any shape, so
 * the text is matched not only as it is but also as read through the encodings a line may carry:
 *
 * - invisible and control characters (zero-width spaces and joiners, soft hyphens, bidi controls,
 *   BOMs, C0/C1 controls, terminal escape sequences) are ignored: a token with one inside matches;
 * - JSON and `printable` escapes (`\u0073`, `\u{73}`, `\/`, `\"`, `\\`…) and percent-encoding
 *   (`%73`, `%2F` or `%2f`, UTF-8 sequences) are decoded, up to three layers deep;
 * - the token's base64 (standard and URL alphabets, at any of the three byte alignments) is a form
 *   of its own;
 * - a token of at least MIN_FRAGMENT characters is also matched in pieces: any run of
 *   MIN_FRAGMENT or more consecutive characters of it (or of its base64) is redacted wherever it
 *   is, so a token clipped at a message's cut, or split across two fields, shows nothing longer
 *   than MIN_FRAGMENT - 1 of its characters. A shorter token is redacted whole wherever it is.
 *
 * Matches are found on the decoded text and replaced in the original by `[redacted]`, whole escape
 * sequences at a time: the rest of the line is left as it was, and JSON stays valid JSON.
 */

export const REDACTED = '[redacted]';

/** The shortest run of a token's characters that is redacted on its own. */
export const MIN_FRAGMENT = 8;

/** How many layers of escaping or percent-encoding are read through. */
const MAX_DECODE_DEPTH = 3;

/**
 * Characters that show nothing or are not text: controls (C0, DEL, C1), format characters
 * (zero-width space/joiner/non-joiner, word joiner, BOM, soft hyphen, bidi controls), lone
 * surrogates, line and paragraph separators, and the other default-ignorable code points
 * (variation selectors, Hangul fillers, tags).
 */
export const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/u;
const INVISIBLE_ALL = new RegExp(INVISIBLE.source, 'gu');

/** Text with every invisible and control character removed. */
export function stripInvisible(text: string): string {
  return text.replace(INVISIBLE_ALL, '');
}

interface Forms {
  /** Matched whole, wherever they are. */
  exact: string[];
  /** Every MIN_FRAGMENT-long piece of the long forms. */
  grams: Set<string>;
}

/** The base64 of `secret` as it reads inside longer base64 data that starts 0, 1 or 2 bytes before it. */
function base64Cores(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const cores: string[] = [];
  for (let before = 0; before < 3; before++) {
    const encoded = Buffer.concat([Buffer.alloc(before), bytes]).toString('base64');
    // The characters that carry bits of the bytes around the secret depend on those bytes: dropped.
    const core = encoded.slice(Math.ceil((8 * before) / 6), Math.floor((8 * (before + bytes.length)) / 6));
    cores.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return [...new Set(cores)].filter((core) => core.length > 0);
}

function compile(secrets: readonly string[]): Forms {
  const exact: string[] = [];
  const grams = new Set<string>();
  for (const secret of secrets) {
    if (secret.length === 0) continue;
    if (secret.length < MIN_FRAGMENT) {
      // Too short to be told apart in pieces: the token whole, and its base64 as a value of its own.
      const base64 = Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, '');
      exact.push(secret, base64, base64.replace(/\+/g, '-').replace(/\//g, '_'));
      continue;
    }
    for (const form of [secret, ...base64Cores(secret)]) {
      if (form.length < MIN_FRAGMENT) exact.push(form);
      else for (let i = 0; i + MIN_FRAGMENT <= form.length; i++) grams.add(form.slice(i, i + MIN_FRAGMENT));
    }
  }
  return { exact: [...new Set(exact)], grams };
}

/**
 * A reading of the original text: `text`, where unit i came from the original's units
 * [from[i], to[i]). The raw reading has no arrays (unit i is the original's unit i).
 */
interface View {
  text: string;
  from?: number[];
  to?: number[];
}

const fromOf = (view: View, i: number) => (view.from ? view.from[i]! : i);
const toOf = (view: View, i: number) => (view.to ? view.to[i]! : i + 1);

class Builder {
  text = '';
  from: number[] = [];
  to: number[] = [];
  push(units: string, from: number, to: number): void {
    this.text += units;
    for (let k = 0; k < units.length; k++) {
      this.from.push(from);
      this.to.push(to);
    }
  }
  view(): View {
    return { text: this.text, from: this.from, to: this.to };
  }
}

const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);

/** The length of a terminal escape sequence starting with ESC at i (CSI, OSC, or ESC + one character). */
function escapeLength(text: string, i: number): number {
  const next = text[i + 1];
  if (next === '[') {
    let j = i + 2;
    while (j < text.length && /[\x30-\x3f]/.test(text[j]!)) j++;
    while (j < text.length && /[\x20-\x2f]/.test(text[j]!)) j++;
    return j < text.length && /[\x40-\x7e]/.test(text[j]!) ? j + 1 - i : 1;
  }
  if (next === ']') {
    for (let j = i + 2; j < text.length; j++) {
      if (text[j] === '\x07') return j + 1 - i;
      if (text[j] === '\x1b' && text[j + 1] === '\\') return j + 2 - i;
    }
    return 1;
  }
  return next !== undefined && /[\x40-\x5f]/.test(next) ? 2 : 1;
}

/** The view without invisible characters and terminal escape sequences; the same view when it has none. */
function clean(view: View): View {
  const { text } = view;
  let first = -1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) {
      const cp = text.codePointAt(i)!;
      if (code < 0x20 || INVISIBLE.test(String.fromCodePoint(cp))) {
        first = i;
        break;
      }
      if (cp > 0xffff) i++;
    }
  }
  if (first < 0) return view;
  const out = new Builder();
  for (let i = 0; i < first; i++) out.push(text[i]!, fromOf(view, i), toOf(view, i));
  for (let i = first; i < text.length; ) {
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    if (cp === 0x1b) {
      i += escapeLength(text, i);
      continue;
    }
    const char = String.fromCodePoint(cp);
    if (!((cp >= 0x20 && cp <= 0x7e) || !INVISIBLE.test(char))) {
      i += width;
      continue;
    }
    for (let k = 0; k < width; k++) out.push(text[i + k]!, fromOf(view, i + k), toOf(view, i + k));
    i += width;
  }
  return out.view();
}

const SIMPLE_ESCAPES: Record<string, string> = { '"': '"', "'": "'", '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '0': '\0' };

/** How many bytes a UTF-8 sequence starting with `lead` has; 0 for a byte that cannot start one. */
function utf8Length(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}

/** One layer of JSON / `printable` escapes and percent-encoding decoded; null when there is none. */
function decode(view: View): View | null {
  const { text } = view;
  if (!/\\|%[0-9a-fA-F]{2}/.test(text)) return null;
  const out = new Builder();
  const span = (i: number, length: number): [number, number] => [fromOf(view, i), toOf(view, i + length - 1)];
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c === '\\') {
      const next = text[i + 1];
      if (next === 'u' && [2, 3, 4, 5].every((k) => isHex(text[i + k]))) {
        out.push(String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16)), ...span(i, 6));
        i += 6;
        continue;
      }
      const braced = next === 'u' ? /^\\u\{([0-9a-fA-F]{1,6})\}/.exec(text.slice(i, i + 10)) : null;
      if (braced && parseInt(braced[1]!, 16) <= 0x10ffff) {
        out.push(String.fromCodePoint(parseInt(braced[1]!, 16)), ...span(i, braced[0].length));
        i += braced[0].length;
        continue;
      }
      if (next === 'x' && isHex(text[i + 2]) && isHex(text[i + 3])) {
        out.push(String.fromCharCode(parseInt(text.slice(i + 2, i + 4), 16)), ...span(i, 4));
        i += 4;
        continue;
      }
      if (next !== undefined && SIMPLE_ESCAPES[next] !== undefined) {
        out.push(SIMPLE_ESCAPES[next]!, ...span(i, 2));
        i += 2;
        continue;
      }
    } else if (c === '%' && isHex(text[i + 1]) && isHex(text[i + 2])) {
      const lead = parseInt(text.slice(i + 1, i + 3), 16);
      const length = utf8Length(lead);
      const bytes = [lead];
      for (let k = 1; k < length; k++) {
        const at = i + 3 * k;
        if (text[at] !== '%' || !isHex(text[at + 1]) || !isHex(text[at + 2])) break;
        const byte = parseInt(text.slice(at + 1, at + 3), 16);
        if ((byte & 0xc0) !== 0x80) break;
        bytes.push(byte);
      }
      if (length > 0 && bytes.length === length) {
        out.push(Buffer.from(bytes).toString('utf8'), ...span(i, 3 * length));
        i += 3 * length;
        continue;
      }
      // A byte that is not UTF-8 stands for nothing readable: it is dropped, as an invisible one.
      i += 3;
      continue;
    }
    out.push(c, fromOf(view, i), toOf(view, i));
    i++;
  }
  return out.view();
}

/** The readings of a text that are searched: as it is, without invisible characters, and decoded layer by layer. */
function views(text: string): View[] {
  const raw: View = { text };
  const all = [raw];
  let current = clean(raw);
  if (current !== raw) all.push(current);
  for (let depth = 0; depth < MAX_DECODE_DEPTH; depth++) {
    const decoded = decode(current);
    if (!decoded) break;
    current = clean(decoded);
    all.push(current);
  }
  return all;
}

/** The ranges of the original text that a view's matches cover. */
function matches(view: View, forms: Forms): Array<[number, number]> {
  const found: Array<[number, number]> = [];
  const { text } = view;
  const mark = (start: number, end: number) => found.push([fromOf(view, start), toOf(view, end - 1)]);
  for (const form of forms.exact) {
    for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1)) mark(at, at + form.length);
  }
  if (forms.grams.size > 0) {
    let runStart = -1;
    let runEnd = -1;
    for (let i = 0; i + MIN_FRAGMENT <= text.length; i++) {
      if (!forms.grams.has(text.slice(i, i + MIN_FRAGMENT))) continue;
      if (runStart >= 0 && i <= runEnd) runEnd = i + MIN_FRAGMENT;
      else {
        if (runStart >= 0) mark(runStart, runEnd);
        runStart = i;
        runEnd = i + MIN_FRAGMENT;
      }
    }
    if (runStart >= 0) mark(runStart, runEnd);
  }
  return found;
}

/**
 * Where each unit of the original begins and ends as a whole: an escape (`\u0073`, `\"`, `%2F`),
 * a terminal escape sequence or a surrogate pair is never cut by a redaction.
 */
function atoms(text: string): { start: Int32Array; end: Int32Array } {
  const start = new Int32Array(text.length);
  const end = new Int32Array(text.length);
  for (let i = 0; i < text.length; ) {
    let length = 1;
    const c = text[i];
    if (c === '\\' && i + 1 < text.length) {
      const braced = /^\\u\{[0-9a-fA-F]{1,6}\}/.exec(text.slice(i, i + 10));
      if (braced) length = braced[0].length;
      else if (text[i + 1] === 'u' && [2, 3, 4, 5].every((k) => isHex(text[i + k]))) length = 6;
      else if (text[i + 1] === 'x' && isHex(text[i + 2]) && isHex(text[i + 3])) length = 4;
      else length = 2;
    } else if (c === '%' && isHex(text[i + 1]) && isHex(text[i + 2])) length = 3;
    else if (c === '\x1b') length = escapeLength(text, i);
    else if (/[\ud800-\udbff]/.test(c!) && /[\udc00-\udfff]/.test(text[i + 1] ?? '')) length = 2;
    for (let k = i; k < i + length; k++) {
      start[k] = i;
      end[k] = i + length;
    }
    i += length;
  }
  return { start, end };
}

function redactWith(text: string, forms: Forms): string {
  if (text.length === 0) return text;
  const found = views(text).flatMap((view) => matches(view, forms));
  if (found.length === 0) return text;
  const { start, end } = atoms(text);
  const ranges = found.map(([a, b]): [number, number] => [start[a]!, end[b - 1]!]).sort((x, y) => x[0] - y[0]);
  let out = '';
  let at = 0;
  for (let k = 0; k < ranges.length; ) {
    let [a, b] = ranges[k]!;
    for (k++; k < ranges.length && ranges[k]![0] <= b; k++) b = Math.max(b, ranges[k]![1]);
    out += `${text.slice(at, a)}${REDACTED}`;
    at = b;
  }
  return out + text.slice(at);
}

/** A redactor for a fixed set of secrets (compiled once). */
export function createRedactor(secrets: readonly string[]): (text: string) => string {
  const forms = compile(secrets);
  if (forms.exact.length === 0 && forms.grams.size === 0) return (text) => text;
  return (text) => redactWith(text, forms);
}

let cached: { key: string; redactor: (text: string) => string } | undefined;

/** `text` with every form of each secret replaced by `[redacted]`. The secrets may change from call to call. */
export function redact(text: string, secrets: readonly string[]): string {
  const live = secrets.filter((s) => s.length > 0);
  if (live.length === 0) return text;
  const key = live.join('\0');
  if (cached?.key !== key) cached = { key, redactor: createRedactor(live) };
  return cached.redactor(text);
}
