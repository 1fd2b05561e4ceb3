import { parseAll } from '../../common/errors.js';
import { parseArgs } from '../../service/operations.js';
import { accountFor, callAndPrint, type JsonOption } from '../call.js';
import type { CommandContext } from '../context.js';
import { formatPrice, rows } from '../format.js';
import { numberOrText } from '../order-flags.js';
import { showResolved } from './place.js';

export interface BracketOptions extends JsonOption {
  account?: string;
  instrument?: string;
  action?: string;
  quantity?: string;
  takeProfit?: string;
  stopLoss?: string;
  tif?: string;
}

/**
 * Protects a position (CancelAndBracket): the instrument's working orders cancelled, then a
 * take-profit (limit) and a stop-loss (stop) on the other side, one cancelling the other. `--action`
 * is the side of the position protected (BUY protects a long); the size is clamped to the position.
 */
export async function runBracket(ctx: CommandContext, options: BracketOptions): Promise<void> {
  const account = await accountFor(ctx, options.account, 'bracket');
  const [args] = parseAll(
    [
      () =>
        parseArgs(
          'CancelAndBracket',
          {
            account,
            instrument: options.instrument,
            action: options.action,
            quantity: numberOrText(options.quantity),
            ...(options.takeProfit === undefined ? {} : { takeProfit: numberOrText(options.takeProfit) }),
            ...(options.stopLoss === undefined ? {} : { stopLoss: numberOrText(options.stopLoss) }),
            ...(options.tif === undefined ? {} : { timeInForce: options.tif }),
          },
          'client',
        ),
    ],
    { hint: "Nothing was sent. Run 'trade bracket --help' for examples." },
  );
  showResolved(ctx, options.instrument, args.instrument);
  await callAndPrint(ctx, 'CancelAndBracket', args, options, (result, backend) => {
    const { orderIds, cancelledOrderIds = [], ocoId, quantity } = result.value;
    const exit = args.action === 'BUY' ? 'SELL' : 'BUY';
    const pairs: Array<[string, string]> = [];
    let i = 0;
    if (args.takeProfit !== undefined) pairs.push(['target', `${exit} ${quantity ?? args.quantity} LIMIT ${formatPrice(args.takeProfit)} (order ${orderIds[i++] ?? '—'})`]);
    if (args.stopLoss !== undefined) pairs.push(['stop-loss', `${exit} ${quantity ?? args.quantity} STOPMARKET ${formatPrice(args.stopLoss)} (order ${orderIds[i++] ?? '—'})`]);
    if (ocoId) pairs.push(['oco', ocoId]);
    if (cancelledOrderIds.length > 0) pairs.push(['cancelled', `${cancelledOrderIds.length} working order${cancelledOrderIds.length === 1 ? '' : 's'}`]);
    pairs.push(['account', account], ['backend', backend]);
    return [ctx.io.color.green(`Bracketed ${args.instrument} in ${account}`), ...rows(pairs)];
  });
}
