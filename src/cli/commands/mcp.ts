/**
 * `trade mcp`: the operations as Model Context Protocol tools for AI agents (src/mcp/), over stdio
 * (what a desktop agent starts) or, with --http PORT, the streamable HTTP transport on 127.0.0.1
 * with the configured token required. What an agent may call is the tier a person chose; every
 * money-moving call goes through the guard and its journal with source `mcp`.
 *
 * The SDK is loaded here only (CommonJS entry points: required by the bundle where used).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ConfigError, UsageError } from '../../order/errors.js';
import { parseAccountName } from '../../order/schema.js';
import { redact } from '../../config/redact.js';
import { storePath } from '../../config/paths.js';
import { ledgerPath } from '../../guard/ledger.js';
import type { Tier } from '../../mcp/tiers.js';
import { type CommandContext, using } from '../context.js';
import { type StopWhen, untilSignal } from '../signals.js';

export interface McpOptions {
  tier?: string;
  http?: string;
  account?: string;
}

export interface McpDeps {
  /** Resolves with a reason when the server should stop (default: SIGINT, SIGTERM, or stdin closed for stdio). */
  stopWhen?: StopWhen;
}

/** The rules a live-trading agent cannot start without. */
const TRADE_TIER_RULES = ['max-order-qty', 'max-position'] as const;

function parseHttpPort(text: string): number {
  const port = /^\d{1,5}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new UsageError(`--http must be a port, a whole number from 0 to 65535 (0 picks a free one), got '${text}'`);
  return port;
}

/** Equal tokens, compared in constant time (their hashes, so lengths leak nothing either). */
function sameToken(given: string, expected: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** Stops on SIGINT or SIGTERM, or when the agent closes stdin (it has gone). */
function untilSignalOrStdinEnd(stdin: NodeJS.ReadableStream): StopWhen {
  return () => {
    const signal = untilSignal();
    let onEnd: () => void = () => undefined;
    const ended = new Promise<string>((resolve) => {
      onEnd = () => resolve('stdin closed');
      stdin.once('end', onEnd);
      stdin.once('close', onEnd);
    });
    return {
      stopped: Promise.race([signal.stopped, ended]),
      dispose() {
        signal.dispose();
        stdin.removeListener('end', onEnd);
        stdin.removeListener('close', onEnd);
      },
    };
  };
}

export async function runMcp(ctx: CommandContext, options: McpOptions, deps: McpDeps = {}): Promise<void> {
  const { io } = ctx;
  const { parseTier, toolNamesForTier } = await import('../../mcp/tools.js');
  const tier: Tier | undefined = parseTier(options.tier ?? 'read');
  if (!tier) throw new UsageError(`--tier must be read, paper or trade, got '${options.tier}'`);
  const port = options.http === undefined ? undefined : parseHttpPort(options.http);
  const settings = await ctx.settings();
  // A bad rule is refused before anything starts (as for every command that opens the backend).
  const rules = settings.guardRules();
  if (tier === 'trade') {
    const missing = TRADE_TIER_RULES.filter((rule) => rules.texts[rule] === undefined);
    if (missing.length > 0)
      throw new UsageError(`--tier trade needs the guard's max-order-qty and max-position rules set; ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} not set. Nothing was started`, {
        hint: `Set them first, e.g. trade config set guard.max-order-qty 2 and trade config set guard.max-position 4 (or TRADE_GUARD_MAX_ORDER_QTY, TRADE_GUARD_MAX_POSITION); trade guard show lists the rules.`,
      });
  }
  const token = port === undefined ? undefined : settings.token;
  if (port !== undefined && !token)
    throw new ConfigError('trade mcp --http needs the configured token: an agent must send it as Authorization: Bearer', {
      code: 'no_token',
      hint: 'Set one with trade login, trade config set token, or TRADE_TOKEN.',
    });
  const account = options.account !== undefined ? parseAccountName(options.account) : await ctx.defaultAccount();

  const [{ Server }, { ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode }, { createTradeMcpServer }, { guardStatus }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/types.js'),
    import('../../mcp/server.js'),
    import('./guard.js'),
  ]);
  const stop = (deps.stopWhen ?? (port === undefined ? untilSignalOrStdinEnd(io.stdin as NodeJS.ReadableStream) : untilSignal))();
  try {
    const backend = await ctx.openBackend({ source: 'mcp' });
    await using(backend, async () => {
      // The Alert tool's kill switch and rate limit: the guard's halt and ledger, as trade alert's.
      const alerts = { ledgerFile: ledgerPath(storePath(ctx.env)), profile: (await ctx.settings()).profile };
      const makeServer = () =>
        createTradeMcpServer(
          { Server, ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode },
          {
            tier,
            backend,
            rules,
            defaultAccount: account,
            guardStatus: () => guardStatus(ctx),
            redact: (text) => redact(text, ctx.secrets()),
            alerts,
          },
        );
      const tools = toolNamesForTier(tier).length;
      const what = `tier ${tier}, ${tools} tools, backend ${backend.label}${account ? `, default account ${account}` : ''}`;
      if (port === undefined) {
        const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
        const server = makeServer();
        // io's streams: every message written passes through the redactor, as every line the CLI prints.
        await server.connect(new StdioServerTransport(io.stdin as NodeJS.ReadStream, io.stdout as unknown as NodeJS.WriteStream));
        io.err(`trade mcp: serving on stdio (${what})`);
        await stop.stopped;
        await server.close();
        return;
      }
      const listener = await serveHttp(makeServer, port, token!);
      try {
        const { port: bound } = listener.address() as AddressInfo;
        io.err(`trade mcp: serving on http://127.0.0.1:${bound}/mcp (${what}); every request needs Authorization: Bearer <the profile's token>`);
        await stop.stopped;
      } finally {
        await new Promise<void>((resolve) => {
          listener.close(() => resolve());
          listener.closeAllConnections();
        });
      }
    });
  } finally {
    stop.dispose();
  }
}

