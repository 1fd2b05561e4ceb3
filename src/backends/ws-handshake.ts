/**
 * Opening the ws backend's connection: the upgrade request with the token, bounded by the timeout
 * as a whole, and every way it can fail mapped to an error that says nothing was sent. ws's own
 * handshakeTimeout is an idle timeout: a server trickling header lines would hold it forever.
 */
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { NetworkError } from '../common/errors.js';
import { failureOf } from '../service/shapes.js';
import { authHeaders, errorText, replyError } from './remote.js';

export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** Enough of a refused upgrade's body for the service's `{error}`; an HTML page is not read further. */
const MAX_REFUSAL_BYTES = 64 * 1024;
const HINT = 'Check ws-url / base-url (`trade config list`) and that the service is running.';

export interface HandshakeOptions {
  url: string;
  token: string;
  timeoutMs: number;
}

function readRefusal(res: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    let text = '';
    res.setEncoding('utf8');
    res.on('data', (chunk: string) => {
      if (text.length < MAX_REFUSAL_BYTES) text += chunk;
    });
    res.on('end', () => {
      try {
        resolve(JSON.parse(text));
      } catch {
        resolve(undefined);
      }
    });
  });
}

/**
 * A refused upgrade: a bad token (exit 3) and a rate limit (exit 5) are what the service says;
 * anything else (an HTML page, a 404, a 5xx) means ws-url is not the service's WebSocket, and
 * the order never left.
 */
function refusal(res: IncomingMessage, body: unknown, where: string): Error {
  const status = res.statusCode ?? 0;
  if (status === 401 || status === 403 || status === 429) return replyError(status, body, { where, retryAfter: res.headers['retry-after'] });
  const failure = failureOf(body);
  const said = failure && errorText(failure);
  return new NetworkError(`${where} did not accept the WebSocket upgrade (HTTP ${status}${said ? `: ${said}` : ''}). Nothing was sent.`, {
    hint: HINT,
  });
}

/** Resolves with the open socket, or rejects with a typed error; nothing is ever sent on a failed one. */
export function openSocket(options: HandshakeOptions): Promise<WebSocket> {
  const host = new URL(options.url).host;
  const where = `ws (${host})`;
  return new Promise<WebSocket>((resolve, reject) => {
    let settled = false;
    const socket = new WebSocket(options.url, {
      headers: { Authorization: authHeaders(options.token, false).Authorization },
      maxPayload: MAX_MESSAGE_BYTES,
      perMessageDeflate: false,
    });
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      socket.terminate();
      reject(error);
    };
    const deadline = setTimeout(
      () => fail(new NetworkError(`The WebSocket handshake with ${host} did not complete within ${options.timeoutMs / 1000} s. Nothing was sent.`, { hint: HINT })),
      options.timeoutMs,
    );
    socket.once('open', () => {
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      resolve(socket);
    });
    socket.on('unexpected-response', (_req, res) => void readRefusal(res).then((body) => fail(refusal(res, body, where))));
    // Stays for the socket's life: an 'error' with no listener would crash the process.
    socket.on('error', (error: NodeJS.ErrnoException) =>
      fail(new NetworkError(`Could not connect to ${host} (${error.code ?? error.message}). Nothing was sent.`, { cause: error, hint: HINT })),
    );
    socket.on('close', () => fail(new NetworkError(`The connection to ${host} closed during the handshake. Nothing was sent.`, { hint: HINT })));
  });
}
