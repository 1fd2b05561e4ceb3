import type { CallResult } from '../../backends/types.js';
import { parseAll } from '../../common/errors.js';
import { stripInvisible as shown } from '../../config/redact.js';
import { parseArgs } from '../../service/operations.js';
import type { JsonOption } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatPrice } from '../format.js';
import { fitTable, printTable } from '../io.js';

/** Quotes of one or more instruments (GetQuote): every one priced, or a clear error naming those that are not. */
export async function runQuote(ctx: CommandContext, instruments: string[], options: JsonOption): Promise<void> {
  const [args] = parseAll([() => parseArgs('GetQuote', { instrument: instruments.join(',') }, 'client')], {
    hint: "Nothing was sent. Run 'trade quote --help' for examples.",
  });
  const backend = await ctx.openBackend();
  const result: CallResult<'GetQuote'> = await using(backend, (b) => b.call('GetQuote', args));
  if (options.json) {
    ctx.io.out(JSON.stringify(result.body));
    return;
  }
  const table = fitTable(
    ['INSTRUMENT', 'LAST', 'BID', 'ASK', 'OPEN', 'HIGH', 'LOW', 'CLOSE', 'VOLUME', 'TIME'],
    [result.value].flat().map((q) => [
      shown(q.instrument),
      formatPrice(q.last),
      formatPrice(q.bid),
      formatPrice(q.ask),
      formatPrice(q.open),
      formatPrice(q.high),
      formatPrice(q.low),
      formatPrice(q.close),
      String(q.volume ?? '—'),
      shown(q.quoteTime ?? '—'),
    ]),
    { width: ctx.io.width, optional: ['TIME', 'CLOSE', 'OPEN', 'VOLUME', 'LOW', 'HIGH'] },
  );
  printTable(ctx.io, table);
  ctx.io.err(ctx.io.errColor.dim(`backend: ${backend.label}`));
}
