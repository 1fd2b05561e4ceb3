/**
 * Settings for one run: flag > environment > config (the chosen profile) > default.
 * Reading is a plain JSON read so that every command starts fast; writing goes through the
 * config store (src/config/store.ts).
 */
import { ConfigError } from '../common/errors.js';
import type { Env } from './paths.js';
import { hostname } from 'node:os';
import { buildRules, type GuardRule, type Rules } from './guard-syntax.js';
import { GUARD_KEYS, type GuardKey, guardFlagName, type LedgerKey, ruleOf } from './key-table.js';
import {
  type BackendName,
  CONFIG_KEYS,
  type ConfigKey,
  type ConfigValues,
  DEFAULT_LEDGER_TIMEOUT_SECONDS,
  DEFAULT_TIMEOUT_SECONDS,
  deriveWsUrl,
  ENV_FOR,
  normalizeValue,
  ledgerSecrets,
  showValue,
  webhookSecrets,
} from './keys.js';

export const DEFAULT_PROFILE = 'default';

import { type ConfigFile, configPath, readConfigFile } from './config-file.js';

export { configDir, type ConfigFile, configPath, readConfigFile } from './config-file.js';

export type Source = 'flag' | 'env' | 'config' | 'default';

/** Where a key's value came from, for a person: "TRADE_BACKEND", "--backend", "config, profile live", "default", "derived from base-url". */
export function sourceText(key: ConfigKey, source: Source | 'derived' | null, profile: string | null): string {
  switch (source) {
    case 'flag':
      return guardFlagName(key) !== undefined ? `--guard ${guardFlagName(key)}=` : `--${key}`;
    case 'env':
      return ENV_FOR[key];
    case 'config':
      return `config, profile ${profile}`;
    case 'derived':
      return 'derived from base-url';
    default:
      return 'default';
  }
}

export interface GlobalFlags {
  backend?: string;
  profile?: string;
  insecure?: boolean;
  /** --confirm-live: the guard's confirm-live rule is answered for this run. */
  confirmLive?: boolean;
  /** --guard RULE=VALUE (repeatable): guard rules for this run, over the environment and the config. */
  guard?: Partial<Record<string, string>>;
}

/** A key whose value cannot be used, and where that value came from. */
export interface SettingProblem {
  key: ConfigKey;
  source: Exclude<Source, 'default'>;
  /** The value as found (any JSON type from the file); absent when the file itself could not be read. */
  raw?: unknown;
  /** Names the source (`TRADE_TIMEOUT`, `--backend`, the config file's path), the key and the value. */
  error: ConfigError;
}

/**
 * Settings for one run. A key whose value is bad throws its ConfigError when it is read, not
 * when the settings are built: a bad TRADE_TIMEOUT then fails the commands that wait on the
 * service, while `config list`, `doctor` and the embedded engine's commands still run (the
 * first two report `problems`).
 */
export interface Settings {
  profile: string;
  readonly backend: BackendName;
  readonly baseUrl?: string;
  readonly wsUrl?: string;
  readonly token?: string;
  readonly account?: string;
  /** The service's webhook URL (`trade alert --webhook`): a credential, never printed whole. */
  readonly webhookUrl?: string;
  readonly timeoutMs: number;
  insecure: boolean;
  /** Where each key's value came from, for `config list` and `doctor`; bad values included. */
  sources: Partial<Record<ConfigKey, Source>>;
  /** Every key that cannot be used, in key order. */
  problems: SettingProblem[];
  problem(key: ConfigKey): SettingProblem | undefined;
  /** Every token text found, usable or not, so that none is ever printed. */
  secrets: string[];
  /** The guard's rules, each with where it came from; a bad one throws its ConfigError. */
  guardRules(): Rules;
  /** One guard key's value (a rule's, or the ledger's keys). */
  guardText(key: GuardKey | LedgerKey): string | undefined;
  /** The guard's ledger: `sqlite` (this machine's) or a desk's PostgreSQL URL (password included: never print it). */
  readonly guardLedger: string;
  /** This machine's name in a desk's journal: guard.machine, or the host name. */
  readonly machine: string;
  /** How long a desk's ledger may take to answer, in ms. */
  readonly ledgerTimeoutMs: number;
}

