import { parseAll } from '../../order/errors.js';
import { parseAccountName, parseOrderId } from '../../order/schema.js';
import { using, type CommandContext } from '../context.js';
import { formatCancelResult } from '../format.js';

export interface CancelOptions {
  account?: string;
  json?: boolean;
}

/** Cancels a working order (Cancel); its OCO siblings go with it. */
export async function runCancel(ctx: CommandContext, rawOrderId: string, options: CancelOptions): Promise<void> {
  const rawAccount = options.account ?? (await ctx.defaultAccount());
  const [orderId, account] = parseAll<[string, string | undefined]>(
    [() => parseOrderId(rawOrderId), () => (rawAccount === undefined ? undefined : parseAccountName(rawAccount))],
    { hint: "Nothing was sent. Run 'trade cancel --help' for examples." },
  );
  const backend = await ctx.openBackend();
  const result = await using(backend, (b) => b.cancelOrder(account, orderId));
  if (options.json) ctx.io.out(JSON.stringify({ orderId: result.orderId, success: true }));
  else for (const line of formatCancelResult(result, account, backend.label, ctx.io.color)) ctx.io.out(line);
}
