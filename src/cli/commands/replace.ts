import { UsageError } from '../../common/errors.js';
import type { CommandContext } from '../context.js';
import { submitOrder, type OrderCommandOptions } from './place.js';

/** Cancels a working order and places the one the flags describe, both or neither (Replace). */
export function runReplace(ctx: CommandContext, orderId: string, options: OrderCommandOptions): Promise<void> {
  if (options.orderId !== undefined)
    throw new UsageError("--order-id cannot go with replace: the service's Replace gives the new order an id of its own", {
      hint: 'Nothing was sent.',
    });
  return submitOrder(ctx, 'replace', { ...options, replacing: orderId });
}
