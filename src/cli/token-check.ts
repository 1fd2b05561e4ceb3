/**
 * Does the service take a token? One authenticated read (GetAllPositions over HTTP, or as a
 * WebSocket RPC on the ws backend: src/backends/probe.ts), with a short timeout, for
 * `trade auth status` and `trade login`. Nothing is placed. The token is never in what this
 * returns: the probe's URL and detail carry none, and every line printed is redacted besides.
 */
import type { ProbeResult } from '../backends/probe.js';
import type { BackendName } from '../config/keys.js';
import type { Settings } from '../config/settings.js';
import { ConfigError } from '../common/errors.js';

/** A check waits at most this long (or the configured timeout, if shorter): a status is a quick look. */
export const CHECK_TIMEOUT_MS = 5_000;

export interface TokenCheck {
  /** The remote backend the token was sent over. */
  backend: Exclude<BackendName, 'embedded'>;
  probe: ProbeResult;
}

/**
 * The transport a token is checked over: the backend's own when it is remote; over HTTP when the
 * backend is embedded but a base URL is set (the service the token is for is there, even though
 * the embedded backend sends it nothing); none when embedded with no base URL.
 */
export function checkedOver(settings: Settings): Exclude<BackendName, 'embedded'> | undefined {
  if (settings.backend !== 'embedded') return settings.backend;
  return settings.baseUrl ? 'http' : undefined;
}

/** The URL a remote backend talks to, or a ConfigError naming what to set. */
export function remoteUrl(settings: Settings, backend: Exclude<BackendName, 'embedded'>, hint: string): string {
  const url = backend === 'http' ? settings.baseUrl : settings.wsUrl;
  if (url) return url;
  const profile = settings.profile === 'default' ? '' : ` --profile ${settings.profile}`;
  throw new ConfigError(`The ${backend} backend needs ${backend === 'http' ? 'a base URL' : 'a WebSocket URL'}, and none is set`, {
    code: 'no_base_url',
    hint: `Set one with \`trade config set${profile} base-url https://HOST\` (or TRADE_BASE_URL)${hint}.`,
  });
}

/** Sends `token` to the service in one read, over the backend's own transport. */
export async function checkToken(settings: Settings, backend: Exclude<BackendName, 'embedded'>, token: string, url: string): Promise<TokenCheck> {
  const { checkTransport } = await import('../backends/remote.js');
  checkTransport(url, settings.insecure);
  const timeout = Math.min(settings.timeoutMs, CHECK_TIMEOUT_MS);
  const { probeHttp, probeWs } = await import('../backends/probe.js');
  const probe = backend === 'http' ? await probeHttp(url, token, timeout) : await probeWs(url, token, timeout);
  return { backend, probe };
}

/** What the probe says, in a phrase: "token accepted (GET …: HTTP 200 in 4 ms)". */
export function describeCheck({ probe }: TokenCheck): string {
  const request = probe.transport === 'http' ? `GET ${probe.url}` : `GetAllPositions over ${probe.url}`;
  const timing = `${request}: ${probe.detail} in ${probe.ms} ms`;
  switch (probe.status) {
    case 'ok':
      return `token accepted (${timing})`;
    case 'disconnected':
      return `token accepted, but the trading platform is not connected (${timing})`;
    case 'auth-refused':
      return `token refused (${timing})`;
    case 'unreachable':
      return `service unreachable (${timing})`;
    case 'unexpected':
      return `not answering as the order service (${timing})`;
  }
}

/** Whether the service took the token: yes, no, or it cannot be told (unreachable, not the service). */
export function accepted(check: TokenCheck): boolean | undefined {
  if (check.probe.status === 'ok' || check.probe.status === 'disconnected') return true;
  if (check.probe.status === 'auth-refused') return false;
  return undefined;
}
