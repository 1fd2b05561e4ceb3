/**
 * The commander tree, built from the command table (src/cli/tree/): each command's name, summary,
 * description, arguments, options and examples are declared there once. Each action imports its
 * command file on demand, so `trade --help` loads neither the engine nor the schema.
 */
import { type Argument, Command, Option } from 'commander';
import { CONFIG_KEYS, ENV_FOR, KEY_HELP } from '../config/key-table.js';
import { VERSION } from '../common/version.js';
import type { MutableContext } from './context.js';
import { helpWidth, type Io } from './io.js';
import { GLOBAL_OPTIONS, GROUPS, PROGRAM_DESCRIPTION, PROGRAM_EXAMPLES, READ_MORE } from './tree/index.js';
import type { CommandSpec, OptionSpec } from './tree/spec.js';

export function examples(lines: readonly string[]): string {
  return `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;
}

/** `<order-id>`, `[file]`, `<instrument...>`: an argument as usage writes it. */
function argumentTerm(argument: Argument): string {
  const name = `${argument.name()}${argument.variadic ? '...' : ''}`;
  return argument.required ? `<${name}>` : `[${name}]`;
}

function toOption(spec: OptionSpec): Option {
  const option = new Option(spec.flags, spec.description);
  if (spec.default !== undefined) option.default(spec.default);
  if (spec.required) option.makeOptionMandatory();
  if (spec.hidden) option.hideHelp();
  if (spec.parse) option.argParser(spec.parse);
  return option;
}

/** One command of the table, and its subcommands, added to commander's tree under parent. */
function addCommand(ctx: MutableContext, program: Command, parent: Command, spec: CommandSpec, group?: string): void {
  fillCommand(ctx, program, addShell(parent, spec, group), spec);
}

/**
 * What the program's list of commands, did-you-mean and completion of names read: the name, the
 * summary, the arguments and the group. Options, help texts, the action and subcommands are the
 * rest (fillCommand).
 */
function addShell(parent: Command, spec: CommandSpec, group?: string): Command {
  const command = parent.command(spec.name, { isDefault: spec.isDefault, hidden: spec.hidden }).description(spec.description);
  if (spec.summary !== undefined) command.summary(spec.summary);
  if (group !== undefined) command.helpGroup(group);
  for (const argument of spec.arguments ?? []) command.argument(argument.name, argument.description);
  return command;
}

function fillCommand(ctx: MutableContext, program: Command, command: Command, spec: CommandSpec): void {
  for (const option of spec.options ?? []) command.addOption(toOption(option));
  const after = spec.examples ? examples(spec.examples) : '';
  if (spec.keysHelp) command.addHelpText('after', () => `${configKeysHelpText()}${after}`);
  else if (after) command.addHelpText('after', after);
  const run = spec.run;
  if (run)
    command.action(async (...params: unknown[]) => {
      // commander calls an action with the arguments, then the options, then the command.
      await run(ctx, { args: params.slice(0, -2), options: params.at(-2), program });
    });
  for (const sub of spec.commands ?? []) addCommand(ctx, program, command, sub);
}

/** The commands that make or inspect profiles: a profile not yet in the config is theirs to name. */
const MAKES_PROFILES = new Set(['login', 'config', 'completion', '__complete']);

/**
 * `--profile NAME` for a profile the config does not have is an error listing the ones it has
 * (exit 3), not a silent run on the defaults; `trade login` and `trade config` create profiles.
 */
async function checkProfile(ctx: MutableContext, profile: string, action: Command): Promise<void> {
  let top = action;
  while (top.parent?.parent) top = top.parent;
  if (MAKES_PROFILES.has(top.name())) return;
  const { readConfigFile } = await import('../config/config-file.js');
  const { ConfigError } = await import('../common/errors.js');
  const profiles = readConfigFile(ctx.env).profiles;
  const names = profiles !== null && typeof profiles === 'object' && !Array.isArray(profiles) ? Object.keys(profiles) : [];
  if (names.includes(profile) || profile === 'default') return;
  throw new ConfigError(`Unknown profile '${profile}': ${names.length > 0 ? `the config has ${names.join(', ')}` : 'the config has no profiles yet'}`, {
    code: 'unknown_profile',
    hint: `Nothing was done. Create it with: trade --profile ${profile} login, or trade --profile ${profile} config set KEY VALUE.`,
  });
}

/** The top-level commands not yet filled, each with what fills it (a lazily built tree). */
const unfilled = new WeakMap<Command, Map<Command, () => void>>();

/** Fills every command of a lazily built tree (completion scripts walk the whole tree). */
export function buildWhole(program: Command): void {
  const pending = unfilled.get(program);
  for (const fill of pending?.values() ?? []) fill();
}

/**
 * The commander tree. With `argv` (main's run), it is built for the command that runs: every
 * top-level command is registered with its name, summary, arguments and group (for `trade --help`,
 * did-you-mean and `trade help`), or only the command named first when there is one, and only the
 * one dispatched to gets its options, help texts, action and subcommands, just before commander
 * parses its arguments (issue 34). Without `argv`, the whole tree (tests, the manual).
 */
export function buildProgram(ctx: MutableContext, io: Io, argv?: readonly string[]): Command {
  const program = new Command('trade')
    .description(PROGRAM_DESCRIPTION)
    .version(VERSION, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help');
  for (const option of GLOBAL_OPTIONS) program.addOption(toOption(option));
  program
    .hook('preAction', async (_program, action) => {
      const { backend, profile, insecure, confirmLive, guard } = action.optsWithGlobals();
      ctx.setGlobalFlags({ backend, profile, insecure, confirmLive, guard });
      if (profile !== undefined) await checkProfile(ctx, profile, action);
    })
    .showSuggestionAfterError(true)
    // Wrap descriptions even in a narrow terminal (commander's own floor is 40 columns).
    .configureHelp({ showGlobalOptions: true, minWidthToWrap: 24 })
    .exitOverride()
    .configureOutput({
      writeOut: (s) => void io.stdout.write(s),
      writeErr: (s) => void io.stderr.write(s),
      outputError: (s, write) => write(io.errColor.red(s)),
      // The same streams and rules as everything else prints by, not process.stdout's.
      getOutHelpWidth: () => helpWidth(io.stdout, ctx.env) ?? 80,
      getErrHelpWidth: () => helpWidth(io.stderr, ctx.env) ?? 80,
      getOutHasColors: () => io.color.level > 0,
      getErrHasColors: () => io.errColor.level > 0,
    })
    // Subcommands copy it as they are added: `trade price help set`.
    .helpCommand('help [command]', 'Show help for a command')
    .addHelpText('after', `${examples(PROGRAM_EXAMPLES)}\n${READ_MORE.join('\n')}\n`);
  if (argv === undefined) {
    for (const group of GROUPS) for (const spec of group.commands) addCommand(ctx, program, program, spec, `${group.title}:`);
  } else {
    const pending = new Map<Command, () => void>();
    unfilled.set(program, pending);
    // A command named first (`trade place ...`) is the one that runs: only it is registered. An
    // option first, a name that is no command, `trade help` or a command that reads the whole tree
    // registers them all (what commander dispatches to, suggests and lists depends on the others then).
    const first = argv[0] === 'help' ? undefined : GROUPS.flatMap((group) => group.commands).find((spec) => spec.name === argv[0]);
    const named = first?.wholeTree ? undefined : first?.name;
    for (const group of GROUPS)
      for (const spec of group.commands) {
        if (named !== undefined && spec.name !== named) continue;
        const shell = addShell(program, spec, `${group.title}:`);
        pending.set(shell, () => {
          pending.delete(shell);
          fillCommand(ctx, program, shell, spec);
        });
      }
    // Commander calls this before the command it dispatches to parses anything (`trade help place` too).
    program.hook('preSubcommand', (_program, command) => pending.get(command)?.());
    // `trade help price set` walks the tree itself (main.ts): the command it names first is filled now.
    if (argv[0] === 'help' && argv[1] !== undefined) for (const [shell, fill] of pending) if (shell.name() === argv[1]) fill();
  }
  // The program's own `trade help COMMAND` (a new one: the subcommands keep theirs), listed last,
  // with the setup commands.
  program.commandsGroup(`${GROUPS.at(-1)!.title}:`).helpCommand('help [command]', 'Show help for a command');
  // The program's list names each command with its arguments only: forty commands in seven groups
  // read better without forty "[options]". Set after the subcommands copied the settings above,
  // so their own lists keep commander's terms.
  program.configureHelp({ ...program.configureHelp(), subcommandTerm: (command) => [command.name(), ...command.registeredArguments.map(argumentTerm)].join(' ') });
  return program;
}

function configKeysHelpText(): string {
  const lines = CONFIG_KEYS.map((key) => `  ${key.padEnd(9)} ${KEY_HELP[key]} [${ENV_FOR[key]}]`);
  return `\nKeys:\n${lines.join('\n')}\n`;
}
