/**
 * The command reference (docs/commands.md) and the man page (trade.1): generated from the command
 * tree, committed, and never stale; the same text as --help; and the man page renders with groff
 * and man (Debian's groff and man-db, which the suite's global setup makes sure of).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { commandReference, entries, manPage, usage } from '../../src/cli/manual.js';
import { runCli, tempHome } from '../helpers/cli.js';
import { exec } from '../helpers/exec.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const read = (file: string) => readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8');
const home = tempHome();
afterAll(() => home.cleanup());

describe('the generated reference', () => {
  it('docs/commands.md and trade.1 are what the command tree gives (run `npm run docs` after changing a command)', () => {
    expect(read('docs/commands.md')).toBe(commandReference());
    expect(read('trade.1')).toBe(manPage());
  });

  it('says what --help says: the usage, every option with its default, every example', async () => {
    const reference = read('docs/commands.md');
    const all = entries();
    expect(all.length).toBeGreaterThan(75);
    for (const entry of all) {
      // Wide enough that help wraps nothing: each option on one line.
      const help = (await runCli([...entry.path, '--help'], { ...home.env, COLUMNS: '2000' })).stdout;
      const name = `trade ${entry.path.join(' ')}`;
      expect(help.split('\n')[0], name).toBe(`Usage: ${usage(entry)}`);
      expect(reference, name).toContain(`### \`${name}\`\n\n`);
      expect(reference, name).toContain(`\n${usage(entry)}\n`);
      // The command's own options: from "Options:" to the next heading, help's own -h aside.
      const own = help.slice(help.indexOf('\nOptions:\n'), help.indexOf('\nGlobal Options:\n'));
      const shown = own.split('\n').filter((l) => /^ {2}-/.test(l) && !/^ {2}-h, --help /.test(l));
      const options = (entry.spec.options ?? []).filter((o) => !o.hidden);
      expect(shown.map((l) => l.trim().split(/ {2,}/)), name).toEqual(
        options.map((o) => [o.flags, o.default === undefined ? o.description : `${o.description} (default: ${JSON.stringify(o.default)})`]),
      );
      for (const example of entry.spec.examples ?? []) {
        expect(help, name).toContain(`\n  $ ${example}\n`);
        expect(reference, name).toContain(`\n${example}\n`);
      }
    }
  });

  it('documents no hidden command or option', () => {
    const reference = read('docs/commands.md');
    expect(reference).not.toContain('__complete');
    expect(reference).not.toContain('--time-in-force <tif>');
  });
});

describe('man ./trade.1', () => {
  it('groff reads it without a warning', async () => {
    const groff = await exec('groff', ['-man', '-Tutf8', '-ww', '-z', 'trade.1'], { cwd: ROOT, env: process.env });
    expect(groff).toEqual({ code: 0, stdout: '', stderr: '' });
  });

  it('man renders it: the sections, and every command with its usage', async () => {
    const man = await exec('man', ['./trade.1'], { cwd: ROOT, env: { ...process.env, MANPAGER: 'cat', PAGER: 'cat', MANWIDTH: '80', MAN_KEEP_FORMATTING: '' } });
    expect(man.code).toBe(0);
    const text = man.stdout.replace(/.\x08/g, '').replace(/[\u2010\u2212]/g, '-');
    expect(text.split('\n')[0]).toMatch(/^TRADE\(1\) +User Commands +TRADE\(1\)$/);
    for (const section of ['NAME', 'SYNOPSIS', 'DESCRIPTION', 'GLOBAL OPTIONS', 'ORDERS', 'POSITIONS AND ACCOUNT', 'SETUP', 'CONFIGURATION', 'ENVIRONMENT', 'EXIT STATUS', 'SEE ALSO'])
      expect(text).toContain(`\n${section}\n`);
    const flat = text.replace(/\s+/g, ' ');
    for (const entry of entries()) expect(flat).toContain(` ${usage(entry)} `);
    expect(flat).toContain(' 6 refused by a guard rule ');
  });
});
