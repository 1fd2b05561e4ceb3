/**
 * What common HTTP stacks send that Node answers before fastify sees the request.
 *
 * Upgrades other than WebSocket (service-reference.md §1.3): a request that offers `Upgrade: h2c`
 * (Java's HttpClient and `curl --http2` on a plain http:// URL do, on their first request) is
 * answered over HTTP/1.1 as if the header were absent, which RFC 9110 §7.8 allows a server to do.
 *
 * Node hands every request that carries `Connection: upgrade` to the server's 'upgrade' listeners
 * instead, its body unread, as soon as one is registered (the WebSocket plugin's). So the
 * listeners are wrapped: a WebSocket upgrade goes on to them; any other request is written back,
 * without its upgrade headers, in front of what its socket still holds, and the socket is handed to
 * the HTTP server as a new connection. Node's own parser then reads the request, its body
 * (chunked or not, `Expect: 100-continue` included) and anything pipelined behind it.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { show } from '../service/order.js';

type UpgradeListener = (request: IncomingMessage, socket: Duplex, head: Buffer) => void;

/** Whether the `Upgrade` header offers WebSocket among its protocols (any case, `websocket/13` too). */
export function offersWebSocket(request: IncomingMessage): boolean {
  const offered = request.headers.upgrade;
  return offered !== undefined && offered.split(',').some((protocol) => protocol.trim().split('/')[0]!.toLowerCase() === 'websocket');
}

/** Headers that belong to an upgrade offer (RFC 9110 §7.8; RFC 7540 §3.2's HTTP2-Settings). */
const UPGRADE_HEADERS = new Set(['upgrade', 'http2-settings']);

/** The request's head as it came, less its upgrade offer: `Upgrade`, `HTTP2-Settings` and their `Connection` tokens. */
function headWithoutUpgrade(request: IncomingMessage): Buffer {
  const lines = [`${request.method} ${request.url} HTTP/${request.httpVersion}`];
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (UPGRADE_HEADERS.has(lower)) continue;
    let value = raw[i + 1]!;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token !== '' && !UPGRADE_HEADERS.has(token.toLowerCase()))
        .join(', ');
      if (value === '') continue;
    }
    lines.push(`${name}: ${value}`);
  }
  // Header bytes are kept as Node's parser read them: one byte per character.
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

/**
 * From now on, only WebSocket upgrades reach the server's current 'upgrade' listeners; every
 * other request with an `Upgrade` header is served as plain HTTP. Call once those listeners are
 * registered.
 */
export function serveOtherUpgradesAsHttp(server: Server): void {
  const listeners = server.listeners('upgrade') as UpgradeListener[];
  server.removeAllListeners('upgrade');
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (offersWebSocket(request)) {
      for (const listener of listeners) listener.call(server, request, socket, head);
      return;
    }
    socket.unshift(Buffer.concat([headWithoutUpgrade(request), head]));
    server.emit('connection', socket);
  });
}

/**
 * An `Expect` other than `100-continue` (which Node answers itself, as curl and .NET wait for it):
 * 417 with the {error} shape, where Node alone would answer with an empty body. Nothing is read.
 */
export function refuseUnknownExpectations(server: Server): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    const body = JSON.stringify({ error: `Invalid request: Expect: only 100-continue is understood, got ${show(String(request.headers.expect))}` });
    response.writeHead(417, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
    response.end(body);
  });
}
