/**
 * The config keys, what each means and the environment variable that overrides it. Nothing is
 * imported here, so the help text can name the keys without loading the validation (zod).
 */
export const CONFIG_KEYS = ['token', 'base-url', 'ws-url', 'backend', 'account', 'timeout'] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

/** Environment variables that override each key. */
export const ENV_FOR: Record<ConfigKey, string> = {
  token: 'TRADE_TOKEN',
  'base-url': 'TRADE_BASE_URL',
  'ws-url': 'TRADE_WS_URL',
  backend: 'TRADE_BACKEND',
  account: 'TRADE_ACCOUNT',
  timeout: 'TRADE_TIMEOUT',
};

export const KEY_HELP: Record<ConfigKey, string> = {
  token: 'access token, sent as Authorization: Bearer (set with `trade login`)',
  'base-url': 'service base URL, http(s)://host[:port]',
  'ws-url': 'WebSocket URL (default: base-url as ws(s)://…/ws/stream)',
  backend: 'embedded, http or ws (default embedded)',
  account: 'default account for every command',
  timeout: 'seconds to wait for the service, 0.001 to 3600 (default 10)',
};

/**
 * The range of every numeric key, checked wherever its value comes from. The timeout's lower
 * bound is one whole millisecond: anything smaller rounded to 0 ms, which timers and undici read
 * as "no timeout at all", so a command meant to give up quickly hung instead.
 */
export const NUMERIC_RANGES: Partial<Record<ConfigKey, { min: number; max: number; unit: string }>> = {
  timeout: { min: 0.001, max: 3600, unit: 'seconds' },
};
