/**
 * The whole command tree, in the groups `trade --help` shows them in, and the program's own
 * description, global options and examples.
 */
import { InvalidArgumentError } from 'commander';
import { GUARD_RULES } from '../../config/guard-syntax.js';
import { LEDGER_KEYS } from '../../config/key-table.js';
import { MARKET_COMMANDS } from './market.js';
import { ORDER_COMMANDS } from './orders.js';
import { POSITION_COMMANDS } from './positions.js';
import { SAFETY_COMMANDS } from './safety.js';
import { SETUP_COMMANDS } from './setup.js';
import { SIMULATOR_COMMANDS } from './simulator.js';
import type { GroupSpec, OptionSpec } from './spec.js';
import { TESTING_COMMANDS } from './testing.js';

export const GROUPS: readonly GroupSpec[] = [
  { title: 'Orders', commands: ORDER_COMMANDS },
  { title: 'Positions and account', commands: POSITION_COMMANDS },
  { title: 'Market data', commands: MARKET_COMMANDS },
  { title: 'The simulator (embedded engine)', commands: SIMULATOR_COMMANDS },
  { title: 'Safety: the guard', commands: SAFETY_COMMANDS },
  { title: 'Testing and agents', commands: TESTING_COMMANDS },
  { title: 'Setup', commands: SETUP_COMMANDS },
];

export const PROGRAM_DESCRIPTION = 'Place orders and reverse positions on trading accounts, from scripts or a terminal.';

/** `--guard max-order-qty=2`, repeatable: the rules given, by name, and the ledger's keys (`--guard ledger=…`); an unknown name is a usage error. */
function collectGuard(raw: string, previous: Record<string, string> = {}): Record<string, string> {
  const eq = raw.indexOf('=');
  const rule = eq < 0 ? raw.trim() : raw.slice(0, eq).trim().replace(/^guard\./, '');
  const names: string[] = [...GUARD_RULES, ...LEDGER_KEYS.map((key) => key.slice('guard.'.length))];
  if (eq < 0 || !names.includes(rule))
    throw new InvalidArgumentError(`it takes RULE=VALUE with a rule among ${GUARD_RULES.join(', ')}, or ledger=, machine=, ledger-timeout= (--guard max-order-qty=2).`);
  return { ...previous, [rule]: raw.slice(eq + 1) };
}

/** The options every command takes, before or after its name. */
export const GLOBAL_OPTIONS: readonly OptionSpec[] = [
  { flags: '--backend <name>', description: 'embedded, http or ws (default: TRADE_BACKEND, config, embedded)' },
  { flags: '--profile <name>', description: 'config profile to use (default: TRADE_PROFILE, "default")' },
  { flags: '--insecure', description: 'allow sending the token over plain http:// or ws:// to another host' },
  { flags: '--confirm-live', description: "confirm orders to an account that is not a simulation account (the guard's confirm-live rule)" },
  {
    flags: '--guard <rule=value>',
    description: 'a guard rule for this run, over TRADE_GUARD_* and the config (repeatable): --guard max-order-qty=2',
    parse: collectGuard,
  },
];

/** Under `trade --help`: a first session, in four lines. */
export const PROGRAM_EXAMPLES: readonly string[] = [
  `trade place --account Sim101 --instrument "ES 09-25" --action BUY --quantity 1 --order-type MARKET --tif DAY`,
  `trade reverse --account Sim101 --instrument "ES 09-25" --action SELL --quantity 1 --order-type MARKET --tif DAY`,
  `trade price set "ES 09-25" 4500`,
  'trade positions --account Sim101',
];

/** Where to read more, under the examples of `trade --help`. */
export const READ_MORE: readonly string[] = [
  'Learn more:',
  "  trade help COMMAND  a command's flags and examples (or trade COMMAND --help)",
  '  docs/commands.md    every command on one page; man trade, the same as a man page',
  '  docs/README.md      the manual: going live, the guard, trade serve, paper trading',
];
