import { UsageError } from '../../common/errors.js';
import { parseArgs } from '../../service/operations.js';
import { accountFor, callAndPrint } from '../call.js';
import type { CommandContext } from '../context.js';
import { rows } from '../format.js';
import { showResolved, submitOrder, type OrderCommandOptions } from './place.js';

export interface ReverseOptions extends OrderCommandOptions {
  /** The true inversion (Reverse): long N becomes short N, no new order to describe. */
  invert?: boolean;
}

const ORDER_FLAGS = ['action', 'quantity', 'orderType', 'tif', 'timeInForce', 'limitPrice', 'stopPrice', 'ocoId', 'strategy', 'orderId'] as const;

/**
 * Reverses a position: closes it and places the order the flags describe (ReversePosition), or
 * with --invert turns it over at the same size (Reverse).
 */
export async function runReverse(ctx: CommandContext, options: ReverseOptions): Promise<void> {
  if (!options.invert) return submitOrder(ctx, 'reverse', options);
  const extra = ORDER_FLAGS.filter((f) => options[f] !== undefined);
  if (extra.length > 0)
    throw new UsageError(`--invert takes only --account and --instrument: it turns the position over at its own size`, {
      hint: "Nothing was sent. Drop the order's flags, or leave out --invert to close and place the order they describe.",
    });
  if (options.instrument === undefined)
    throw new UsageError('Missing required flag: --instrument', { hint: "Nothing was sent. Run 'trade reverse --help' for examples." });
  const account = await accountFor(ctx, options.account, 'reverse');
  const args = parseArgs('Reverse', { account, instrument: options.instrument }, 'client');
  showResolved(ctx, options.instrument, args.instrument);
  await callAndPrint(ctx, 'Reverse', args, options, (result, backend) => {
    const closing = result.detail?.closingOrder;
    const opened = result.detail?.order;
    const pairs: Array<[string, string]> = [];
    if (closing) pairs.push(['closed', `${closing.orderAction.toUpperCase()} ${closing.quantity} MARKET (order ${closing.orderId})`]);
    if (opened) pairs.push(['opened', `${opened.orderAction.toUpperCase()} ${opened.quantity} MARKET`]);
    pairs.push(['order id', result.value.orderId], ['account', account], ['backend', backend]);
    return [ctx.io.color.green(`Turned over ${args.instrument} in ${account}`), ...rows(pairs)];
  });
}
