/**
 * The config keys and their validation: one place, used by `trade config set`, by `trade login`
 * and when reading the environment, so a bad value is refused wherever it comes from.
 */
import { ConfigError, UsageError } from '../order/errors.js';
import { parseAccountName } from '../order/schema.js';
import { CONFIG_KEYS, type ConfigKey } from './key-table.js';

export { CONFIG_KEYS, type ConfigKey, ENV_FOR, KEY_HELP } from './key-table.js';

export const BACKENDS = ['embedded', 'http', 'ws'] as const;
export type BackendName = (typeof BACKENDS)[number];

export type ConfigValues = Partial<Record<ConfigKey, string>>;

export const DEFAULT_TIMEOUT_SECONDS = 10;

export function isConfigKey(key: string): key is ConfigKey {
  return (CONFIG_KEYS as readonly string[]).includes(key);
}

function url(value: string, key: string, schemes: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${key} must be a URL like ${schemes[1]}://host:port, got '${value}'`, { code: 'bad_config' });
  }
  if (!schemes.includes(parsed.protocol.slice(0, -1)))
    throw new ConfigError(`${key} must start with ${schemes.map((s) => `${s}://`).join(' or ')}, got '${value}'`, {
      code: 'bad_config',
    });
  if (parsed.username || parsed.password)
    throw new ConfigError(`${key} must not carry credentials; use \`trade login\` for the token`, { code: 'bad_config' });
  if (parsed.search || parsed.hash) throw new ConfigError(`${key} must not have a query or fragment`, { code: 'bad_config' });
  return parsed.href.replace(/\/+$/, '');
}

/** Validates and normalizes one value. Throws ConfigError naming the key (exit 3). */
export function normalizeValue(key: ConfigKey, raw: string): string {
  switch (key) {
    case 'token':
      if (!/^[\x21-\x7e]+$/.test(raw))
        throw new ConfigError('token must be non-empty printable text with no spaces', { code: 'bad_config' });
      return raw;
    case 'base-url':
      return url(raw, key, ['http', 'https']);
    case 'ws-url':
      return url(raw, key, ['ws', 'wss']);
    case 'backend':
      if (!(BACKENDS as readonly string[]).includes(raw.toLowerCase()))
        throw new ConfigError(`backend must be one of ${BACKENDS.join(', ')}, got '${raw}'`, { code: 'bad_config' });
      return raw.toLowerCase();
    case 'account':
      try {
        return parseAccountName(raw);
      } catch (error) {
        throw new ConfigError(`account ${(error as Error).message.replace(/^Invalid request: account: /, '')}`, {
          code: 'bad_config',
        });
      }
    case 'timeout': {
      const seconds = Number(raw);
      if (!/^\d+(\.\d+)?$/.test(raw.trim()) || !(seconds > 0) || seconds > 3600)
        throw new ConfigError(`timeout must be a number of seconds from 0.001 to 3600, got '${raw}'`, { code: 'bad_config' });
      return String(seconds);
    }
  }
}

export function requireKey(key: string): ConfigKey {
  if (!isConfigKey(key)) throw new UsageError(`Unknown config key '${key}'. Keys: ${CONFIG_KEYS.join(', ')}`);
  return key;
}

/** `abcd…wxyz`: enough to recognize a token, never enough to use it. */
export function maskToken(token: string): string {
  if (token.length >= 16) return `${token.slice(0, 4)}…${token.slice(-4)}`;
  return `…(${token.length} characters)`;
}

/**
 * The service's root: the base URL without one trailing `/v1/api` and trailing slashes
 * (service-reference.md §1.1: public clients write the base URL either way).
 */
export function serviceRoot(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1\/api$/i, '').replace(/\/+$/, '');
}

/** The WebSocket address for a base URL (§1.1): ws(s), the service's root, then /ws/stream. */
export function deriveWsUrl(baseUrl: string): string {
  const u = new URL(serviceRoot(baseUrl));
  u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
  u.pathname = `${u.pathname.replace(/\/+$/, '')}/ws/stream`;
  return u.href;
}
