/**
 * The CLI context's secrets (src/cli/context.ts), as every printed line reads them
 * (`redact(text, ctx.secrets())`, src/cli/main.ts): one frozen list while nothing changes, so the
 * redactor is compiled once, and a new one as soon as a secret is added or TRADE_TOKEN changes.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import { REDACTED, redact } from '../../src/config/redact.js';
import type { Env } from '../../src/config/paths.js';

function context(env: Env) {
  const sink = () => ({ text: '', isTTY: false, write(chunk: string) { this.text += chunk; return true; } });
  return createContext(createIo({ stdin: new PassThrough(), stdout: sink(), stderr: sink() }, env), env);
}

describe('ctx.secrets()', () => {
  it('is the same frozen list until a secret is added or the token changes, and each new one is redacted from then on', () => {
    const env: Env = { TRADE_TOKEN: 'env-token-0123456789' };
    const ctx = context(env);
    const line = 'env-token-0123456789 typed-token-abcdefgh other-token-zyxwvuts';
    const list = ctx.secrets();
    expect(list).toEqual(['env-token-0123456789']);
    expect(Object.isFrozen(list)).toBe(true);
    expect(ctx.secrets()).toBe(list);
    expect(redact(line, ctx.secrets())).toBe(`${REDACTED} typed-token-abcdefgh other-token-zyxwvuts`);

    ctx.addSecret('typed-token-abcdefgh');
    expect(ctx.secrets()).toEqual(['typed-token-abcdefgh', 'env-token-0123456789']);
    expect(redact(line, ctx.secrets())).toBe(`${REDACTED} ${REDACTED} other-token-zyxwvuts`);
    // A secret already known adds nothing.
    const after = ctx.secrets();
    ctx.addSecret('typed-token-abcdefgh');
    expect(ctx.secrets()).toBe(after);

    env.TRADE_TOKEN = 'other-token-zyxwvuts';
    expect(ctx.secrets()).toEqual(['typed-token-abcdefgh', 'other-token-zyxwvuts']);
    expect(redact(line, ctx.secrets())).toBe(`env-token-0123456789 ${REDACTED} ${REDACTED}`);

    env.TRADE_TOKEN = '';
    expect(ctx.secrets()).toEqual(['typed-token-abcdefgh']);
    delete env.TRADE_TOKEN;
    expect(ctx.secrets()).toEqual(['typed-token-abcdefgh']);
    expect(redact(line, ctx.secrets())).toBe(`env-token-0123456789 ${REDACTED} other-token-zyxwvuts`);
  });
});
