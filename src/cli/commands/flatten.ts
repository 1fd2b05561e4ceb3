import { CancelledError, parseAll, UsageError } from '../../order/errors.js';
import { parseArgs } from '../../service/operations.js';
import { accountFor, callAndPrint, type JsonOption } from '../call.js';
import type { CommandContext } from '../context.js';
import { formatPrice, rows } from '../format.js';
import { atTerminal } from '../order-prompts.js';
import type { PositionRead } from '../../service/shapes.js';

export interface FlattenOptions extends JsonOption {
  account?: string;
  instrument?: string;
  side?: string;
  allAccounts?: boolean;
  everything?: boolean;
  yes?: boolean;
}

const CONFIRMATION = 'flatten everything';

function closedLines(positions: PositionRead[]): string[] {
  return positions.map((p) => `  closed     ${p.account ?? '—'} ${p.instrument}: was ${p.marketPosition.toLowerCase()} ${p.quantity} @ ${formatPrice(p.averagePrice)}`);
}

/**
 * Flatten: an account's working orders cancelled and its positions closed (Flatten); or, across
 * accounts, the positions meeting the filters (FlattenEverything). With no filter at all that is
 * every position of every account: a person types a confirmation, a script says --everything --yes.
 */
export async function runFlatten(ctx: CommandContext, options: FlattenOptions): Promise<void> {
  const hint = "Nothing was sent. Run 'trade flatten --help' for examples.";
  if (options.everything && (options.account || options.instrument || options.side || options.allAccounts))
    throw new UsageError('--everything takes no filters: it closes every position of every account', { hint });
  const wide = options.allAccounts || options.side !== undefined || options.everything;
  if (!wide) {
    const account = await accountFor(ctx, options.account, 'flatten');
    const [args] = parseAll([() => parseArgs('Flatten', { account, ...(options.instrument ? { instrument: options.instrument } : {}) }, 'client')], { hint });
    await callAndPrint(ctx, 'Flatten', args, options, (result, backend) => {
      const closed = result.value.closedPositions;
      const cancelled = result.detail?.cancelledOrderIds?.length;
      const head = ctx.io.color.green(closed.length === 0 ? `Nothing to flatten in ${account}${args.instrument ? ` ${args.instrument}` : ''}` : `Flattened ${account}${args.instrument ? ` ${args.instrument}` : ''}`);
      return [head, ...closedLines(closed), ...rows([...(cancelled ? [['cancelled', `${cancelled} working order${cancelled === 1 ? '' : 's'}`] as [string, string]] : []), ['backend', backend]])];
    });
    return;
  }
  const filter = {
    ...(options.allAccounts || options.everything ? {} : { account: await accountFor(ctx, options.account, 'flatten') }),
    ...(options.instrument ? { instrument: options.instrument } : {}),
    ...(options.side ? { marketPosition: options.side } : {}),
  };
  const [args] = parseAll([() => parseArgs('FlattenEverything', filter, 'client')], { hint });
  if (options.everything || Object.keys(args).length === 0) await confirmEverything(ctx, options);
  await callAndPrint(ctx, 'FlattenEverything', args, options, (result, backend) => {
    const closed = result.value.closedPositions;
    const cancelled = result.value.orderIds?.length ?? 0;
    return [
      ctx.io.color.green(closed.length === 0 ? 'Nothing to flatten' : `Flattened ${closed.length} position${closed.length === 1 ? '' : 's'}`),
      ...closedLines(closed),
      ...rows([...(cancelled ? [['cancelled', `${cancelled} working order${cancelled === 1 ? '' : 's'}`] as [string, string]] : []), ['backend', backend]]),
    ];
  });
}

/** Closing everything everywhere takes a typed confirmation at a terminal, and --everything --yes in a script. */
async function confirmEverything(ctx: CommandContext, options: FlattenOptions): Promise<void> {
  if (options.yes && options.everything) return;
  if (!atTerminal(ctx.io) || options.yes)
    throw new UsageError('Flattening every position of every account needs --everything --yes in a script', {
      hint: 'Nothing was sent. At a terminal, `trade flatten --everything` asks you to type the confirmation.',
    });
  const prompter = await ctx.prompter();
  const answer = await prompter.text({
    message: `This closes every position and cancels every order in every account. Type "${CONFIRMATION}" to go on`,
  });
  if (answer.trim() !== CONFIRMATION) throw new CancelledError();
}
