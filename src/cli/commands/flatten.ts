import { CancelledError, parseAll, UsageError } from '../../common/errors.js';
import { parseArgs } from '../../service/operations.js';
import { accountFor, callAndPrint, type JsonOption } from '../call.js';
import type { CommandContext } from '../context.js';
import { closedPosition, rows } from '../format.js';
import { stripInvisible as shown } from '../../config/redact.js';
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

/** What a flatten did, as aligned lines: each position closed, the orders cancelled, where. */
function flattened(positions: PositionRead[], cancelled: number, backend: string, withAccount: boolean): string[] {
  const pairs: Array<[string, string]> = positions.map((p) => ['closed', `${withAccount ? `${shown(p.account ?? '—')} ` : ''}${closedPosition(p)}`]);
  if (cancelled > 0) pairs.push(['cancelled', `${cancelled} working order${cancelled === 1 ? '' : 's'}`]);
  pairs.push(['backend', backend]);
  return rows(pairs);
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
      const where = `${account}${args.instrument ? ` ${args.instrument}` : ''}`;
      const head = ctx.io.color.green(closed.length === 0 ? `Nothing to flatten in ${where}` : `Flattened ${where}`);
      // The service's Flatten reply does not list the orders it cancelled; the simulator can tell.
      return [head, ...flattened(closed, result.detail?.cancelledOrderIds?.length ?? 0, backend, false)];
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
    return [
      ctx.io.color.green(closed.length === 0 ? 'Nothing to flatten' : `Flattened ${closed.length} position${closed.length === 1 ? '' : 's'}`),
      ...flattened(closed, result.value.orderIds?.length ?? 0, backend, true),
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
