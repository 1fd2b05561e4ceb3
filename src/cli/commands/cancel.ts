import { parseAll, RejectedError, UsageError } from '../../order/errors.js';
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
  const [orderId, given] = parseAll<[string, string | undefined]>(
    [() => parseOrderId(rawOrderId), () => (rawAccount === undefined ? undefined : parseAccountName(rawAccount))],
    { hint: "Nothing was sent. Run 'trade cancel --help' for examples." },
  );
  const backend = await ctx.openBackend();
  const result = await using(backend, async (b) => {
    // The service's Cancel needs the account; the embedded engine can say which one holds the order.
    const account = given ?? (b.name === 'embedded' ? await orderAccount(ctx, orderId) : undefined);
    if (account === undefined)
      throw new UsageError('Cancelling on a remote backend needs the account: pass --account (or set a default account).', {
        hint: 'Nothing was sent.',
      });
    return { account, reply: await b.call('Cancel', { account, orderId }) };
  });
  if (options.json) ctx.io.out(JSON.stringify(result.reply.body));
  else for (const line of formatCancelResult(result.reply, result.account, backend.label, ctx.io.color)) ctx.io.out(line);
}

/** The account of an order in the embedded store; an unknown one is refused as Cancel refuses it. */
async function orderAccount(ctx: CommandContext, orderId: string): Promise<string> {
  const order = await using(await ctx.openEngine(), (engine) => engine.getOrder(orderId));
  if (!order) throw new RejectedError(`Order linked to '${orderId}' not found or already terminal.`, { code: 'order_not_found' });
  return order.account;
}
