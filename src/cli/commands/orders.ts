import { using, type CommandContext } from '../context.js';
import { formatOrders } from '../format.js';
import { printTable } from '../io.js';
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
  printTable(ctx.io, formatOrders(orders, ctx.io.width));
  ctx.io.err(ctx.io.errColor.dim(`backend: ${backend.label}`));
}
