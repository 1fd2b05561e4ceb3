/**
 * The tick grid of the contract table (service-reference.md §3.1, §10): a price must be a whole
 * number of its root's ticks; an instrument the table does not have takes any price. The engine
 * refuses an order off the grid; the order prompts refuse the price as it is typed.
 */
import { contractSpec, rootOf } from './contracts.js';

/** Whether a price is a whole number of ticks of `tickSize`. */
export function onGrid(price: number, tickSize: number): boolean {
  const ticks = price / tickSize;
  return Math.abs(ticks - Math.round(ticks)) < 1e-6;
}

/** The tick of an instrument's root, or undefined when the contract table does not have it. */
export function tickSizeOf(instrument: string): number | undefined {
  return contractSpec(rootOf(instrument))?.tickSize;
}

/** Whether a price is on the root's tick grid (always, for a root the table does not have). */
export function onTick(instrument: string, price: number): boolean {
  const size = tickSizeOf(instrument);
  return size === undefined || onGrid(price, size);
}

/** The two prices on the grid either side of an off-tick price: `5000.1` of ES → [5000, 5000.25]. */
export function nearestTicks(instrument: string, price: number): [number, number] {
  const size = tickSizeOf(instrument) ?? 0.01;
  const below = Math.floor(price / size + 1e-9) * size;
  const round = (n: number) => Number(n.toFixed(10));
  return [round(below), round(below + size)];
}

/** Why a price is off the grid, naming the nearest valid prices; undefined when it is on it. */
export function offTickReason(instrument: string, price: number): string | undefined {
  if (onTick(instrument, price)) return undefined;
  const [below, above] = nearestTicks(instrument, price);
  return `${price} is not a multiple of the tick size ${tickSizeOf(instrument)} of ${rootOf(instrument)}; the nearest valid prices are ${below} and ${above}`;
}
