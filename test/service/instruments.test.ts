/**
 * The instrument forms and the roll rule (service-reference.md §9): every worked resolution of
 * §9.3, and both sides of every 2026 roll date of the reference's table, read from the reference
 * itself so that no date can be left out.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTRACT_ROOTS, contractSpec } from '../../src/service/contracts.js';
import { anchorDate, chicagoDate, frontContract, resolveInstrument, rollDate } from '../../src/service/instruments.js';

const REFERENCE = readFileSync(new URL('../../docs/service-reference.md', import.meta.url), 'utf8');

/** Noon in Chicago on a calendar date (17:00 or 18:00 UTC): the date itself whatever DST says. */
const on = (date: string) => new Date(`${date}T18:00:00Z`);
const resolve = (text: string, date = '2026-03-11') => {
  const result = resolveInstrument(text, on(date));
  return result.ok ? result.instrument : `error: ${result.why}`;
};
const KNOWN = CONTRACT_ROOTS.join(', ');

describe('§9.3 worked resolutions', () => {
  it.each([
    ['ES', '2026-03-11', 'ES 03-26'],
    ['ES', '2026-03-12', 'ES 06-26'],
    ['ES1!', '2026-03-12', 'ES 06-26'],
    ['ESH6', '2026-03-12', 'ES 03-26'],
    ['ES MAR26', '2026-07-01', 'ES 03-26'],
    ['ESH26', '2026-07-01', 'ES 03-26'],
    ['ESH5', '2026-03-12', 'ES 03-25'],
    ['ESH4', '2026-03-12', 'ES 03-34'],
    ['ES', '2026-12-09', 'ES 12-26'],
    ['ES', '2026-12-10', 'ES 03-27'],
    ['MNQ', '2026-06-10', 'MNQ 06-26'],
    ['MNQ', '2026-06-11', 'MNQ 09-26'],
    ['CL', '2026-03-11', 'CL 04-26'],
    ['CL', '2026-03-12', 'CL 05-26'],
    ['MCL', '2026-04-13', 'MCL 06-26'],
    ['NG', '2026-03-18', 'NG 04-26'],
    ['NG', '2026-03-19', 'NG 05-26'],
    ['ZN', '2026-02-18', 'ZN 03-26'],
    ['ZN', '2026-02-19', 'ZN 06-26'],
    ['ZN', '2026-02-27', 'ZN 06-26'],
    ['ZB', '2026-05-20', 'ZB 06-26'],
    ['ZB', '2026-05-21', 'ZB 09-26'],
    ['GC', '2026-03-22', 'GC 04-26'],
    ['GC', '2026-03-23', 'GC 06-26'],
    ['MGC', '2026-05-22', 'MGC 08-26'],
    ['SI', '2026-04-21', 'SI 05-26'],
    ['SI', '2026-04-22', 'SI 07-26'],
    ['6E', '2026-03-07', '6E 03-26'],
    ['6E', '2026-03-08', '6E 06-26'],
    ['ZS', '2026-04-21', 'ZS 05-26'],
    ['ZS', '2026-04-22', 'ZS 07-26'],
    ['ZC', '2026-11-21', 'ZC 12-26'],
    ['ZC', '2026-11-22', 'ZC 03-27'],
    ['CL 4-26', '2026-03-11', 'CL 04-26'],
    ['XYZ 03-26', '2026-03-11', 'XYZ 03-26'],
  ])('%s on %s is %s', (text, date, expected) => {
    expect(resolve(text, date)).toBe(expected);
  });

  it.each(['XYZ', 'XYZ1!', 'XYZH6'])('%s needs a known root', (text) => {
    expect(resolve(text)).toBe(`error: unknown root 'XYZ' in '${text}'; known roots: ${KNOWN}`);
  });

  it('refuses continuous contracts past the front month', () => {
    expect(resolve('ES2!')).toBe("error: 'ES2!' is not supported; only the front month (ES1!) is");
    expect(resolve('M2K3!')).toBe("error: 'M2K3!' is not supported; only the front month (M2K1!) is");
  });
});

