import { UsageError, parseAll } from '../../order/errors.js';
import { parseAccountName, parseInstrument } from '../../order/schema.js';
import { using, type CommandContext } from '../context.js';
import { formatCloseResult } from '../format.js';
import { showResolved } from './place.js';

export interface CloseOptions {
  account?: string;
  instrument?: string;
  json?: boolean;
}

/** Cancels the instrument's working orders and flattens the position (Close Position). */
export async function runClose(ctx: CommandContext, options: CloseOptions): Promise<void> {
  const rawAccount = options.account ?? (await ctx.defaultAccount());
  const missing = [rawAccount === undefined ? '--account' : undefined, options.instrument === undefined ? '--instrument' : undefined]
    .filter((f): f is string => f !== undefined);
  if (missing.length > 0) {
    throw new UsageError(`Missing required flag${missing.length === 1 ? '' : 's'}: ${missing.join(', ')}`, {
      hint: "Nothing was sent. Run 'trade close --help' for an example.",
    });
  }
  const [account, instrument] = parseAll<[string, string]>(
    [() => parseAccountName(rawAccount), () => parseInstrument(options.instrument)],
    { hint: "Nothing was sent. Run 'trade close --help' for examples." },
  );
  showResolved(ctx, options.instrument, instrument);
  const backend = await ctx.openBackend();
  const result = await using(backend, (b) => b.call('ClosePosition', { account, instrument }));
  if (options.json) ctx.io.out(JSON.stringify(result.body));
  else for (const line of formatCloseResult(result, backend.label, ctx.io.color)) ctx.io.out(line);
}
