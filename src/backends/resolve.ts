/**
 * Picks and opens the backend the settings choose, after checking that a remote one has what
 * it needs. Each backend module is imported only when chosen, so embedded runs never load
 * undici or ws.
 */
import { ConfigError } from '../common/errors.js';
import type { Settings } from '../config/settings.js';
import type { EngineOptions } from '../engine/engine.js';
import { type ArgsOf, OPERATIONS, type OperationName } from '../service/operations.js';
import { checkTransport, previewHttp, previewWs, type RequestPreview } from './remote.js';
import type { Backend } from './types.js';

interface RemoteTarget {
  kind: 'http' | 'ws';
  url: string;
  token: string;
}

function remoteTarget(settings: Settings): RemoteTarget {
  const kind = settings.backend as 'http' | 'ws';
  const profile = settings.profile === 'default' ? '' : ` --profile ${settings.profile}`;
  const url = kind === 'http' ? settings.baseUrl : settings.wsUrl;
  if (!url)
    throw new ConfigError(`No ${kind === 'http' ? 'base URL' : 'WebSocket URL'} is set for the ${kind} backend.`, {
      code: 'no_base_url',
      hint: `Set one with \`trade config set${profile} base-url https://HOST\` (or TRADE_BASE_URL).`,
    });
  if (!settings.token)
    throw new ConfigError(`No token is set for the ${kind} backend.`, {
      code: 'no_token',
      hint: `Set one with \`trade login${profile}\` (or \`trade login${profile} --token-stdin\`, or TRADE_TOKEN).`,
    });
  checkTransport(url, settings.insecure);
  return { kind, url, token: settings.token };
}

/** "embedded (/path)" or "http (host:port)": said with every human result. */
export function backendLabel(settings: Settings, storeFile: string): string {
  if (settings.backend === 'embedded') return `embedded (${storeFile})`;
  const url = settings.backend === 'http' ? settings.baseUrl : settings.wsUrl;
  return `${settings.backend} (${url ? new URL(url).host : 'no URL set'})`;
}

export async function openBackend(settings: Settings, storeFile: string, engine: EngineOptions = {}): Promise<Backend> {
  if (settings.backend === 'embedded') {
    const { createEmbeddedBackend } = await import('./embedded.js');
    return createEmbeddedBackend({ file: storeFile, ...engine });
  }
  const target = remoteTarget(settings);
  const common = { token: target.token, timeoutMs: settings.timeoutMs, insecure: settings.insecure };
  if (target.kind === 'http') {
    const { createHttpBackend } = await import('./http.js');
    return createHttpBackend({ ...common, baseUrl: target.url });
  }
  const { createWsBackend } = await import('./ws.js');
  return createWsBackend({ ...common, wsUrl: target.url });
}

/** Exactly what would be sent, the token masked; nothing is opened or sent. */
export function previewCall<K extends OperationName>(settings: Settings, storeFile: string, name: K, args: ArgsOf<K>): RequestPreview {
  if (settings.backend === 'embedded') return { transport: 'embedded', store: storeFile, api: OPERATIONS[name].ws[0], args };
  const target = remoteTarget(settings);
  return target.kind === 'http' ? previewHttp(target.url, target.token, name, args) : previewWs(target.url, target.token, name, args);
}
