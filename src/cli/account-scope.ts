/**
 * Which accounts a list command reads, and a default that shows itself: a list narrowed by the
 * default account (TRADE_ACCOUNT or the config's `account`) says so on stderr, with the way to
 * see every account; a list narrowed by --account says nothing, as the person asked for it.
 */
import type { Backend } from '../backends/types.js';
import { parseAll, UsageError } from '../common/errors.js';
import { parseAccountName } from '../service/order.js';
import type { CommandContext } from './context.js';
import { note } from './io.js';

export interface AccountScope {
  /** One account, or undefined for every account. */
  account?: string;
  /** Where a default account came from: `config` or `TRADE_ACCOUNT`; undefined for --account or none. */
  defaultFrom?: string;
}

/** The account flag, --all-accounts, or the default account; checked before anything is sent. */
export async function accountScope(
  ctx: CommandContext,
  options: { account?: string; allAccounts?: boolean },
  command: string,
): Promise<AccountScope> {
  const hint = `Nothing was sent. Run 'trade ${command} --help' for examples.`;
  if (options.allAccounts) {
    if (options.account !== undefined) throw new UsageError('Give --account or --all-accounts, not both', { hint });
    return {};
  }
  if (options.account !== undefined) return { account: parseAll<[string]>([() => parseAccountName(options.account)], { hint })[0] };
  const settings = await ctx.settings();
  if (settings.account === undefined) return {};
  const [account] = parseAll<[string]>([() => parseAccountName(settings.account)], { hint });
  return { account, defaultFrom: settings.sources.account === 'env' ? 'TRADE_ACCOUNT' : 'config' };
}

/** `account Sim102 (from config); --all-accounts for every account`, when a default narrowed the list. */
export function showScope(ctx: CommandContext, scope: AccountScope): void {
  if (scope.account !== undefined && scope.defaultFrom !== undefined)
    note(ctx.io, `account ${scope.account} (from ${scope.defaultFrom}); --all-accounts for every account`);
}

/** Every account's name (ListAccounts), for the lists the service has only per account. */
export async function accountNames(backend: Backend): Promise<string[]> {
  return (await backend.call('ListAccounts', {})).value.accounts.map((a) => a.name);
}