describe('parsing', () => {
  it.each([
    ['  es   03-26 ', 'ES 03-26'],
    ['es mar26', 'ES 03-26'],
    ['M2KZ6', 'M2K 12-26'],
    ['6EH26', '6E 03-26'],
    ['MESU6', 'MES 09-26'],
    ['nqz25', 'NQ 12-25'],
    ['ZNH6', 'ZN 03-26'],
    ['mgcj6', 'MGC 04-26'],
    ['mym1!', 'MYM 03-26'],
    ['cl', 'CL 04-26'],
  ])('%j is %s', (text, expected) => {
    expect(resolve(text)).toBe(expected);
  });

  it('upper-cases ASCII letters only: a look-alike is not a root', () => {
    expect(resolve('\u017fES')).toMatch(/^error: must be <SYMBOL> <MM-YY>/);
    expect(resolve('E\u017f 03-26')).toMatch(/^error: must be <SYMBOL> <MM-YY>/);
  });

  it('names a bad month and quotes the input short and printable', () => {
    expect(resolve('ES 13-25')).toBe("error: month must be 01-12, got '13' in 'ES 13-25'");
    expect(resolve('ES 0-25')).toBe("error: month must be 01-12, got '0' in 'ES 0-25'");
    expect(resolve('E$ 09-25')).toBe("error: must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), or ES, ES1!, ESH26, ESH6, ES MAR26; got 'E$ 09-25'");
    expect(resolve(`ES\u001b[2J${'x'.repeat(100)}`)).toBe(
      `error: must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), or ES, ES1!, ESH26, ESH6, ES MAR26; got 'ES\\u001b[2J${'x'.repeat(31)}...'`,
    );
  });

  it('reads the date in Chicago, not in UTC', () => {
    // 03:00 UTC on the 12th is still the 11th in Chicago, the day before ES's roll.
    expect(chicagoDate(new Date('2026-03-12T03:00:00Z'))).toEqual({ year: 2026, month: 3, day: 11 });
    expect(resolveInstrument('ES', new Date('2026-03-12T03:00:00Z'))).toMatchObject({ ok: true, instrument: 'ES 03-26' });
    expect(resolveInstrument('ES', new Date('2026-03-12T05:00:00Z'))).toMatchObject({ ok: true, instrument: 'ES 06-26' });
  });

  it('picks the year of a one-digit code from this year in Chicago, not before last year', () => {
    expect(resolve('ESZ9', '2030-01-02')).toBe('ES 12-29');
    expect(resolve('ESZ0', '2030-01-02')).toBe('ES 12-30');
    expect(resolve('ESZ8', '2030-01-02')).toBe('ES 12-38');
  });
});

/** The "2026 roll dates" table: per row, its roots and each contract's anchor and roll date. */
function rollTable(): Array<{ roots: string[]; code: string; year: number; month: number; anchor: string; roll: string }> {
  const section = REFERENCE.slice(REFERENCE.indexOf('2026 roll dates (anchor / roll):'), REFERENCE.indexOf('Because holidays are ignored'));
  const rows = section.split('\n').filter((l) => /^\| [A-Z0-9]/.test(l) && !l.startsWith('| root'));
  return rows.flatMap((row) => {
    const [, label, contracts] = row.split('|').map((c) => c.trim()) as [string, string, string];
    const roots = label.startsWith('ES') ? ['ES', 'MES', 'NQ', 'MNQ', 'YM', 'MYM', 'RTY', 'M2K'] : label.split(',').map((r) => r.trim());
    return contracts.split('·').map((entry) => {
      const [code, dates] = entry.trim().split(' ') as [string, string];
      const [anchor, roll] = dates.split('/').map((d) => (d.length === 5 ? `2026-${d}` : d)) as [string, string];
      return { roots, code, year: 2000 + Number(code.slice(1)), month: 'FGHJKMNQUVXZ'.indexOf(code[0]!) + 1, anchor, roll };
    });
  });
}

