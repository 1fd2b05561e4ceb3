/**
 * Does the remote service answer, and does it take the token? For `trade doctor`: one
 * authenticated read over HTTP, or a WebSocket upgrade and a ping, so nothing is ever placed.
 * Neither probe retries; a failure is reported with what was tried and how long it took.
 */
import { performance } from 'node:perf_hooks';
import { joinUrl } from './remote.js';

export type ProbeStatus = 'ok' | 'auth-refused' | 'unreachable' | 'unexpected';

export interface ProbeResult {
  transport: 'http' | 'ws';
  /** What was contacted; never carries the token. */
  url: string;
  status: ProbeStatus;
  /** The HTTP status of the reply, or of the refused upgrade. */
  httpStatus?: number;
  /** Milliseconds from the start to the answer (or the failure). */
  ms: number;
  /** What happened, for a person: the service's own words where it gave any. */
  detail: string;
}

export const PROBE_PATH = '/v1/api/positions';

function errorCode(error: unknown): string {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.message : String(error);
}

function serviceError(text: string): string | undefined {
  try {
    const body = JSON.parse(text) as { error?: unknown };
    return typeof body.error === 'string' ? body.error : undefined;
  } catch {
    return undefined;
  }
}

const elapsed = (start: number) => Math.max(0, Math.round(performance.now() - start));

/** GET {base-url}/v1/api/positions with the token: it reads, and changes nothing. */
export async function probeHttp(baseUrl: string, token: string, timeoutMs: number): Promise<ProbeResult> {
  const { Agent, request } = await import('undici');
  const url = joinUrl(baseUrl, PROBE_PATH);
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const start = performance.now();
  const result = (status: ProbeStatus, detail: string, httpStatus?: number): ProbeResult => ({
    transport: 'http',
    url,
    status,
    ...(httpStatus === undefined ? {} : { httpStatus }),
    ms: elapsed(start),
    detail,
  });
  try {
    const response = await request(url, {
      method: 'GET',
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
      dispatcher: agent,
    });
    const text = await response.body.text();
    const status = response.statusCode;
    const said = serviceError(text);
    if (status === 401 || status === 403) return result('auth-refused', said ?? `HTTP ${status}`, status);
    if (status !== 200) return result('unexpected', said ? `HTTP ${status}: ${said}` : `HTTP ${status}`, status);
    let positions: unknown;
    try {
      positions = (JSON.parse(text) as { positions?: unknown }).positions;
    } catch {
      positions = undefined;
    }
    if (!Array.isArray(positions))
      return result('unexpected', "HTTP 200, but the body is not the service's {positions:[...]}: is base-url the order service?", status);
    return result('ok', `HTTP ${status}`, status);
  } catch (error) {
    return result('unreachable', errorCode(error));
  } finally {
    await agent.close();
  }
}

/** Opens the WebSocket with the token and sends {"action":"ping"}, expecting {"type":"pong"}. */
export async function probeWs(wsUrl: string, token: string, timeoutMs: number): Promise<ProbeResult> {
  const { default: WebSocket } = await import('ws');
  const start = performance.now();
  return new Promise<ProbeResult>((resolve) => {
    let done = false;
    const socket = new WebSocket(wsUrl, {
      headers: { Authorization: `Bearer ${token}` },
      handshakeTimeout: timeoutMs,
      perMessageDeflate: false,
    });
    const finish = (status: ProbeStatus, detail: string, httpStatus?: number) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({ transport: 'ws', url: wsUrl, status, ...(httpStatus === undefined ? {} : { httpStatus }), ms: elapsed(start), detail });
      if (socket.readyState === WebSocket.OPEN) socket.close(1000);
      else socket.terminate();
    };
    let opened = false;
    const timer = setTimeout(
      () =>
        opened
          ? finish('unexpected', `no pong within ${timeoutMs / 1000} s`)
          : finish('unreachable', `no answer within ${timeoutMs / 1000} s`),
      timeoutMs,
    );
    socket.on('unexpected-response', (_request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += text.length < 65_536 ? chunk : ''));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        const said = serviceError(text);
        if (status === 401 || status === 403) finish('auth-refused', said ?? `HTTP ${status}`, status);
        else finish('unexpected', `the upgrade was refused: ${said ? `HTTP ${status}: ${said}` : `HTTP ${status}`}`, status);
      });
    });
    socket.on('error', (error) => finish('unreachable', errorCode(error)));
    socket.on('open', () => {
      opened = true;
      socket.send(JSON.stringify({ action: 'ping' }));
    });
    socket.on('message', (data) => {
      let message: unknown;
      try {
        message = JSON.parse(data.toString());
      } catch {
        message = undefined;
      }
      if ((message as { type?: unknown } | undefined)?.type === 'pong') finish('ok', 'pong');
      else finish('unexpected', `answered the ping with ${data.toString().slice(0, 200)}`);
    });
    socket.on('close', (code) => finish('unexpected', `the connection closed (${code}) before the pong`));
  });
}
