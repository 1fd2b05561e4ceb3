import { using, type CommandContext } from '../context.js';
import { formatPositions } from '../format.js';
import { printTable } from '../io.js';

export interface ListOptions {
  account?: string;
  instrument?: string;
  json?: boolean;
  /** positions only: include flat positions, to see the realized P&L of closed trades. */
  all?: boolean;
}

export async function runPositions(ctx: CommandContext, options: ListOptions): Promise<void> {
  const account = await ctx.defaultAccount();
  const backend = await ctx.openBackend();
  const positions = await using(backend, (b) =>
    b.listPositions({
      account: options.account ?? account,
      instrument: options.instrument?.toUpperCase(),
      includeFlat: options.all,
    }),
  );
  if (options.json) {
    ctx.io.out(JSON.stringify({ positions, success: true }));
    return;
  }
  printTable(ctx.io, formatPositions(positions, options.all, ctx.io.width));
  ctx.io.err(ctx.io.errColor.dim(`backend: ${backend.label}`));
}
