import { stripInvisible as shown } from '../../config/redact.js';
import { parseAccountName } from '../../service/order.js';
import type { AccountRead } from '../../service/shapes.js';
import { accountFor, callAndPrint, requireEmbedded, type JsonOption } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatMoney } from '../format.js';
import { fitTable } from '../io.js';

export interface AccountsOptions extends JsonOption {
  watermarks?: boolean;
}

const money = (account: AccountRead, field: string): string => {
  const value = account.item?.[field];
  return typeof value === 'number' ? formatMoney(value) : '—';
};

function table(accounts: AccountRead[], width?: number): string[] {
  return fitTable(
    ['ACCOUNT', 'CASH', 'NET LIQUIDATION', 'REALIZED TODAY', 'UNREALIZED', 'BUYING POWER', 'STATUS'],
    accounts.map((a) => [
      shown(a.name),
      money(a, 'cashValue'),
      money(a, 'netLiquidation'),
      money(a, 'realizedProfitLoss'),
      money(a, 'unrealizedProfitLoss'),
      money(a, 'buyingPower'),
      shown(a.status ?? '—'),
    ]),
    { width, optional: ['STATUS', 'BUYING POWER', 'UNREALIZED', 'REALIZED TODAY'] },
  ).lines;
}

/** Every account with its money figures (ListAccounts). */
export async function runAccountsList(ctx: CommandContext, options: JsonOption): Promise<void> {
  await callAndPrint(ctx, 'ListAccounts', {}, options, (result) => table(result.value.accounts, ctx.io.width));
}

/** One account (GetAccount), or its P&L high-water marks (GetWatermarks). */
export async function runAccount(ctx: CommandContext, name: string | undefined, options: AccountsOptions): Promise<void> {
  const account = await accountFor(ctx, name, 'account');
  if (options.watermarks) {
    await callAndPrint(ctx, 'GetWatermarks', { account }, options, (result) => [JSON.stringify(result.value.data ?? result.value)]);
    return;
  }
  await callAndPrint(ctx, 'GetAccount', { account }, options, (result) => table([result.value], ctx.io.width));
}

/** Every account and its positions at one moment (GetSnapshot). */
export async function runSnapshot(ctx: CommandContext, options: JsonOption): Promise<void> {
  await callAndPrint(ctx, 'GetSnapshot', {}, options, (result) => {
    const entries = (result.value.accounts ?? []) as Array<{ account: AccountRead; positions?: unknown[] }>;
    const open = entries.reduce((n, e) => n + (e.positions?.length ?? 0), 0);
    return [...table(entries.map((e) => e.account), ctx.io.width), '', `${open} open position${open === 1 ? '' : 's'}`];
  });
}

/** A new simulation account: the simulator's own, on the embedded store. */
export async function runAccountsAdd(ctx: CommandContext, name: string, options: JsonOption): Promise<void> {
  const account = parseAccountName(name);
  await requireEmbedded(ctx, 'accounts add');
  const added = await using(await ctx.openEngine(), (engine) => engine.addAccount(account));
  if (options.json) ctx.io.out(JSON.stringify({ account: added, success: true }));
  else ctx.io.out(ctx.io.color.green(`Added simulation account ${added}`));
}
