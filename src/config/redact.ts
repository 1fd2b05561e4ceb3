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
 * - letters match in either case (a remote value is upper-cased for display: an order's side);
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
const INVISIBLE_CLASS = '[\\p{Cc}\\p{Cf}\\p{Cs}\\p{Zl}\\p{Zp}\\p{Default_Ignorable_Code_Point}]';
/**
 * Both made on first use: a regular expression with these Unicode classes costs ~0.8 ms to make
 * (its literal too, when the module runs), a slice of every start-up that prints only ASCII.
 */
let invisibleOne: RegExp | undefined;
let invisibleAll: RegExp | undefined;
/** Terminal escape sequences: CSI (`ESC [ … m`) and OSC (`ESC ] … BEL`), each removed whole. */
const TERMINAL_SEQUENCES = /\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

/** Printable ASCII only: nothing stripInvisible removes (a space to a tilde holds no control, escape or invisible character). */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** Text with its terminal escape sequences and every invisible and control character removed. */
export function stripInvisible(text: string): string {
  // Most text is printable ASCII: it is returned without building invisibleAll (its Unicode
  // classes take 0.3-3 ms to compile, a slice of every `trade place`).
  if (PRINTABLE_ASCII.test(text)) return text;
  return text.replace(TERMINAL_SEQUENCES, '').replace((invisibleAll ??= new RegExp(INVISIBLE_CLASS, 'gu')), '');
}

/** Any character outside ASCII. */
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * ASCII letters in lower case, and nothing else changed (so every index stays where it was). A
 * text all ASCII (nearly every line) is lowered by toLowerCase, which changes only A-Z there and
 * is several times faster than a replace with a callback.
 */
const asciiLower = (text: string) => (NOT_ASCII.test(text) ? text.replace(/[A-Z]+/g, (letters) => letters.toLowerCase()) : text.toLowerCase());

interface Forms {
  /** Matched whole, wherever they are. */
  exact: string[];
  /** Every MIN_FRAGMENT-long piece of the long forms. */
  grams: Set<string>;
  /** Their rolling hashes, so a text is scanned without cutting it into pieces. */
  hashes: Set<number>;
  /** The hashes' low HASH_FILTER_BITS bits as a bit set: most positions of a text are ruled out by one array read. */
  filter: Uint32Array;
  /** Whether any form holds a line feed (then a text's final line feeds are read with it). */
  newline: boolean;
}

const HASH_BASE = 131;
/** Hashes are kept to 30 bits: small integers for V8, never boxed. */
const HASH_MASK = 0x3fffffff;
/** The bits of a hash kept in Forms.filter (a 8 KiB bit set). */
const HASH_FILTER_BITS = 16;
const HASH_FILTER_MASK = (1 << HASH_FILTER_BITS) - 1;
/** HASH_BASE ** (MIN_FRAGMENT - 1), modulo 2^32. */
const HASH_TOP = Array.from({ length: MIN_FRAGMENT - 1 }).reduce<number>((p) => Math.imul(p, HASH_BASE), 1);

function hashOf(text: string, start: number): number {
  let h = 0;
  for (let k = start; k < start + MIN_FRAGMENT; k++) h = (Math.imul(h, HASH_BASE) + text.charCodeAt(k)) & HASH_MASK;
  return h;
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
      // Too short to be told apart in pieces: the token whole, its base64 as a value of its own,
      // and inside longer base64 where that is long enough not to be any word.
      const base64 = Buffer.from(secret, 'utf8').toString('base64').replace(/=+$/, '');
      exact.push(secret, base64, base64.replace(/\+/g, '-').replace(/\//g, '_'), ...base64Cores(secret).filter((core) => core.length >= 6));
      continue;
    }
    for (const form of [secret, ...base64Cores(secret)]) {
      if (form.length < MIN_FRAGMENT) exact.push(form);
      else for (let i = 0; i + MIN_FRAGMENT <= form.length; i++) grams.add(asciiLower(form.slice(i, i + MIN_FRAGMENT)));
    }
  }
  const exactForms = [...new Set(exact.map(asciiLower))];
  const newline = exactForms.some((form) => form.includes('\n')) || [...grams].some((gram) => gram.includes('\n'));
  const hashes = new Set([...grams].map((gram) => hashOf(gram, 0)));
  const filter = new Uint32Array((HASH_FILTER_MASK + 1) / 32);
  for (const h of hashes) filter[(h & HASH_FILTER_MASK) >>> 5]! |= 1 << (h & 31);
  return { exact: exactForms, grams, hashes, filter, newline };
}

/**
 * A reading of the original text: `text`, where unit i came from the original's units
 * [from[i], to[i]). The raw reading has no arrays (unit i is the original's unit i).
 */
interface View {
  text: string;
  from?: Int32Array;
  to?: Int32Array;
}

const fromOf = (view: View, i: number) => (view.from ? view.from[i]! : i);
const toOf = (view: View, i: number) => (view.to ? view.to[i]! : i + 1);

/** A view being built, unit by unit; it is never longer than the one it is read from. */
class Builder {
  private readonly codes: Uint16Array;
  private readonly from: Int32Array;
  private readonly to: Int32Array;
  private length = 0;
  constructor(capacity: number) {
    this.codes = new Uint16Array(capacity);
    this.from = new Int32Array(capacity);
    this.to = new Int32Array(capacity);
  }
  unit(code: number, from: number, to: number): void {
    this.codes[this.length] = code;
    this.from[this.length] = from;
    this.to[this.length] = to;
    this.length++;
  }
  codePoint(cp: number, from: number, to: number): void {
    if (cp <= 0xffff) return this.unit(cp, from, to);
    this.unit(0xd800 + ((cp - 0x10000) >> 10), from, to);
    this.unit(0xdc00 + ((cp - 0x10000) & 0x3ff), from, to);
  }
  view(): View {
    let text = '';
    for (let i = 0; i < this.length; i += 8192) {
      text += String.fromCharCode.apply(null, this.codes.subarray(i, Math.min(i + 8192, this.length)) as unknown as number[]);
    }
    return { text, from: this.from.subarray(0, this.length), to: this.to.subarray(0, this.length) };
  }
}

/** The value of a hex digit's code, or -1. */
function hexValue(code: number): number {
  if (code >= 0x30 && code <= 0x39) return code - 0x30;
  const lower = code | 0x20;
  return lower >= 0x61 && lower <= 0x66 ? lower - 0x61 + 10 : -1;
}

/** The value of `count` hex digits at `at`, or -1. */
function hexAt(text: string, at: number, count: number): number {
  if (at + count > text.length) return -1;
  let value = 0;
  for (let k = at; k < at + count; k++) {
    const digit = hexValue(text.charCodeAt(k));
    if (digit < 0) return -1;
    value = value * 16 + digit;
  }
  return value;
}

/** `\u{…}` at `at`: its code point and length, or undefined. */
function bracedAt(text: string, at: number): { cp: number; length: number } | undefined {
  if (text.charCodeAt(at + 1) !== 0x75 || text.charCodeAt(at + 2) !== 0x7b) return undefined;
  let cp = 0;
  let k = at + 3;
  for (; k < text.length && k < at + 9; k++) {
    const digit = hexValue(text.charCodeAt(k));
    if (digit < 0) break;
    cp = cp * 16 + digit;
  }
  if (k === at + 3 || text.charCodeAt(k) !== 0x7d || cp > 0x10ffff) return undefined;
  return { cp, length: k + 1 - at };
}

const between = (code: number, low: number, high: number) => code >= low && code <= high;

/** The length of a terminal escape sequence starting with ESC at i (CSI, OSC, or ESC + one character). */
function escapeLength(text: string, i: number): number {
  const next = text.charCodeAt(i + 1);
  if (next === 0x5b) {
    let j = i + 2;
    while (j < text.length && between(text.charCodeAt(j), 0x30, 0x3f)) j++;
    while (j < text.length && between(text.charCodeAt(j), 0x20, 0x2f)) j++;
    return j < text.length && between(text.charCodeAt(j), 0x40, 0x7e) ? j + 1 - i : 1;
  }
  if (next === 0x5d) {
    for (let j = i + 2; j < text.length; j++) {
      if (text.charCodeAt(j) === 0x07) return j + 1 - i;
      if (text.charCodeAt(j) === 0x1b && text.charCodeAt(j + 1) === 0x5c) return j + 2 - i;
    }
    return 1;
  }
  return between(next, 0x40, 0x5f) ? 2 : 1;
}

/** Whether the code point is one `clean` drops. */
function invisible(cp: number): boolean {
  if (cp >= 0x20 && cp <= 0x7e) return false;
  if (cp < 0x20 || (cp >= 0x7f && cp <= 0x9f)) return true;
  return (invisibleOne ??= new RegExp(INVISIBLE_CLASS, 'u')).test(String.fromCodePoint(cp));
}

/** The view without invisible characters and terminal escape sequences; the same view when it has none. */
function clean(view: View): View {
  const { text } = view;
  let first = -1;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x20 && code <= 0x7e) continue;
    const cp = text.codePointAt(i)!;
    if (invisible(cp)) {
      first = i;
      break;
    }
    if (cp > 0xffff) i++;
  }
  if (first < 0) return view;
  const out = new Builder(text.length);
  for (let i = 0; i < first; i++) out.unit(text.charCodeAt(i), fromOf(view, i), toOf(view, i));
  for (let i = first; i < text.length; ) {
    const code = text.charCodeAt(i);
    if (code >= 0x20 && code <= 0x7e) {
      out.unit(code, fromOf(view, i), toOf(view, i));
      i++;
      continue;
    }
    if (code === 0x1b) {
      i += escapeLength(text, i);
      continue;
    }
    const cp = text.codePointAt(i)!;
    const width = cp > 0xffff ? 2 : 1;
    if (!invisible(cp)) for (let k = i; k < i + width; k++) out.unit(text.charCodeAt(k), fromOf(view, k), toOf(view, k));
    i += width;
  }
  return out.view();
}

