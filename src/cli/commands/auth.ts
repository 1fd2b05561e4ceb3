/**
 * `trade auth status` and `trade logout`: the token in effect (always masked) and where it comes
 * from, whether the service takes it, and removing it from a profile.
 */
import { type ConfigKey, maskToken } from '../../config/keys.js';
import { configPath, type Settings, type Source, sourceText } from '../../config/settings.js';
import { ExitCode, IncompleteError } from '../../common/errors.js';
import type { CommandContext } from '../context.js';
import { rows } from '../format.js';
import { accepted, checkedOver, checkToken, describeCheck, remoteUrl, type TokenCheck } from '../token-check.js';

export interface AuthStatusOptions {
  json?: boolean;
}

interface Setting {
  value: string | null;
  source: Source | 'derived' | null;
  /** Where, for a person: "TRADE_TOKEN", "--backend", "config, profile live", "default". */
  from: string | null;
}

export interface AuthStatus {
  profile: string;
  /** The config file the profile is read from. */
  config: string;
  backend: Setting;
  baseUrl: Setting;
  wsUrl: Setting;
  token: { set: boolean; masked: string | null; source: Source | null; from: string | null };
  service: {
    /** Whether the token was sent to the service. */
    checked: boolean;
    /** true: taken; false: refused; null: not checked, or no answer that tells. */
    accepted: boolean | null;
    status: TokenCheck['probe']['status'] | 'not-needed' | 'no-token' | 'no-url';
    url: string | null;
    ms: number | null;
    message: string;
  };
}

const from = (settings: Settings, key: ConfigKey, source: Setting['source']): string | null =>
  source === null ? null : sourceText(key, source, settings.profile);

function setting(settings: Settings, key: ConfigKey, value: string | undefined): Setting {
  if (value === undefined) return { value: null, source: null, from: null };
  const source = settings.sources[key] ?? (key === 'ws-url' ? 'derived' : 'default');
  return { value, source, from: from(settings, key, source) };
}

/** Everything `auth status` reports; reads settings (a bad one throws its ConfigError, exit 3) and sends one read. */
async function collect(ctx: CommandContext): Promise<{ status: AuthStatus; exitCode: number }> {
  const settings = await ctx.settings();
  const backend = settings.backend;
  const token = settings.token;
  const status: AuthStatus = {
    profile: settings.profile,
    config: configPath(ctx.env),
    backend: setting(settings, 'backend', backend),
    baseUrl: setting(settings, 'base-url', settings.baseUrl),
    wsUrl: setting(settings, 'ws-url', backend === 'ws' ? settings.wsUrl : undefined),
    token: token
      ? { set: true, masked: maskToken(token), source: settings.sources.token ?? null, from: from(settings, 'token', settings.sources.token ?? null) }
      : { set: false, masked: null, source: null, from: null },
    service: { checked: false, accepted: null, status: 'not-needed', url: null, ms: null, message: '' },
  };
  const login = `trade${settings.profile === 'default' ? '' : ` --profile ${settings.profile}`} login`;
  // On embedded the token is still checked when a base URL says where its service is: a trader
  // who just ran `trade login` wants to know whether the service took it, whatever the default.
  const over = checkedOver(settings);
  if (over === undefined) {
    status.service.message = 'not checked: the embedded backend needs no token and no base URL is set';
    return { status, exitCode: ExitCode.ok };
  }
  if (!token) {
    if (backend === 'embedded') {
      status.service.message = 'not checked: the embedded backend needs no token, and none is set';
      return { status, exitCode: ExitCode.ok };
    }
    Object.assign(status.service, { status: 'no-token', message: `no token: the ${backend} backend needs one (\`${login}\`, or TRADE_TOKEN)` });
    return { status, exitCode: ExitCode.config };
  }
  let url: string;
  try {
    url = remoteUrl(settings, over, '');
  } catch (error) {
    Object.assign(status.service, { status: 'no-url', message: `not checked: ${(error as Error).message}` });
    return { status, exitCode: ExitCode.config };
  }
  const check = await checkToken(settings, over, token, url);
  const verdict = accepted(check);
  Object.assign(status.service, {
    checked: true,
    accepted: verdict ?? null,
    status: check.probe.status,
    url: check.probe.url,
    ms: check.probe.ms,
    message: verdict === false ? `${describeCheck(check)}; set a valid one with \`${login}\`` : describeCheck(check),
  });
  const exitCode =
    verdict === true ? ExitCode.ok
    : verdict === false ? ExitCode.config
    : check.probe.httpStatus === 404 ? ExitCode.config
    : ExitCode.network;
  return { status, exitCode };
}

export async function runAuthStatus(ctx: CommandContext, options: AuthStatusOptions): Promise<void> {
  const { status, exitCode } = await collect(ctx);
  if (options.json) ctx.io.out(JSON.stringify(status));
  else {
    const shown = (s: Setting) => (s.value === null ? 'not set' : `${s.value} (${s.from})`);
    const pairs: Array<[string, string]> = [
      ['profile', status.profile],
      ['config', status.config],
      ['backend', shown(status.backend)],
      ['base-url', shown(status.baseUrl)],
      ...(status.wsUrl.value !== null ? [['ws-url', shown(status.wsUrl)] as [string, string]] : []),
      ['token', status.token.set ? `${status.token.masked} (${status.token.from})` : 'not set'],
      ['service', status.service.message],
    ];
    for (const line of rows(pairs)) ctx.io.out(line);
  }
  if (exitCode !== ExitCode.ok) {
    const why: Record<string, string> = {
      'no-token': 'No token is set',
      'no-url': 'The token cannot be checked: no URL is set',
      'auth-refused': 'The service refused the token',
    };
    throw new IncompleteError(why[status.service.status] ?? 'The token cannot be checked: the service could not be asked', exitCode);
  }
}

/** Removes the token from the profile; says when one still comes from TRADE_TOKEN. */
export async function runLogout(ctx: CommandContext): Promise<void> {
  const profile = (await ctx.settings()).profile;
  const { openConfigStore } = await import('../../config/store.js');
  const store = await openConfigStore(ctx.env);
  if (store.get(profile).token === undefined) ctx.io.err(`Profile ${profile} has no saved token; nothing was changed (${store.path})`);
  else {
    store.unset(profile, 'token');
    ctx.io.err(`Removed the token of profile ${profile} from ${store.path}`);
  }
  if (ctx.env.TRADE_TOKEN)
    ctx.io.err(`Note: TRADE_TOKEN is set, so commands still send a token; unset it (unset TRADE_TOKEN) to log out fully.`);
}
