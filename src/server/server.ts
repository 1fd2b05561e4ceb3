/**
 * `trade serve`: the service's REST and WebSocket API over the embedded engine. The routes come
 * from the dispatch table in operations.ts; this file adds what sits around every request: the
 * token, the rate limit, content-type and size limits, the `{error}` shape for framework errors,
 * one log line per request, and a shutdown that lets in-flight work finish.
 */
import type { AddressInfo } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { fastify, type FastifyReply, type FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import type { Engine } from '../engine/engine.js';
import { AUTH_MESSAGES, createAuthenticator, createScrubber } from './auth.js';
import { type ApiName, dispatch, errorResult, OPERATIONS, type Operation } from './operations.js';
import { BODY_LIMIT, createTokenBucket, RATE_LIMITED, type RateLimitOptions, type TakeResult } from './limits.js';
import { handleRpcConnection, type RpcServerContext } from './ws-rpc.js';
import { refuseClientError, refuseUpgrade } from './refusals.js';

export const WS_PATH = '/ws/stream';
/** How long a WebSocket client gets to answer our close frame at shutdown before it is cut off. */
const WS_CLOSE_GRACE_MS = 2_000;
/** How long requests in flight get at shutdown; a client stalling its body cannot hold the exit forever. */
const SHUTDOWN_GRACE_MS = 10_000;

export interface ServerOptions {
  engine: Engine;
  /** The bearer token every request must carry. */
  token: string;
  /** Off when absent. */
  rateLimit?: RateLimitOptions;
  /** Receives one line per request (HTTP request, WebSocket upgrade, RPC) when set. */
  log?: (line: string) => void;
  /** Receives internal errors, which clients only see as a generic 500. */
  warn?: (line: string) => void;
  /** The clock of the rate limit, for tests. */
  now?: () => number;
}

export interface TradeServer {
  /** Starts listening; resolves with the base URL, e.g. http://127.0.0.1:8080. */
  listen(options: { host?: string; port?: number }): Promise<string>;
  /** Stops accepting, lets in-flight requests and RPCs finish, closes WebSocket clients. The engine stays open. */
  close(): Promise<void>;
}

/** Framework errors a client can cause, with messages that say what to fix and nothing internal. */
const CLIENT_ERRORS: Record<string, { status: number; error: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, error: `Request body is larger than ${BODY_LIMIT / 1024} KiB` },
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, error: 'Content-Type must be application/json' },
  FST_ERR_CTP_INVALID_JSON_BODY: { status: 400, error: 'Invalid request: the body is not valid JSON' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, error: 'Invalid request: the body is empty; send a JSON object' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, error: 'Invalid request: the body does not match its Content-Length' },
  FST_ERR_BAD_URL: { status: 400, error: 'Invalid request: the URL is not valid' },
};

