/**
 * `trade serve`: the service's REST and WebSocket API over the embedded engine. The routes come
 * from the operation table (src/service/operations.ts); this file adds what sits around every
 * request (service-reference.md §1, §6, §7): the token, the rate limit, body parsing and size
 * limits, the documented error bodies, the 404 with `did_you_mean`, the catalog, one log line
 * per request, and a shutdown that lets in-flight work finish.
 */
import type { AddressInfo } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { fastify, type FastifyReply, type FastifyRequest } from 'fastify';
import websocket from '@fastify/websocket';
import type { Engine } from '../engine/engine.js';
import { OPERATIONS, type OperationName } from '../service/operations.js';
import { createAuthenticator, createScrubber, UNAUTHORIZED } from './auth.js';
import { CATALOG, dispatchGrouped, errorResult } from './operations.js';
import { createCommitter } from '../engine/committer.js';
import { notFoundBody, routeOf } from './not-found.js';
import { BODY_LIMIT, HTTP_LIMITS, type HttpLimits, createTokenBucket, RATE_LIMITED, type RateLimitOptions, type TakeResult } from './limits.js';
import { CONNECTION_BOUNDS, handleRpcConnection, type ConnectionBounds, type RpcServerContext } from './ws-rpc.js';
import { refuseClientError, refuseUpgrade } from './refusals.js';
import { createStreamHub } from './streams.js';
import { BodyError, registerBodyParser } from './body.js';
import { refuseUnknownExpectations, serveOtherUpgradesAsHttp } from './http-stacks.js';
import { createSandbox, SANDBOX_PREFIX, type Sandbox } from './sandbox/sandbox.js';
import type { RuleInput } from './sandbox/rules.js';
import { generateWebhookAddress, registerWebhook, type Webhook, type WebhookAddress } from './webhook.js';
import { keptJson } from '../common/json-once.js';
import { startCheckpointer, type CheckpointerOptions } from './checkpointer.js';

export const WS_PATH = '/ws/stream';
/** Subscription changes, when the server is rate limited: about 20 a minute (§7.3), apart from the request budget. */
const SUBSCRIPTION_LIMIT: RateLimitOptions = { count: 20, periodMs: 60_000, burst: 20 };
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
  /** The HTTP bounds; each one missing is its default (HTTP_LIMITS). */
  limits?: Partial<HttpLimits>;
  /** The WebSocket connection bounds; each one missing is its default (CONNECTION_BOUNDS). */
  wsBounds?: Partial<ConnectionBounds>;
  /** Scenario rules in force from the start (`--scenario FILE`, issue 22). */
  scenario?: RuleInput[];
  /** How many requests the request log keeps (`--log-size`). */
  logSize?: number;
  /** The webhook's `/v1/send/ID/SECRET` (`--webhook`); random when absent (issue 32). */
  webhook?: WebhookAddress;
  /** The webhook's clock (windows, rate limits, timeouts), for tests; default the engine's. */
  alertClock?: () => Date;
  /** How often the webhook looks at its timeouts and held brackets; 0: only when `webhook.sweep()` is called. */
  webhookSweepMs?: number;
  /** The log's checkpointer (src/server/checkpointer.ts): its bounds, for tests; false: none (SQLite's automatic checkpoint). */
  checkpointer?: false | Pick<CheckpointerOptions, 'pages' | 'bound' | 'pollMs' | 'onEvent'>;
}

export interface TradeServer {
  /** Starts listening; resolves with the base URL, e.g. http://127.0.0.1:8080. */
  listen(options: { host?: string; port?: number }): Promise<string>;
  /** Stops accepting, lets in-flight requests and RPCs finish, closes WebSocket clients. The engine stays open. */
  close(): Promise<void>;
  /** The scenario rules, the request log and the snapshots (issue 22). */
  sandbox: Sandbox;
  /** The TradingView webhook (issue 32): its path, its store, its sweep. */
  webhook: Webhook;
}

/** Framework errors a client can cause, with messages that say what to fix and nothing internal (§1.3). */
const CLIENT_ERRORS: Record<string, { status: number; error: string }> = {
  FST_ERR_CTP_BODY_TOO_LARGE: { status: 413, error: `Invalid request: body: larger than ${BODY_LIMIT} bytes` },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, error: 'Invalid request: body: does not match its Content-Length' },
  FST_ERR_BAD_URL: { status: 400, error: 'Invalid request: the URL is not valid' },
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The catalog route (§1.7), listed in itself. */
const CATALOG_PATH = '/v1/api/_endpoints';
const ALL_ROUTES = [...CATALOG, `GET ${CATALOG_PATH}`];

