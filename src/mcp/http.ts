/**
 * The HTTP door of `trade mcp --http` (issue 31): the SDK's streamable HTTP transport, stateless (a
 * server and a transport for each POST), behind checks made in this order, each before anything
 * of the request is read or run:
 *
 * 1. the Host header names this server exactly (127.0.0.1:PORT or localhost:PORT): a page that
 *    reached the port through DNS rebinding sends its own host name, and is refused (403);
 * 2. an Origin header, when there is one, is this server's own: a page of another origin (another
 *    site, or another local port) is refused (403), whatever it sends;
 * 3. at most `maxSessions` requests at once (429 with Retry-After beyond);
 * 4. the MCP token (401 saying why; the service token is refused by name);
 * 5. POST only (405), a JSON body of at most `maxBodyBytes` (413), read with a deadline.
 *
 * Bound to 127.0.0.1 only, with header, request and keep-alive timeouts and a cap on connections.
 * Node's http module and no framework: each check is a few lines here, and nothing runs before it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Server as McpServer } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { UsageError } from '../common/errors.js';
import type { McpAuth } from './token.js';

export const MCP_HTTP_LIMITS = {
  /** Requests being answered at once. */
  maxSessions: 16,
  /** A request's body. */
  maxBodyBytes: 256 * 1024,
  /** Connections open at once. */
  maxConnections: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
} as const;

export interface McpHttpOptions {
  port: number;
  makeServer: () => McpServer;
  Transport: typeof StreamableHTTPServerTransport;
  /** Connects a server to its transport (connectTradeMcp). */
  connect: (server: McpServer, transport: InstanceType<typeof StreamableHTTPServerTransport>) => Promise<void>;
  authenticate: (token: string | undefined) => McpAuth;
  /** A line for the person running it (never a token: none is ever passed to it). */
  log?: (line: string) => void;
  limits?: Partial<typeof MCP_HTTP_LIMITS>;
}

const rpcError = (message: string, code = -32000) => JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });

function answer(res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}): void {
  if (res.headersSent) return;
  // A refused request's connection is closed: nothing more is read from a client that was refused.
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close', ...headers }).end(body);
}

/** `Bearer X` → X; anything else (no header, another scheme) → undefined. */
function bearerOf(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? '');
  return match?.[1];
}

/** The body, at most `max` bytes: undefined (and a 413 sent) when it is larger. */
function readBody(req: IncomingMessage, res: ServerResponse, max: number): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > max) {
      answer(res, 413, rpcError(`Request body too large: at most ${max} bytes`));
      req.resume();
      return resolve(undefined);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        answer(res, 413, rpcError(`Request body too large: at most ${max} bytes`));
        req.destroy();
        resolve(undefined);
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export async function serveMcpHttp(options: McpHttpOptions): Promise<Server> {
  const limits = { ...MCP_HTTP_LIMITS, ...options.limits };
  let port = options.port;
  let active = 0;
  const hosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`]);
  const origins = () => new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`]);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '').split('?')[0];
    if (!hosts().has((req.headers.host ?? '').toLowerCase()))
      return answer(res, 403, rpcError(`Host refused: this server answers only 127.0.0.1:${port} and localhost:${port} (DNS rebinding protection)`));
    const origin = req.headers.origin;
    if (origin !== undefined && !origins().has(origin.toLowerCase()))
      return answer(res, 403, rpcError(`Origin refused: a web page cannot call trade mcp; only http://127.0.0.1:${port} and http://localhost:${port} may`));
    if (path !== '/mcp') return answer(res, 404, rpcError('Not found: the MCP endpoint is /mcp'));
    const auth = options.authenticate(bearerOf(req.headers.authorization));
    if (!auth.ok) {
      if (auth.serviceToken) options.log?.("trade mcp: refused a request that sent the profile's service token (401); give the agent the MCP token (trade mcp token)");
      const description = auth.why.replace(/["\\]/g, "'");
      return answer(res, 401, JSON.stringify({ error: 'invalid_token', error_description: auth.why }), {
        'WWW-Authenticate': `Bearer error="invalid_token", error_description="${description}"`,
      });
    }
    // Stateless: no standalone event stream and no session to delete.
    if (req.method !== 'POST') return answer(res, 405, rpcError('Method not allowed: this server is stateless, POST only'), { Allow: 'POST' });
    const raw = await readBody(req, res, limits.maxBodyBytes);
    if (raw === undefined) return;
    let body: unknown;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      return answer(res, 400, rpcError('Parse error: the body is not JSON', -32700));
    }
    const server = options.makeServer();
    const transport = new options.Transport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await options.connect(server, transport);
    await transport.handleRequest(req, res, body);
  }

  const http = createServer((req, res) => {
    // Counted from the start: a request whose body trickles in holds its place until it is done.
    if (active >= limits.maxSessions) return answer(res, 429, rpcError(`Too many requests at once (at most ${limits.maxSessions}): try again`), { 'Retry-After': '1' });
    active++;
    res.once('close', () => active--);
    handle(req, res).catch(() => answer(res, 500, rpcError('Internal error')));
  });
  http.headersTimeout = limits.headersTimeoutMs;
  http.requestTimeout = limits.requestTimeoutMs;
  http.keepAliveTimeout = limits.keepAliveTimeoutMs;
  http.maxConnections = limits.maxConnections;
  await new Promise<void>((resolve, reject) => {
    http.once('error', (error) => reject(listenError(error, options.port)));
    http.listen(options.port, '127.0.0.1', () => resolve());
  });
  port = (http.address() as AddressInfo).port;
  return http;
}

function listenError(error: unknown, port: number): unknown {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE') return new UsageError(`Cannot listen on 127.0.0.1:${port}: the address is in use`, { hint: 'Choose another --http port, or --http 0 for any free one.' });
  if (code === 'EACCES') return new UsageError(`Cannot listen on 127.0.0.1:${port}: permission denied (ports below 1024 need privileges)`);
  return error;
}