const iso = ({ year, month, day }: { year: number; month: number; day: number }) =>
  `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
const dayBefore = (date: string) => new Date(Date.parse(`${date}T00:00:00Z`) - 86_400_000).toISOString().slice(0, 10);

describe('every 2026 roll date of the reference', () => {
  const table = rollTable();

  it('reads the whole table', () => {
    expect(table.length).toBe(4 + 4 + 12 + 12 + 6 + 5 + 4 + 7);
    expect(new Set(table.flatMap((r) => r.roots))).toEqual(new Set(CONTRACT_ROOTS));
  });

  for (const { roots, code, year, month, anchor, roll } of table) {
    it(`${roots.join(', ')} ${code}: anchor ${anchor}, roll ${roll}; front the day before, not on the day`, () => {
      for (const root of roots) {
        const spec = contractSpec(root)!;
        expect(iso(anchorDate(spec.family, year, month))).toBe(anchor);
        expect(iso(rollDate(spec, year, month))).toBe(roll);
        const [y, m, d] = dayBefore(roll).split('-').map(Number) as [number, number, number];
        expect(frontContract(spec, { year: y, month: m, day: d })).toEqual({ year, month });
        const [ry, rm, rd] = roll.split('-').map(Number) as [number, number, number];
        const next = frontContract(spec, { year: ry, month: rm, day: rd });
        const listed = spec.months.indexOf(month);
        expect(next).toEqual(listed === spec.months.length - 1 ? { year: year + 1, month: spec.months[0] } : { year, month: spec.months[listed + 1] });
        expect(resolve(root, dayBefore(roll))).toBe(`${root} ${String(month).padStart(2, '0')}-${String(year % 100).padStart(2, '0')}`);
      }
    });
  }
});

describe('each form, read whole', () => {
  const NOW = on('2026-03-11');
  it.each([
    ['es 09-25', { instrument: 'ES 09-25', root: 'ES', month: 9, year: 2025, form: 'dated' }],
    ['CL 1-26', { instrument: 'CL 01-26', root: 'CL', month: 1, year: 2026, form: 'dated' }],
    ['ES  12-99', { instrument: 'ES 12-99', root: 'ES', month: 12, year: 2099, form: 'dated' }],
    ['ES1!', { instrument: 'ES 03-26', root: 'ES', month: 3, year: 2026, form: 'continuous' }],
    ['NQ', { instrument: 'NQ 03-26', root: 'NQ', month: 3, year: 2026, form: 'front' }],
    ['ESU26', { instrument: 'ES 09-26', root: 'ES', month: 9, year: 2026, form: 'code' }],
    ['ESZ5', { instrument: 'ES 12-25', root: 'ES', month: 12, year: 2025, form: 'code' }],
    ['ESZ4', { instrument: 'ES 12-34', root: 'ES', month: 12, year: 2034, form: 'code' }],
    ['ESZ6', { instrument: 'ES 12-26', root: 'ES', month: 12, year: 2026, form: 'code' }],
    ['ES mar27', { instrument: 'ES 03-27', root: 'ES', month: 3, year: 2027, form: 'monthName' }],
  ] as const)('%j is %j', (text, resolution) => {
    expect(resolveInstrument(text, NOW)).toEqual({ ok: true, ...resolution });
  });

  it('every month code and every month name, in order', () => {
    expect([...'FGHJKMNQUVXZ'].map((code) => resolve(`CL${code}27`))).toEqual(Array.from({ length: 12 }, (_, i) => `CL ${String(i + 1).padStart(2, '0')}-27`));
    const names = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
    expect(names.map((name) => resolve(`CL ${name}27`))).toEqual(Array.from({ length: 12 }, (_, i) => `CL ${String(i + 1).padStart(2, '0')}-27`));
  });

  it('a month outside 01-12, another continuous contract, an unknown root, and the text quoted short and printable', () => {
    expect(resolve('ES 00-26')).toBe("error: month must be 01-12, got '00' in 'ES 00-26'");
    expect(resolve('ES 13-26')).toBe("error: month must be 01-12, got '13' in 'ES 13-26'");
    expect(resolve('ES2!')).toBe("error: 'ES2!' is not supported; only the front month (ES1!) is");
    expect(resolve('XXH26')).toBe(`error: unknown root 'XX' in 'XXH26'; known roots: ${KNOWN}`);
    expect(resolve(`ES ${'x'.repeat(50)}`)).toBe(`error: must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), or ES, ES1!, ESH26, ESH6, ES MAR26; got 'ES ${'x'.repeat(34)}...'`);
    expect(resolve('ES\u0007')).toBe("error: must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), or ES, ES1!, ESH26, ESH6, ES MAR26; got 'ES\\u0007'");
    expect(resolve(`E${'S'.repeat(38)}!`)).toBe(`error: must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), or ES, ES1!, ESH26, ESH6, ES MAR26; got '${`E${'S'.repeat(38)}!`}'`);
  });

  it('a root of its own that looks like a month code (trade contracts add) is that root, not a code', () => {
    const es = contractSpec('ES')!;
    const lookup = (root: string) => (root === 'ESH6' ? { ...es, root: 'ESH6' } : contractSpec(root));
    expect(resolveInstrument('ESH6', NOW, lookup)).toEqual({ ok: true, instrument: 'ESH6 03-26', root: 'ESH6', month: 3, year: 2026, form: 'front' });
    expect(resolveInstrument('ESH6', NOW)).toMatchObject({ instrument: 'ES 03-26', form: 'code' });
  });

  it('ſ is not S', () => {
    expect(resolve('Eſ 09-25')).toMatch(/^error: /);
  });
});
