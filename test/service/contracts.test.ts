/** The contract table against service-reference.md §10, row by row, read from the reference. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONTRACT_ROOTS, contractSpec, tickValue } from '../../src/service/contracts.js';

const REFERENCE = readFileSync(new URL('../../docs/service-reference.md', import.meta.url), 'utf8');
const FAMILY: Record<string, string> = { equity: 'equity', fx: 'fx', 'first notice': 'firstNotice', crude: 'crude', natgas: 'natgas' };
const MONTH_CODES = 'FGHJKMNQUVXZ';

/** The §10 table's rows: root, tick, point value, tick value, months, family, DAY end. */
function rows() {
  const section = REFERENCE.slice(REFERENCE.indexOf('## 10. Contract specifications'), REFERENCE.indexOf('## 11.'));
  return section
    .split('\n')
    .filter((l) => /^\| [A-Z0-9]+ \|/.test(l))
    .map((l) => {
      const c = l.split('|').map((x) => x.trim());
      const number = (text: string) => Number(text.split(' ')[0]!.replace(/,/g, ''));
      const months = c[8] === 'all 12' ? [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] : c[8]!.split(' ').map((m) => MONTH_CODES.indexOf(m) + 1);
      return { root: c[1]!, tick: number(c[4]!), point: number(c[5]!), tickValue: number(c[6]!), months, family: FAMILY[c[9]!], dayEnd: c[11]! };
    });
}

describe('contract specifications (§10)', () => {
  it('has every root of the reference, in its order', () => {
    expect(CONTRACT_ROOTS).toEqual(rows().map((r) => r.root));
    expect(CONTRACT_ROOTS).toHaveLength(19);
  });

  it.each(rows())('$root: tick $tick, point value $point, months, family, DAY end', (row) => {
    const spec = contractSpec(row.root)!;
    expect({ tick: spec.tickSize, point: spec.pointValue, months: spec.months, family: spec.family, dayEnd: spec.dayEnd }).toEqual({
      tick: row.tick,
      point: row.point,
      months: row.months,
      family: row.family,
      dayEnd: row.dayEnd,
    });
    expect(tickValue(spec)).toBeCloseTo(row.tickValue, 9);
  });

  it('knows nothing else, and nothing on the prototype', () => {
    expect(contractSpec('XYZ')).toBeUndefined();
    expect(contractSpec('toString')).toBeUndefined();
    expect(contractSpec('es')).toBeUndefined();
  });
});
