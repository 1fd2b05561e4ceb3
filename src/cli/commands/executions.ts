import { parseAll } from '../../order/errors.js';
import { stripInvisible as shown } from '../../config/redact.js';
import { parseArgs } from '../../service/operations.js';
import type { ExecutionRead } from '../../service/shapes.js';
import { accountFor, allPages, callAndPrint, type JsonOption } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatPrice } from '../format.js';
import { fitTable } from '../io.js';
import { numberOrText } from '../order-flags.js';

export interface ExecutionsOptions extends JsonOption {
  account?: string;
  lookback?: string;
}

function table(executions: ExecutionRead[], width?: number): string[] {
  if (executions.length === 0) return ['No executions.'];
  return fitTable(
    ['EXECUTION ID', 'TIME', 'INSTRUMENT', 'SIDE', 'QTY', 'PRICE', 'POSITION', 'ORDER ID', 'NAME'],
    executions.map((e) => [
      shown(e.id),
      shown(e.time ?? '—'),
      shown(e.instrument ?? '—'),
      e.marketPosition === 'Long' ? 'BUY' : e.marketPosition === 'Short' ? 'SELL' : '—',
      String(e.quantity ?? '—'),
      formatPrice(e.price),
      String(e.position ?? '—'),
      shown(e.orderId ?? '—'),
      shown(e.name ?? ''),
    ]),
    { width, optional: ['NAME', 'ORDER ID', 'POSITION', 'TIME'] },
  ).lines;
}

/** An account's fills of the last seconds (GetExecutions; --lookback, default 320, at most 900). */
export async function runExecutions(ctx: CommandContext, options: ExecutionsOptions): Promise<void> {
  const account = await accountFor(ctx, options.account, 'executions');
  const [args] = parseAll(
    [() => parseArgs('GetExecutions', { account, ...(options.lookback === undefined ? {} : { lookbackTime: numberOrText(options.lookback) }) }, 'client')],
    { hint: "Nothing was sent. Run 'trade executions --help' for examples." },
  );
  const backend = await ctx.openBackend();
  const result = await using(backend, (b) => allPages(b, 'GetExecutions', args, 'executions'));
  if (options.json) ctx.io.out(JSON.stringify(result.body));
  else for (const line of table(result.value.executions, ctx.io.width)) ctx.io.out(line);
}

/** One fill (GetExecution). */
export async function runExecution(ctx: CommandContext, executionId: string, options: ExecutionsOptions): Promise<void> {
  const account = await accountFor(ctx, options.account, 'execution');
  const [args] = parseAll([() => parseArgs('GetExecution', { account, executionId }, 'client')], {
    hint: "Nothing was sent. Run 'trade execution --help' for examples.",
  });
  await callAndPrint(ctx, 'GetExecution', args, options, (result) => table([result.value], ctx.io.width));
}
