/**
 * The lists a person picks from at the order prompts: the backend's accounts (ListAccounts) and
 * the embedded store's ATM templates. Read before the first question, only when the question will
 * be asked. A list that cannot be read is said once, dimmed, and its question becomes a typed
 * answer, checked by the schema as it is given.
 */
import type { Backend } from '../backends/types.js';
import { UsageError } from '../common/errors.js';
import { printable } from '../service/order.js';
import type { CommandContext } from './context.js';
import { using } from './context.js';
import { listed } from './order-prompts.js';
import type { OrderDraft } from './order-flags.js';

export interface PromptLists {
  accounts?: string[];
  templates?: string[];
}

async function read(ctx: CommandContext, what: string, load: () => Promise<string[]>): Promise<string[] | undefined> {
  try {
    return await load();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    ctx.io.err(ctx.io.errColor.dim(`Cannot list the ${what} (${why}); type the name instead.`));
    return undefined;
  }
}

/**
 * The lists for this run's questions. `flags` holds only what the flags gave: a --account or
 * --strategy that is not in its list is refused here, before any question, naming the flag and
 * what the list has (the service would refuse it only after the whole form and the confirm).
 */
export async function promptLists(ctx: CommandContext, backend: Backend, flags: OrderDraft, review: boolean): Promise<PromptLists> {
  const lists: PromptLists = {};
  const defaultAccount = await ctx.defaultAccount();
  if (review || (flags.account === undefined && defaultAccount === undefined)) {
    lists.accounts = await read(ctx, 'accounts', async () => (await backend.call('ListAccounts', {})).value.accounts.map((a) => a.name));
    refuseUnlisted('--account', 'account', flags.account, lists.accounts);
  }
  // The ATM store is the embedded engine's; the service documents no list of templates.
  if (backend.name === 'embedded' && (review || flags.strategy !== undefined)) {
    lists.templates = await read(ctx, 'ATM templates', async () => using(await ctx.openEngine(), (engine) => engine.listAtmTemplates().map((t) => t.name)));
    refuseUnlisted('--strategy', 'ATM strategy template', flags.strategy, lists.templates);
  }
  return lists;
}

function refuseUnlisted(flag: string, what: string, given: unknown, names: string[] | undefined): void {
  if (typeof given !== 'string' || names === undefined || listed(names, given) !== undefined) return;
  const known = names.length > 0 ? `the list has ${names.join(', ')}` : 'the list is empty';
  throw new UsageError(`${flag}: ${what} '${printable(given)}' not found; ${known}`, {
    hint: `Nothing was sent. Give one from the list, or leave out ${flag} to pick it at the prompt.`,
  });
}
