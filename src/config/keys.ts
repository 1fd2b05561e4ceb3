/**
 * The config keys and their validation: one place, used by `trade config set`, by `trade login`
 * and when reading the environment, so a bad value is refused wherever it comes from.
 */
import { ConfigError, UsageError } from '../common/errors.js';
import { parseAccountName } from '../service/order.js';
import { normalizeRule, RuleSyntaxError } from './guard-syntax.js';
import { CONFIG_KEYS, type ConfigKey, isGuardKey, NUMERIC_RANGES, ruleOf } from './key-table.js';

export { CONFIG_KEYS, type ConfigKey, ENV_FOR, KEY_HELP, NUMERIC_RANGES } from './key-table.js';

export const BACKENDS = ['embedded', 'http', 'ws'] as const;
/** The backends that reach the remote service: where `--from` reads quotes. */
export const REMOTE_BACKENDS = ['http', 'ws'] as const;
export type BackendName = (typeof BACKENDS)[number];

export type ConfigValues = Partial<Record<ConfigKey, string>>;

export const DEFAULT_TIMEOUT_SECONDS = 10;
/** How long a desk's ledger may take to answer before the guard fails closed (guard.ledger-timeout). */
export const DEFAULT_LEDGER_TIMEOUT_SECONDS = 5;

export function isConfigKey(key: string): key is ConfigKey {
  return (CONFIG_KEYS as readonly string[]).includes(key);
}

const SHOWN_CHARACTERS = 80;

/**
 * A bad value as a message shows it. It may come from a hand-edited file or a stray environment
 * variable, so it is quoted with its control and invisible characters escaped (an escape sequence
 * would otherwise repaint the terminal, a zero-width space hide the very difference that makes it
 * bad) and cut short; a value that is not text is shown as JSON.
 */
export function showValue(raw: unknown): string {
  if (typeof raw !== 'string') {
    const json = JSON.stringify(raw) ?? String(raw);
    return escapeInvisible(json.length > SHOWN_CHARACTERS ? `${json.slice(0, SHOWN_CHARACTERS)}…` : json);
  }
  const characters = [...raw];
  const cut = characters.length > SHOWN_CHARACTERS ? `${characters.slice(0, SHOWN_CHARACTERS).join('')}…` : raw;
  return `'${escapeInvisible(cut.replace(/[\\']/g, (c) => `\\${c}`))}'`;
}

function escapeInvisible(text: string): string {
  return text.replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => {
    const code = c.codePointAt(0)!;
    return code > 0xffff ? `\\u{${code.toString(16)}}` : `\\u${code.toString(16).padStart(4, '0')}`;
  });
}

function url(value: string, key: string, schemes: string[]): string {
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(`${key} must be a URL like ${schemes[1]}://host:port, got ${showValue(value)}`, { code: 'bad_config' });
  }
  if (!schemes.includes(parsed.protocol.slice(0, -1)))
    throw new ConfigError(`${key} must start with ${schemes.map((s) => `${s}://`).join(' or ')}, got ${showValue(value)}`, {
      code: 'bad_config',
    });
  if (parsed.username || parsed.password)
    throw new ConfigError(`${key} must not carry credentials; use \`trade login\` for the token`, { code: 'bad_config' });
  if (parsed.search || parsed.hash) throw new ConfigError(`${key} must not have a query or fragment`, { code: 'bad_config' });
  return parsed.href.replace(/\/+$/, '');
}

/** A numeric key's value, from text or (in the config file) a JSON number, within its range. */
function numeric(key: ConfigKey, raw: unknown): string {
  const range = NUMERIC_RANGES[key]!;
  const value = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(value) || value < range.min || value > range.max)
    throw new ConfigError(`${key} must be a number of ${range.unit} from ${range.min} to ${range.max}, got ${showValue(raw)}`, {
      code: 'bad_config',
    });
  return String(value);
}

/**
 * Validates and normalizes one value. Throws ConfigError naming the key (exit 3). `raw` is
 * unknown because the config file is JSON that a person may have edited: any type can be there.
 */
