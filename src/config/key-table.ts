/**
 * The config keys, what each means and the environment variable that overrides it. Nothing is
 * imported here, so the help text can name the keys without loading the validation (zod).
 */
import { envForRule, GUARD_RULES, type GuardRule, RULE_HELP } from './guard-syntax.js';

/** The guard's rules are keys too: `guard.max-order-qty`, ... (src/config/guard-syntax.ts). */
export const GUARD_KEYS = GUARD_RULES.map((rule) => `guard.${rule}` as const);
export type GuardKey = `guard.${GuardRule}`;

/** The guard's settings that are not rules: where its ledger is (desk mode, docs/desk-mode.md) and this machine's name in it. */
export const LEDGER_KEYS = ['guard.ledger', 'guard.machine', 'guard.ledger-timeout'] as const;
export type LedgerKey = (typeof LEDGER_KEYS)[number];

export const CONFIG_KEYS = ['token', 'base-url', 'ws-url', 'backend', 'account', 'timeout', 'webhook-url', ...GUARD_KEYS, ...LEDGER_KEYS] as const;
export type ConfigKey = (typeof CONFIG_KEYS)[number];

/** A rule's key (`guard.max-position`); the ledger's keys are guard keys of the --guard flag too, not rules. */
export const isGuardKey = (key: string): key is GuardKey => (GUARD_KEYS as readonly string[]).includes(key);
export const ruleOf = (key: GuardKey): GuardRule => key.slice('guard.'.length) as GuardRule;
/** What `--guard NAME=VALUE` sets: a rule's key, or a ledger key (`--guard ledger=postgres://…`). */
export const guardFlagName = (key: string): string | undefined => (key.startsWith('guard.') ? key.slice('guard.'.length) : undefined);

/** Environment variables that override each key. */
export const ENV_FOR: Record<ConfigKey, string> = {
  token: 'TRADE_TOKEN',
  'base-url': 'TRADE_BASE_URL',
  'ws-url': 'TRADE_WS_URL',
  backend: 'TRADE_BACKEND',
  account: 'TRADE_ACCOUNT',
  timeout: 'TRADE_TIMEOUT',
  'webhook-url': 'TRADE_WEBHOOK_URL',
  ...(Object.fromEntries(GUARD_RULES.map((rule) => [`guard.${rule}`, envForRule(rule)])) as Record<GuardKey, string>),
  'guard.ledger': 'TRADE_GUARD_LEDGER',
  'guard.machine': 'TRADE_GUARD_MACHINE',
  'guard.ledger-timeout': 'TRADE_GUARD_LEDGER_TIMEOUT',
};

export const KEY_HELP: Record<ConfigKey, string> = {
  token: 'access token, sent as Authorization: Bearer (set with `trade login`)',
  'base-url': 'service base URL, http(s)://host[:port]',
  'ws-url': 'WebSocket URL (default: base-url as ws(s)://…/ws/stream)',
  backend: 'embedded, http or ws (default embedded)',
  account: 'default account for every command',
  timeout: 'seconds to wait for the service, 0.001 to 3600 (default 10)',
  'webhook-url': "the service's webhook URL for trade alert --webhook, https://…/v1/send/ID/SECRET (a credential: shown masked)",
  ...(Object.fromEntries(GUARD_RULES.map((rule) => [`guard.${rule}`, `guard rule: ${RULE_HELP[rule]} (off until set)`])) as Record<GuardKey, string>),
  'guard.ledger': "the guard's ledger: sqlite (this machine's, the default) or a desk's postgres://user@host:5432/db?sslmode=verify-full (docs/desk-mode.md)",
  'guard.machine': "this machine's name in a desk's journal (default: the host name)",
  'guard.ledger-timeout': "seconds a desk's ledger may take to answer before the guard fails closed, 0.1 to 120 (default 5)",
};

/**
 * The range of every numeric key, checked wherever its value comes from. The timeout's lower
 * bound is one whole millisecond: anything smaller rounded to 0 ms, which timers and undici read
 * as "no timeout at all", so a command meant to give up quickly hung instead.
 */
export const NUMERIC_RANGES: Partial<Record<ConfigKey, { min: number; max: number; unit: string }>> = {
  timeout: { min: 0.001, max: 3600, unit: 'seconds' },
  'guard.ledger-timeout': { min: 0.1, max: 120, unit: 'seconds' },
};

/** The environment variables besides the keys' own: where things live, and how output looks. */
export const OTHER_ENVIRONMENT: ReadonlyArray<readonly [variable: string, meaning: string]> = [
  ['TRADE_HOME', 'where the embedded engine keeps its store (and the guard its ledger)'],
  ['TRADE_CONFIG_DIR', 'where the config file lives'],
  ['TRADE_PROFILE', 'the config profile (default "default"); --profile overrides it'],
  ['TRADE_SERVE_TOKEN', 'the bearer token trade serve requires when --token-file is not given (without either, one is generated)'],
  ['NO_COLOR', 'any non-empty value turns colour off, whatever else is set'],
  ['FORCE_COLOR', 'colour on even through a pipe (0 or false: off; 2, 3: more colours)'],
  ['COLUMNS', 'the width help wraps at and tables fit to at a terminal'],
];
