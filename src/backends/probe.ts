/**
 * Does the remote service answer, and does it take the token? For `trade doctor`: one
 * authenticated read (GetAllPositions) over HTTP, or over the WebSocket as an RPC, so nothing is
 * ever placed. A pong is not proof (the service documents none, §5.4). Neither probe retries; a
 * failure is reported with what was tried and how long it took.
 */
import { serviceRoot } from '../config/keys.js';
import { stripInvisible } from '../config/redact.js';
import { monotonicMs } from '../common/monotonic.js';

/** `disconnected`: the service answered and took the token, but its trading platform is not connected (408). */
export type ProbeStatus = 'ok' | 'auth-refused' | 'disconnected' | 'unreachable' | 'unexpected';

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
/** The probe's RPC: GetAllPositions, a read. */
export const PROBE_RPC = { action: 'rpc', id: 'trade-doctor', api: 'GetAllPositions', args: { includeFlat: false } } as const;

function errorCode(error: unknown): string {
  for (let e: unknown = error, depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return error instanceof Error ? error.message : String(error);
}

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The service's words in an error body, either form, printable and kept short for a one-line report. */
function serviceError(body: unknown): string | undefined {
  const { error, detail } = (body ?? {}) as { error?: unknown; detail?: unknown };
  if (typeof error !== 'string') return undefined;
  const said = stripInvisible(typeof detail === 'string' ? `${error}: ${detail}` : error);
  return said.length > 200 ? `${said.slice(0, 199)}…` : said;
}

/** A reading of positions: `{positions: [...]}` or a bare array, flat or inside `data` (§1.7, §3.15). */
function isPositions(body: unknown): boolean {
  if (Array.isArray(body)) return true;
  const b = (body ?? {}) as { positions?: unknown; data?: unknown };
  return Array.isArray(b.positions) || (b.data !== undefined && isPositions(b.data));
}

const elapsed = (start: number) => Math.max(0, Math.round(monotonicMs() - start));

/** GET {root}/v1/api/positions with the token: it reads, and changes nothing. */
export async function probeHttp(baseUrl: string, token: string, timeoutMs: number): Promise<ProbeResult> {
  const { Agent, request } = await import('undici');
  const url = `${serviceRoot(baseUrl)}${PROBE_PATH}`;
  const agent = new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
  const start = monotonicMs();
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
    const body = parsed(await response.body.text());
    const status = response.statusCode;
    const said = serviceError(body);
    if (status === 401 || status === 403) return result('auth-refused', said ?? `HTTP ${status}`, status);
    if (status === 408) return result('disconnected', said ? `HTTP 408: ${said}` : 'HTTP 408', status);
    if (status !== 200) return result('unexpected', said ? `HTTP ${status}: ${said}` : `HTTP ${status}`, status);
    if (!isPositions(body))
      return result('unexpected', "HTTP 200, but the body is not the service's {positions:[...]}: is base-url the order service?", status);
    return result('ok', `HTTP ${status}`, status);
  } catch (error) {
    return result('unreachable', errorCode(error));
  } finally {
    await agent.close();
  }
}

/**
 * Opens the WebSocket with the token and sends one read-only RPC (GetAllPositions); a readable
 * reply to it proves the connection. Events and pongs are ignored.
 */
export async function probeWs(wsUrl: string, token: string, timeoutMs: number): Promise<ProbeResult> {
  const { default: WebSocket } = await import('ws');
  const start = monotonicMs();
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
          ? finish('unexpected', `no reply to ${PROBE_RPC.api} within ${timeoutMs / 1000} s`)
          : finish('unreachable', `no answer within ${timeoutMs / 1000} s`),
      timeoutMs,
    );
    socket.on('unexpected-response', (_request, response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += text.length < 65_536 ? chunk : ''));
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        const said = serviceError(parsed(text));
        if (status === 401 || status === 403) finish('auth-refused', said ?? `HTTP ${status}`, status);
        else finish('unexpected', `the upgrade was refused: ${said ? `HTTP ${status}: ${said}` : `HTTP ${status}`}`, status);
      });
    });
    socket.on('error', (error) => finish('unreachable', errorCode(error)));
    socket.on('open', () => {
      opened = true;
      socket.send(JSON.stringify(PROBE_RPC));
    });
    socket.on('message', (data) => {
      const message = parsed(data.toString()) as { id?: unknown; data?: unknown } | undefined;
      if (message?.id !== PROBE_RPC.id) return;
      const said = serviceError(message.data);
      if (said !== undefined) finish('unexpected', `${PROBE_RPC.api} was refused: ${said}`);
      else if (!isPositions(message.data)) finish('unexpected', `${PROBE_RPC.api} answered with something that is not positions`);
      else finish('ok', `${PROBE_RPC.api} answered`);
    });
    socket.on('close', (code) => finish('unexpected', `the connection closed (${code}) before the reply`));
  });
}