export async function createServer(options: ServerOptions): Promise<TradeServer> {
  const { engine } = options;
  const address = options.webhook ?? generateWebhookAddress();
  // The webhook's secret is a credential too: kept out of every log line, as the token is.
  const scrub = createScrubber(options.token, address.secret);
  const log = options.log && ((line: string) => options.log!(scrub(`${new Date().toISOString()} ${line}`)));
  const warn = (line: string) => options.warn?.(scrub(line));
  const authenticate = createAuthenticator(options.token);
  const bucket = options.rateLimit && createTokenBucket(options.rateLimit, options.now);
  const take = (): TakeResult => bucket?.take() ?? { ok: true };
  const subscriptionBucket = options.rateLimit && createTokenBucket(SUBSCRIPTION_LIMIT, options.now);
  const onInternalError = (api: string, error: unknown) =>
    warn(`trade serve: internal error in ${api}: ${error instanceof Error ? error.message : String(error)}`);
  const streams = createStreamHub({ engine, takeSubscription: () => subscriptionBucket?.take() ?? { ok: true }, onInternalError });
  // Orders that arrive together, over HTTP and WebSocket alike, share one commit (issue 16).
  const committer = createCommitter(engine);
  // The log is checkpointed by a worker thread, not inside a commit on the event loop (issue 34).
  const checkpointer = options.checkpointer === false ? undefined : startCheckpointer({ engine, warn, ...options.checkpointer });
  const sandbox = createSandbox({ engine, rules: options.scenario, logSize: options.logSize, scrub });
  const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
  let closing = false;
  const limits: HttpLimits = { ...HTTP_LIMITS, ...options.limits };
  const wsBounds: ConnectionBounds = { ...CONNECTION_BOUNDS, ...options.wsBounds };

  const app = fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    // A slow client (slowloris) cannot hold a connection: headers, then the whole request, must
    // arrive in time, and an idle keep-alive connection is closed (docs/reliability.md "Limits").
    http: { headersTimeout: limits.headersTimeoutMs, requestTimeout: limits.requestTimeoutMs, connectionsCheckingInterval: limits.checkIntervalMs },
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    // Long enough that an over-long account name reaches the schema and gets its 400 message;
    // a single trailing slash is ignored (§1.1).
    routerOptions: { maxParamLength: 500, ignoreTrailingSlash: true },
    clientErrorHandler: refuseClientError,
    frameworkErrors: (error, _request, reply) => {
      const known = CLIENT_ERRORS[(error as { code?: string }).code ?? ''];
      void (reply as FastifyReply).code(known?.status ?? 400).send({ error: known?.error ?? 'Invalid request' });
    },
  });

  await app.register(websocket, {
    options: {
      // A frame over 64 KiB closes the connection with 1009 (§5.1).
      maxPayload: BODY_LIMIT,
    },
    preClose: async () => {
      await closeWebSockets();
      // Each socket's close has released its streams; this catches any that never got one.
      streams.close();
    },
  });

  // Only a WebSocket upgrade is one; an h2c offer is served as plain HTTP/1.1 (§1.3).
  serveOtherUpgradesAsHttp(app.server);
  refuseUnknownExpectations(app.server);

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

  // Every body is read as UTF-8 JSON whatever its Content-Type says, or does not (§1.3): public
  // clients send JSON without the header, and the token, not the header, guards every request.
  registerBodyParser(app);

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

  // The request log (issue 22): every HTTP request, refused ones too. The operation's name comes
  // from the route, decided once here; the body is kept as it came (scrubbed when read).
  /** Requests already in the log (those a rule dropped), and the rule that fired for each. */
  const logged = new WeakSet<FastifyRequest>();
  const firedRule = new WeakMap<FastifyRequest, string>();
  app.addHook('onResponse', (request, reply, done) => {
    if (!logged.has(request)) logHttp(request, reply.statusCode, reply.elapsedTime);
    done();
  });
  function logHttp(request: FastifyRequest, status: number, ms: number): void {
    const named = (request.routeOptions.config as { operation?: string } | undefined)?.operation;
    const operation = named ?? `${request.method} ${request.routeOptions.url ?? routeOf(request.url)}`;
    const params = request.params as Record<string, unknown> | undefined;
    sandbox.log.add({
      time: Date.now() - ms,
      transport: 'http',
      operation,
      account: typeof params?.account === 'string' ? params.account : undefined,
      body: request.method === 'GET' ? request.query : request.body,
      status,
      rule: firedRule.get(request),
      ms,
    });
  }

  // Connections beyond the cap are closed as they arrive, before they cost a file descriptor for long.
  app.server.maxConnections = limits.maxConnections;
  // A client that sends its request and half-closes (shutdown of its write side, as `socket.end`
  // does) still gets its answer: Node's default drops the request at the FIN, and an order
  // answered after a group commit (one more turn of the event loop) would then be done unanswered.
  (app.server as typeof app.server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  app.server.on('drop', () => log?.(`- connection refused: ${limits.maxConnections} connections open (--max-connections)`));

  // Authentication first, on every request including the WebSocket upgrade and unknown routes,
  // so a caller without the token learns nothing, and cannot spend the bucket of the one with it.
  app.addHook('onRequest', (request, reply, done) => {
    // The webhook's credential is the `key` in its body, checked by its route (webhook.ts); the
    // service's API budget does not apply to it (webhook-reference §8 #43).
    if ((request.routeOptions.config as { webhook?: boolean } | undefined)?.webhook) return done();
    const outcome = authenticate(request.headers.authorization);
    if (outcome !== 'ok') {
      void reply.code(401).header('www-authenticate', 'Bearer').send({ error: UNAUTHORIZED });
      return;
    }
    // An unknown route is answered 404 before the bucket is touched (§6.1's order of checks).
    if (request.routeOptions.url === undefined || request.routeOptions.url.startsWith(SANDBOX_PREFIX)) return done();
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

  // Pipelined requests of one connection are all parsed at once, and Node answers them in order;
  // beyond the cap they are refused as a rate limit is, nothing done, so one client cannot queue
  // thousands of replies (docs/reliability.md "Limits").
  const inFlight = new WeakMap<object, number>();
  app.addHook('onRequest', (request, reply, done) => {
    const socket = request.raw.socket;
    const count = (inFlight.get(socket) ?? 0) + 1;
    inFlight.set(socket, count);
    reply.raw.once('close', () => inFlight.set(socket, (inFlight.get(socket) ?? 1) - 1));
    if (count > limits.maxInFlightPerConnection) {
      void reply.code(429).header('retry-after', '1').send({ error: RATE_LIMITED });
      return;
    }
    done();
  });

  // Node closes idle keep-alive connections when the server closes, but not one busy with a
  // request then; without this its client would keep it open after the answer, and shutdown wait.
  // An upgrade request's socket is closed after any answer but the upgrade itself; say so too.
  app.addHook('onSend', (request, reply, payload, done) => {
    // A refused request closes its connection too (docs/reliability.md "Limits"): a client that sends no token,
    // or a body too slow or too big, does not keep it; Node closes it once the answer is written.
    // A rate limit is not a refusal of the client: its next request, later, is welcome.
    const refused = reply.statusCode >= 400 && reply.statusCode < 500 && reply.statusCode !== 429;
    if (closing || request.ws || refused) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.setNotFoundHandler((request, reply) => {
    void reply.code(404).send(notFoundBody(request.method, request.url, ALL_ROUTES));
  });

  app.setErrorHandler((error: unknown, request, reply) => {
    const code = (error as { code?: unknown }).code;
    const status = (error as { statusCode?: unknown }).statusCode;
    const known = typeof code === 'string' ? CLIENT_ERRORS[code] : undefined;
    if (known) return reply.code(known.status).send({ error: known.error });
    if (error instanceof BodyError) return reply.code(error.statusCode).send({ error: error.message });
    if (typeof status === 'number' && status >= 400 && status < 500)
      return reply.code(status).send({ error: `Invalid request: ${STATUS_CODES[status] ?? 'the request is malformed'}` });
    const result = errorResult(error);
    if (result.internal) onInternalError(`${request.method} ${routeOf(request.url)}`, error);
    return reply.code(result.status).send(result.body);
  });

  for (const name of Object.keys(OPERATIONS) as OperationName[]) {
    const operation = OPERATIONS[name];
    app.route({
      method: operation.method,
      url: `/v1/api${operation.path.replace(/\{(\w+)\}/g, ':$1')}`,
      // The request log names the operation by this.
      config: { operation: name },
      handler: async (request: FastifyRequest, reply: FastifyReply) => {
        const socket = request.raw.socket;
        // Requests of other connections get their turn before this one runs (a pipelining client's
        // requests arrive together), in the order they arrived: an order waits for its group (one
        // turn of the event loop), anything else yields one turn here.
        if (!operation.movesMoney) await new Promise<void>((resolve) => setImmediate(resolve));
        // The client has gone while its request waited: its answer has nowhere to go, so nothing is done.
        if (socket.destroyed) return reply.code(499).send();
        const data = operation.method === 'GET' ? request.query : request.body;
        if (data !== undefined && !isObject(data))
          return reply.code(400).send({ error: 'Invalid request: body: must be a JSON object' });
        // Path parameters win: an `account` field in a body cannot redirect an order (§3).
        const args: Record<string, unknown> = { ...data, ...(request.params as Record<string, unknown>) };
        // With no rule in force this is the one check a request pays (issue 22).
        const rule = sandbox.rules.active
          ? sandbox.rules.fire({ operation: name, transport: 'http', account: args.account, instrument: args.instrument })
          : undefined;
        if (rule) {
          firedRule.set(request, rule.name);
          const effect = rule.effect;
          if (effect.kind === 'status') {
            const injected = sandbox.statusReply(effect);
            return reply.code(injected.status).headers(injected.headers).send(injected.body);
          }
          if (effect.kind === 'drop-before') return drop(request, reply);
          if (effect.kind === 'delay') await sleep(effect.ms);
        }
        const result = await dispatchGrouped(rule ? sandbox.engineFor(rule) : engine, committer, name, args, {
          onInternalError,
          abandoned: () => socket.destroyed,
        });
        if (rule?.effect.kind === 'drop-after') return drop(request, reply);
        if (rule && result.status === 200) sandbox.afterPlaced(rule, result.body, args.account);
        // A body answered again unchanged goes out as the JSON made the first time (json-once.ts).
        const kept = keptJson(result.body);
        if (kept !== undefined) return reply.code(result.status).type('application/json; charset=utf-8').send(kept);
        return reply.code(result.status).send(result.body);
      },
    });
  }
  /** A rule's lost connection: closed with no answer; logged as status 0. */
  function drop(request: FastifyRequest, reply: FastifyReply): void {
    logged.add(request);
    log?.(`${request.ip} ${request.method} ${request.url} dropped by rule ${firedRule.get(request) ?? '?'} ${reply.elapsedTime.toFixed(1)}ms`);
    logHttp(request, 0, reply.elapsedTime);
    reply.hijack();
    request.raw.socket.destroy();
  }
  app.get(CATALOG_PATH, async () => ({ endpoints: ALL_ROUTES, success: true }));
  sandbox.register(app);
  const webhook = await registerWebhook(app, {
    engine,
    committer,
    token: options.token,
    address,
    sandbox,
    scrub,
    fired: (request, rule) => firedRule.set(request, rule.name),
    drop,
    onInternalError,
    now: options.alertClock,
    sweepMs: options.webhookSweepMs,
  });
  // The service's MCP endpoint is out of the simulator's scope (§2).
  app.all('/v1/api/mcp', async (request, reply) =>
    reply.code(501).send({ success: false, error: 'not_implemented', detail: `${request.method} /v1/api/mcp is not simulated by trade serve` }),
  );

  const rpc: RpcServerContext = { engine, take, log, onInternalError, streams, committer, sandbox };
  app.route({
    method: 'GET',
    url: WS_PATH,
    handler: (_request, reply) => {
      void reply.code(426).header('upgrade', 'websocket').send({ error: `${WS_PATH} takes WebSocket connections only` });
    },
    wsHandler: (socket, request) => {
      log?.(`${request.ip} GET ${request.url} 101`);
      logged.add(request);
      sandbox.log.add({ time: Date.now(), transport: 'ws', operation: `GET ${WS_PATH}`, status: 101, ms: 0 });
      handleRpcConnection(socket, request.ip, rpc, wsBounds);
    },
  });

  return {
    async listen({ host = '127.0.0.1', port = 8080 }) {
      await app.listen({ host, port });
      const address = app.server.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return `http://${shown}:${address.port}`;
    },
    sandbox,
    webhook,
    async close() {
      closing = true;
      sandbox.close();
      const deadline = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
        await webhook.close();
        await checkpointer?.close();
      }
    },
  };
}
