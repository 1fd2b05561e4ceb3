import { using, type CommandContext } from '../context.js';
import { parseAccountName } from '../../order/schema.js';

export interface AccountsOptions {
  json?: boolean;
}

export async function runAccountsList(ctx: CommandContext, options: AccountsOptions): Promise<void> {
  const accounts = await using(await ctx.openEngine(), (engine) => engine.listAccounts());
  if (options.json) ctx.io.out(JSON.stringify({ accounts, success: true }));
  else for (const name of accounts) ctx.io.out(name);
}

export async function runAccountsAdd(ctx: CommandContext, name: string, options: AccountsOptions): Promise<void> {
  const account = parseAccountName(name);
  const added = await using(await ctx.openEngine(), (engine) => engine.addAccount(account));
  if (options.json) ctx.io.out(JSON.stringify({ account: added, success: true }));
  else ctx.io.out(ctx.io.color.green(`Added simulation account ${added}`));
}
