/**
 * The MCP server of `trade mcp`: the SDK's Server (protocol, capabilities, transports) answering
 * tools/list with one tool per operation of the tier (src/mcp/tools.ts) and GuardStatus, and
 * tools/call by running the operation on the guarded backend the command opened, so every
 * money-moving call is judged and journaled (source `mcp`) like any other.
 *
 * The SDK's low-level Server rather than its McpServer: McpServer validates a call with the zod
 * schema itself and answers a bad argument in its own words; here a call is validated as
 * `trade batch` validates a line (parseArgs), so an agent reads the CLI's own message.
 *
 * The SDK is passed in: only `trade mcp` loads it (src/cli/commands/mcp.ts).
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolRequestSchema, CallToolResult, ErrorCode, ListToolsRequestSchema, McpError, Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Backend } from '../backends/types.js';
import type { Ledger } from '../guard/ledger.js';
import { isSimAccount, type Rules } from '../guard/rules.js';
import { GuardError, TradeError, ValidationError } from '../common/errors.js';
import { isOperationName, OPERATIONS, type OperationName } from '../service/operations.js';
import { VERSION } from '../common/version.js';
import { ALERT_TOOL, argsOf, describeOperation, GUARD_STATUS_TOOL, inputJsonSchemaOf, operationsForTier, type Tier } from './tools.js';
import { ALERT_INPUT_SCHEMA, ALERT_TOOL_DESCRIPTION, callAlertTool } from './alert-tool.js';

/** What the server needs of the SDK (src/cli/commands/mcp.ts loads it). */
export interface McpSdk {
  Server: typeof Server;
  ListToolsRequestSchema: typeof ListToolsRequestSchema;
  CallToolRequestSchema: typeof CallToolRequestSchema;
  McpError: typeof McpError;
  ErrorCode: typeof ErrorCode;
}

export interface TradeMcpOptions {
  tier: Tier;
  /** The guarded backend (ctx.openBackend({ source: 'mcp' })), shared by every call and session. */
  backend: Backend;
  /** The guard's rules: the paper tier reads which accounts are simulation accounts. */
  rules: Rules;
  /** For the tools that take an account and are called without one. */
  defaultAccount?: string;
  /** What GuardStatus answers (the body of `trade guard show`, with the headroom). */
  guardStatus: () => Promise<Record<string, unknown>>;
  /** Removes every form of a known secret (the token) from text: every result passes through it. */
  redact: (text: string) => string;
  /** The guard's ledger and the profile, where the Alert tool's kill switch and rate limit live. */
  alerts?: { ledger: () => Promise<Ledger>; profile: string };
  /** Journals a call the tier refused (the guard's journal, source `mcp`, rule `tier`); resolves once stored. */
  journalRefusal?: (name: OperationName, args: unknown, refusal: { rule: string; message: string }) => Promise<void>;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A result's content, the token removed: the same object as structured content and as JSON text. */
function result(structured: Record<string, unknown>, redact: (text: string) => string, isError = false): CallToolResult {
  // Redaction keeps JSON valid (src/config/redact.ts): what is parsed back is the redacted object.
  const text = redact(JSON.stringify(structured));
  return { content: [{ type: 'text', text }], structuredContent: JSON.parse(text) as Record<string, unknown>, ...(isError ? { isError } : {}) };
}

/**
 * A failed call as a tool error: the one-line message the CLI prints (a guard refusal names its
 * rule), and in structured content what `--json` would print, with the error's code and hint.
 */
function failure(error: unknown, redact: (text: string) => string): CallToolResult {
  const message = error instanceof Error ? error.message : String(error);
  const structured: Record<string, unknown> =
    error instanceof TradeError
      ? { success: false, error: message, code: error.code, ...(error instanceof GuardError ? { rule: error.body.rule, limit: error.body.limit, value: error.body.value } : {}), ...(error.hint ? { hint: error.hint } : {}) }
      : { success: false, error: message };
  const safe = result(structured, redact, true);
  // The text is the message alone, as the CLI's `Error:` line has it.
  return { ...safe, content: [{ type: 'text', text: redact(message) }] };
}

/**
 * The paper tier sends money-moving requests to the embedded engine, or to simulation accounts
 * (Sim*, or the guard's sim-accounts globs) on a remote backend; a request that names no account
 * reaches every account, live ones too, and is refused there.
 */
function paperRefusal(name: OperationName, args: Record<string, unknown>, options: TradeMcpOptions): GuardError | undefined {
  if (options.tier !== 'paper' || !OPERATIONS[name].movesMoney || options.backend.name === 'embedded') return undefined;
  const account = typeof args.account === 'string' ? args.account : undefined;
  const why =
    account === undefined
      ? `${name} without an account reaches every account, live ones too`
      : isSimAccount(account, options.rules)
        ? undefined
        : `${account} is not a simulation account (Sim*, or the guard's sim-accounts)`;
  if (why === undefined) return undefined;
  return new GuardError(`refused by tier paper: ${why}; nothing was sent`, {
    code: 'tier_paper',
    rule: 'tier',
    hint: "A person decides: trade mcp --tier trade lets an agent trade live accounts (with the guard's max-order-qty and max-position set).",
  });
}

/** An own `__proto__` key anywhere in a value, at most a few levels down (JSON.parse makes one). */
function protoKeyIn(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object' || depth > 8) return false;
  if (Object.hasOwn(value, '__proto__')) return true;
  return Object.values(value).some((v) => protoKeyIn(v, depth + 1));
}

/**
 * Connects the server to a transport, refusing first what the SDK's own checks would change: a
 * tool call whose arguments hold a `__proto__` key (JSON.parse keeps it as a key; the SDK's
 * schema drops it without a word). Here it is a field that does not exist, as any other.
 */
export async function connectTradeMcp(server: Server, transport: Transport): Promise<void> {
  await server.connect(transport);
  const receive = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    const m = message as { method?: unknown; id?: unknown; params?: { arguments?: unknown } };
    if (m.method === 'tools/call' && (typeof m.id === 'string' || typeof m.id === 'number') && protoKeyIn(m.params?.arguments)) {
      const text = 'Invalid request: __proto__: is not a known field';
      void transport.send({
        jsonrpc: '2.0',
        id: m.id,
        result: { content: [{ type: 'text', text }], structuredContent: { success: false, error: text, code: 'invalid_request' }, isError: true },
      });
      return;
    }
    receive(message, extra);
  };
}

