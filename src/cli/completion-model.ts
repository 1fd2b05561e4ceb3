/**
 * The command tree as shell completion sees it, walked from commander at generation time: each
 * command's subcommands, flags (which take a value, and what that value is) and arguments. The
 * bash, zsh and fish scripts are all written from this one model, so they cannot disagree with
 * the CLI or with each other.
 */
import type { Argument, Command, Option } from 'commander';
import { CONFIG_KEYS } from '../config/key-table.js';
import { BACKENDS, REMOTE_BACKENDS } from '../config/keys.js';
import { PRICE_SOURCES } from '../engine/sources.js';
import { ACTIONS, OPEN_SIDES, ORDER_TYPES, SIDES, TIMES_IN_FORCE } from '../service/order.js';
import { TIERS } from '../mcp/tiers.js';
import { LIVE_SOURCES, type LiveSource } from './complete-sources.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** What a flag's or an argument's value is, for completion. */
export type ValueSpec =
  /** One of these, matched in any case; `list`: a comma list of them. */
  | { kind: 'choices'; values: readonly string[]; list?: boolean }
  | { kind: 'file' }
  /** Read when Tab is pressed, by `trade __complete SOURCE`. */
  | { kind: 'live'; source: LiveSource }
  /** Free text: nothing to offer, and no flag names either. */
  | { kind: 'text' };

const choices = (values: readonly string[], list = false): ValueSpec => ({ kind: 'choices', values, ...(list ? { list } : {}) });
const live = (source: LiveSource): ValueSpec => ({ kind: 'live', source });
const FILE: ValueSpec = { kind: 'file' };

/**
 * What each value is, by flag (`--account`) or argument (`<order-id>`), or for one command only
 * (`close --strategy`, `atm remove <name>`), the command's own rule first. A value not named here
 * is a file when its placeholder says so (`<file>`), else free text. The values themselves come
 * from the modules that validate them. A test fails on a rule that matches nothing in the tree.
 */
export const VALUE_RULES: Readonly<Record<string, ValueSpec>> = {
  '--account': live('accounts'),
  '--profile': live('profiles'),
  '--backend': choices(BACKENDS),
  '--from': choices(REMOTE_BACKENDS),
  'report --from': { kind: 'text' },
  '--tier': choices(TIERS),
  '--action': choices(ACTIONS),
  '--order-type': choices(ORDER_TYPES),
  '--tif': choices(TIMES_IN_FORCE),
  '--time-in-force': choices(TIMES_IN_FORCE),
  '--side': choices(OPEN_SIDES),
  '--require-position': choices(SIDES, true),
  '--strategy': live('atm-templates'),
  'close --strategy': live('strategies'),
  '--instrument': live('instruments'),
  '--price-instrument': live('instruments'),
  '--price-random': live('instruments'),
  '--price-follow': live('instruments'),
  '<instrument>': live('instruments'),
  '<order-id>': live('working-orders'),
  'order <order-id>': live('orders'),
  '<execution-id>': live('executions'),
  '<shell>': choices(SHELLS),
  '<root>': live('roots'),
  '<source>': choices(PRICE_SOURCES),
  'account <name>': live('accounts'),
  'atm remove <name>': live('atm-templates'),
  'config set <key>': choices(CONFIG_KEYS.filter((k) => k !== 'token')),
  'config get <key>': choices(CONFIG_KEYS),
  'config unset <key>': choices(CONFIG_KEYS),
};

export interface FlagModel {
  /** Every spelling: `--yes`, `-y`. */
  names: string[];
  long?: string;
  short?: string;
  description: string;
  /** Undefined when the flag takes no value. */
  value?: ValueSpec;
  /** Understood but not offered (`--time-in-force`, an alias kept out of --help). */
  hidden: boolean;
}

export interface ArgumentModel {
  name: string;
  variadic: boolean;
  value: ValueSpec;
}

export interface NodeModel {
  /** `''` for trade itself, else the command path: `price source`. */
  path: string;
  summary: string;
  children: string[];
  /** The command's own flags, then the global ones it inherits (the root has only its own). */
  flags: FlagModel[];
  args: ArgumentModel[];
}

export interface CompletionModel {
  nodes: NodeModel[];
  /** Every VALUE_RULES key some flag or argument used. */
  rulesUsed: Set<string>;
}

function placeholderOf(flags: string): string | undefined {
  return /[<[]([^>\]]+)[>\]]/.exec(flags)?.[1];
}

function valueOf(path: string, key: string, placeholder: string | undefined, used: Set<string>): ValueSpec {
  for (const rule of [path ? `${path} ${key}` : key, key]) {
    const spec = VALUE_RULES[rule];
    if (spec) {
      used.add(rule);
      return spec;
    }
  }
  return placeholder?.replace(/\.\.\.$/, '') === 'file' ? FILE : { kind: 'text' };
}

function summaryOf(command: Command): string {
  return command.summary() || command.description().split(/\.(\s|$)/)[0]!;
}

/** The subcommands `trade --help` shows: hidden ones (`__complete`) and commander's `help` aside. */
export function visibleCommands(command: Command): Command[] {
  return command.createHelp().visibleCommands(command).filter((c) => c.name() !== 'help');
}

export function completionModel(program: Command): CompletionModel {
  const used = new Set<string>();
  const flagsOf = (command: Command, path: string): FlagModel[] =>
    (command.options as Option[]).map((o) => ({
      names: [o.long, o.short].filter((f): f is string => Boolean(f)),
      ...(o.long ? { long: o.long } : {}),
      ...(o.short ? { short: o.short } : {}),
      description: o.description,
      ...(o.required || o.optional ? { value: valueOf(path, o.long ?? o.short!, placeholderOf(o.flags), used) } : {}),
      hidden: o.hidden,
    }));
  const help: FlagModel = { names: ['--help', '-h'], long: '--help', short: '-h', description: 'show help', hidden: false };
  const globals = flagsOf(program, '').filter((f) => f.long !== '--version');
  const nodes: NodeModel[] = [];
  const visit = (command: Command, path: string) => {
    const children = visibleCommands(command);
    const own = flagsOf(command, path);
    nodes.push({
      path,
      summary: path === '' ? command.description() : summaryOf(command),
      children: children.map((c) => c.name()),
      flags: path === '' ? [...flagsOf(program, ''), help] : [...own, ...globals.filter((g) => !own.some((o) => o.long === g.long)), help],
      args: (command.registeredArguments as Argument[]).map((a) => ({
        name: a.name(),
        variadic: a.variadic,
        value: valueOf(path, `<${a.name()}>`, a.name(), used),
      })),
    });
    for (const child of children) visit(child, path ? `${path} ${child.name()}` : child.name());
  };
  visit(program, '');
  return { nodes, rulesUsed: used };
}

/** A value spec as one word list: `choices BUY SELL`, `list flat long short`, `file`, `live accounts`, `text`. */
export function specWords(spec: ValueSpec): string {
  switch (spec.kind) {
    case 'choices':
      for (const value of spec.values) if (!/^[^\s'"\\$`]+$/.test(value)) throw new Error(`Cannot complete the choice '${value}': a choice is one plain word`);
      return `${spec.list ? 'list' : 'choices'} ${spec.values.join(' ')}`;
    case 'live':
      return `live ${spec.source}`;
    default:
      return spec.kind;
  }
}

export { LIVE_SOURCES };
