import { text } from 'node:stream/consumers';
import { maskToken, normalizeValue } from '../../config/keys.js';
import { CancelledError, UsageError } from '../../order/errors.js';
import type { CommandContext } from '../context.js';

export interface LoginOptions {
  tokenStdin?: boolean;
}

async function promptToken(ctx: CommandContext): Promise<string> {
  try {
    return await (await ctx.prompter()).secret({ message: 'Access token' });
  } catch (error) {
    if (error instanceof CancelledError) throw new CancelledError('Cancelled — no token was saved.');
    throw error;
  }
}

/** Saves the token from a masked prompt or from stdin; never from the command line. */
export async function runLogin(ctx: CommandContext, options: LoginOptions): Promise<void> {
  let raw: string;
  if (options.tokenStdin) raw = (await text(ctx.io.stdin)).replace(/\r?\n$/, '');
  else if (ctx.io.stdin.isTTY && ctx.io.stderr.isTTY) raw = await promptToken(ctx);
  else
    throw new UsageError('stdin is not a terminal, so trade cannot ask for the token.', {
      hint: 'Pipe it in: `trade login --token-stdin < token.txt`.',
    });
  const token = normalizeValue('token', raw);
  const profile = (await ctx.settings()).profile;
  const { openConfigStore } = await import('../../config/store.js');
  const store = await openConfigStore(ctx.env);
  store.set(profile, 'token', token);
  ctx.io.err(`Token ${maskToken(token)} saved for profile ${profile} in ${store.path}`);
}
