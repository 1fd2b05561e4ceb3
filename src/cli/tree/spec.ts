/**
 * The command tree as data: each command's name, summary, description, arguments, options,
 * examples and the run function it loads on demand. src/cli/program.ts builds commander's tree from
 * it, and src/cli/manual.ts writes the command reference (docs/commands.md) and the man page
 * (trade.1) from it, so `--help`, the reference and the man page say the same thing.
 */
import type { Command } from 'commander';
import type { MutableContext } from '../context.js';

export interface OptionSpec {
  /** commander's flags: `--account <name>`, `-y, --yes`, `--no-input`. */
  flags: string;
  description: string;
  /** The value when the flag is not given, shown in help as `(default: ...)`. */
  default?: string;
  /** A required option: commander refuses the command without it. */
  required?: boolean;
  /** Accepted but left out of help and of the reference (an alias). */
  hidden?: boolean;
  /** Turns each value given into the option's value (a repeatable flag collects them). */
  parse?: (value: string, previous: any) => any;
}

export interface ArgumentSpec {
  /** `<order-id>` (required), `[file]` (optional), `<instrument...>` (one or more). */
  name: string;
  description: string;
}

/**
 * What a run function gets from commander: the arguments in the order declared (an optional one
 * undefined when left out, a variadic one an array), the options object (flags as commander parsed
 * them, still text: each run function validates its own), and the whole program.
 */
export interface Call {
  // Untyped, as commander gives them: each command's own parser checks its values.
  args: any[];
  options: any;
  program: Command;
}

export interface CommandSpec {
  name: string;
  /** The line in the parent's list of commands (else the description's). */
  summary?: string;
  description: string;
  arguments?: readonly ArgumentSpec[];
  options?: readonly OptionSpec[];
  /** Command lines shown under "Examples:", each run as written by the tests of the reference. */
  examples?: readonly string[];
  /** Help lists the config keys before the examples (`trade config`). */
  keysHelp?: boolean;
  /** Run when the parent is given no subcommand (`trade accounts` is `trade accounts list`). */
  isDefault?: boolean;
  /** Left out of help and the reference: the completion scripts' own command. */
  hidden?: boolean;
  /** Its run reads the whole tree (the completion scripts): every command is registered with it. */
  wholeTree?: boolean;
  /** Loads the command's module (import(), so help loads none) and runs it. */
  run?: (ctx: MutableContext, call: Call) => Promise<void>;
  commands?: readonly CommandSpec[];
}

/** A heading of `trade --help`: the commands a trader reaches for together. */
export interface GroupSpec {
  title: string;
  commands: readonly CommandSpec[];
}
