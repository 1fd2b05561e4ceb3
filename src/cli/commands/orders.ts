import { UsageError } from '../../order/errors.js';
import { allPages } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatOrders } from '../format.js';
import { printTable } from '../io.js';
import { listFilters, type ListOptions } from './positions.js';

/**
 * Lists an account's orders (GetOrders): working ones and the current trading day's, or with
 * `--active` working ones only. An instrument filter is applied here.
 */
export async function runOrders(ctx: CommandContext, options: ListOptions): Promise<void> {
  const { account, instrument } = await listFilters(ctx, options, 'orders');
  if (account === undefined)
    throw new UsageError('Listing orders needs an account: pass --account or set one with `trade config set account NAME`.', {
      hint: 'Nothing was sent.',
    });
  const backend = await ctx.openBackend();
  const result = await using(backend, (b) => allPages(b, 'GetOrders', { account, activeOnly: options.active === true ? true : undefined }, 'orders'));
  const orders = result.value.orders.filter((o) => instrument === undefined || o.instrument === instrument);
  if (options.json) {
    const body = instrument === undefined ? result.body : { ...(result.body as object), orders, count: orders.length };
    ctx.io.out(JSON.stringify(body));
    return;
  }
  printTable(ctx.io, formatOrders(orders, ctx.io.width));
  ctx.io.err(ctx.io.errColor.dim(`backend: ${backend.label}`));
}
