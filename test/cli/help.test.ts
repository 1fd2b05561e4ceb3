/**
 * Every command's --help, as snapshots (test/cli/__snapshots__/help.test.ts.snap), at a fixed
 * width (COLUMNS=80, not a terminal) so they do not depend on where the suite runs. A change to a
 * command's flags or wording shows up here, to be reviewed and accepted with `vitest -u`.
 */
import { PassThrough } from 'node:stream';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { runCli, tempHome } from '../helpers/cli.js';

const home = tempHome();
const env = { ...home.env, COLUMNS: '80' };

/**
 * Every command path `trade --help` shows, the root ('') first; commander's implicit `help` aside,
 * and the hidden commands (HIDDEN below), which no person is meant to run.
 */
function commandPaths(): string[][] {
  const io = createIo({ stdin: new PassThrough(), stdout: { write: () => true }, stderr: { write: () => true } }, env);
  const program = buildProgram(createContext(io, env), io);
  const paths: string[][] = [];
  const visit = (command: Command, path: string[]) => {
    paths.push(path);
    for (const child of command.createHelp().visibleCommands(command)) if (child.name() !== 'help') visit(child, [...path, child.name()]);
  };
  visit(program, []);
  return paths;
}

/** The commands kept out of help on purpose: the completion scripts' live values. */
const HIDDEN = ['__complete'];

const PATHS = commandPaths();

