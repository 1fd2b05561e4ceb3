/**
 * `trade mcp`: the operations as Model Context Protocol tools for AI agents (src/mcp/), over stdio
 * (what a desktop agent starts) or, with --http PORT, the streamable HTTP transport on 127.0.0.1
 * with the profile's MCP token required (src/mcp/token.ts, src/mcp/http.ts). What an agent may
 * call is the tier a person chose; every money-moving call goes through the guard and its journal
 * with source `mcp`. `trade mcp token` makes, replaces and removes the MCP token.
 *
 * The SDK is loaded here only (CommonJS entry points: required by the bundle where used).
 */
// zod starts with the server's code, not at its first request (src/service/zod-now.ts).
import '../../service/zod-now.js';
import type { AddressInfo } from 'node:net';
import { ConfigError, UsageError } from '../../common/errors.js';
import { parseAccountName } from '../../service/order.js';
import { redact } from '../../config/redact.js';
import type { GuardedBackend } from '../../guard/guard.js';
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
  const { mcpAuthenticator, mcpTokenCreated } = await import('../../mcp/token.js');
  if (port !== undefined && mcpTokenCreated(ctx.env, settings.profile) === undefined)
    throw new ConfigError(`trade mcp --http needs an MCP token of profile ${settings.profile}: an agent sends it as Authorization: Bearer, never the service token`, {
      code: 'no_mcp_token',
      hint: `Make one with trade mcp token${settings.profile === 'default' ? '' : ` --profile ${settings.profile}`} (shown once), and give it to the agent. Nothing was started.`,
    });
  const account = options.account !== undefined ? parseAccountName(options.account) : await ctx.defaultAccount();

  const [{ Server }, { ListToolsRequestSchema, CallToolRequestSchema, McpError, ErrorCode }, { connectTradeMcp, createTradeMcpServer }, { guardStatus }] = await Promise.all([
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
      const alerts = { ledger: () => (backend as GuardedBackend).ledger(), profile: (await ctx.settings()).profile };
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
            journalRefusal: (name, args, refusal) => (backend as GuardedBackend).refused(name, args, refusal),
          },
        );
      const tools = toolNamesForTier(tier).length;
      const what = `tier ${tier}, ${tools} tools, backend ${backend.label}${account ? `, default account ${account}` : ''}`;
      if (port === undefined) {
        const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
        const server = makeServer();
        // io's streams: every message written passes through the redactor, as every line the CLI prints.
        await connectTradeMcp(server, new StdioServerTransport(io.stdin as NodeJS.ReadStream, io.stdout as unknown as NodeJS.WriteStream));
        io.err(`trade mcp: serving on stdio (${what})`);
        await stop.stopped;
        await server.close();
        return;
      }
      const [{ serveMcpHttp }, { StreamableHTTPServerTransport }] = await Promise.all([
        import('../../mcp/http.js'),
        import('@modelcontextprotocol/sdk/server/streamableHttp.js'),
      ]);
      const listener = await serveMcpHttp({
        port,
        makeServer,
        Transport: StreamableHTTPServerTransport,
        connect: connectTradeMcp,
        authenticate: mcpAuthenticator(ctx.env, settings.profile, settings.token),
        log: (line) => io.err(line),
      });
      try {
        const { port: bound } = listener.address() as AddressInfo;
        io.err(`trade mcp: serving on http://127.0.0.1:${bound}/mcp (${what}); every request needs Authorization: Bearer <the profile's MCP token>`);
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

export interface McpTokenOptions {
  rotate?: boolean;
  revoke?: boolean;
  json?: boolean;
}

/**
 * `trade mcp token`: makes the profile's MCP token and shows it once; `--rotate` replaces it (the
 * old one stops working at once, also for a server that is running), `--revoke` removes it.
 */
export async function runMcpToken(ctx: CommandContext, options: McpTokenOptions): Promise<void> {
  if (options.rotate && options.revoke) throw new UsageError('--rotate and --revoke go alone: one replaces the MCP token, the other removes it');
  const { profile } = await ctx.settings();
  const { createMcpToken, mcpTokenPath, revokeMcpToken } = await import('../../mcp/token.js');
  const { io } = ctx;
  if (options.revoke) {
    const removed = revokeMcpToken(ctx.env, profile);
    if (options.json) return io.out(JSON.stringify({ profile, revoked: removed, success: true }));
    io.out(removed ? `The MCP token of profile ${profile} is revoked: trade mcp --http refuses it from now on.` : `Profile ${profile} has no MCP token.`);
    return;
  }
  const made = createMcpToken(ctx.env, profile, options.rotate === true);
  if (made.token === undefined)
    throw new UsageError(`Profile ${profile} already has an MCP token (made ${made.created}); it is not shown again`, {
      hint: 'trade mcp token --rotate makes a new one (the old one stops working), --revoke removes it.',
    });
  // The one line that holds it: printed as it is (the redactor knows service tokens, not this one).
  if (options.json) io.outSecret(JSON.stringify({ profile, token: made.token, created: made.created, replaced: made.replaced, success: true }));
  else io.outSecret(made.token);
  io.err(
    `${made.replaced ? 'A new MCP token replaces the old one' : 'MCP token made'} for profile ${profile}; it is shown only now (its hash is kept in ${mcpTokenPath(ctx.env)}). ` +
      'Give it to the agent as Authorization: Bearer <token> for trade mcp --http; trade mcp token --rotate replaces it, --revoke removes it.',
  );
}
