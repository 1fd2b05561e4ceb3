import type { Backend } from '../../backends/types.js';
import { parseAll, UsageError } from '../../common/errors.js';
import { parseArgs } from '../../service/operations.js';
import { accountFor, callAndPrint, type JsonOption } from '../call.js';
import type { CommandContext } from '../context.js';
import { formatPrice, rows } from '../format.js';
import { numberOrText } from '../order-flags.js';
import { resolveOrderId } from '../order-ids.js';

export interface ModifyOptions extends JsonOption {
  account?: string;
  quantity?: string;
  limitPrice?: string;
  stopPrice?: string;
}

/** Changes a working order's quantity, limit or stop (Change); what is not given stays as it is. */
export async function runModify(ctx: CommandContext, orderId: string, options: ModifyOptions): Promise<void> {
  if (options.quantity === undefined && options.limitPrice === undefined && options.stopPrice === undefined)
    throw new UsageError('Nothing to change: give --quantity, --limit-price or --stop-price', {
      hint: "Nothing was sent. Run 'trade modify --help' for examples.",
    });
  const account = await accountFor(ctx, options.account, 'modify');
  const [args] = parseAll(
    [
      () =>
        parseArgs(
          'Change',
          {
            account,
            orderId,
            ...(options.quantity === undefined ? {} : { quantity: numberOrText(options.quantity) }),
            ...(options.limitPrice === undefined ? {} : { limitPrice: numberOrText(options.limitPrice) }),
            ...(options.stopPrice === undefined ? {} : { stopPrice: numberOrText(options.stopPrice) }),
          },
          'client',
        ),
    ],
    { hint: "Nothing was sent. Run 'trade modify --help' for examples." },
  );
  // A prefix of an id becomes the whole id before the change is sent (order-ids.ts).
  const resolved = async (b: Backend) => ({ ...args, orderId: await resolveOrderId(ctx, b, args.orderId, account, 'modify') });
  await callAndPrint(ctx, 'Change', resolved, options, (result, backend) => {
    const order = result.detail?.order;
    const changed: Array<[string, string]> = [];
    if (args.quantity) changed.push(['quantity', String(args.quantity)]);
    if (args.limitPrice) changed.push(['limit', formatPrice(args.limitPrice)]);
    if (args.stopPrice) changed.push(['stop', formatPrice(args.stopPrice)]);
    if (order) changed.push(['status', order.orderState === 'Filled' ? `filled ${order.filled} @ ${formatPrice(order.averageFillPrice)}` : order.orderState.toLowerCase()]);
    return [ctx.io.color.green(`Changed order ${result.value.orderId}`), ...rows([...changed, ['account', account], ['backend', backend]])];
  });
}
