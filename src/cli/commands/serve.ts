// zod starts with the server's code, not at its first request (src/service/zod-now.ts).
import '../../service/zod-now.js';
import { readFile } from 'node:fs/promises';
import { ConfigError, parseAll, UsageError } from '../../common/errors.js';
import { parseInstrument } from '../../service/order.js';
import { generateToken, isUsableToken } from '../../server/auth.js';
import { DEFAULT_BURST, describeRateLimit, parseBurst, parseMaxConnections, parseRate, type RateLimitOptions } from '../../server/limits.js';
import { createServer, WS_PATH } from '../../server/server.js';
import { parseWebhookAddress } from '../../server/webhook.js';
import { parseLogSize } from '../../server/sandbox/request-log.js';
import type { Env } from '../../config/paths.js';
import type { CommandContext } from '../context.js';
import { type StopWhen, untilSignal } from '../signals.js';
import { driveFeed, type Feed, releaseFeeds, walkStart } from './price-feed.js';

export interface ServeOptions {
  host?: string;
  port?: string;
  tokenFile?: string;
  rateLimit?: string;
  burst?: string;
  maxConnections?: string;
  log?: boolean;
  /** A price source the server drives while it serves (docs/paper-trading.md). */
  priceReplay?: string;
  priceInstrument?: string;
  speed?: string;
  priceFrom?: string;
  priceTo?: string;
  pricePaused?: boolean;
  priceRandom?: string;
  seed?: string;
  interval?: string;
  priceFollow?: string[];
  from?: string;
  /** Scenario rules in force from the start (issue 22). */
  scenario?: string;
  logSize?: string;
  /** The webhook's `ID/SECRET` (issue 32). */
  webhook?: string;
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
  const logSize = options.logSize === undefined ? undefined : parseLogSize(options.logSize);
  if (Number.isNaN(logSize)) throw new UsageError(`--log-size must be a whole number from 1 to 1000000, got '${options.logSize}'`);
  const webhook = options.webhook === undefined ? undefined : parseWebhookAddress(options.webhook);
  if (options.webhook !== undefined && !webhook)
    throw new UsageError(`--webhook must be ID/SECRET: 1-128 and 8-128 of A-Z a-z 0-9 _ -, got '${options.webhook}'`, { hint: 'Nothing was served.' });
  // Checked whole before anything is served: a bad rule is exit 2 naming the file, line and field.
  const scenario = options.scenario === undefined ? undefined : (await import('../../server/sandbox/scenario-file.js')).loadScenario(options.scenario);
  const { token, source } = await resolveToken(options.tokenFile, ctx.env);
  const explicit = await planFeed(ctx, options);

  // Installed before listening, so a signal that comes while starting still shuts down cleanly.
  const stop = (deps.stopWhen ?? untilSignal)();
  let feeds: Feed[] = explicit ? [explicit] : [];
  const engine = await ctx.openEngine().catch(async (error: unknown) => {
    stop.dispose();
    await releaseFeeds(feeds);
    throw error;
  });
  let running: Promise<unknown> | undefined;
  try {
    // Without a --price-* flag, the sources chosen with `trade price source` run while serving.
    if (!explicit) {
      const { planChosenFeeds } = await import('./price-source.js');
      feeds = await planChosenFeeds(ctx, engine, []);
    }
    for (const feed of feeds) {
      if (feed.kind === 'random' && walkStart(engine, feed.plan) === undefined)
        throw new UsageError(`No price is known for ${feed.plan.instrument}: give the walk a --start price`, { hint: 'Nothing was served.' });
    }
    const server = await createServer({
      engine,
      token,
      rateLimit,
      limits: maxConnections === undefined ? undefined : { maxConnections },
      scenario,
      logSize,
      webhook,
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
      ['webhook', `${url}${server.webhook.path}  (TradingView alerts: text, key= the token${webhook ? '' : '; random for this run, --webhook ID/SECRET keeps one'})`],
      ['store', engine.file],
      ['token', tokenLine[source]],
      ['rate limit', rateLimit ? describeRateLimit(rateLimit) : 'off'],
      ...(scenario ? [['scenario', `${options.scenario} (${scenario.length} rule${scenario.length === 1 ? '' : 's'})`]] : []),
    ]) {
      io.err(`  ${key!.padEnd(10)}  ${value}`);
    }
    if (!isLoopback(host)) {
      io.err(io.errColor.yellow(`  Listening beyond this machine: anyone who reaches ${host} with the token can trade.`));
    }
    for (const feed of feeds) io.err(`  ${'prices'.padEnd(10)}  ${feed.describe}`);
    io.err(io.errColor.dim('  Ctrl-C (SIGINT) or SIGTERM stops it.'));
    // The price sources run beside the server on the same engine, until they end or the server stops.
    if (feeds.length > 0) {
      const note = (line: string) => io.err(io.errColor.dim(`trade serve: ${line}`));
      running = Promise.all(
        feeds.map((feed) =>
          driveFeed(engine, feed, stop.stopped, note)
            .then(({ tally, summary }) => !tally.stopped && io.err(`trade serve: ${summary}`))
            .catch((error: unknown) => io.err(io.errColor.red(`trade serve: the price source stopped: ${error instanceof Error ? error.message : String(error)}`))),
        ),
      );
    }

    const reason = await stop.stopped;
    io.err(`trade serve: ${reason}, finishing in-flight requests`);
    await server.close();
  } finally {
    stop.dispose();
    await running;
    // Feeds that never started still hold their connections to the service.
    if (!running) await releaseFeeds(feeds);
    engine.close();
  }
  io.err('trade serve stopped');
}

