import { using, type CommandContext } from '../context.js';
import { formatOrders } from '../format.js';
import type { ListOptions } from './positions.js';

export async function runOrders(ctx: CommandContext, options: ListOptions): Promise<void> {
  const account = await ctx.defaultAccount();
  const backend = await ctx.openBackend();
  const orders = await using(backend, (b) =>
    b.listOrders({ account: options.account ?? account, instrument: options.instrument?.toUpperCase() }),
  );
  if (options.json) {
    ctx.io.out(JSON.stringify({ orders, success: true }));
    return;
  }
  for (const line of formatOrders(orders)) ctx.io.out(line);
  ctx.io.err(ctx.io.errColor.dim(`backend: ${backend.label}`));
}
