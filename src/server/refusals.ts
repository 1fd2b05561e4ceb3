/**
 * Refusals written straight to a socket, for requests that never reach a fastify reply: the ones
 * Node's HTTP parser rejects, and WebSocket upgrades that `ws` finds malformed. They get the same
 * `{error}` body as every other refusal, and `Connection: close`, because the socket is closed
 * after the answer and a keep-alive client that is not told so would send its next request on it.
 */
import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';

/** Writes one JSON `{error}` answer and closes the socket once it is flushed. */
export function writeRefusal(socket: Duplex, status: number, error: string, headers: Record<string, string> = {}): void {
  if (socket.destroyed) return;
  const body = JSON.stringify({ error });
  const head = {
    Connection: 'close',
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    ...headers,
  };
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.once('finish', () => socket.destroy());
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${Object.entries(head)
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n')}\r\n\r\n${body}`,
  );
}

/** fastify's clientErrorHandler: headers over the size limit, a malformed request, a timeout. */
export function refuseClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === 'ECONNRESET') return;
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return writeRefusal(socket, 431, `Request headers (the URL included) are larger than ${maxHeaderSize / 1024} KiB`);
  }
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') return writeRefusal(socket, 408, 'Request timeout: the request did not arrive in time');
  writeRefusal(socket, 400, 'Invalid request: the HTTP request is malformed');
}

/**
 * ws's 'wsClientError': an upgrade with a wrong method, Upgrade header, key, version or
 * subprotocol list. ws would answer these in text/html; the message is ws's own, which names the
 * header to fix.
 */
export function refuseUpgrade(error: Error, socket: Duplex): number {
  if (error.message === 'Invalid HTTP method') {
    writeRefusal(socket, 405, 'WebSocket upgrades must use GET', { Allow: 'GET' });
    return 405;
  }
  const version = /Sec-WebSocket-Version/.test(error.message) ? { 'Sec-WebSocket-Version': '13, 8' } : undefined;
  writeRefusal(socket, 400, `Invalid WebSocket upgrade: ${error.message}`, version);
  return 400;
}
