/**
 * Servers that misbehave on purpose, for the remote backends' tests through the real CLI. Each
 * counts what it receives by a key (the account in the path or the RPC's args), so concurrent
 * tests share one server and each still sees exactly its own requests. A key picks its behaviour
 * by its first word: `hang-batch-3` hangs like `hang`, and is counted apart from it.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type WebSocket, WebSocketServer } from 'ws';

export type HttpBehaviour = (req: IncomingMessage, res: ServerResponse) => void;

export interface CountingServer {
  url: string;
  /** How many requests (or RPC messages) arrived for a key. */
  count(key: string): number;
  close(): Promise<void>;
}

/** The behaviour for a key: its own, else that of the word before its first '-', else `ok`. */
export function pick<T>(behaviours: Record<string, T>, key: string): T {
  return behaviours[key] ?? behaviours[key.split('-')[0]!] ?? behaviours.ok!;
}

export function createCounter() {
  const counts = new Map<string, number>();
  return {
    add: (key: string) => counts.set(key, (counts.get(key) ?? 0) + 1),
    count: (key: string) => counts.get(key) ?? 0,
  };
}

/** Writes a chunk every `everyMs` until the socket closes: bytes that trickle in, never finishing. */
export function trickle(socket: Socket, first: string, chunk: (n: number) => string, everyMs = 100): void {
  socket.on('error', () => undefined); // the client hanging up mid-trickle is the point
  socket.write(first);
  let n = 0;
  const timer = setInterval(() => {
    if (socket.destroyed) clearInterval(timer);
    else socket.write(chunk(n++));
  }, everyMs);
  socket.on('close', () => clearInterval(timer));
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export async function shut(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
}

/** An HTTP server whose behaviour is picked by the account in /v1/api/accounts/<account>/... */
export async function hostileHttpServer(behaviours: Record<string, HttpBehaviour>): Promise<CountingServer> {
  const counter = createCounter();
  const server = createServer((req, res) => {
    const account = decodeURIComponent(req.url!.split('/')[4] ?? '');
    req.resume();
    req.on('end', () => {
      counter.add(account);
      pick(behaviours, account)(req, res);
    });
  });
  const host = await listen(server);
  return { url: `http://${host}`, count: counter.count, close: () => shut(server) };
}

export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(typeof body === 'string' ? body : JSON.stringify(body));
};

export const ORDER_ID = 'c0ffee'.padEnd(32, '0');

export type WsBehaviour = (ws: WebSocket, message: { id: unknown; args?: { account?: string } }) => void;
export type UpgradeBehaviour = (socket: Socket) => void;

/**
 * A WebSocket server: the upgrade path's first segment may pick a handshake that goes wrong; on
 * a completed one, each RPC's `args.account` picks how it is answered. RPCs are counted by that
 * account, upgrades by their whole path.
 */
export async function hostileWsServer(
  upgrades: Record<string, UpgradeBehaviour>,
  behaviours: Record<string, WsBehaviour>,
): Promise<CountingServer & { upgrades(path: string): number }> {
  const counter = createCounter();
  const upgradeCounter = createCounter();
  const server = createServer();
  const wss = new WebSocketServer({ noServer: true });
  const sockets = new Set<Socket>();
  server.on('upgrade', (req, socket: Socket, head) => {
    sockets.add(socket.once('close', () => sockets.delete(socket)));
    socket.on('error', () => undefined); // a client that gives up on a bad handshake resets it
    const path = req.url ?? '/';
    upgradeCounter.add(path);
    const upgrade = upgrades[`/${path.split('/')[1]}`];
    if (upgrade) return upgrade(socket);
    wss.handleUpgrade(req, socket, head, (ws) => {
      ws.on('message', (raw) => {
        const message = JSON.parse(raw.toString()) as { id: unknown; args?: { account?: string } };
        const account = message.args?.account ?? '';
        counter.add(account);
        pick(behaviours, account)(ws, message);
      });
    });
  });
  const host = await listen(server);
  return {
    url: `ws://${host}`,
    count: counter.count,
    upgrades: upgradeCounter.count,
    async close() {
      for (const socket of sockets) socket.destroy();
      wss.close();
      await shut(server);
    },
  };
}

/** A raw HTTP response on an upgrade's socket, then the socket is closed. */
export function rawResponse(status: string, headers: Record<string, string>, body: string): UpgradeBehaviour {
  const head = Object.entries({ ...headers, 'content-length': String(Buffer.byteLength(body)), connection: 'close' })
    .map(([k, v]) => `${k}: ${v}\r\n`)
    .join('');
  return (socket) => socket.end(`HTTP/1.1 ${status}\r\n${head}\r\n${body}`);
}
