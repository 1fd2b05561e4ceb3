/**
 * What the commands of the service's operations share: the account they act on (the flag, else
 * TRADE_ACCOUNT or the config), one call through the chosen backend, and the answer printed as
 * the service's body (`--json`) or as lines for a person.
 */
import type { Backend, CallResult } from '../backends/types.js';
import { appendAll } from '../common/arrays.js';
import { parseAll, RejectedError, UsageError } from '../common/errors.js';
import { parseAccountName } from '../service/order.js';
import type { ArgsOf, OperationName } from '../service/operations.js';
import { using, type CommandContext } from './context.js';

export interface JsonOption {
  json?: boolean;
}

/** The account a command acts on; a usage error naming --account when there is none. */
export async function accountFor(ctx: CommandContext, flag: string | undefined, command: string): Promise<string> {
  const raw = flag ?? (await ctx.defaultAccount());
  if (raw === undefined)
    throw new UsageError('Missing required flag: --account (or set TRADE_ACCOUNT, or `trade config set account NAME`)', {
      hint: `Nothing was sent. Run 'trade ${command} --help' for an example.`,
    });
  return parseAll<[string]>([() => parseAccountName(raw)], { hint: `Nothing was sent. Run 'trade ${command} --help' for examples.` })[0];
}

/**
 * One operation through the chosen backend; its answer as the service's body or as lines for a
 * person. `args` may be made with the backend open (an order id prefix resolved), before the call.
 */
export async function callAndPrint<K extends OperationName>(
  ctx: CommandContext,
  name: K,
  args: ArgsOf<K> | ((backend: Backend) => Promise<ArgsOf<K>>),
  options: JsonOption,
  human: (result: CallResult<K>, backendLabel: string) => string[],
): Promise<CallResult<K>> {
  const backend = await ctx.openBackend();
  const result = await using(backend, async (b) => b.call(name, typeof args === 'function' ? await args(b) : args));
  if (options.json) ctx.io.out(JSON.stringify(result.body));
  else for (const line of human(result, backend.label)) ctx.io.out(line);
  return result;
}

/** Pages fetched at most by allPages: a million items at trade serve's 1,000 a page. */
const MAX_PAGES = 1000;

type Paged = 'GetOrders' | 'GetExecutions';

/**
 * A list read whole. `trade serve` answers long lists a page at a time with a `nextCursor`
 * (docs/reliability.md "Limits"); each next page is asked for with it until none is left. The service itself
 * sends no cursor, so against it this is the one documented request. The body keeps the first
 * page's fields with every item and their count, without the cursor.
 */
export async function allPages<K extends Paged>(backend: Backend, name: K, args: ArgsOf<K>, key: 'orders' | 'executions'): Promise<CallResult<K>> {
  const first = await backend.call(name, args);
  let cursor = nextCursorOf(first.body);
  if (cursor === undefined) return first;
  const items: unknown[] = [...((first.value as unknown as Record<string, unknown[]>)[key] ?? [])];
  for (let pages = 1; cursor !== undefined; pages++) {
    if (pages >= MAX_PAGES) throw new RejectedError(`The service sent more than ${MAX_PAGES} pages of ${key}; stopped reading.`);
    const result = await backend.call(name, { ...args, cursor });
    appendAll(items, (result.value as unknown as Record<string, unknown[]>)[key] ?? []);
    const next = nextCursorOf(result.body);
    // A cursor that does not move would loop for ever.
    if (next !== undefined && next === cursor) throw new RejectedError(`The service sent the same page of ${key} twice; stopped reading.`);
    cursor = next;
  }
  const { nextCursor: _unused, ...rest } = first.body as Record<string, unknown>;
  const body = { ...rest, [key]: items, count: items.length };
  return { ...first, body, value: { ...(first.value as object), [key]: items, count: items.length } as unknown as CallResult<K>['value'] };
}

export const nextCursorOf = (body: unknown): string | undefined => {
  const cursor = (body as { nextCursor?: unknown } | null)?.nextCursor;
  return typeof cursor === 'string' && cursor !== '' ? cursor : undefined;
};

/** The simulator's own commands (prices, ATM templates, new accounts) have nothing to act on remotely. */
export async function requireEmbedded(ctx: CommandContext, command: string): Promise<void> {
  const { backend } = await ctx.settings();
  if (backend !== 'embedded')
    throw new UsageError(`trade ${command} belongs to the simulator (the embedded engine), not to the ${backend} backend's service.`, {
      hint: 'Nothing was sent. Run it with --backend embedded (on the store a `trade serve` uses, to change what it serves).',
    });
}