describe('help', () => {
  it('covers every command', () => {
    expect(PATHS.map((p) => p.join(' '))).toEqual([
      '',
      'place',
      'reverse',
      'modify',
      'replace',
      'cancel',
      'bracket',
      'orders',
      'order',
      'batch',
      'alert',
      'positions',
      'position',
      'close',
      'flatten',
      'account',
      'accounts',
      'accounts list',
      'accounts snapshot',
      'accounts add',
      'executions',
      'execution',
      'report',
      'quote',
      'watch',
      'watch quotes',
      'watch pnl',
      'watch orders',
      'watch executions',
      'price',
      'price set',
      'price replay',
      'price random',
      'price follow',
      'price source',
      'price run',
      'price list',
      'contract',
      'contract list',
      'contract set',
      'contract add',
      'contract remove',
      'atm',
      'atm add',
      'atm list',
      'atm remove',
      'guard',
      'guard show',
      'guard test',
      'guard init',
      'guard reset',
      'halt',
      'resume',
      'history',
      'reconcile',
      'serve',
      'sandbox',
      'sandbox inject',
      'sandbox rules',
      'sandbox clear',
      'sandbox log',
      'sandbox alerts',
      'sandbox save',
      'sandbox restore',
      'sandbox reset',
      'sandbox clock',
      'mcp',
      'mcp token',
      'login',
      'logout',
      'auth',
      'auth status',
      'config',
      'config set',
      'config get',
      'config unset',
      'config list',
      'config path',
      'doctor',
      'completion',
    ]);
  });

  it.each(PATHS.map((p) => [p.length === 0 ? 'trade' : `trade ${p.join(' ')}`, p] as const))(
    '%s --help: a description, every flag described, examples; exit 0',
    async (_name, path) => {
      const result = await runCli([...path, '--help'], env);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toMatch(/^Usage: trade .*\n\n\S/); // the description follows the usage line
      expect(result.stdout).toMatch(/\nExamples:\n {2}\$ trade /);
      for (const line of result.stdout.split('\n').filter((l) => /^ {2}-/.test(l))) expect(line).toMatch(/^ {2}\S.*\S {2,}\S/);
      expect(result.stdout).toMatchSnapshot();
    },
  );

  it('trade --help groups the commands by what a trader does, then examples and where to read more', async () => {
    const help = (await runCli(['--help'], env)).stdout;
    const groups: Record<string, string[]> = {};
    let heading: string | undefined;
    for (const line of help.split('\n')) {
      if (/^\S.*:$/.test(line)) (groups[(heading = line)] ??= []);
      else if (heading && /^ {2}[a-z]/.test(line)) groups[heading]!.push(line.trim().split(/\s+/)[0]!);
      else if (line === '') heading = undefined;
    }
    expect(Object.keys(groups)).toEqual([
      'Options:',
      'Orders:',
      'Positions and account:',
      'Market data:',
      'The simulator (embedded engine):',
      'Safety: the guard:',
      'Testing and agents:',
      'Setup:',
      'Examples:',
      'Learn more:',
    ]);
    expect(groups).toEqual({
      'Options:': [],
      'Orders:': ['place', 'reverse', 'modify', 'replace', 'cancel', 'bracket', 'orders', 'order', 'batch', 'alert'],
      'Positions and account:': ['positions', 'position', 'close', 'flatten', 'account', 'accounts', 'executions', 'execution', 'report'],
      'Market data:': ['quote', 'watch'],
      'The simulator (embedded engine):': ['price', 'contract', 'atm'],
      'Safety: the guard:': ['guard', 'halt', 'resume', 'history', 'reconcile'],
      'Testing and agents:': ['serve', 'sandbox', 'mcp'],
      'Setup:': ['login', 'logout', 'auth', 'config', 'doctor', 'completion', 'help'],
      'Examples:': [],
      'Learn more:': ['trade', 'docs/commands.md', 'docs/README.md'],
    });
    // The list names a command with its arguments, not with forty "[options]".
    expect(help).toMatch(/\n {2}modify <order-id> +Change a working order's quantity, limit or stop\n/);
    expect(help).toMatch(/\n {2}place +Place an order\n/);
    expect(help.slice(help.indexOf('\nLearn more:'))).toBe(
      [
        '',
        'Learn more:',
        "  trade help COMMAND  a command's flags and examples (or trade COMMAND --help)",
        '  docs/commands.md    every command on one page; man trade, the same as a man page',
        '  docs/README.md      the manual: going live, the guard, trade serve, paper trading',
        '',
        '',
      ].join('\n'),
    );
    // A command group keeps commander's terms and its own help command.
    expect((await runCli(['price', '--help'], env)).stdout).toMatch(/\n {2}set \[options\] <instrument> <price> +Set the last price/);
  });

  it('hides only the commands meant for scripts, and they still run', async () => {
    const io = createIo({ stdin: new PassThrough(), stdout: { write: () => true }, stderr: { write: () => true } }, env);
    const program = buildProgram(createContext(io, env), io);
    const shown = new Set(program.createHelp().visibleCommands(program).map((c) => c.name()));
    expect(program.commands.map((c) => c.name()).filter((name) => !shown.has(name))).toEqual(HIDDEN);
    const help = await runCli(['--help'], env);
    for (const name of HIDDEN) {
      expect(help.stdout).not.toContain(name);
      expect((await runCli([name, 'profiles'], env)).code).toBe(0);
    }
  });

  it('`trade help <command>` is `trade <command> --help`', async () => {
    expect((await runCli(['help', 'place'], env)).stdout).toBe((await runCli(['place', '--help'], env)).stdout);
    expect((await runCli(['config', 'help', 'set'], env)).stdout).toBe((await runCli(['config', 'set', '--help'], env)).stdout);
  });

  it('a command group without a subcommand prints its help on stderr, exit 2', async () => {
    for (const group of ['price', 'atm', 'watch', 'config', 'auth']) {
      const result = await runCli([group], env);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      expect(result.stderr).toBe((await runCli([group, '--help'], env)).stdout);
    }
  });

  it('trade accounts alone lists the accounts, as trade accounts list does', async () => {
    const alone = await runCli(['accounts', '--json'], env);
    expect(alone.code).toBe(0);
    expect(JSON.parse(alone.stdout)).toMatchObject({ count: 1, success: true, accounts: [{ name: 'Sim101' }] });
    expect(alone).toEqual(await runCli(['accounts', 'list', '--json'], env));
  });

  it('an unknown subcommand suggests the nearest one, exit 2', async () => {
    expect(await runCli(['config', 'lsit'], env)).toEqual({
      code: 2,
      stdout: '',
      stderr: "error: unknown command 'lsit'\n(Did you mean list?)\n",
    });
    expect(await runCli(['doctr'], env)).toEqual({ code: 2, stdout: '', stderr: "error: unknown command 'doctr'\n(Did you mean doctor?)\n" });
  });
});

describe('trade help NAME', () => {
  it('is an error naming an unknown command, with the nearest one; a path shows that command\'s help', async () => {
    const { env, cleanup } = tempHome();
    try {
      const cases: Array<[string[], string]> = [
        [['help', 'nosuch'], "Error: Unknown command 'nosuch'\n  Run 'trade --help' for the commands there are.\n"],
        [['help', 'plac'], "Error: Unknown command 'plac' (did you mean place?)\n  Run 'trade --help' for the commands there are.\n"],
        [['help', 'price', 'sett'], "Error: Unknown command 'sett' of trade price (did you mean set?)\n  Run 'trade price --help' for the commands there are.\n"],
      ];
      for (const [argv, stderr] of cases) expect(await runCli(argv, env)).toEqual({ code: 2, stdout: '', stderr });
      const nested = await runCli(['help', 'price', 'set'], env);
      expect(nested.code).toBe(0);
      expect(nested.stdout).toMatch(/^Usage: trade price set \[options\] <instrument> <price>\n/);
      expect((await runCli(['help', 'place'], env)).stdout).toMatch(/^Usage: trade place \[options\]\n/);
    } finally {
      cleanup();
    }
  });
});
