import type { GuardedBackend } from '../../guard/guard.js';
import type { Backend, CallResult } from '../../backends/types.js';
import type { CommandContext } from '../context.js';
import { using } from '../context.js';
import { UsageError, ValidationError, type FieldIssue } from '../../common/errors.js';
import { fieldError, parseOrder, printable, type Order, type OrderType } from '../../service/order.js';
import { parseArgs } from '../../service/operations.js';
import { FLAG_FOR, draftFromFlags, missingFields, type OrderDraft, type OrderFlagValues } from '../order-flags.js';
import { confirmOrder, promptDraft, promptMode, type PromptFlags } from '../order-prompts.js';
import { formatOrderResult } from '../format.js';
import { note } from '../io.js';
import { FULL_ID_LENGTH, resolveOrderId } from '../order-ids.js';

export interface OrderCommandOptions extends OrderFlagValues, PromptFlags {
  json?: boolean;
  dryRun?: boolean;
  /** place: close the instrument first (FlatPlace). */
  flattenFirst?: boolean;
  /** replace: the working order the new one replaces. */
  replacing?: string;
  /** reverse: go on though the new order is on the position's own side. */
  sameSide?: boolean;
}

export type OrderCommand = 'place' | 'reverse' | 'replace';

/** The schema's verdict on a draft, as a usage error that names the flags to fix. Nothing is sent. */
function validated(kind: OrderCommand, draft: OrderDraft): Order {
  try {
    return parseOrder(draft);
  } catch (error) {
    if (error instanceof ValidationError) throw withFlagHint(kind, error.issues);
    throw error;
  }
}

function withFlagHint(kind: OrderCommand, issues: FieldIssue[]): ValidationError {
  const flags = issues.map((i) => FLAG_FOR[i.field as keyof Order]).filter(Boolean);
  return new ValidationError(issues, {
    hint: `Nothing was sent. Check ${flags.join(', ') || 'the flags'}; run 'trade ${kind} --help' for examples.`,
  });
}

/** A complete draft → a validated order, or a usage error naming every missing or bad flag. Nothing is sent. */
function complete(kind: OrderCommand, draft: OrderDraft): Order {
  const missing = missingFields(draft);
  if (missing.length > 0) {
    const flags = missing.map((f) => FLAG_FOR[f]);
    throw new UsageError(`Missing required flag${flags.length === 1 ? '' : 's'}: ${flags.join(', ')}`, {
      hint: `Nothing was sent. Run 'trade ${kind} --help' for an example.`,
    });
  }
  return validated(kind, draft);
}

/** Flags → a validated order, or a usage error naming every missing or bad flag. Nothing is sent. */
export function orderFromFlags(kind: OrderCommand, options: OrderCommandOptions, defaults: { account?: string } = {}): Order {
  return complete(kind, draftFromFlags(options, defaults));
}

/** Before any question: a bad flag value is a usage error, not something to ask about again. */
function checkGivenFlags(kind: OrderCommand, given: OrderDraft): void {
  const type = typeof given.orderType === 'string' && !fieldError('orderType', given.orderType)
    ? (given.orderType.toUpperCase() as OrderType)
    : undefined;
  const issues: FieldIssue[] = [];
  for (const field of Object.keys(given) as Array<keyof Order>) {
    const message = fieldError(field, given[field], type);
    if (message) issues.push({ field, message });
  }
  if (issues.length > 0) throw withFlagHint(kind, issues);
}

/** What the flags say, read once: what they gave, and the draft with the configured account added. */
interface FlagReading {
  given: OrderDraft;
  draft: OrderDraft;
  defaultAccount?: string;
}

/**
 * Asks for the required fields still missing (or everything, with -i), picking the account and the
 * ATM template from lists, each answer checked as it is typed (the schema, the instrument's tick,
 * the guard's max-order-qty; the last price shown beside a price question), then shows the order
 * and asks to send it. The flags are not read again: the draft holds what they gave.
 */
