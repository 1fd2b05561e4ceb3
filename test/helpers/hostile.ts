/**
 * Servers that misbehave on purpose, for the remote backends' tests through the real CLI. Each
 * counts what it receives by a key (the account in the path or the RPC's args), so concurrent
 * tests share one server and each still sees exactly its own requests.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export type HttpBehaviour = (req: IncomingMessage, res: ServerResponse) => void;

export interface CountingServer {
  url: string;
  /** How many requests (or RPC messages) arrived for a key. */
  count(key: string): number;
  close(): Promise<void>;
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
      (behaviours[account] ?? behaviours.ok!)(req, res);
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