/**
 * The price source of --price-replay, --price-random or --price-follow, checked whole before
 * anything is served (a follow's service connection is opened then too).
 */
/** Each price source's own flags, by the source flag they go with. */
const SOURCE_FLAGS: ReadonlyArray<readonly [source: string, flags: ReadonlyArray<readonly [flag: string, key: keyof ServeOptions]>]> = [
  ['--price-replay', [['--speed', 'speed'], ['--price-instrument', 'priceInstrument'], ['--price-from', 'priceFrom'], ['--price-to', 'priceTo'], ['--price-paused', 'pricePaused']]],
  ['--price-random', [['--seed', 'seed'], ['--interval', 'interval']]],
  ['--price-follow', [['--from', 'from']]],
];

async function planFeed(ctx: CommandContext, options: ServeOptions): Promise<Feed | undefined> {
  const sources = { '--price-replay': options.priceReplay, '--price-random': options.priceRandom, '--price-follow': options.priceFollow };
  const given = Object.entries(sources).filter(([, value]) => value !== undefined).map(([flag]) => flag);
  if (given.length > 1) throw new UsageError('Give one of --price-replay, --price-random and --price-follow');
  for (const [source, flags] of SOURCE_FLAGS) {
    for (const [flag, key] of flags) {
      if (options[key] === undefined || given[0] === source) continue;
      throw new UsageError(given.length === 0 ? `${flag} needs --price-replay, --price-random or --price-follow` : `${flag} goes with ${source}, not ${given[0]}`);
    }
  }
  if (given.length === 0) return undefined;
  const { describeFeedPlan, followFrom, parseSpeed, planWalk } = await import('./price-feed.js');
  if (options.priceFollow !== undefined) {
    const instruments = parseAll(options.priceFollow.map((raw) => () => parseInstrument(raw)), { hint: 'Nothing was served.' }) as string[];
    const settings = await ctx.settings();
    const from = followFrom(settings, options.from);
    const { openBackend } = await import('../../backends/resolve.js');
    const remote = await openBackend({ ...settings, backend: from }, ctx.storeFile());
    return { kind: 'follow', remote, instruments, timeoutMs: settings.timeoutMs, describe: describeFeedPlan.follow(instruments, remote.label) };
  }
  if (options.priceReplay !== undefined) {
    const speed = parseSpeed(options.speed);
    const { fallbackInstrument, parseWindow, planReplay } = await import('./price-replay.js');
    const window = parseWindow({ from: options.priceFrom, to: options.priceTo });
    const plan = await planReplay([{ file: options.priceReplay, instrument: fallbackInstrument(options.priceInstrument) }], window);
    return { kind: 'replay', plan, speed, describe: `${describeFeedPlan.replay(plan, speed)}${options.pricePaused ? ', paused at its first record (trade sandbox clock resume)' : ''}`, paused: options.pricePaused };
  }
  const plan = planWalk(options.priceRandom!, { seed: options.seed, interval: options.interval });
  return { kind: 'random', plan, describe: describeFeedPlan.random(plan) };
}

