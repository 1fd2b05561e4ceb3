import { parseAll } from '../../common/errors.js';
import { parseInstrument, parsePrice } from '../../service/order.js';
import { requireEmbedded } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatPrice, formatPriceOutcome } from '../format.js';
import { table } from '../io.js';
import { numberOrText } from '../order-flags.js';

export interface PriceOptions {
  json?: boolean;
}

export async function runPriceSet(ctx: CommandContext, rawInstrument: string, rawPrice: string, options: PriceOptions): Promise<void> {
  const [instrument, price] = parseAll<[string, number]>(
    [() => parseInstrument(rawInstrument), () => parsePrice(numberOrText(rawPrice))],
    { hint: "Nothing was changed. Run 'trade price set --help' for examples." },
  );
  await requireEmbedded(ctx, 'price set');
  const { ordersOf } = await import('../../engine/service.js');
  // Brackets placed by the move are orders: shown in the service's Order shape.
  const { outcome, brackets } = await using(await ctx.openEngine(), (engine) => {
    const outcome = engine.setPrice(instrument, price);
    return { outcome, brackets: ordersOf(engine, outcome.bracketOrders) };
  });
  if (options.json) ctx.io.out(JSON.stringify({ ...outcome, bracketOrders: brackets, success: true }));
  else for (const line of formatPriceOutcome(outcome, brackets, ctx.io.color)) ctx.io.out(line);
}

export async function runPriceList(ctx: CommandContext, options: PriceOptions): Promise<void> {
  await requireEmbedded(ctx, 'price list');
  const prices = await using(await ctx.openEngine(), (engine) => engine.listPrices());
  if (options.json) {
    ctx.io.out(JSON.stringify({ prices, success: true }));
    return;
  }
  if (prices.length === 0) {
    ctx.io.out('No prices set.');
    return;
  }
  const lines = table(['INSTRUMENT', 'PRICE', 'UPDATED'], prices.map((p) => [p.instrument, formatPrice(p.price), p.updatedAt]));
  for (const line of lines) ctx.io.out(line);
}
