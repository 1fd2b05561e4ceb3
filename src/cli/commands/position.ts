import { parseAll } from '../../common/errors.js';
import { parseInstrument } from '../../service/order.js';
import { accountFor, callAndPrint, type JsonOption } from '../call.js';
import type { CommandContext } from '../context.js';
import { formatPositions } from '../format.js';
import { showResolved } from './place.js';

export interface PositionOptions extends JsonOption {
  account?: string;
}

/** The position in one instrument (GetPosition): Long, Short or Flat, never an error when flat. */
export async function runPosition(ctx: CommandContext, rawInstrument: string, options: PositionOptions): Promise<void> {
  const account = await accountFor(ctx, options.account, 'position');
  const [instrument] = parseAll<[string]>([() => parseInstrument(rawInstrument)], { hint: "Nothing was sent. Run 'trade position --help' for examples." });
  showResolved(ctx, rawInstrument, instrument);
  await callAndPrint(ctx, 'GetPosition', { account, instrument }, options, (result, backend) => [
    ...formatPositions([result.value], true).lines,
    ctx.io.errColor.dim(`backend: ${backend}`),
  ]);
}
