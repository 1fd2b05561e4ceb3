/**
 * The redactor every output line and `serve --log` line goes through: each form a hostile server
 * can give the token is redacted, the rest of the line is left alone, and JSON stays JSON.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MIN_FRAGMENT, REDACTED, redact, stripInvisible } from '../../src/config/redact.js';
import { leaks } from '../helpers/token-forms.js';

const TOKEN = 'Redact-me/0123+456789=abcdefghijklmnopqrs';

const pct = (text: string, upper = true) =>
  [...Buffer.from(text, 'utf8')].map((b) => `%${b.toString(16).padStart(2, '0')[upper ? 'toUpperCase' : 'toLowerCase']()}`).join('');
const uEscapes = (text: string) => [...text].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('redact', () => {
  const forms: Array<[string, string]> = [
    ['as is', TOKEN],
    ['encodeURIComponent', encodeURIComponent(TOKEN)],
    ['every byte percent-encoded, upper-case hex', pct(TOKEN)],
    ['every byte percent-encoded, lower-case hex', pct(TOKEN, false)],
    ['percent-encoded twice', encodeURIComponent(encodeURIComponent(TOKEN))],
    ['JSON.stringify', JSON.stringify(TOKEN).slice(1, -1)],
    ['\\u escapes of every character', uEscapes(TOKEN)],
    ['\\/ for /', TOKEN.replace(/\//g, '\\/')],
    ['a JSON string of \\u escapes (double escaped)', JSON.stringify(uEscapes(TOKEN)).slice(1, -1)],
    ['zero-width space inside', `${TOKEN.slice(0, 20)}\u200b${TOKEN.slice(20)}`],
    ['every invisible kind inside', [...TOKEN].join('\u200b\u200c\u200d\u2060\ufeff\u00ad\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069')],
    ['zero-width space inside, shown as an escape', `${TOKEN.slice(0, 20)}\\u200b${TOKEN.slice(20)}`],
    ['zero-width space inside, percent-encoded', `${TOKEN.slice(0, 20)}%E2%80%8B${TOKEN.slice(20)}`],
    ['a terminal colour inside', `${TOKEN.slice(0, 20)}\x1b[31m${TOKEN.slice(20)}`],
    ['base64', b64(TOKEN)],
    ['base64url', Buffer.from(TOKEN).toString('base64url')],
    ['base64 inside longer base64, one byte off', b64(`x${TOKEN}yz`)],
    ['base64 inside longer base64, two bytes off', b64(`xy${TOKEN}z`)],
    ['upper-cased', TOKEN.toUpperCase()],
    ['lower-cased', TOKEN.toLowerCase()],
    ['\\u escapes upper-cased (\\U0048)', uEscapes(TOKEN).toUpperCase()],
    ['clipped at a cut', `${TOKEN.slice(0, 30)}…`],
    ['its tail after a cut', `…${TOKEN.slice(-MIN_FRAGMENT)}`],
    [`${MIN_FRAGMENT} characters from its middle`, TOKEN.slice(10, 10 + MIN_FRAGMENT)],
  ];
  it.each(forms)('redacts the token %s, and nothing else', (_name, form) => {
    const line = `before ${form} after`;
    const out = redact(line, [TOKEN]);
    expect(out.startsWith('before ')).toBe(true);
    expect(out.endsWith(' after')).toBe(true);
    expect(out).toContain(REDACTED);
    expect(leaks(out, TOKEN)).toEqual([]);
  });

  it.each(forms)('the leak check finds the token %s when it is not redacted', (_name, form) => {
    expect(leaks(`before ${form} after`, TOKEN).length).toBeGreaterThan(0);
  });

  it('leaves a line without the token as it is, colours and escapes included', () => {
    const line = '\x1b[32mPlaced\x1b[39m BUY 1 ES 09-25 \\u200b 50% %41 {"a":"b\\"c"} 0123456';
    expect(redact(line, [TOKEN])).toBe(line);
    expect(redact(line, [])).toBe(line);
  });

  it('keeps JSON valid, whatever escapes the token came in', () => {
    for (const [, form] of forms) {
      const line = JSON.stringify({ orderId: form, said: `x${form}y`, n: 1 });
      const out = redact(line, [TOKEN]);
      expect(() => JSON.parse(out)).not.toThrow();
      expect(leaks(out, TOKEN)).toEqual([]);
      // Escaped in JSON output as \u sequences, it is still found.
      const escaped = line.replace(/[a-z]/g, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
      const outEscaped = redact(escaped, [TOKEN]);
      expect(JSON.parse(outEscaped)).toMatchObject({ n: 1 });
      expect(leaks(outEscaped, TOKEN)).toEqual([]);
    }
  });

  it(`leaves fewer than ${MIN_FRAGMENT} consecutive characters of a long token`, () => {
    const short = TOKEN.slice(3, 3 + MIN_FRAGMENT - 1);
    expect(redact(`id ${short} end`, [TOKEN])).toBe(`id ${short} end`);
    // Split across a cut: head before the marker, tail on the next field.
    const out = redact(`${'x'.repeat(480)}${TOKEN.slice(0, 19)}… and ${TOKEN.slice(19)}`, [TOKEN]);
    expect(out).toBe(`${'x'.repeat(480)}${REDACTED}… and ${REDACTED}`);
  });

  it('redacts a short token whole, wherever it is, and its base64', () => {
    expect(redact('a k3y-7 b k3y-7k3y-7 c', ['k3y-7'])).toBe(`a ${REDACTED} b ${REDACTED} c`);
    expect(redact(`x ${b64('k3y-7').replace(/=+$/, '')} y`, ['k3y-7'])).toBe(`x ${REDACTED} y`);
    expect(redact('k3y- 3y-7', ['k3y-7'])).toBe('k3y- 3y-7');
    for (const around of ['x', 'xy']) {
      const line = `data ${b64(`${around}k3y-7 and more`)} end`;
      expect(leaks(line, 'k3y-7').length).toBeGreaterThan(0);
      expect(leaks(redact(line, ['k3y-7']), 'k3y-7')).toEqual([]);
    }
  });

  it('redacts every secret given', () => {
    const other = 'another-secret-value-xyz';
    expect(redact(`${TOKEN} ${other}`, [TOKEN, other, ''])).toBe(`${REDACTED} ${REDACTED}`);
  });

  it('reads a line without its final line feeds as it reads it with any other invisible end', () => {
    // The line feeds a printed line ends with are set aside before it is read (the fast path); a
    // zero-width space is not, and goes the whole way (the line is cleaned and read again). Both
    // are invisible, so the same characters must be redacted either way.
    const pieces = [
      TOKEN,
      TOKEN.slice(0, 12),
      TOKEN.slice(-9),
      TOKEN.toUpperCase(),
      uEscapes(TOKEN.slice(3, 14)),
      pct(TOKEN.slice(5, 20)),
      b64(TOKEN),
      JSON.stringify({ token: TOKEN }),
      '\\u200b',
      '%E2%80%8B',
      '\\',
      '%',
      '\\n',
      '\\u00',
      '\x1b[31m',
      '\u200b',
      '\n',
      '\t',
      '{"line":1,"id":null,"status":200,"data":{"orderId":"0f3a","success":true}}',
    ];
    const body = fc
      .array(fc.oneof(fc.constantFrom(...pieces), fc.string({ maxLength: 6 }), fc.string({ unit: 'binary', maxLength: 3 })), { maxLength: 8 })
      .map((parts) => parts.join(''))
      // A backslash or a lone surrogate at the very end joins the invisible character after it into one unit.
      .filter((text) => !/[\\\ud800-\udbff]$/.test(text));
    fc.assert(
      fc.property(body, fc.integer({ min: 1, max: 3 }), (text, feeds) => {
        const viaFastPath = redact(text + '\n'.repeat(feeds), [TOKEN]);
        const viaFullPath = redact(text + '\u200b'.repeat(feeds), [TOKEN]);
        expect(viaFullPath.endsWith('\u200b'.repeat(feeds))).toBe(true);
        expect(viaFastPath).toBe(viaFullPath.slice(0, -feeds) + '\n'.repeat(feeds));
      }),
      { numRuns: 2000 },
    );
  });

  it('stripInvisible gives printable ASCII back as it is, and any text what the full removal gives (issue 34)', () => {
    const full = (text: string) => text.replace(/\x1b\[[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, '').replace(/[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu, '');
    const ascii = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
    expect(stripInvisible(ascii)).toBe(ascii);
    const pieces = ['\x1b[31m', '\x1b]0;t\x07', '\u200b', '\u00ad', '\n', '\t', '\x7f', '\u0085', 'é', '✓', '\ud800'];
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom(...pieces), fc.string({ unit: 'binary', maxLength: 3 })), { maxLength: 8 }), (parts) => {
        const text = parts.join('');
        expect(stripInvisible(text)).toBe(full(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('lowers ASCII letters alone, whatever else the line holds (a non-ASCII line is not lowered by toLowerCase)', () => {
    // 'İ' lowers to two characters: every index after it would move.
    expect(redact(`İİ ${TOKEN.toUpperCase()} İ after`, [TOKEN])).toBe(`İİ ${REDACTED} İ after`);
    // A secret's own non-ASCII letters match in their own case only, as they always did.
    const secret = 'ÇOK-gizli-anahtar-9876';
    expect(redact(`x ${secret} y`, [secret])).toBe(`x ${REDACTED} y`);
    expect(redact(`x ${secret.toLowerCase()} y`, [secret])).toBe(`x ${REDACTED} y`.replace(REDACTED, `ç${REDACTED}`));
    // An ASCII line in any case.
    expect(redact(`{"a":"${TOKEN.toUpperCase()}","b":"${TOKEN.toLowerCase()}"}`, [TOKEN])).toBe(`{"a":"${REDACTED}","b":"${REDACTED}"}`);
  });

  it('a frozen list of secrets is compiled once and never taken for another; a list that can change is read again', () => {
    const line = 'alpha-key-11111111 omega-pass-2222222';
    const first = Object.freeze(['alpha-key-11111111']);
    const second = Object.freeze(['omega-pass-2222222']);
    expect(redact(line, first)).toBe(`${REDACTED} omega-pass-2222222`);
    expect(redact(line, second)).toBe(`alpha-key-11111111 ${REDACTED}`);
    expect(redact(line, first)).toBe(`${REDACTED} omega-pass-2222222`);
    const growing = ['alpha-key-11111111'];
    expect(redact(line, growing)).toBe(`${REDACTED} omega-pass-2222222`);
    growing.push('omega-pass-2222222');
    expect(redact(line, growing)).toBe(`${REDACTED} ${REDACTED}`);
  });

  it('stripInvisible removes controls and invisible characters only', () => {
    expect(stripInvisible('a\u200bb\u00adc\u202ed\x1be\nf\u2028g\ud800h é ✓')).toBe('abcd' + 'efgh é ✓');
    // A terminal sequence goes whole, not only its ESC.
    expect(stripInvisible('\x1b]0;owned\x07\x1b[2J\x1b[31mred\x1b[0m')).toBe('red');
  });
});
