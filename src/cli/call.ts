/**
 * What the commands of the service's operations share: the account they act on (the flag, else
 * TRADE_ACCOUNT or the config), one call through the chosen backend, and the answer printed as
 * the service's body (`--json`) or as lines for a person.
 */
import type { CallResult } from '../backends/types.js';
import { parseAll, UsageError } from '../order/errors.js';
import { parseAccountName } from '../order/schema.js';
import type { ArgsOf, OperationName } from '../service/operations.js';
import { using, type CommandContext } from './context.js';

export interface JsonOption {
  json?: boolean;
}

/** The account a command acts on; a usage error naming --account when there is none. */
export async function accountFor(ctx: CommandContext, flag: string | undefined, command: string): Promise<string> {
  const raw = flag ?? (await ctx.defaultAccount());
  if (raw === undefined)
    throw new UsageError('Missing required flag: --account (or set TRADE_ACCOUNT, or `trade config set account NAME`)', {
      hint: `Nothing was sent. Run 'trade ${command} --help' for an example.`,
    });
  return parseAll<[string]>([() => parseAccountName(raw)], { hint: `Nothing was sent. Run 'trade ${command} --help' for examples.` })[0];
}

/** One operation through the chosen backend; its answer as the service's body or as lines for a person. */
export async function callAndPrint<K extends OperationName>(
  ctx: CommandContext,
  name: K,
  args: ArgsOf<K>,
  options: JsonOption,
  human: (result: CallResult<K>, backendLabel: string) => string[],
): Promise<CallResult<K>> {
  const backend = await ctx.openBackend();
  const result = await using(backend, (b) => b.call(name, args));
  if (options.json) ctx.io.out(JSON.stringify(result.body));
  else for (const line of human(result, backend.label)) ctx.io.out(line);
  return result;
}

/** The simulator's own commands (prices, ATM templates, new accounts) have nothing to act on remotely. */
export async function requireEmbedded(ctx: CommandContext, command: string): Promise<void> {
  const { backend } = await ctx.settings();
  if (backend !== 'embedded')
    throw new UsageError(`trade ${command} belongs to the simulator (the embedded engine), not to the ${backend} backend's service.`, {
      hint: 'Nothing was sent. Run it with --backend embedded (on the store a `trade serve` uses, to change what it serves).',
    });
}
