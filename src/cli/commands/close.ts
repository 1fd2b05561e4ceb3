import { stripInvisible as shown } from '../../config/redact.js';
import { UsageError, parseAll } from '../../common/errors.js';
import { parseArgs } from '../../service/operations.js';
import { accountFor, callAndPrint, type JsonOption } from '../call.js';
import type { CommandContext } from '../context.js';
import { formatCloseResult, rows } from '../format.js';
import { numberOrText } from '../order-flags.js';
import { showResolved } from './place.js';
import { resolveOrderId } from '../order-ids.js';
import type { Backend } from '../../backends/types.js';

export interface CloseOptions extends JsonOption {
  account?: string;
  instrument?: string;
  quantity?: string;
  percent?: string;
  strategy?: string;
}

/**
 * Closes a position (ClosePosition): all of it, cancelling the instrument's working orders first;
 * or a part, `--quantity N` contracts or `--percent P` of them (rounded up), leaving the orders.
 * With --strategy, an ATM strategy instead (CloseStrategy): its orders and its position.
 */
export async function runClose(ctx: CommandContext, options: CloseOptions): Promise<void> {
  const hint = "Nothing was sent. Run 'trade close --help' for examples.";
  if (options.strategy !== undefined) {
    if (options.instrument !== undefined || options.quantity !== undefined || options.percent !== undefined)
      throw new UsageError('--strategy closes a whole ATM strategy: give it alone (with --account)', { hint });
    const account = await accountFor(ctx, options.account, 'close');
    const [args] = parseAll([() => parseArgs('CloseStrategy', { account, strategyId: options.strategy }, 'client')], { hint });
    // The strategy's id is its entry order's: a prefix of it is taken as of any order id.
    const resolved = async (b: Backend) => ({ ...args, strategyId: await resolveOrderId(ctx, b, args.strategyId, account, 'close') });
    await callAndPrint(ctx, 'CloseStrategy', resolved, options, (result, backend) => [
      ctx.io.color.green(`Closed ATM strategy ${shown(result.value.strategyId)}`),
      ...rows([['account', account], ['backend', backend]]),
    ]);
    return;
  }
  if (options.quantity !== undefined && options.percent !== undefined)
    throw new UsageError('--quantity and --percent say the same thing two ways: give one of them', { hint });
  const missing = [options.account ?? (await ctx.defaultAccount()) ? undefined : '--account', options.instrument === undefined ? '--instrument' : undefined].filter(
    (f): f is string => f !== undefined,
  );
  if (missing.length > 0) throw new UsageError(`Missing required flag${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`, { hint });
  const account = await accountFor(ctx, options.account, 'close');
  const [args] = parseAll(
    [
      () =>
        parseArgs(
          'ClosePosition',
          {
            account,
            instrument: options.instrument,
            ...(options.quantity === undefined ? {} : { quantity: numberOrText(options.quantity) }),
            ...(options.percent === undefined ? {} : { percent: percentOf(options.percent) }),
          },
          'client',
        ),
    ],
    { hint },
  );
  showResolved(ctx, options.instrument, args.instrument);
  await callAndPrint(ctx, 'ClosePosition', args, options, (result, backend) => formatCloseResult(result, backend, ctx.io.color));
}

/** `--percent 25` or `--percent 25%` is a quarter, as is the service's own `0.25`. */
function percentOf(raw: string): number | string {
  const text = raw.trim().replace(/%$/, '');
  const value = numberOrText(text);
  if (typeof value !== 'number') return raw;
  return raw.trim().endsWith('%') || value > 1 ? value / 100 : value;
}
