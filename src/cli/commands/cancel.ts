import { parseAll, RejectedError, UsageError } from '../../common/errors.js';
import { parseAccountName, parseOrderId } from '../../service/order.js';
import { parseArgs } from '../../service/operations.js';
import { accountFor, callAndPrint } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatCancelResult } from '../format.js';
import { resolveOrderId } from '../order-ids.js';

export interface CancelOptions {
  account?: string;
  json?: boolean;
  all?: boolean;
  allAccounts?: boolean;
  instrument?: string;
}

/**
 * Cancels every working order of an account (CancelOrders), or of every account
 * (CancelAllOrders), all of them or one instrument's.
 */
async function cancelAll(ctx: CommandContext, options: CancelOptions): Promise<void> {
  const hint = "Nothing was sent. Run 'trade cancel --help' for examples.";
  const instrument = options.instrument === undefined ? {} : { instrument: options.instrument };
  const done = (n: number, where: string) => ctx.io.color.green(n === 0 ? `No working orders to cancel ${where}` : `Cancelled ${n} working order${n === 1 ? '' : 's'} ${where}`);
  if (options.allAccounts) {
    const [args] = parseAll([() => parseArgs('CancelAllOrders', instrument, 'client')], { hint });
    await callAndPrint(ctx, 'CancelAllOrders', args, options, (result, backend) => [
      done(result.value.orderIds.length, `in every account${args.instrument ? ` in ${args.instrument}` : ''}`),
      ...result.value.orderIds.map((id) => `  ${id}`),
      ctx.io.errColor.dim(`backend: ${backend}`),
    ]);
    return;
  }
  const account = await accountFor(ctx, options.account, 'cancel');
  const [args] = parseAll([() => parseArgs('CancelOrders', { account, ...instrument }, 'client')], { hint });
  await callAndPrint(ctx, 'CancelOrders', args, options, (result, backend) => [
    done(result.value.orderIds.length, `in ${account}${args.instrument ? ` ${args.instrument}` : ''}`),
    ...result.value.orderIds.map((id) => `  ${id}`),
    ctx.io.errColor.dim(`backend: ${backend}`),
  ]);
}

/** Cancels a working order (Cancel); its OCO siblings go with it. With --all, many (see cancelAll). */
export async function runCancel(ctx: CommandContext, rawOrderId: string | undefined, options: CancelOptions): Promise<void> {
  if (options.all || options.allAccounts) {
    if (rawOrderId !== undefined) throw new UsageError('Give an order id or --all, not both', { hint: 'Nothing was sent.' });
    return cancelAll(ctx, options);
  }
  if (rawOrderId === undefined)
    throw new UsageError('Missing the order id (or --all for every working order)', { hint: "Nothing was sent. Run 'trade cancel --help' for examples." });
  if (options.instrument !== undefined) throw new UsageError('--instrument goes with --all', { hint: 'Nothing was sent.' });
  const rawAccount = options.account ?? (await ctx.defaultAccount());
  const [orderId, given] = parseAll<[string, string | undefined]>(
    [() => parseOrderId(rawOrderId), () => (rawAccount === undefined ? undefined : parseAccountName(rawAccount))],
    { hint: "Nothing was sent. Run 'trade cancel --help' for examples." },
  );
  const backend = await ctx.openBackend();
  const result = await using(backend, async (b) => {
    // The service's Cancel needs the account; the embedded engine can say which one holds the order.
    if (given === undefined && b.name !== 'embedded')
      throw new UsageError('Cancelling on a remote backend needs the account: pass --account (or set a default account).', {
        hint: 'Nothing was sent.',
      });
    // A prefix of an id becomes the whole id before anything is cancelled (order-ids.ts).
    const whole = await resolveOrderId(ctx, b, orderId, given, 'cancel');
    const account = given ?? (await orderAccount(ctx, whole));
    return { account, reply: await b.call('Cancel', { account, orderId: whole }) };
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
