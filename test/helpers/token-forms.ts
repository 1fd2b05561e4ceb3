/**
 * Looks for a token in text the way a reader could recover it, independently of the redactor in
 * src/config/redact.ts: invisible and control characters (and terminal escapes) removed, JSON /
 * `\u` escapes and percent-encoding decoded (three layers), and every run that could be base64
 * decoded at each alignment. Any LEAK_FRAGMENT-character piece of the token found in any of those
 * readings, in any case, is a leak.
 */
export const LEAK_FRAGMENT = 8;

const INVISIBLE = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

function unescape(text: string): string {
  return text.replace(/\\u\{([0-9a-fA-F]{1,6})\}|\\[uU]([0-9a-fA-F]{4})|\\x([0-9a-fA-F]{2})|\\(.)/g, (_all, braced, u, x, other: string | undefined) => {
    if (braced) return String.fromCodePoint(Math.min(parseInt(braced, 16), 0x10ffff));
    if (u) return String.fromCharCode(parseInt(u, 16));
    if (x) return String.fromCharCode(parseInt(x, 16));
    return ({ n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' } as Record<string, string>)[other!] ?? other!;
  });
}

function percentDecode(text: string): string {
  return text.replace(/(?:%[0-9a-fA-F]{2})+/g, (run) => Buffer.from(run.replace(/%/g, ''), 'hex').toString('utf8'));
}

/** Every reading of `text` that is searched. */
export function readings(text: string): string[] {
  const out = new Set<string>([text]);
  let current = text.replace(INVISIBLE, '');
  out.add(current);
  for (let depth = 0; depth < 3; depth++) {
    current = percentDecode(unescape(current)).replace(INVISIBLE, '');
    out.add(current);
  }
  for (const reading of [...out]) {
    for (const run of reading.match(/[A-Za-z0-9+/_-]{11,}/g) ?? []) {
      for (let offset = 0; offset < 4; offset++) out.add(Buffer.from(run.slice(offset), 'base64').toString('latin1'));
    }
  }
  return [...out];
}

/** The pieces of `token` (LEAK_FRAGMENT characters, or all of a shorter one) found in `text`, in either case. */
export function leaks(text: string, token: string): string[] {
  const size = Math.min(LEAK_FRAGMENT, token.length);
  const pieces = new Set<string>();
  for (let i = 0; i + size <= token.length; i++) pieces.add(token.slice(i, i + size).toLowerCase());
  const found = new Set<string>();
  for (const reading of readings(text).map((r) => r.toLowerCase())) for (const piece of pieces) if (reading.includes(piece)) found.add(piece);
  return [...found];
}
