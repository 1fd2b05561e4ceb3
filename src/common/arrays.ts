/**
 * Array helpers for lists of any length. `Math.max(...values)` and `target.push(...items)` pass
 * every element as an argument, and V8 throws "Maximum call stack size exceeded" past about
 * 120,000 of them: a day of fills, a report's trades or a server's page can be longer (issue 34).
 */

/** The largest of `values` (not empty). */
export function maxOf(values: readonly number[]): number {
  let max = -Infinity;
  for (const v of values) if (v > max || Number.isNaN(v)) max = v;
  return max;
}

/** The smallest of `values` (not empty). */
export function minOf(values: readonly number[]): number {
  let min = Infinity;
  for (const v of values) if (v < min || Number.isNaN(v)) min = v;
  return min;
}

/** Appends every item of `items` to `target`; returns `target`. */
export function appendAll<T>(target: T[], items: readonly T[]): T[] {
  for (const item of items) target.push(item);
  return target;
}
