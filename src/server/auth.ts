/**
 * Bearer-token checks for both transports. Neither the expected token nor the one offered ever
 * goes into a message, and the comparison takes the same time whatever the offered token is.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { sha256 as digest } from '../common/random.js';
import { createRedactor } from '../config/redact.js';

export type AuthOutcome = 'ok' | 'missing' | 'invalid';

/** The 401 body's text for a missing and a wrong token alike (§1.2). */
export const UNAUTHORIZED = 'Unauthorized';

/** A fresh token for a run with none configured: 256 random bits, safe in a header and a URL. */
export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Visible ASCII only: anything else cannot travel in an Authorization header unchanged. */
export function isUsableToken(token: string): boolean {
  return /^[\x21-\x7e]+$/.test(token);
}

export function createAuthenticator(token: string): (authorization: string | string[] | undefined) => AuthOutcome {
  // Hash both sides: timingSafeEqual needs equal lengths, and comparing digests means the time
  // taken does not tell how long the real token is.
  const expected = digest(token);
  return (authorization) => {
    if (typeof authorization !== 'string') return 'missing';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorization);
    if (!match) return /^\s*(Bearer\s*)?$/i.test(authorization) ? 'missing' : 'invalid';
    return timingSafeEqual(digest(match[1]!), expected) ? 'ok' : 'invalid';
  };
}

/**
 * Removes the token from a line before it is written anywhere (a request URL or a WebSocket id
 * may carry it, by mistake or on purpose): the CLI's own redactor, so every form it knows —
 * percent-encoded, escaped, base64, clipped — is `[redacted]` in the log too.
 */
export function createScrubber(token: string, ...others: string[]): (line: string) => string {
  return createRedactor([token, ...others]);
}
