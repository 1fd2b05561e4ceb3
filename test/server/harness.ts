/**
 * A real `trade serve` on 127.0.0.1 port 0 over a temporary store, with real clients: undici for
 * HTTP, `ws` for WebSocket. Nothing here stands in for the server.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect as connectTcp } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Agent, request } from 'undici';
import WebSocket from 'ws';
import { createEngine, type Engine } from '../../src/engine/engine.js';
import type { EngineOptions } from '../../src/engine/types.js';
import { createServer, type ServerOptions, type TradeServer } from '../../src/server/server.js';
import { HARNESS_TOKEN } from '../helpers/tokens.js';

export const TOKEN = HARNESS_TOKEN;
export const AUTH = { authorization: `Bearer ${TOKEN}` };
export const JSON_AUTH = { ...AUTH, 'content-type': 'application/json' };

export const ES_MARKET = {
  instrument: 'ES 09-25',
  action: 'BUY',
  quantity: 1,
  orderType: 'MARKET',
  timeInForce: 'DAY',
};

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

export interface HttpOptions {
  /** An object is sent as JSON; a string as it is. */
  body?: unknown;
  /** Replaces the default headers (the token and, with a body, application/json). */
  headers?: Record<string, string>;
}

/** Everything the store holds, to compare before and after a request that must change nothing. */
export interface StoreSnapshot {
  accounts: unknown[];
  orders: unknown[];
  fills: unknown[];
  positions: unknown[];
}

export interface Harness {
  url: string;
  wsUrl: string;
  engine: Engine;
  server: TradeServer;
  logs: string[];
  warnings: string[];
  http(method: string, path: string, options?: HttpOptions): Promise<HttpReply>;
  post(path: string, body: unknown): Promise<HttpReply>;
  get(path: string): Promise<HttpReply>;
  snapshot(): StoreSnapshot;
  close(): Promise<void>;
}

export async function startServer(options: Partial<Omit<ServerOptions, 'engine'>> = {}, engineOptions: EngineOptions = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'trade-serve-'));
  const file = join(dir, 'trade.db');
  const engine = createEngine(file, engineOptions);
  const logs: string[] = [];
  const warnings: string[] = [];
  const server = await createServer({
    engine,
    token: TOKEN,
    log: (line) => logs.push(line),
    warn: (line) => warnings.push(line),
    ...options,
  });
  const url = await server.listen({ host: '127.0.0.1', port: 0 });
  const agent = new Agent();
  const reader = new Database(file, { readonly: true });

  async function http(method: string, path: string, opts: HttpOptions = {}): Promise<HttpReply> {
    const body = opts.body === undefined || typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    const headers = opts.headers ?? (body === undefined ? AUTH : JSON_AUTH);
    const res = await request(`${url}${path}`, { method: method as 'GET', headers, body: body as string, dispatcher: agent });
    const text = await res.body.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Left as text: the test shows what came back.
    }
    return { status: res.statusCode, headers: res.headers, body: parsed };
  }

  return {
    url,
    wsUrl: `${url.replace(/^http/, 'ws')}/ws/stream`,
    engine,
    server,
    logs,
    warnings,
    http,
    post: (path, body) => http('POST', path, { body }),
    get: (path) => http('GET', path),
    snapshot: () => ({
      accounts: reader.prepare('SELECT * FROM accounts ORDER BY name').all(),
      orders: reader.prepare('SELECT * FROM orders ORDER BY seq').all(),
      fills: reader.prepare('SELECT * FROM fills ORDER BY seq').all(),
      positions: reader.prepare('SELECT * FROM positions ORDER BY account, instrument').all(),
    }),
    async close() {
      await server.close();
      await agent.close();
      reader.close();
      engine.close(); // closing twice is harmless, for tests that closed it themselves
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A WebSocket client that collects every message, and answers calls by id. */
export interface RpcClient {
  socket: WebSocket;
  messages: unknown[];
  send(message: unknown): void;
  /** The next message not yet taken. */
  next(): Promise<unknown>;
  call(id: string, api: string, args?: Record<string, unknown>): Promise<{ id: unknown; data: unknown }>;
  /** Resolves once `count` messages have arrived in all. */
  waitFor(count: number): Promise<unknown[]>;
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<void>;
}

export async function connect(wsUrl: string, headers: Record<string, string> = AUTH): Promise<RpcClient> {
  const socket = new WebSocket(wsUrl, { headers });
  const messages: unknown[] = [];
  let taken = 0;
  const waiters: Array<() => void> = [];
  socket.on('message', (data) => {
    messages.push(JSON.parse(data.toString()));
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  const waitFor = (count: number) =>
    new Promise<unknown[]>((resolve) => {
      const check = () => (messages.length >= count ? resolve(messages) : waiters.push(check));
      check();
    });
  return {
    socket,
    messages,
    closed,
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    async next() {
      await waitFor(taken + 1);
      return messages[taken++];
    },
    async call(id, api, args) {
      socket.send(JSON.stringify({ action: 'rpc', id, api, args }));
      for (;;) {
        const found = messages.find((m) => (m as { id?: unknown }).id === id);
        if (found) return found as { id: unknown; data: unknown };
        await waitFor(messages.length + 1);
      }
    },
    waitFor,
    async close() {
      if (socket.readyState !== socket.CLOSED) {
        socket.close();
        await closed;
      }
    },
  };
}

/** The status and body of a refused WebSocket upgrade. */
export function refusedUpgrade(wsUrl: string, headers: Record<string, string>): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(wsUrl, { headers });
    socket.on('open', () => reject(new Error('the upgrade was accepted')));
    socket.on('error', () => {
      // 'unexpected-response' below has the details; ws also emits an error when the socket ends.
    });
    socket.on('unexpected-response', (_req, res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
  });
}

/** Writes raw bytes to the server on a fresh connection and resolves with everything it answers until it closes. */
export function rawHttp(url: string, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp(Number(new URL(url).port), '127.0.0.1', () => socket.write(text));
    let received = '';
    socket.setEncoding('latin1').on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
}
