import type { CommandContext } from '../context.js';
import { using } from '../context.js';
import { UsageError, ValidationError } from '../../order/errors.js';
import { parseOrder, type Order } from '../../order/schema.js';
import { FLAG_FOR, draftFromFlags, missingFields, type OrderFlagValues } from '../order-flags.js';
import { formatOrderResult } from '../format.js';

export interface OrderCommandOptions extends OrderFlagValues {
  json?: boolean;
  dryRun?: boolean;
}

export type OrderCommand = 'place' | 'reverse';

/** Flags → a validated order, or a usage error naming every missing or bad flag. Nothing is sent. */
export function orderFromFlags(kind: OrderCommand, options: OrderCommandOptions, defaults: { account?: string } = {}): Order {
  const draft = draftFromFlags(options, defaults);
  const missing = missingFields(draft);
  if (missing.length > 0) {
    const flags = missing.map((f) => FLAG_FOR[f]);
    throw new UsageError(`Missing required flag${flags.length === 1 ? '' : 's'}: ${flags.join(', ')}`, {
      hint: `Nothing was sent. Run 'trade ${kind} --help' for an example.`,
    });
  }
  try {
    return parseOrder(draft);
  } catch (error) {
    if (error instanceof ValidationError) {
      const flags = error.issues.map((i) => FLAG_FOR[i.field as keyof Order]).filter(Boolean);
      throw new ValidationError(error.issues, {
        hint: `Nothing was sent. Check ${flags.join(', ') || 'the flags'}; run 'trade ${kind} --help' for examples.`,
      });
    }
    throw error;
  }
}

export async function submitOrder(ctx: CommandContext, kind: OrderCommand, options: OrderCommandOptions): Promise<void> {
  const order = orderFromFlags(kind, options, { account: await ctx.defaultAccount() });
  if (options.dryRun) return printDryRun(ctx, kind, order, options.json ?? false);
  const backend = await ctx.openBackend();
  const result = await using(backend, (b) => (kind === 'place' ? b.placeOrder(order) : b.reversePosition(order)));
  if (options.json) {
    ctx.io.out(JSON.stringify({ orderId: result.orderId, success: true }));
    return;
  }
  for (const line of formatOrderResult(kind, order, result, backend.label, ctx.io.color)) ctx.io.out(line);
}

async function printDryRun(ctx: CommandContext, kind: OrderCommand, order: Order, json: boolean): Promise<void> {
  const { previewOrder } = await import('../../backends/resolve.js');
  const preview = previewOrder(await ctx.settings(), ctx.storeFile(), kind, order);
  ctx.io.err('Dry run — nothing was sent.');
  if (json) {
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
  ctx.io.out('');
  ctx.io.out(JSON.stringify(preview.transport === 'http' ? preview.body : preview.message, null, 2));
}

export function runPlace(ctx: CommandContext, options: OrderCommandOptions): Promise<void> {
  return submitOrder(ctx, 'place', options);
}
