/**
 * The command tree built for the command that runs (issue 34): main's program registers every
 * command's name, summary, arguments and group (or only the command named first, when there is
 * one), and fills in only the one commander dispatches to.
 * What a person sees must not change: the help of every command (test/cli/help.test.ts's snapshots
 * run through main), did-you-mean, `trade help NAME...` and the completion scripts.
 */
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { orderArgs, runCli, tempHome } from '../helpers/cli.js';

const home = tempHome();
const env = { ...home.env, COLUMNS: '80' };

function program(argv?: string[]): Command {
  const io = createIo({ stdin: new PassThrough(), stdout: { write: () => true }, stderr: { write: () => true } }, env);
  return buildProgram(createContext(io, env), io, argv);
}

/** The top-level commands that have their options or subcommands, by name. */
const filled = (p: Command) => p.commands.filter((c) => c.options.length > 0 || c.commands.length > 0).map((c) => c.name());

describe('the command tree built for the command that runs', () => {
  it('registers every command by name, summary and arguments, and fills in none before dispatch', () => {
    // An option first: which command runs is commander's to find, among all of them.
    const lazy = program(['--backend', 'embedded', 'place', ...orderArgs()]);
    const whole = program();
    expect(lazy.commands.map((c) => [c.name(), c.summary(), c.registeredArguments.map((a) => a.name())])).toEqual(
      whole.commands.map((c) => [c.name(), c.summary(), c.registeredArguments.map((a) => a.name())]),
    );
    expect(filled(lazy)).toEqual([]);
    // The whole tree fills in its commands that have options or subcommands: place among them.
    expect(filled(whole)).toContain('place');
    expect(lazy.helpInformation()).toBe(whole.helpInformation());
    // A name that is no command, `trade help`, and the completion scripts (they read the whole tree): all of them too.
    for (const argv of [['plcae'], ['help', 'place'], ['completion', 'bash'], []]) expect(program(argv).commands.length, argv.join(' ')).toBe(whole.commands.length);
  });

  it('registers only the command named first, when there is one', () => {
    expect(program(['place', ...orderArgs()]).commands.map((c) => c.name())).toEqual(['place']);
    expect(program(['price', 'set', 'ES', '6000']).commands.map((c) => c.name())).toEqual(['price']);
  });

  it('fills in only the command commander dispatches to', async () => {
    const lazy = program(['place', '--help']);
    lazy.exitOverride();
    await expect(lazy.parseAsync(['place', '--help'], { from: 'user' })).rejects.toThrow('(outputHelp)');
    expect(filled(lazy)).toEqual(['place']);
    const place = lazy.commands.find((c) => c.name() === 'place')!;
    const whole = program().commands.find((c) => c.name() === 'place')!;
    expect(place.options.map((o) => o.flags)).toEqual(whole.options.map((o) => o.flags));
    expect(place.helpInformation()).toBe(whole.helpInformation());
  });

  it('answers help, did-you-mean and a nested help path as the whole tree does', async () => {
    expect(await runCli(['help', 'place'], env)).toEqual(await runCli(['place', '--help'], env));
    const nested = await runCli(['help', 'price', 'set'], env);
    expect(nested.code).toBe(0);
    expect(nested.stdout).toMatch(/^Usage: trade price set /);
    const typo = await runCli(['plcae'], env);
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('(Did you mean place?)');
    const flag = await runCli(['place', '--acount', 'Sim101'], env);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('(Did you mean --account?)');
  });

  it('completion scripts still complete every command and its flags', async () => {
    const result = await runCli(['completion', 'bash'], env);
    expect(result.code).toBe(0);
    for (const word of ['place', 'reverse', '--limit-price', '--flatten-first', '--invert', 'sandbox']) expect(result.stdout).toContain(word);
  });
});
