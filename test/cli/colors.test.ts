/** The CLI's own colours print exactly what chalk 5 (which they replace at start-up) printed. */
import { Chalk } from 'chalk';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ColorLevel, createColors } from '../../src/cli/colors.js';

const STYLES = ['red', 'green', 'yellow', 'dim'] as const;
const LEVELS: ColorLevel[] = [0, 1, 2, 3];
/** Text with the pieces that chalk treats specially: newlines, CRLF, its own codes, empty text. */
const text = fc
  .array(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom('\n', '\r\n', '\x1b[39m', '\x1b[22m', '\x1b[31m', '\x1b[2m', '')), { maxLength: 8 })
  .map((parts) => parts.join(''));

describe('createColors', () => {
  it('matches chalk for every style and level, nested styles and line breaks included', () => {
    fc.assert(
      fc.property(fc.constantFrom(...LEVELS), fc.constantFrom(...STYLES), fc.constantFrom(...STYLES), text, (level, outer, inner, t) => {
        const ours = createColors(level);
        const chalk = new Chalk({ level });
        expect(ours[outer](t)).toBe(chalk[outer](t));
        expect(ours[outer](`a${ours[inner](t)}b`)).toBe(chalk[outer](`a${chalk[inner](t)}b`));
      }),
      { numRuns: 2000 },
    );
  });

  it('writes 16-colour codes, and nothing at level 0', () => {
    expect(createColors(1).red('x\ny')).toBe('\x1b[31mx\x1b[39m\n\x1b[31my\x1b[39m');
    expect(createColors(3).dim('x')).toBe('\x1b[2mx\x1b[22m');
    expect(createColors(0).green('x')).toBe('x');
    expect(createColors(2).level).toBe(2);
  });
});
