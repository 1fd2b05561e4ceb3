import { CONFIG_KEYS, type ConfigKey, ENV_FOR, maskToken, normalizeValue, requireKey } from '../../config/keys.js';
import { configPath, type Settings, type Source } from '../../config/settings.js';
import { ConfigError, UsageError } from '../../order/errors.js';
import type { CommandContext } from '../context.js';
import { table } from '../io.js';

export interface ConfigShowOptions {
  showToken?: boolean;
  json?: boolean;
}

interface Effective {
  key: ConfigKey;
  value?: string;
  source: Source | 'derived';
}

function effective(settings: Settings): Effective[] {
  const value: Record<ConfigKey, string | undefined> = {
    token: settings.token,
    'base-url': settings.baseUrl,
    'ws-url': settings.wsUrl,
    backend: settings.backend,
    account: settings.account,
    timeout: String(settings.timeoutMs / 1000),
  };
  return CONFIG_KEYS.map((key) => ({
    key,
    value: value[key],
    source: settings.sources[key] ?? (key === 'ws-url' && value[key] ? 'derived' : 'default'),
  }));
}

function shown(entry: Effective, showToken: boolean): string | undefined {
  if (entry.key !== 'token' || entry.value === undefined || showToken) return entry.value;
  return maskToken(entry.value);
}

async function openStore(ctx: CommandContext) {
  const { openConfigStore } = await import('../../config/store.js');
  return openConfigStore(ctx.env);
}

async function currentProfile(ctx: CommandContext): Promise<string> {
  return (await ctx.settings()).profile;
}

export async function runConfigSet(ctx: CommandContext, key: string, value: string): Promise<void> {
  const k = requireKey(key);
  if (k === 'token')
    throw new UsageError('The token is not set on the command line, where `ps` and shell history would show it.', {
      hint: 'Use `trade login` (a masked prompt) or `trade login --token-stdin < file`.',
    });
  const normalized = normalizeValue(k, value);
  const profile = await currentProfile(ctx);
  (await openStore(ctx)).set(profile, k, normalized);
  ctx.io.err(`Set ${k} = ${normalized} (profile ${profile})`);
  if (ctx.env[ENV_FOR[k]]) ctx.io.err(`Note: ${ENV_FOR[k]} is set and overrides it.`);
}

export async function runConfigUnset(ctx: CommandContext, key: string): Promise<void> {
  const k = requireKey(key);
  const profile = await currentProfile(ctx);
  (await openStore(ctx)).unset(profile, k);
  ctx.io.err(`Unset ${k} (profile ${profile})`);
}

export async function runConfigGet(ctx: CommandContext, key: string, options: ConfigShowOptions): Promise<void> {
  const k = requireKey(key);
  const settings = await ctx.settings();
  const entry = effective(settings).find((e) => e.key === k)!;
  const value = shown(entry, options.showToken ?? false);
  if (options.json) {
    ctx.io.out(JSON.stringify({ key: k, value: value ?? null, source: entry.source }));
    return;
  }
  if (value === undefined) throw new ConfigError(`${k} is not set (profile ${settings.profile})`, { code: 'not_set' });
  ctx.io.out(value);
}

export async function runConfigList(ctx: CommandContext, options: ConfigShowOptions): Promise<void> {
  const settings = await ctx.settings();
  const entries = effective(settings);
  if (options.json) {
    const values = Object.fromEntries(
      entries.map((e) => [e.key, { value: shown(e, options.showToken ?? false) ?? null, source: e.source }]),
    );
    ctx.io.out(JSON.stringify({ profile: settings.profile, path: configPath(ctx.env), values }));
    return;
  }
  ctx.io.err(`profile ${settings.profile} (${configPath(ctx.env)})`);
  const rows = entries.map((e) => [e.key, shown(e, options.showToken ?? false) ?? '(not set)', e.source]);
  for (const line of table(['KEY', 'VALUE', 'SOURCE'], rows)) ctx.io.out(line);
}

export function runConfigPath(ctx: CommandContext): void {
  ctx.io.out(configPath(ctx.env));
}
