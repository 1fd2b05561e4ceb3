import type { CallResult } from '../../backends/types.js';
import { parseAll } from '../../order/errors.js';
import { parseAccountName, parseInstrument } from '../../order/schema.js';
import { using, type CommandContext } from '../context.js';
import { formatPositions } from '../format.js';
import { printTable } from '../io.js';

export interface ListOptions {
  account?: string;
  instrument?: string;
  json?: boolean;
  /** positions: flat ones too (positions that had fills and are closed). */
  all?: boolean;
  /** positions: the same as `all`, by the service's name. */
  includeFlat?: boolean;
  /** orders: working ones only. */
  active?: boolean;
}

/** The account and instrument filters, checked before anything is sent. */
export async function listFilters(ctx: CommandContext, options: ListOptions, command: string): Promise<{ account?: string; instrument?: string }> {
  const rawAccount = options.account ?? (await ctx.defaultAccount());
  const [account, instrument] = parseAll<[string | undefined, string | undefined]>(
    [
      () => (rawAccount === undefined ? undefined : parseAccountName(rawAccount)),
      () => (options.instrument === undefined ? undefined : parseInstrument(options.instrument)),
    ],
    { hint: `Nothing was sent. Run 'trade ${command} --help' for examples.` },
  );
  return { account, instrument };
}

/**
 * Lists positions: one account's (GetPositions) or every account's (GetAllPositions). An
 * instrument filter is applied here, so `--json` is then the service's body with its list filtered.
 */
export async function runPositions(ctx: CommandContext, options: ListOptions): Promise<void> {
  const { account, instrument } = await listFilters(ctx, options, 'positions');
  const includeFlat = options.all === true || options.includeFlat === true ? true : undefined;
  const backend = await ctx.openBackend();
  const result = await using(backend, (b): Promise<CallResult<'GetPositions' | 'GetAllPositions'>> =>
    account === undefined ? b.call('GetAllPositions', { includeFlat }) : b.call('GetPositions', { account, includeFlat }),
  );
  const positions = result.value.positions.filter((p) => instrument === undefined || p.instrument === instrument);
  if (options.json) {
    const body = instrument === undefined ? result.body : { ...(result.body as object), positions, count: positions.length };
    ctx.io.out(JSON.stringify(body));
    return;
  }
  printTable(ctx.io, formatPositions(positions, includeFlat, ctx.io.width));
  ctx.io.err(ctx.io.errColor.dim(`backend: ${backend.label}`));
}