function isJson(contentType: string | undefined): boolean {
  return contentType?.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

/** The path of a URL without its query, shortened: it goes into 404 messages. */
function routeOf(url: string): string {
  const path = url.split('?')[0]!;
  return path.length > 100 ? `${path.slice(0, 97)}...` : path;
}

export async function createServer(options: ServerOptions): Promise<TradeServer> {
  const { engine } = options;
  const scrub = createScrubber(options.token);
  const log = options.log && ((line: string) => options.log!(scrub(`${new Date().toISOString()} ${line}`)));
  const warn = (line: string) => options.warn?.(scrub(line));
  const authenticate = createAuthenticator(options.token);
  const bucket = options.rateLimit && createTokenBucket(options.rateLimit, options.now);
  const take = (): TakeResult => bucket?.take() ?? { ok: true };
  const onInternalError = (api: string, error: unknown) =>
    warn(`trade serve: internal error in ${api}: ${error instanceof Error ? error.message : String(error)}`);
  /** RPCs being answered; shutdown waits for them as fastify waits for HTTP requests. */
  const inFlight = new Set<Promise<unknown>>();
  let closing = false;

  const app = fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    // Long enough that an over-long account name reaches the schema and gets its 400 message.
    routerOptions: { maxParamLength: 500 },
    clientErrorHandler: refuseClientError,
    frameworkErrors: (error, _request, reply) => {
      const known = CLIENT_ERRORS[(error as { code?: string }).code ?? ''];
      void (reply as FastifyReply).code(known?.status ?? 400).send({ error: known?.error ?? 'Invalid request' });
    },
  });

  await app.register(websocket, {
    options: {
      // Past this the connection is cut (1009); below it, messages over BODY_LIMIT get a 413 reply.
      maxPayload: 16 * BODY_LIMIT,
    },
    preClose: async () => {
      await Promise.allSettled([...inFlight]);
      await closeWebSockets();
    },
  });

  // Malformed upgrades get the {error} shape too (ws alone would answer them in text/html).
  app.websocketServer.on('wsClientError', (error, socket, request) => {
    const status = refuseUpgrade(error, socket);
    log?.(`${request.socket.remoteAddress ?? '-'} ${request.method} ${request.url} ${status}`);
  });

  async function closeWebSockets(): Promise<void> {
    const clients = [...app.websocketServer.clients];
    await Promise.all(
      clients.map(
        (client) =>
          new Promise<void>((resolve) => {
            if (client.readyState === client.CLOSED) return resolve();
            const timer = setTimeout(() => client.terminate(), WS_CLOSE_GRACE_MS);
            client.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            client.close(1001, 'Server shutting down');
          }),
      ),
    );
    await new Promise<void>((resolve) => app.websocketServer.close(() => resolve()));
  }

  // Only JSON is parsed: a text/plain body is a 415, not a string for the schema to puzzle over.
  app.removeContentTypeParser('text/plain');

  if (log) {
    // The address is read when the request arrives: a refused upgrade's socket is gone by onResponse.
    const remote = new WeakMap<FastifyRequest, string>();
    app.addHook('onRequest', (request, _reply, done) => {
      remote.set(request, request.ip);
      done();
    });
    app.addHook('onResponse', (request, reply, done) => {
      log(`${remote.get(request) ?? '-'} ${request.method} ${request.url} ${reply.statusCode} ${reply.elapsedTime.toFixed(1)}ms`);
      done();
    });
  }

  // Authentication first, on every request including the WebSocket upgrade and unknown routes,
  // so a caller without the token learns nothing, and cannot spend the bucket of the one with it.
  app.addHook('onRequest', (request, reply, done) => {
    const outcome = authenticate(request.headers.authorization);
    if (outcome !== 'ok') {
      void reply.code(401).header('www-authenticate', 'Bearer').send({ error: AUTH_MESSAGES[outcome] });
      return;
    }
    const taken = take();
    if (!taken.ok) {
      void reply.code(429).header('retry-after', String(taken.retryAfterSeconds)).send({ error: RATE_LIMITED });
      return;
    }
    // @fastify/websocket would upgrade any route and then hang up; only the stream takes upgrades.
    if (request.ws && request.routeOptions.url !== undefined && request.routeOptions.url !== WS_PATH) {
      void reply.code(400).send({ error: `Invalid request: only ${WS_PATH} takes WebSocket upgrades` });
      return;
    }
    done();
  });

  // Node closes idle keep-alive connections when the server closes, but not one busy with a
  // request then; without this its client would keep it open after the answer, and shutdown wait.
  // An upgrade request's socket is closed after any answer but the upgrade itself; say so too.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (closing || request.ws) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send({ error: `Route ${request.method} ${routeOf(request.url)} not found` });
  });

  app.setErrorHandler((error: unknown, request, reply) => {
    const code = (error as { code?: unknown }).code;
    const status = (error as { statusCode?: unknown }).statusCode;
    const known = typeof code === 'string' ? CLIENT_ERRORS[code] : undefined;
    if (known) return reply.code(known.status).send({ error: known.error });
    if (typeof status === 'number' && status >= 400 && status < 500)
      return reply.code(status).send({ error: STATUS_CODES[status] ?? 'Invalid request' });
    const result = errorResult(error);
    if (result.internal) onInternalError(`${request.method} ${routeOf(request.url)}`, error);
    return reply.code(result.status).send(result.body);
  });

  for (const [api, operation] of Object.entries(OPERATIONS) as Array<[ApiName, Operation]>) {
    app.route({
      method: operation.method,
      url: operation.path,
      // Checked before the body is read, so a wrong type is a 415 whatever the size, and a POST
      // without a body or a Content-Type is a 415 rather than an empty order.
      preParsing:
        operation.method === 'POST'
          ? (request, reply, payload, done) => {
              if (isJson(request.headers['content-type'])) return done(null, payload);
              void reply.code(415).send({ error: CLIENT_ERRORS.FST_ERR_CTP_INVALID_MEDIA_TYPE!.error });
            }
          : undefined,
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const data = operation.method === 'POST' ? request.body : request.query;
        const params = request.params as Record<string, unknown>;
        const result = await dispatch(engine, api, { params, data }, { onInternalError });
        return reply.code(result.status).send(result.body);
      },
    });
  }

  const rpc: RpcServerContext = {
    engine,
    take,
    log,
    onInternalError,
    track(work) {
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    },
  };
  app.route({
    method: 'GET',
    url: WS_PATH,
    handler: (_request, reply) => {
      void reply.code(426).header('upgrade', 'websocket').send({ error: `${WS_PATH} takes WebSocket connections only` });
    },
    wsHandler: (socket, request) => {
      log?.(`${request.ip} GET ${request.url} 101`);
      handleRpcConnection(socket, request.ip, rpc);
    },
  });

  return {
    async listen({ host = '127.0.0.1', port = 8080 }) {
      await app.listen({ host, port });
      const address = app.server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${shown}:${address.port}`;
    },
    async close() {
      closing = true;
      const deadline = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
      }
    },
  };
}