async function askForOrder(ctx: CommandContext, kind: OrderCommand, reading: FlagReading, options: OrderCommandOptions, backend: Backend, review: boolean): Promise<Order> {
  const { promptLists } = await import('../prompt-lists.js');
  const lists = await promptLists(ctx, backend, reading.given, review);
  const rules = (await ctx.settings()).guardRules();
  const prompter = await ctx.prompter();
  const draft = await promptDraft(prompter, reading.draft, {
    review,
    ...lists,
    defaultAccount: reading.defaultAccount,
    lastPrice: (instrument) => lastPrice(backend, instrument),
    ...(rules.maxOrderQty === undefined ? {} : { maxQuantity: { limit: rules.maxOrderQty, source: rules.sources['max-order-qty'] ?? 'config' } }),
  });
  const order = validated(kind, draft);
  if (!options.yes) await confirmOrder(ctx, prompter, kind, order, backend);
  return order;
}

/** The instrument's last price from the backend's quote (one read), or undefined when it has none. */
async function lastPrice(backend: Backend, instrument: string): Promise<number | undefined> {
  try {
    const reply = (await backend.call('GetQuote', parseArgs('GetQuote', { instrument }, 'client'))).value;
    const last = [reply].flat()[0]?.last;
    return typeof last === 'number' && last > 0 ? last : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The one flow of place, reverse and replace, in one direction: flags → draft → prompts for what
 * is missing (at a terminal) → schema → backend → output.
 */
export async function submitOrder(ctx: CommandContext, kind: OrderCommand, options: OrderCommandOptions): Promise<void> {
  const defaultAccount = await ctx.defaultAccount();
  const given = draftFromFlags(options);
  const reading: FlagReading = { given, draft: given.account === undefined && defaultAccount !== undefined ? { ...given, account: defaultAccount } : given, defaultAccount };
  // A dry run never prompts and opens nothing: it only shows what the flags would send.
  if (options.dryRun) return printDryRun(ctx, kind, complete(kind, reading.draft), options);
  const mode = promptMode(ctx.io, options, missingFields(reading.draft).length);
  const fromFlags = mode === 'none' ? complete(kind, reading.draft) : undefined;
  if (mode !== 'none') checkGivenFlags(kind, given);
  const backend = await ctx.openBackend();
  const { order, result } = await using(backend, async (b) => {
    const order = fromFlags ?? (await askForOrder(ctx, kind, reading, options, b, mode === 'review'));
    showResolved(ctx, options.instrument, order.instrument);
    if (kind === 'reverse') await checkSide(ctx, b, order, options);
    // replace: a prefix of the old order's id becomes the whole id before anything is sent.
    const sending = kind === 'replace' ? { ...options, replacing: await resolveOrderId(ctx, b, options.replacing!, order.account, 'replace') } : options;
    return { order, result: await send(b, kind, order, sending) };
  });
  if (options.json) {
    ctx.io.out(JSON.stringify(result.body));
    return;
  }
  for (const line of formatOrderResult(kind, order, result, backend.label, ctx.io.color)) ctx.io.out(line);
}

/**
 * A reverse whose new order is on the position's own side (long and BUY, short and SELL) closes
 * the position and opens the same side again: rarely what "reverse" meant. At a terminal it is
 * said and done; a script must say `--same-side`, or nothing is sent. The position is read first
 * (one read); when it cannot be read, the reverse goes on and the service judges it.
 */
async function checkSide(ctx: CommandContext, backend: Backend, order: Order, options: OrderCommandOptions): Promise<void> {
  if (options.sameSide) return;
  let side: string | undefined;
  try {
    side = (await backend.call('GetPosition', { account: order.account, instrument: order.instrument })).value.marketPosition;
  } catch {
    return;
  }
  const same = (side === 'Long' && order.action === 'BUY') || (side === 'Short' && order.action === 'SELL');
  if (!same) return;
  const what = `${order.instrument} in ${order.account} is ${side} and this reverse ${order.action === 'BUY' ? 'buys' : 'sells'}: it closes the position and opens the same side again`;
  if (ctx.io.stdin.isTTY && ctx.io.stderr.isTTY) {
    ctx.io.err(ctx.io.errColor.yellow(`Warning: ${what}.`));
    return;
  }
  const error = new UsageError(`Reverse to the same side: ${what}`, {
    hint: `Nothing was sent. Use --action ${order.action === 'BUY' ? 'SELL' : 'BUY'} to reverse, or --same-side to do this anyway.`,
  });
  // Journaled as refused (trade history --refused), as a guard's refusal is.
  // A ledger that cannot be written changes nothing of the answer: nothing is sent either way.
  await (backend as Partial<GuardedBackend>).refused?.('ReversePosition', order, { rule: 'same-side', message: error.message }).catch(() => undefined);
  throw error;
}

/** The operation a command sends: PlaceOrder (FlatPlace with --flatten-first), ReversePosition or Replace. */
function send(backend: Backend, kind: OrderCommand, order: Order, options: OrderCommandOptions): Promise<CallResult<'PlaceOrder'>> {
  // All three answer the same {orderId, success} body.
  if (kind === 'replace') return backend.call('Replace', { ...order, orderId: options.replacing! }) as unknown as Promise<CallResult<'PlaceOrder'>>;
  return backend.call(kind === 'reverse' ? 'ReversePosition' : options.flattenFirst ? 'FlatPlace' : 'PlaceOrder', order) as Promise<CallResult<'PlaceOrder'>>;
}

function previewArgs(kind: OrderCommand, order: Order, options: OrderCommandOptions) {
  if (kind === 'replace') return { name: 'Replace' as const, args: { ...order, orderId: options.replacing! } };
  return { name: kind === 'reverse' ? ('ReversePosition' as const) : options.flattenFirst ? ('FlatPlace' as const) : ('PlaceOrder' as const), args: order };
}

/** `ES1! → ES 03-26`: on stderr, when the contract was chosen from another form (§9). */
export function showResolved(ctx: CommandContext, typed: string | undefined, resolved: string): void {
  if (typed === undefined) return;
  const plain = typed.trim().replace(/\s+/g, ' ').replace(/[a-z]+/g, (l) => l.toUpperCase());
  if (plain !== resolved) ctx.io.err(ctx.io.errColor.dim(`${printable(typed.trim())} → ${resolved}`));
}

async function printDryRun(ctx: CommandContext, kind: OrderCommand, order: Order, options: OrderCommandOptions): Promise<void> {
  const { previewCall } = await import('../../backends/resolve.js');
  showResolved(ctx, options.instrument, order.instrument);
  const { name, args } = previewArgs(kind, order, options);
  const preview = previewCall(await ctx.settings(), ctx.storeFile(), name, args as never);
  ctx.io.err('Dry run — nothing was sent.');
  if (kind === 'replace' && options.replacing!.length < FULL_ID_LENGTH)
    note(
      ctx.io,
      `'${printable(options.replacing!)}' is shorter than a full order id: when sent, it is first matched against ${
        preview.transport === 'embedded' ? "the store's orders" : `the orders of ${order.account} (GetOrders)`
      }: the order with exactly this id, else the one order whose id starts with it.`,
    );
  if (options.json) {
    ctx.io.out(JSON.stringify(preview));
    return;
  }
  if (preview.transport === 'embedded') {
    ctx.io.out(`embedded engine (${preview.store}): ${preview.api}`);
    ctx.io.out(JSON.stringify(preview.args, null, 2));
    return;
  }
  ctx.io.out(preview.transport === 'http' ? `${preview.method} ${preview.url}` : `WebSocket ${preview.url}`);
  for (const [name, value] of Object.entries(preview.headers)) ctx.io.out(`${name}: ${value}`);
  const body = preview.transport === 'http' ? preview.body : preview.message;
  if (body === undefined) return;
  ctx.io.out('');
  ctx.io.out(JSON.stringify(body, null, 2));
}

export function runPlace(ctx: CommandContext, options: OrderCommandOptions): Promise<void> {
  return submitOrder(ctx, 'place', options);
}