export function profileName(env: Env, flags: GlobalFlags): string {
  return flags.profile ?? (env.TRADE_PROFILE || DEFAULT_PROFILE);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The chosen profile's keys as the file holds them, or why they cannot be known. */
function storedProfile(env: Env, profile: string, read: () => ConfigFile): Record<string, unknown> | ConfigError {
  let file: ConfigFile;
  try {
    file = read();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  const where = configPath(env);
  const profiles: unknown = file.profiles;
  if (profiles === undefined) return {};
  if (!isPlainObject(profiles))
    return new ConfigError(`${where}: "profiles" must be an object with one entry per profile, got ${showValue(profiles)}`, {
      code: 'bad_config',
    });
  // Own keys only: a profile named "constructor" must not find Object's prototype.
  const stored = Object.hasOwn(profiles, profile) ? profiles[profile] : undefined;
  if (stored === undefined) return {};
  if (!isPlainObject(stored))
    return new ConfigError(`${where}: profile '${profile}' must be an object of keys, got ${showValue(stored)}`, { code: 'bad_config' });
  return stored;
}

function fixHint(key: ConfigKey, source: Exclude<Source, 'default'>, profile: string): string | undefined {
  const p = profile === DEFAULT_PROFILE ? '' : ` --profile ${profile}`;
  if (source === 'env') return `Fix or unset ${ENV_FOR[key]}.`;
  if (source === 'flag') return undefined;
  if (key === 'token') return `Set it again with \`trade login${p}\`.`;
  return `Set it with \`trade config set${p} ${key} VALUE\`, or remove it with \`trade config unset${p} ${key}\`.`;
}

export function resolveSettings(env: Env, flags: GlobalFlags = {}, read: () => ConfigFile = () => readConfigFile(env)): Settings {
  const profile = profileName(env, flags);
  const stored = storedProfile(env, profile, read);
  const values: ConfigValues = {};
  const sources: Settings['sources'] = {};
  const problems = new Map<ConfigKey, SettingProblem>();
  const secrets: string[] = [];
  for (const key of CONFIG_KEYS) {
    const fromFlag = key === 'backend' ? flags.backend : guardFlagName(key) !== undefined ? flags.guard?.[guardFlagName(key)!] : undefined;
    const fromEnv = env[ENV_FOR[key]];
    const source: Exclude<Source, 'default'> =
      fromFlag !== undefined ? 'flag' : fromEnv !== undefined && fromEnv !== '' ? 'env' : 'config';
    if (source === 'config' && stored instanceof ConfigError) {
      problems.set(key, { key, source, error: stored });
      continue;
    }
    const fromFile = source === 'config' && Object.hasOwn(stored, key) ? (stored as Record<string, unknown>)[key] : undefined;
    const raw: unknown = source === 'flag' ? fromFlag : source === 'env' ? fromEnv : fromFile;
    if (raw === undefined) continue;
    sources[key] = source;
    if (key === 'token' && typeof raw === 'string' && raw !== '') secrets.push(raw);
    if (key === 'webhook-url' && typeof raw === 'string' && raw !== '') secrets.push(...webhookSecrets(raw.trim()));
    if (key === 'guard.ledger' && typeof raw === 'string') secrets.push(...ledgerSecrets(raw.trim()));
    try {
      values[key] = normalizeValue(key, raw);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      const where = source === 'flag' ? sourceText(key, 'flag', profile) : source === 'env' ? ENV_FOR[key] : `${configPath(env)} (profile ${profile})`;
      const hint = fixHint(key, source, profile);
      problems.set(key, { key, source, raw, error: new ConfigError(`${where}: ${error.message}`, { code: 'bad_config', hint }) });
    }
  }
  const value = (key: ConfigKey): string | undefined => {
    const problem = problems.get(key);
    if (problem) throw problem.error;
    return values[key];
  };
  return {
    profile,
    get backend() {
      return (value('backend') as BackendName | undefined) ?? 'embedded';
    },
    get baseUrl() {
      return value('base-url');
    },
    get wsUrl() {
      const ws = value('ws-url');
      if (ws !== undefined) return ws;
      const base = value('base-url');
      return base ? deriveWsUrl(base) : undefined;
    },
    get token() {
      return value('token');
    },
    get account() {
      return value('account');
    },
    get webhookUrl() {
      return value('webhook-url');
    },
    get timeoutMs() {
      // At least 1 ms by the key's range: 0 would mean "never time out" to timers and undici.
      return Math.round(Number(value('timeout') ?? DEFAULT_TIMEOUT_SECONDS) * 1000);
    },
    insecure: flags.insecure ?? false,
    sources,
    problems: [...problems.values()],
    problem: (key) => problems.get(key),
    secrets,
    guardText: (key) => value(key),
    get guardLedger() {
      return value('guard.ledger') ?? 'sqlite';
    },
    get machine() {
      return value('guard.machine') ?? hostname();
    },
    get ledgerTimeoutMs() {
      return Math.round(Number(value('guard.ledger-timeout') ?? DEFAULT_LEDGER_TIMEOUT_SECONDS) * 1000);
    },
    guardRules() {
      const texts: Partial<Record<GuardRule, string>> = {};
      const from: Partial<Record<GuardRule, string>> = {};
      for (const key of GUARD_KEYS) {
        const text = value(key);
        if (text === undefined) continue;
        const rule = ruleOf(key);
        texts[rule] = text;
        from[rule] = sources[key] === 'env' ? ENV_FOR[key] : sources[key] === 'flag' ? '--guard' : `profile ${profile}`;
      }
      return buildRules(texts, from);
    },
  };
}

/** Reads one setting, or undefined when it cannot be used (for reports that list problems apart). */
export function readSafely<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error instanceof ConfigError) return undefined;
    throw error;
  }
}
