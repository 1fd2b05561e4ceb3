/**
 * The time the guard's commands read (issue 29): on the embedded backend the store's session
 * clock, a replay's while one drives it, so `trade history --since 1h` and the daily-loss day
 * follow the replayed session as the guard itself does; on a remote backend the wall clock.
 */
import type { CommandContext } from './context.js';

export async function sessionTime(ctx: CommandContext): Promise<Date> {
  if ((await ctx.settings()).backend !== 'embedded') return new Date();
  const { readSessionTime } = await import('../engine/clock.js');
  return readSessionTime(ctx.storeFile());
}
