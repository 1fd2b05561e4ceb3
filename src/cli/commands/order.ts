import { parseAll, UsageError } from '../../common/errors.js';
import { parseOrderId } from '../../service/order.js';
import { accountFor, callAndPrint, type JsonOption } from '../call.js';
import type { CommandContext } from '../context.js';
import { describeObject, formatPrice, orderStatus, rows } from '../format.js';
import { stripInvisible as shown } from '../../config/redact.js';
import { resolveOrderId } from '../order-ids.js';
import type { Backend } from '../../backends/types.js';

export interface OrderOptions extends JsonOption {
  account?: string;
  status?: boolean;
  lifecycle?: boolean;
}

/** One line per event of an order's lifecycle (the MCP tool's shape, §3.9): time, source, event. */
function lifecycleLines(body: Record<string, unknown>): string[] {
  const events = Array.isArray(body.events) ? (body.events as Array<Record<string, unknown>>) : [];
  if (events.length === 0) return ['No events.'];
  const text = (v: unknown) => (v === undefined || v === null ? '—' : shown(typeof v === 'string' ? v : JSON.stringify(v)));
  return events.map((e) => `${text(e.timestamp)}  ${text(e.source)}  ${text(e.event)}`);
}

/** One order (GetOrder), or only its state (GetOrderStatus, the cheap call to poll). */
export async function runOrder(ctx: CommandContext, rawOrderId: string, options: OrderOptions): Promise<void> {
  const account = await accountFor(ctx, options.account, 'order');
  const [orderId] = parseAll<[string]>([() => parseOrderId(rawOrderId)], { hint: "Nothing was sent. Run 'trade order --help' for examples." });
  if (options.status && options.lifecycle) throw new UsageError('Give --status or --lifecycle, not both', { hint: 'Nothing was sent.' });
  // A prefix of an id becomes the whole id first (order-ids.ts).
  const args = async (b: Backend) => ({ account, orderId: await resolveOrderId(ctx, b, orderId, account, 'order') });
  if (options.lifecycle) {
    await callAndPrint(ctx, 'GetOrderLifecycle', args, options, (result) => lifecycleLines(result.value));
    return;
  }
  if (options.status) {
    await callAndPrint(ctx, 'GetOrderStatus', args, options, (result) => [shown(result.value.status)]);
    return;
  }
  await callAndPrint(ctx, 'GetOrder', args, options, (result, backend) => {
    const o = result.value;
    const pairs: Array<[string, string]> = [
      ['order id', shown(o.orderId)],
      ['account', shown(o.account ?? account)],
      ['status', orderStatus(o)],
    ];
    if (o.timeInForce) pairs.push(['tif', shown(o.timeInForce.toUpperCase())]);
    if (o.ocoId || o.oco) pairs.push(['oco', shown(o.ocoId || o.oco || '')]);
    if (o.ownerStrategy) pairs.push(['strategy', `${shown(o.ownerStrategy.name)} (${shown(o.ownerStrategy.id)})`]);
    if (o.limitPriceChanged) pairs.push(['changed limit', formatPrice(o.limitPriceChanged)]);
    if (o.stopPriceChanged) pairs.push(['changed stop', formatPrice(o.stopPriceChanged)]);
    if (o.time) pairs.push(['time', shown(o.time)]);
    pairs.push(['backend', backend]);
    return [describeObject(o), ...rows(pairs)];
  });
}
