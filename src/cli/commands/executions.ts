import { appendAll } from '../../common/arrays.js';
import { parseAll } from '../../common/errors.js';
import { stripInvisible as shown } from '../../config/redact.js';
import { parseArgs } from '../../service/operations.js';
import type { ExecutionRead } from '../../service/shapes.js';
import { accountFor, allPages, callAndPrint, type JsonOption } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatPrice } from '../format.js';
import { fitTable, printTable, type FittedTable } from '../io.js';
import { accountNames, accountScope, showScope } from '../account-scope.js';
import { idShortener } from '../order-ids.js';
import { numberOrText } from '../order-flags.js';

export interface ExecutionsOptions extends JsonOption {
  account?: string;
  lookback?: string;
  /** executions: every account's. */
  allAccounts?: boolean;
}

/**
 * Left out first at a narrow terminal: the execution id (trade execution's, whole; --json has
 * it), the name, the order id (shortened already), the position after the fill, the time, and the
 * account of a one-account list; the fill's side, size and price always stay.
 */
function optionalColumns(everyAccount: boolean): string[] {
  return ['EXECUTION ID', ...(everyAccount ? [] : ['ACCOUNT']), 'NAME', 'ORDER ID', 'POSITION', 'TIME', ...(everyAccount ? ['ACCOUNT'] : [])];
}

function table(executions: ExecutionRead[], width?: number, short: (id: string) => string = (id) => id, everyAccount = false): FittedTable {
  if (executions.length === 0) return { lines: ['No executions.'], hidden: [] };
  const account = everyAccount;
  return fitTable(
    ['EXECUTION ID', 'TIME', ...(account ? ['ACCOUNT'] : []), 'INSTRUMENT', 'SIDE', 'QTY', 'PRICE', 'POSITION', 'ORDER ID', 'NAME'],
    executions.map((e) => [
      shown(e.id),
      shown(e.time ?? '—'),
      ...(account ? [shown(e.account ?? '—')] : []),
      shown(e.instrument ?? '—'),
      e.marketPosition === 'Long' ? 'BUY' : e.marketPosition === 'Short' ? 'SELL' : '—',
      String(e.quantity ?? '—'),
      formatPrice(e.price),
      String(e.position ?? '—'),
      e.orderId === undefined ? '—' : shown(short(e.orderId)),
      shown(e.name ?? ''),
    ]),
    { width, optional: optionalColumns(everyAccount) },
  );
}

/**
 * An account's fills of the last seconds (GetExecutions; --lookback, default 320, at most 900);
 * with --all-accounts, every account's (ListAccounts, then GetExecutions of each).
 */
export async function runExecutions(ctx: CommandContext, options: ExecutionsOptions): Promise<void> {
  const scope = await accountScope(ctx, options, 'executions');
  if (scope.account === undefined && !options.allAccounts) await accountFor(ctx, undefined, 'executions');
  const lookback = options.lookback === undefined ? {} : { lookbackTime: numberOrText(options.lookback) };
  const hint = "Nothing was sent. Run 'trade executions --help' for examples.";
  // Checked before anything is sent; with --all-accounts under a stand-in name, each account's own when sent.
  const [args] = parseAll([() => parseArgs('GetExecutions', { account: scope.account ?? 'Sim101', ...lookback }, 'client')], { hint });
  const backend = await ctx.openBackend();
  const { body, executions, short } = await using(backend, async (b) => {
    let body: unknown;
    let executions: ExecutionRead[];
    if (scope.account !== undefined) {
      const result = await allPages(b, 'GetExecutions', args, 'executions');
      ({ body } = result);
      executions = result.value.executions;
    } else {
      executions = [];
      for (const account of await accountNames(b)) appendAll(executions, (await allPages(b, 'GetExecutions', { ...args, account }, 'executions')).value.executions);
      body = { executions, count: executions.length, success: true };
    }
    const ids = executions.flatMap((e) => (e.orderId === undefined ? [] : [e.orderId]));
    const short = options.json ? undefined : await idShortener(ctx, b, ids, ids);
    return { body, executions, short };
  });
  showScope(ctx, scope);
  if (options.json) {
    ctx.io.out(JSON.stringify(body));
    return;
  }
  printTable(ctx.io, table(executions, ctx.io.width, short, scope.account === undefined));
}

/** One fill (GetExecution). */
export async function runExecution(ctx: CommandContext, executionId: string, options: ExecutionsOptions): Promise<void> {
  const account = await accountFor(ctx, options.account, 'execution');
  const [args] = parseAll([() => parseArgs('GetExecution', { account, executionId }, 'client')], {
    hint: "Nothing was sent. Run 'trade execution --help' for examples.",
  });
  await callAndPrint(ctx, 'GetExecution', args, options, (result) => table([result.value], ctx.io.width).lines);
}
