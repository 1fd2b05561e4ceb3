/**
 * Settings for one run: flag > environment > config (the chosen profile) > default.
 * Reading is a plain JSON read so that every command starts fast; writing goes through the
 * config store (src/config/store.ts).
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../order/errors.js';
import type { Env } from './paths.js';
import {
  type BackendName,
  CONFIG_KEYS,
  type ConfigKey,
  type ConfigValues,
  DEFAULT_TIMEOUT_SECONDS,
  deriveWsUrl,
  ENV_FOR,
  normalizeValue,
} from './keys.js';

export const DEFAULT_PROFILE = 'default';

/** The file: { "profiles": { "<name>": { "<key>": "<value>" } } } */
export interface ConfigFile {
  profiles?: Record<string, ConfigValues>;
}

export function configDir(env: Env): string {
  if (env.TRADE_CONFIG_DIR) return env.TRADE_CONFIG_DIR;
  const home = env.HOME || homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Preferences', 'trade');
  if (process.platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'trade', 'Config');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'trade');
}

export function configPath(env: Env): string {
  return join(configDir(env), 'config.json');
}

export function readConfigFile(env: Env): ConfigFile {
  const file = configPath(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw new ConfigError(`Cannot read the config file ${file}: ${(error as Error).message}`);
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as ConfigFile;
  } catch {
    throw new ConfigError(`The config file ${file} is not valid JSON; fix or remove it`);
  }
}

export type Source = 'flag' | 'env' | 'config' | 'default';

export interface GlobalFlags {
  backend?: string;
  profile?: string;
  insecure?: boolean;
}

export interface Settings {
  profile: string;
  backend: BackendName;
  baseUrl?: string;
  wsUrl?: string;
  token?: string;
  account?: string;
  timeoutMs: number;
  insecure: boolean;
  /** Where each key's value came from, for `config list` and `doctor`. */
  sources: Partial<Record<ConfigKey, Source>>;
}

export function profileName(env: Env, flags: GlobalFlags): string {
  return flags.profile ?? (env.TRADE_PROFILE || DEFAULT_PROFILE);
}

export function resolveSettings(env: Env, flags: GlobalFlags = {}, file: ConfigFile = readConfigFile(env)): Settings {
  const profile = profileName(env, flags);
  const stored = file.profiles?.[profile] ?? {};
  const values: ConfigValues = {};
  const sources: Settings['sources'] = {};
  for (const key of CONFIG_KEYS) {
    const fromFlag = key === 'backend' ? flags.backend : undefined;
    const fromEnv = env[ENV_FOR[key]];
    const [raw, source]: [string | undefined, Source] =
      fromFlag !== undefined
        ? [fromFlag, 'flag']
        : fromEnv !== undefined && fromEnv !== ''
          ? [fromEnv, 'env']
          : [stored[key], 'config'];
    if (raw === undefined) continue;
    try {
      values[key] = normalizeValue(key, raw);
    } catch (error) {
      const where = source === 'flag' ? `--${key}` : source === 'env' ? ENV_FOR[key] : `config key '${key}' (profile ${profile})`;
      throw new ConfigError(`${where}: ${(error as Error).message}`, { code: 'bad_config' });
    }
    sources[key] = source;
  }
  const baseUrl = values['base-url'];
  return {
    profile,
    backend: (values.backend as BackendName | undefined) ?? 'embedded',
    baseUrl,
    wsUrl: values['ws-url'] ?? (baseUrl ? deriveWsUrl(baseUrl) : undefined),
    token: values.token,
    account: values.account,
    timeoutMs: Math.round(Number(values.timeout ?? DEFAULT_TIMEOUT_SECONDS) * 1000),
    insecure: flags.insecure ?? false,
    sources,
  };
}
