/** The README's command reference names every command and every flag the CLI has. */
import { readFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import type { Command, Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

function tree(): Array<{ path: string; flags: string[] }> {
  const io = createIo({ stdin: new PassThrough(), stdout: { write: () => true }, stderr: { write: () => true } }, {});
  const program = buildProgram(createContext(io, {}), io);
  const out: Array<{ path: string; flags: string[] }> = [];
  const visit = (command: Command, path: string[]) => {
    const flags = (command.options as Option[]).flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f)));
    out.push({ path: path.join(' '), flags });
    // Hidden commands (`trade __complete`, the completion scripts' own) are no user's to look up.
    for (const child of command.createHelp().visibleCommands(command)) if (child.name() !== 'help') visit(child, [...path, child.name()]);
  };
  visit(program, []);
  return out;
}

describe('README', () => {
  it('walks every command but the hidden __complete', () => {
    const paths = tree().map((c) => c.path);
    expect(paths).toContain('price source');
    expect(paths).toContain('completion');
    expect(paths).not.toContain('__complete');
    expect(paths).not.toContain('help');
  });

  it('names every command', () => {
    const missing = tree()
      .map((c) => c.path)
      .filter((path) => path !== '' && !README.includes(`trade ${path}`));
    expect(missing).toEqual([]);
  });

  it('names every flag of every command', () => {
    const missing = tree().flatMap((c) => c.flags.filter((f) => !README.includes(`\`${f}`)).map((f) => `${c.path || 'trade'} ${f}`));
    expect(missing).toEqual([]);
  });
});
