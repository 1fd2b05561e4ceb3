import { text } from 'node:stream/consumers';
import { ENV_FOR, maskToken, normalizeValue } from '../../config/keys.js';
import type { Settings } from '../../config/settings.js';
import { CancelledError, ConfigError, NetworkError, UsageError } from '../../common/errors.js';
import type { CommandContext } from '../context.js';
import { accepted, checkedOver, checkToken, describeCheck, remoteUrl } from '../token-check.js';

export interface LoginOptions {
  tokenStdin?: boolean;
  /** false with --no-verify: save without asking the service. */
  verify?: boolean;
}

async function promptToken(ctx: CommandContext): Promise<string> {
  try {
    return await (await ctx.prompter()).secret({ message: 'Access token' });
  } catch (error) {
    if (error instanceof CancelledError) throw new CancelledError('Cancelled — no token was saved.');
    throw error;
  }
}

const UNCHECKED = 'or save it unchecked with `trade login --no-verify`';

/**
 * Asks the service whether it takes the token, before anything is saved: over the backend's own
 * transport, or over HTTP when the backend is embedded but a base URL is set. Returns what to say
 * about the check; throws when the token is refused (exit 3) or the service cannot be asked.
 */
async function verify(settings: Settings, token: string): Promise<string> {
  const backend = checkedOver(settings);
  if (backend === undefined) return 'not checked: the embedded backend needs no token and no base URL is set';
  const url = remoteUrl(settings, backend, `, ${UNCHECKED}`);
  const check = await checkToken(settings, backend, token, url);
  const verdict = accepted(check);
  if (verdict === true) return describeCheck(check);
  if (verdict === false)
    throw new ConfigError(`The service refused the token: ${describeCheck(check)}. It was not saved.`, {
      code: 'token_refused',
      hint: 'Check the token (a copy cut short, another account’s or an expired one) and run `trade login` again.',
    });
  const why = `Cannot check the token: ${describeCheck(check)}. It was not saved.`;
  const hint = `Check base-url (\`trade config list\`) and that the service is running, ${UNCHECKED}.`;
  if (check.probe.httpStatus === 404) throw new ConfigError(why, { code: 'token_unchecked', hint });
  throw new NetworkError(why, { code: 'token_unchecked', hint });
}

/** Saves the token from a masked prompt or from stdin (never from the command line), once the service has taken it. */
export async function runLogin(ctx: CommandContext, options: LoginOptions): Promise<void> {
  let raw: string;
  if (options.tokenStdin) raw = (await text(ctx.io.stdin)).replace(/\r?\n$/, '');
  else if (ctx.io.stdin.isTTY && ctx.io.stderr.isTTY) raw = await promptToken(ctx);
  else
    throw new UsageError('stdin is not a terminal, so trade cannot ask for the token.', {
      hint: 'Pipe it in: `trade login --token-stdin < token.txt`.',
    });
  // From here on, no form of it is printed, whatever the service echoes back.
  ctx.addSecret(raw);
  const token = normalizeValue('token', raw);
  const settings = await ctx.settings();
  const checked = options.verify === false ? 'not checked (--no-verify)' : await verify(settings, token);
  const profile = settings.profile;
  const { openConfigStore } = await import('../../config/store.js');
  const store = await openConfigStore(ctx.env);
  store.set(profile, 'token', token);
  ctx.io.err(`Token ${maskToken(token)} saved for profile ${profile} in ${store.path}`);
  ctx.io.err(`  ${checked}`);
  if (ctx.env[ENV_FOR.token]) ctx.io.err(`Note: ${ENV_FOR.token} is set and overrides it.`);
}