export function normalizeValue(key: ConfigKey, raw: unknown): string {
  if (NUMERIC_RANGES[key]) return numeric(key, raw);
  if (typeof raw !== 'string')
    throw new ConfigError(key === 'token' ? 'token must be text' : `${key} must be text, got ${showValue(raw)}`, { code: 'bad_config' });
  if (isGuardKey(key)) {
    try {
      return normalizeRule(ruleOf(key), raw);
    } catch (error) {
      if (error instanceof RuleSyntaxError) throw new ConfigError(`${key} ${error.message}`, { code: 'bad_config' });
      throw error;
    }
  }
  switch (key) {
    case 'token':
      if (!/^[\x21-\x7e]+$/.test(raw))
        throw new ConfigError('token must be non-empty printable text with no spaces', { code: 'bad_config' });
      return raw;
    case 'base-url':
      return url(raw, key, ['http', 'https']);
    case 'ws-url':
      return url(raw, key, ['ws', 'wss']);
    case 'webhook-url':
      return url(raw, key, ['http', 'https']);
    case 'backend':
      if (!(BACKENDS as readonly string[]).includes(raw.toLowerCase()))
        throw new ConfigError(`backend must be one of ${BACKENDS.join(', ')}, got ${showValue(raw)}`, { code: 'bad_config' });
      return raw.toLowerCase();
    case 'guard.ledger':
      return ledgerUrl(raw);
    case 'guard.machine':
      if (!/^[A-Za-z0-9._-]{1,64}$/.test(raw.trim()))
        throw new ConfigError(`guard.machine must be 1 to 64 of A-Z a-z 0-9 . _ -, got ${showValue(raw)}`, { code: 'bad_config' });
      return raw.trim();
    case 'account':
      try {
        return parseAccountName(raw);
      } catch (error) {
        throw new ConfigError(`account ${(error as Error).message.replace(/^Invalid request: account: /, '')}`, {
          code: 'bad_config',
        });
      }
    default:
      // Every numeric key was handled above, by its range.
      throw new Error(`no validation for the config key '${key}'`);
  }
}

/** The query parameters a desk's ledger URL may carry (libpq's names). */
const LEDGER_PARAMS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey'];
const SSL_MODES = ['disable', 'prefer', 'require', 'verify-ca', 'verify-full'];

/** guard.ledger: `sqlite`, or a PostgreSQL URL with a host (its password, if any, is a secret: never shown). */
function ledgerUrl(raw: string): string {
  const text = raw.trim();
  if (text.toLowerCase() === 'sqlite') return 'sqlite';
  const example = "sqlite or a URL like postgres://trade@db.example:5432/desk?sslmode=verify-full";
  if (!/^postgres(ql)?:\/\//i.test(text)) throw new ConfigError(`guard.ledger must be ${example}, got ${showValue(maskLedgerUrl(text))}`, { code: 'bad_config' });
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw new ConfigError(`guard.ledger must be ${example}, got ${showValue(maskLedgerUrl(text))}`, { code: 'bad_config' });
  }
  if (!parsed.hostname) throw new ConfigError(`guard.ledger must name the server's host: ${example}`, { code: 'bad_config' });
  if (parsed.hash) throw new ConfigError('guard.ledger must not have a fragment (#…)', { code: 'bad_config' });
  for (const [name, value] of parsed.searchParams) {
    if (!LEDGER_PARAMS.includes(name))
      throw new ConfigError(`guard.ledger: the parameter '${name}' is not one trade reads (${LEDGER_PARAMS.join(', ')})`, { code: 'bad_config' });
    if (name === 'sslmode' && !SSL_MODES.includes(value))
      throw new ConfigError(`guard.ledger: sslmode must be one of ${SSL_MODES.join(', ')}, got ${showValue(value)}`, { code: 'bad_config' });
  }
  if (parsed.searchParams.get('sslmode') === 'verify-ca' && !parsed.searchParams.has('sslrootcert'))
    throw new ConfigError('guard.ledger: sslmode=verify-ca needs sslrootcert=FILE (the CA that signed the server\'s certificate); verify-full checks the host name too', { code: 'bad_config' });
  return text;
}

/** A desk ledger URL's password, in the forms a line could show it: never printed. */
export function ledgerSecrets(raw: string): string[] {
  const match = /^[a-z]+:\/\/[^/@:]*:([^@/]*)@/i.exec(raw);
  if (!match || match[1]!.length < 4) return [];
  let decoded = match[1]!;
  try {
    decoded = decodeURIComponent(match[1]!);
  } catch {
    // as written
  }
  return [...new Set([match[1]!, decoded])];
}

/** `postgres://trade:…@db/desk`: where the ledger is, never its password. */
export function maskLedgerUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^/@:]*):[^@/]*@/i, '$1:…@');
}

export function requireKey(key: string): ConfigKey {
  if (!isConfigKey(key)) throw new UsageError(`Unknown config key '${key}'. Keys: ${CONFIG_KEYS.join(', ')}`);
  return key;
}

/**
 * A webhook URL's secret parts: its last two path segments (`/v1/send/ID/SECRET`), kept from
 * every line printed. Not the whole URL: its origin is no secret, and redacting every run of
 * eight of its characters would redact the host wherever it is named.
 */
export function webhookSecrets(webhookUrl: string): string[] {
  const segments = webhookUrl.replace(/^[a-z]+:\/\/[^/]*/i, '').split('/').filter((s) => s !== '');
  return segments.slice(-2).filter((s) => s.length >= 8);
}

/** `https://app.crosstrade.io/v1/send/…` : where it goes, never what it holds. */
export function maskWebhookUrl(webhookUrl: string): string {
  const match = /^([a-z]+:\/\/[^/]*)(\/.*)?$/i.exec(webhookUrl);
  if (!match) return '…';
  const segments = (match[2] ?? '').split('/').filter((s) => s !== '');
  return `${match[1]}/${[...segments.slice(0, Math.max(0, segments.length - 2)), '…'].join('/')}`;
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
