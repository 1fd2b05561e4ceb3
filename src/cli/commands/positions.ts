import type { CallResult } from '../../backends/types.js';
import { parseAll } from '../../common/errors.js';
import { parseInstrument } from '../../service/order.js';
import { using, type CommandContext } from '../context.js';
import { formatPositions } from '../format.js';
import { printTable } from '../io.js';
import { accountScope, showScope } from '../account-scope.js';

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
  /** Every account, whatever the default account. */
  allAccounts?: boolean;
}

/** The instrument filter, resolved to a dated contract and checked before anything is sent. */
export function instrumentFilter(raw: string | undefined, command: string): string | undefined {
  return parseAll<[string | undefined]>([() => (raw === undefined ? undefined : parseInstrument(raw))], {
    hint: `Nothing was sent. Run 'trade ${command} --help' for examples.`,
  })[0];
}

/**
 * Lists positions: one account's (GetPositions) or every account's (GetAllPositions: no account,
 * or --all-accounts over a default one). An instrument filter is applied here, so `--json` is then
 * the service's body with its list filtered.
 */
export async function runPositions(ctx: CommandContext, options: ListOptions): Promise<void> {
  const scope = await accountScope(ctx, options, 'positions');
  const account = scope.account;
  const instrument = instrumentFilter(options.instrument, 'positions');
  const includeFlat = options.all === true || options.includeFlat === true ? true : undefined;
  const backend = await ctx.openBackend();
  const result = await using(backend, (b): Promise<CallResult<'GetPositions' | 'GetAllPositions'>> =>
    account === undefined ? b.call('GetAllPositions', { includeFlat }) : b.call('GetPositions', { account, includeFlat }),
  );
  const positions = result.value.positions.filter((p) => instrument === undefined || p.instrument === instrument);
  showScope(ctx, scope);
  if (options.json) {
    const body = instrument === undefined ? result.body : { ...(result.body as object), positions, count: positions.length };
    ctx.io.out(JSON.stringify(body));
    return;
  }
  printTable(ctx.io, formatPositions(positions, includeFlat, ctx.io.width, account !== undefined));
  ctx.io.err(ctx.io.errColor.dim(`backend: ${backend.label}`));
}