/** What `\X` stands for, by X's code. */
const SIMPLE_ESCAPES = new Map<number, number>(
  Object.entries({ '"': '"', "'": "'", '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '0': '\0' }).map(([k, v]) => [
    k.charCodeAt(0),
    v.charCodeAt(0),
  ]),
);

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
  const out = new Builder(text.length);
  for (let i = 0; i < text.length; ) {
    const c = text.charCodeAt(i);
    if (c === 0x5c) {
      const next = text.charCodeAt(i + 1);
      // \u, and \U as an upper-cased \u shows.
      const u = next === 0x75 || next === 0x55 ? hexAt(text, i + 2, 4) : -1;
      if (u >= 0) {
        out.unit(u, fromOf(view, i), toOf(view, i + 5));
        i += 6;
        continue;
      }
      const braced = next === 0x75 ? bracedAt(text, i) : undefined;
      if (braced) {
        out.codePoint(braced.cp, fromOf(view, i), toOf(view, i + braced.length - 1));
        i += braced.length;
        continue;
      }
      const x = next === 0x78 ? hexAt(text, i + 2, 2) : -1;
      if (x >= 0) {
        out.unit(x, fromOf(view, i), toOf(view, i + 3));
        i += 4;
        continue;
      }
      const simple = SIMPLE_ESCAPES.get(next);
      if (simple !== undefined) {
        out.unit(simple, fromOf(view, i), toOf(view, i + 1));
        i += 2;
        continue;
      }
    } else if (c === 0x25) {
      const lead = hexAt(text, i + 1, 2);
      if (lead >= 0) {
        const length = utf8Length(lead);
        let cp = length === 1 ? lead : lead & (0xff >> (length + 1));
        let k = 1;
        for (; k < length; k++) {
          const at = i + 3 * k;
          const byte = text.charCodeAt(at) === 0x25 ? hexAt(text, at + 1, 2) : -1;
          if (byte < 0 || (byte & 0xc0) !== 0x80) break;
          cp = (cp << 6) | (byte & 0x3f);
        }
        // A byte that does not start (or end) a UTF-8 sequence stands for nothing readable: dropped, as an invisible one.
        if (length > 0 && k === length) out.codePoint(cp, fromOf(view, i), toOf(view, i + 3 * length - 1));
        i += length > 0 && k === length ? 3 * length : 3;
        continue;
      }
    }
    out.unit(c, fromOf(view, i), toOf(view, i));
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
  // In any case: a token upper-cased for display (an order's type, its side) shows just as much.
  const text = asciiLower(view.text);
  const mark = (start: number, end: number) => found.push([fromOf(view, start), toOf(view, end - 1)]);
  for (const form of forms.exact) {
    for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1)) mark(at, at + form.length);
  }
  if (forms.grams.size > 0 && text.length >= MIN_FRAGMENT) {
    let runStart = -1;
    let runEnd = -1;
    let h = hashOf(text, 0);
    for (let i = 0; ; i++) {
      if ((forms.filter[(h & HASH_FILTER_MASK) >>> 5]! & (1 << (h & 31))) !== 0 && forms.hashes.has(h) && forms.grams.has(text.slice(i, i + MIN_FRAGMENT))) {
        if (runStart >= 0 && i <= runEnd) runEnd = i + MIN_FRAGMENT;
        else {
          if (runStart >= 0) mark(runStart, runEnd);
          runStart = i;
          runEnd = i + MIN_FRAGMENT;
        }
      }
      if (i + MIN_FRAGMENT >= text.length) break;
      h = (Math.imul(h - Math.imul(text.charCodeAt(i), HASH_TOP), HASH_BASE) + text.charCodeAt(i + MIN_FRAGMENT)) & HASH_MASK;
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
    const c = text.charCodeAt(i);
    if (c === 0x5c && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      length = bracedAt(text, i)?.length ?? ((next === 0x75 || next === 0x55) && hexAt(text, i + 2, 4) >= 0 ? 6 : next === 0x78 && hexAt(text, i + 2, 2) >= 0 ? 4 : 2);
    } else if (c === 0x25 && hexAt(text, i + 1, 2) >= 0) length = 3;
    else if (c === 0x1b) length = escapeLength(text, i);
    else if (between(c, 0xd800, 0xdbff) && between(text.charCodeAt(i + 1), 0xdc00, 0xdfff)) length = 2;
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
  // The line feeds a printed line ends with are invisible characters: read with them, the whole
  // line would be copied once more without them (clean) and that copy searched too, for nothing
  // it does not hold already. So they are set aside and put back, unless a secret holds one.
  let body = text.length;
  while (body > 0 && text.charCodeAt(body - 1) === 0x0a) body--;
  if (body < text.length && !forms.newline) return redactWith(text.slice(0, body), forms) + text.slice(body);
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

let cached: { key: string; redactor: (text: string) => string; frozen?: readonly string[] } | undefined;

/**
 * `text` with every form of each secret replaced by `[redacted]`. The secrets may change from call
 * to call; a frozen list (the CLI context's) cannot, so the same list again is its redactor again,
 * without reading the list.
 */
export function redact(text: string, secrets: readonly string[]): string {
  if (cached !== undefined && cached.frozen === secrets) return cached.redactor(text);
  const live = secrets.filter((s) => s.length > 0);
  if (live.length === 0) return text;
  const key = live.join('\0');
  const redactor = cached?.key === key ? cached.redactor : createRedactor(live);
  cached = { key, redactor, frozen: Object.isFrozen(secrets) ? secrets : undefined };
  return redactor(text);
}
