/**
 * The MCP token (issue 31): what an agent sends to `trade mcp --http`, never the service's token.
 * An agent holding the service token could call the service directly, past the tiers and the
 * guard; an MCP token opens `trade mcp` and nothing else.
 *
 * One per profile, 256 random bits, shown once when made (`trade mcp token`); only its SHA-256 is
 * kept, in `mcp-tokens.json` beside the config (mode 0600, in a folder of mode 0700), so the file
 * says who may connect without holding anything that connects. A plain hash is enough for 256
 * random bits: there is nothing to guess. Writes go through the config's lock, then a temporary
 * file renamed over the old one: a reader sees the old file or the new one, never half of one.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256 as digest } from '../common/random.js';
import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configDir } from '../config/config-file.js';
import type { Env } from '../config/paths.js';
import { withLock } from '../config/store.js';
import { ConfigError, describeErrno } from '../common/errors.js';

/** The tokens start so: a person (and a secret scanner) can tell one from a service token. */
export const MCP_TOKEN_PREFIX = 'trade_mcp_';

interface StoredToken {
  sha256: string;
  created: string;
}

interface TokenFile {
  version: 1;
  profiles: Record<string, StoredToken>;
}

export const mcpTokenPath = (env: Env): string => join(configDir(env), 'mcp-tokens.json');

function unreadable(file: string, why: string): ConfigError {
  return new ConfigError(`Cannot read the MCP tokens in ${file}: ${why}`, {
    code: 'mcp_tokens_unreadable',
    hint: `Make it a file of this user's (mode 0600), or remove it and make a token again (trade mcp token).`,
  });
}

function readTokens(env: Env): TokenFile {
  const file = mcpTokenPath(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { version: 1, profiles: {} };
    throw unreadable(file, code ? describeErrno(code) : (error as Error).message);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw unreadable(file, 'it is not JSON');
  }
  const profiles = (parsed as { profiles?: unknown } | null)?.profiles;
  if (profiles === null || typeof profiles !== 'object' || Array.isArray(profiles)) throw unreadable(file, 'it has no "profiles" object');
  const valid: Record<string, StoredToken> = {};
  for (const [profile, entry] of Object.entries(profiles as Record<string, unknown>)) {
    const { sha256, created } = (entry ?? {}) as Partial<StoredToken>;
    if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256) || typeof created !== 'string') throw unreadable(file, `the entry of profile ${profile} is not a token's hash`);
    valid[profile] = { sha256, created };
  }
  return { version: 1, profiles: valid };
}

function writeTokens(env: Env, change: (tokens: TokenFile) => void): void {
  const dir = configDir(env);
  const file = mcpTokenPath(env);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const mode = statSync(dir).mode & 0o777;
    if (mode & 0o077) chmodSync(dir, mode & 0o700);
    withLock(`${file}.lock`, () => {
      const tokens = readTokens(env);
      change(tokens);
      const partial = `${file}.${process.pid}.tmp`;
      try {
        writeFileSync(partial, `${JSON.stringify(tokens, null, 2)}\n`, { mode: 0o600 });
        renameSync(partial, file);
      } finally {
        rmSync(partial, { force: true });
      }
    });
  } catch (error) {
    if (error instanceof ConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`Cannot write the MCP tokens in ${dir}: ${code ? describeErrno(code) : (error as Error).message}. Nothing was changed.`, {
      code: 'config_unwritable',
      hint: `Make the folder writable (chmod u+w ${dir}), or set TRADE_CONFIG_DIR to a folder you can write.`,
      cause: error,
    });
  }
}

/** When the profile's MCP token was made, or undefined when it has none. */
export function mcpTokenCreated(env: Env, profile: string): string | undefined {
  return readTokens(env).profiles[profile]?.created;
}

/**
 * Makes the profile's MCP token and keeps its hash, replacing one it had only with `replace`;
 * returns the token (the only time it is seen) or, when one exists and `replace` is not given,
 * undefined and the time that one was made.
 */
export function createMcpToken(env: Env, profile: string, replace: boolean, now = new Date()): { token?: string; created: string; replaced: boolean } {
  let outcome: { token?: string; created: string; replaced: boolean } | undefined;
  writeTokens(env, (tokens) => {
    const existing = tokens.profiles[profile];
    if (existing && !replace) {
      outcome = { created: existing.created, replaced: false };
      return;
    }
    const token = MCP_TOKEN_PREFIX + randomBytes(32).toString('base64url');
    const created = now.toISOString();
    tokens.profiles[profile] = { sha256: digest(token).toString('hex'), created };
    outcome = { token, created, replaced: existing !== undefined };
  });
  return outcome!;
}

/** Removes the profile's MCP token; false when it had none. */
export function revokeMcpToken(env: Env, profile: string): boolean {
  let removed = false;
  writeTokens(env, (tokens) => {
    removed = tokens.profiles[profile] !== undefined;
    delete tokens.profiles[profile];
  });
  return removed;
}

/** Equal texts, compared in constant time (their hashes, so lengths leak nothing either). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

export type McpAuth = { ok: true } | { ok: false; why: string; serviceToken?: boolean };

/**
 * Who may use `trade mcp --http`: the bearer of the profile's MCP token, read from the file at each
 * request (a rotated or revoked token stops working at once). The service token is refused by
 * name: whoever sent it should not be holding it.
 */
export function mcpAuthenticator(env: Env, profile: string, serviceToken: string | undefined): (given: string | undefined) => McpAuth {
  return (given) => {
    if (given === undefined || given === '') return { ok: false, why: 'An MCP token is required: Authorization: Bearer <the token trade mcp token made>' };
    if (serviceToken !== undefined && serviceToken !== '' && sameSecret(given, serviceToken))
      return {
        ok: false,
        serviceToken: true,
        why: "This is the profile's service token, which trade mcp refuses: an agent gets an MCP token of its own (trade mcp token), never the service token",
      };
    let stored: StoredToken | undefined;
    try {
      stored = readTokens(env).profiles[profile];
    } catch {
      return { ok: false, why: 'The MCP tokens cannot be read (see trade mcp token)' };
    }
    if (!stored) return { ok: false, why: `Profile ${profile} has no MCP token (revoked?): trade mcp token makes one` };
    if (!timingSafeEqual(digest(given), Buffer.from(stored.sha256, 'hex'))) return { ok: false, why: 'Invalid MCP token (rotated? trade mcp token --rotate makes a new one)' };
    return { ok: true };
  };
}
