import { readFile } from 'node:fs/promises';
import { ConfigError, UsageError } from '../../order/errors.js';
import { generateToken, isUsableToken } from '../../server/auth.js';
import { DEFAULT_BURST, describeRateLimit, parseBurst, parseMaxConnections, parseRate, type RateLimitOptions } from '../../server/limits.js';
import { createServer, WS_PATH } from '../../server/server.js';
import type { Env } from '../../config/paths.js';
import type { CommandContext } from '../context.js';
import { type StopWhen, untilSignal } from '../signals.js';

export interface ServeOptions {
  host?: string;
  port?: string;
  tokenFile?: string;
  rateLimit?: string;
  burst?: string;
  maxConnections?: string;
  log?: boolean;
}

export interface ServeDeps {
  /**
   * Resolves with a reason when the server should stop. The default waits for SIGINT or SIGTERM;
   * tests pass their own. `dispose` removes whatever it installed.
   */
  stopWhen?: StopWhen;
}

export type TokenSource = 'token-file' | 'env' | 'generated';

export function parsePort(text: string): number {
  const port = /^\d{1,5}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(port >= 0 && port <= 65535)) {
    throw new UsageError(`--port must be a whole number from 0 to 65535 (0 picks a free port), got '${text}'`);
  }
  return port;
}

export function rateLimitFrom(options: ServeOptions): RateLimitOptions | undefined {
  if (options.rateLimit === undefined) {
    if (options.burst !== undefined) throw new UsageError('--burst needs --rate-limit, e.g. --rate-limit 180/min --burst 20');
    return undefined;
  }
  const rate = parseRate(options.rateLimit);
  return { ...rate, burst: options.burst === undefined ? DEFAULT_BURST : parseBurst(options.burst) };
}

/** --token-file, else TRADE_SERVE_TOKEN, else a fresh one. Messages name the source, never the token. */
export async function resolveToken(tokenFile: string | undefined, env: Env): Promise<{ token: string; source: TokenSource }> {
  let token: string;
  let source: TokenSource;
  if (tokenFile !== undefined) {
    try {
      token = (await readFile(tokenFile, 'utf8')).trim();
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? 'unknown error';
      throw new ConfigError(`Cannot read the token file '${tokenFile}' (${code})`, { code: 'token_file' });
    }
    source = 'token-file';
  } else if (env.TRADE_SERVE_TOKEN) {
    token = env.TRADE_SERVE_TOKEN.trim();
    source = 'env';
  } else {
    return { token: generateToken(), source: 'generated' };
  }
  const where = source === 'env' ? 'TRADE_SERVE_TOKEN' : `the token file '${tokenFile}'`;
  if (token === '') throw new ConfigError(`The token in ${where} is empty`, { code: 'token_empty' });
  if (!isUsableToken(token)) {
    throw new ConfigError(`The token in ${where} has spaces or characters outside visible ASCII`, {
      code: 'token_invalid',
      hint: "It must fit an 'Authorization: Bearer <token>' header unchanged.",
    });
  }
  return { token, source };
}

function listenError(error: unknown, host: string, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  const where = `${host}:${port}`;
  if (code === 'EADDRINUSE')
    return new UsageError(`Cannot listen on ${where}: the address is in use`, {
      hint: 'Choose another --port, or --port 0 for any free one.',
    });
  if (code === 'EACCES') return new UsageError(`Cannot listen on ${where}: permission denied (ports below 1024 need privileges)`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND')
    return new UsageError(`Cannot listen on ${where}: --host is not an address of this machine`);
  return error;
}

const isLoopback = (host: string) => host === 'localhost' || host === '::1' || host.startsWith('127.');

export async function runServe(ctx: CommandContext, options: ServeOptions, deps: ServeDeps = {}): Promise<void> {
  const { io } = ctx;
  const host = options.host ?? '127.0.0.1';
  const port = parsePort(options.port ?? '8080');
  const rateLimit = rateLimitFrom(options);
  const maxConnections = options.maxConnections === undefined ? undefined : parseMaxConnections(options.maxConnections);
  const { token, source } = await resolveToken(options.tokenFile, ctx.env);

  // Installed before listening, so a signal that comes while starting still shuts down cleanly.
  const stop = (deps.stopWhen ?? untilSignal)();
  const engine = await ctx.openEngine().catch((error: unknown) => {
    stop.dispose();
    throw error;
  });
  try {
    const server = await createServer({
      engine,
      token,
      rateLimit,
      limits: maxConnections === undefined ? undefined : { maxConnections },
      log: options.log ? (line) => io.err(line) : undefined,
      warn: (line) => io.err(io.errColor.red(line)),
    });
    let url: string;
    try {
      url = await server.listen({ host, port });
    } catch (error) {
      await server.close();
      throw listenError(error, host, port);
    }
    io.err(`trade serve listening on ${url}`);
    const tokenLine: Record<TokenSource, string> = {
      'token-file': `from ${options.tokenFile}`,
      env: 'from TRADE_SERVE_TOKEN',
      generated: `${token}  (generated for this run; set TRADE_SERVE_TOKEN or --token-file to keep one)`,
    };
    for (const [key, value] of [
      ['websocket', `${url.replace(/^http/, 'ws')}${WS_PATH}`],
      ['store', engine.file],
      ['token', tokenLine[source]],
      ['rate limit', rateLimit ? describeRateLimit(rateLimit) : 'off'],
    ]) {
      io.err(`  ${key!.padEnd(10)}  ${value}`);
    }
    if (!isLoopback(host)) {
      io.err(io.errColor.yellow(`  Listening beyond this machine: anyone who reaches ${host} with the token can trade.`));
    }
    io.err(io.errColor.dim('  Ctrl-C (SIGINT) or SIGTERM stops it.'));

    const reason = await stop.stopped;
    io.err(`trade serve: ${reason}, finishing in-flight requests`);
    await server.close();
  } finally {
    stop.dispose();
    engine.close();
  }
  io.err('trade serve stopped');
}
