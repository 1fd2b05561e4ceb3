import type { Backend } from '../../backends/types.js';
import { UsageError } from '../../common/errors.js';
import type { OrderRead } from '../../service/shapes.js';
import { accountNames, accountScope, showScope } from '../account-scope.js';
import { allPages } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatOrders } from '../format.js';
import { printTable } from '../io.js';
import { idShortener } from '../order-ids.js';
import { instrumentFilter, type ListOptions } from './positions.js';

/**
 * Lists an account's orders (GetOrders): working ones and the current trading day's, or with
 * `--active` working ones only; with --all-accounts, every account's (ListAccounts, then GetOrders
 * of each, as the service has no list across accounts). An instrument filter is applied here.
 */
export async function runOrders(ctx: CommandContext, options: ListOptions): Promise<void> {
  const scope = await accountScope(ctx, options, 'orders');
  const instrument = instrumentFilter(options.instrument, 'orders');
  if (scope.account === undefined && !options.allAccounts)
    throw new UsageError('Listing orders needs an account: pass --account or --all-accounts, or set one with `trade config set account NAME`.', {
      hint: 'Nothing was sent.',
    });
  const activeOnly = options.active === true ? true : undefined;
  const backend = await ctx.openBackend();
  const { body, listed, short } = await using(backend, async (b) => {
    const { body, listed } = scope.account === undefined ? await everyAccount(b, activeOnly) : await oneAccount(b, scope.account, activeOnly);
    const shown = listed.filter((o) => instrument === undefined || o.instrument === instrument);
    const short = options.json ? undefined : await idShortener(ctx, b, shown.map((o) => o.orderId), listed.map((o) => o.orderId));
    return { body, listed, short };
  });
  const orders = listed.filter((o) => instrument === undefined || o.instrument === instrument);
  showScope(ctx, scope);
  if (options.json) {
    ctx.io.out(JSON.stringify(instrument === undefined ? body : { ...(body as object), orders, count: orders.length }));
    return;
  }
  printTable(ctx.io, formatOrders(orders, ctx.io.width, short, scope.account === undefined));
  ctx.io.err(ctx.io.errColor.dim(`backend: ${backend.label}`));
}

async function oneAccount(backend: Backend, account: string, activeOnly: true | undefined): Promise<{ body: unknown; listed: OrderRead[] }> {
  const result = await allPages(backend, 'GetOrders', { account, activeOnly }, 'orders');
  return { body: result.body, listed: result.value.orders };
}

/** Every account's orders, account by account, in the service's list shape. */
async function everyAccount(backend: Backend, activeOnly: true | undefined): Promise<{ body: unknown; listed: OrderRead[] }> {
  const listed: OrderRead[] = [];
  for (const account of await accountNames(backend)) listed.push(...(await oneAccount(backend, account, activeOnly)).listed);
  return { body: { orders: listed, count: listed.length, success: true }, listed };
}
