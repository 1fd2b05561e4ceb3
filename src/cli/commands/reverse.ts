import type { CommandContext } from '../context.js';
import { submitOrder, type OrderCommandOptions } from './place.js';

/** Closes the open position in the instrument, then places the order the flags describe. */
export function runReverse(ctx: CommandContext, options: OrderCommandOptions): Promise<void> {
  return submitOrder(ctx, 'reverse', options);
}