/**
 * The streamable HTTP transport, stateless: a server and a transport for each request, over one
 * backend. The SDK's Express app validates the Host header (DNS rebinding) and parses JSON; its
 * bearer middleware refuses a request without the token (401) before the transport sees it.
 */
async function serveHttp(makeServer: () => import('@modelcontextprotocol/sdk/server/index.js').Server, port: number, token: string) {
  const [{ createMcpExpressApp }, { requireBearerAuth }, { InvalidTokenError }, { StreamableHTTPServerTransport }] = await Promise.all([
    import('@modelcontextprotocol/sdk/server/express.js'),
    import('@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js'),
    import('@modelcontextprotocol/sdk/server/auth/errors.js'),
    import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
  ]);
  const app = createMcpExpressApp({ host: '127.0.0.1' });
  const auth = requireBearerAuth({
    verifier: {
      async verifyAccessToken(given) {
        if (!sameToken(given, token)) throw new InvalidTokenError('Invalid token');
        // The token itself is not kept in the request's auth info: nothing downstream can echo it.
        return { token: 'configured', clientId: 'trade', scopes: [], expiresAt: Math.floor(Date.now() / 1000) + 3600 };
      },
    },
  });
  app.use('/mcp', auth);
  app.post('/mcp', async (req: IncomingMessage & { body?: unknown }, res: ServerResponse) => {
    const server = makeServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  // Stateless: no standalone event stream and no session to delete.
  app.all('/mcp', (_req: IncomingMessage, res: ServerResponse) => {
    res
      .writeHead(405, { Allow: 'POST', 'Content-Type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless, POST only' }, id: null }));
  });
  return new Promise<Server>((resolve, reject) => {
    const listener: Server = app.listen(port, '127.0.0.1', (error?: Error) => (error ? reject(listenError(error, port)) : resolve(listener)));
    listener.once('error', (error: Error) => reject(listenError(error, port)));
  });
}

function listenError(error: unknown, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new UsageError(`Cannot listen on 127.0.0.1:${port}: the address is in use`, { hint: 'Choose another --http port, or --http 0 for any free one.' });
  if (code === 'EACCES') return new UsageError(`Cannot listen on 127.0.0.1:${port}: permission denied (ports below 1024 need privileges)`);
  return error;
}