const GUARD_STATUS_DESCRIPTION =
  "The guard in front of every money-moving call: its rules (and where each is set), its state (halts: set by a person with trade halt), and the headroom left (orders left in each pace window per account, the largest order and position, the daily-loss limit), plus this server's tier. Reads only.";

export function createTradeMcpServer(sdk: McpSdk, options: TradeMcpOptions): Server {
  const { backend, redact, defaultAccount } = options;
  const operations = operationsForTier(options.tier);
  const listed = new Set<string>(operations);
  // Built once: the list is the same for every call and every session.
  const tools: Tool[] = [
    ...operations.map((name): Tool => {
      const moves = OPERATIONS[name].movesMoney;
      return {
        name,
        description: describeOperation(name),
        inputSchema: inputJsonSchemaOf(name, defaultAccount) as Tool['inputSchema'],
        annotations: { readOnlyHint: !moves, destructiveHint: moves, idempotentHint: !moves, openWorldHint: backend.name !== 'embedded' },
      };
    }),
    {
      name: GUARD_STATUS_TOOL,
      description: GUARD_STATUS_DESCRIPTION,
      inputSchema: { type: 'object', properties: {}, additionalProperties: false },
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ...(options.tier === 'read' || !options.alerts
      ? []
      : [
          {
            name: ALERT_TOOL,
            description: ALERT_TOOL_DESCRIPTION,
            inputSchema: ALERT_INPUT_SCHEMA as Tool['inputSchema'],
            annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: backend.name !== 'embedded' },
          },
        ]),
  ];
  const alertTool = tools.some((t) => t.name === ALERT_TOOL);
  const server = new sdk.Server(
    { name: 'trade', version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        `Futures orders and positions through trade (${backend.name} backend, tier ${options.tier}). ` +
        'Each tool is one operation of the order service. Every money-moving call passes the guard first: a refusal names its rule and sends nothing. ' +
        'Call GuardStatus to see the rules, any halt, and what headroom is left before planning orders.' +
        (defaultAccount ? ` Tools that take an account default to ${defaultAccount}.` : ''),
    },
  );
  server.setRequestHandler(sdk.ListToolsRequestSchema, () => ({ tools }));
  server.setRequestHandler(sdk.CallToolRequestSchema, async (request) => {
    const { name, arguments: input } = request.params;
    // A tool outside the tier is not there at all, as for a name that never was.
    if (name !== GUARD_STATUS_TOOL && !(name === ALERT_TOOL && alertTool) && !listed.has(name)) throw new sdk.McpError(sdk.ErrorCode.InvalidParams, `Tool ${name} not found`);
    try {
      // The service token never passes through trade mcp, in any form: not to a backend, the store or the journal.
      if (input !== undefined && redact(JSON.stringify(input)) !== JSON.stringify(input))
        throw new ValidationError([{ field: 'arguments', message: "an argument holds the profile's service token, which trade mcp never passes on" }]);
      if (name === ALERT_TOOL)
        return result(await callAlertTool(input, { backend, tier: options.tier as 'paper' | 'trade', rules: options.rules, ...options.alerts! }), redact);
      if (name === GUARD_STATUS_TOOL) return result({ tier: options.tier, backend: backend.label, ...(await options.guardStatus()), success: true }, redact);
      if (!isOperationName(name)) throw new sdk.McpError(sdk.ErrorCode.InvalidParams, `Tool ${name} not found`);
      const args = argsOf(name, input, defaultAccount);
      const refusal = paperRefusal(name, args as Record<string, unknown>, options);
      if (refusal) {
        // What an agent tried and was refused is in trade history, like a guard's refusal. A
        // journal that cannot be written changes nothing of the answer: nothing is sent either way.
        await options.journalRefusal?.(name, args, { rule: 'tier', message: refusal.message }).catch(() => undefined);
        throw refusal;
      }
      const answer = await backend.call(name, args);
      return result(isPlainObject(answer.body) ? answer.body : { body: answer.body }, redact);
    } catch (error) {
      return failure(error, redact);
    }
  });
  return server;
}
