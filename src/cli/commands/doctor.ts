/**
 * `trade doctor`: what this machine's trade would use and whether it works, without placing
 * anything. The backend and where that choice came from, where config and data live, the token
 * (masked, always), the embedded store's schema and contents, and for a remote backend one
 * authenticated read: GetAllPositions over HTTP or as a WebSocket RPC.
 */
import { existsSync } from 'node:fs';
import { dataDir } from '../../config/paths.js';
import { type ConfigKey, maskToken } from '../../config/keys.js';
import { configPath, readSafely, type Settings, type Source, sourceText } from '../../config/settings.js';
import { ExitCode, IncompleteError, TradeError } from '../../common/errors.js';
import type { ProbeResult } from '../../backends/probe.js';
import { VERSION } from '../../common/version.js';
import type { CommandContext } from '../context.js';
import { type Check, type CheckStatus, checkStore, configChecks, type StoreReport } from '../doctor-checks.js';

export interface DoctorOptions {
  json?: boolean;
}

interface Value {
  value: string | null;
  source: Source | 'derived' | null;
}

export interface DoctorReport {
  version: string;
  node: string;
  platform: string;
  profile: string | null;
  backend: Value;
  config: { path: string; exists: boolean };
  data: { path: string; source: 'TRADE_HOME' | 'default' };
  token: { set: boolean; masked: string | null; source: Source | null };
  baseUrl: Value;
  wsUrl: Value;
  store: StoreReport | null;
  service: ProbeResult | null;
  /** A desk's ledger (guard.ledger postgres://…): where (no password), its schema, and the server's clock against this one. */
  ledger?: { where: string; schemaVersion: number | null; currentSchemaVersion: number; clockSkewMs: number | null };
  checks: Check[];
  ok: boolean;
}

function value(settings: Settings, key: ConfigKey, raw: string | undefined): Value {
  if (raw === undefined) return { value: null, source: null };
  return { value: raw, source: settings.sources[key] ?? (key === 'ws-url' ? 'derived' : 'default') };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function serviceCheck(probe: ProbeResult, profile: string): Check {
  const request = probe.transport === 'http' ? `GET ${probe.url}` : `GetAllPositions over ${probe.url}`;
  const timing = `${request}: ${probe.detail} in ${probe.ms} ms`;
  const login = `trade login${profile === 'default' ? '' : ` --profile ${profile}`}`;
  switch (probe.status) {
    case 'ok':
      return { name: 'service', status: 'pass', message: `reachable, token accepted (${timing})` };
    case 'auth-refused':
      return {
        name: 'service',
        status: 'fail',
        message: `reachable, but the token was refused (${timing})`,
        hint: `Set a valid token with \`${login}\` (or TRADE_TOKEN).`,
        exitCode: ExitCode.config,
      };
    case 'unreachable':
      return {
        name: 'service',
        status: 'fail',
        message: `unreachable (${timing})`,
        hint: `Check ${probe.transport === 'http' ? 'base-url' : 'ws-url / base-url'} (\`trade config list\`) and that the service is running.`,
        exitCode: ExitCode.network,
      };
    case 'disconnected':
      return {
        name: 'service',
        status: 'fail',
        message: `reachable, token accepted, but the trading platform is not connected (${timing})`,
        hint: 'Start NinjaTrader and connect the add-on; until then no order can be placed.',
        exitCode: ExitCode.network,
      };
    case 'unexpected':
      return {
        name: 'service',
        status: 'fail',
        message: `reachable, but not answering as the order service (${timing})`,
        hint:
          probe.httpStatus === 404
            ? `Check ${probe.transport === 'http' ? 'base-url' : 'ws-url'}: nothing answers ${probe.transport === 'http' ? 'the API' : 'WebSocket'} there.`
            : undefined,
        exitCode: probe.httpStatus === 404 ? ExitCode.config : probe.httpStatus === 429 ? ExitCode.rateLimited : ExitCode.network,
      };
  }
}

/** Everything doctor finds; reads only. */
export async function collectDoctorReport(ctx: CommandContext): Promise<DoctorReport> {
  const env = ctx.env;
  const checks: Check[] = [];
  const report: DoctorReport = {
    version: VERSION,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    profile: null,
    backend: { value: null, source: null },
    config: { path: configPath(env), exists: existsSync(configPath(env)) },
    data: { path: dataDir(env), source: env.TRADE_HOME ? 'TRADE_HOME' : 'default' },
    token: { set: false, masked: null, source: null },
    baseUrl: { value: null, source: null },
    wsUrl: { value: null, source: null },
    store: null,
    service: null,
    checks,
    ok: false,
  };

  // Settings are read key by key: a bad one is a failed check, and the others still report.
  const settings = await ctx.settings();
  report.profile = settings.profile;
  const problems = configChecks(env, settings);
  checks.push(...problems);
  const backend = readSafely(() => settings.backend);
  if (backend === undefined) return report;
  const token = readSafely(() => settings.token);
  report.backend = { value: backend, source: settings.sources.backend ?? 'default' };
  report.token = token
    ? { set: true, masked: maskToken(token), source: settings.sources.token ?? null }
    : { set: false, masked: null, source: null };
  report.baseUrl = value(settings, 'base-url', readSafely(() => settings.baseUrl));
  report.wsUrl = value(settings, 'ws-url', readSafely(() => settings.wsUrl));

  if (backend === 'embedded') {
    if (problems.length === 0) checks.push({ name: 'config', status: 'pass', message: 'the embedded backend needs no URL or token' });
    const { store, check } = await checkStore(ctx.storeFile());
    report.store = store;
    checks.push(check);
  } else if (problems.length === 0) {
    // With a bad URL, token or timeout the probe cannot be made as configured: that is reported above.
    const remote = backend;
    const url = remote === 'http' ? settings.baseUrl : settings.wsUrl;
    const profile = settings.profile === 'default' ? '' : ` --profile ${settings.profile}`;
    let problem: Check | undefined;
    if (!url)
      problem = {
        name: 'config',
        status: 'fail',
        message: `the ${remote} backend needs ${remote === 'http' ? 'a base URL' : 'a WebSocket URL'}, and none is set`,
        hint: `Set one with \`trade config set${profile} base-url https://HOST\` (or TRADE_BASE_URL).`,
        exitCode: ExitCode.config,
      };
    else if (!settings.token)
      problem = {
        name: 'config',
        status: 'fail',
        message: `the ${remote} backend needs a token, and none is set`,
        hint: `Set one with \`trade login${profile}\` (or TRADE_TOKEN).`,
        exitCode: ExitCode.config,
      };
    else {
      const { checkTransport } = await import('../../backends/remote.js');
      try {
        checkTransport(url, settings.insecure);
      } catch (error) {
        if (!(error instanceof TradeError)) throw error;
        problem = { name: 'config', status: 'fail', message: error.message, hint: error.hint, exitCode: error.exitCode };
      }
    }
    if (problem) checks.push(problem);
    else {
      checks.push({ name: 'config', status: 'pass', message: `${remote === 'http' ? 'base-url' : 'ws-url'} and token are set` });
      const { probeHttp, probeWs } = await import('../../backends/probe.js');
      const probe = remote === 'http'
        ? await probeHttp(url!, settings.token!, settings.timeoutMs)
        : await probeWs(url!, settings.token!, settings.timeoutMs);
      report.service = probe;
      checks.push(serviceCheck(probe, settings.profile));
    }
  }
  const ledger = readSafely(() => settings.guardLedger);
  if (ledger !== undefined && ledger !== 'sqlite') checks.push(await ledgerCheck(ctx, report));
  report.ok = checks.every((c) => c.status !== 'fail');
  return report;
}

/** The clock skew against a desk's server above which the pace and duplicate windows of machines disagree enough to say so. */
const SKEW_WARN_MS = 1000;

/** A desk's ledger: reachable, its schema this trade's, and the server's clock near this machine's. */
async function ledgerCheck(ctx: CommandContext, report: DoctorReport): Promise<Check> {
  const spec = await ctx.ledgerSpec();
  if (spec.kind !== 'postgres') return { name: 'ledger', status: 'pass', message: spec.file };
  const [{ probePostgresLedger, PG_SCHEMA_VERSION }, { hidePassword }] = await Promise.all([import('../../guard/postgres-ledger.js'), import('../../guard/ledger.js')]);
  const where = hidePassword(spec.url);
  report.ledger = { where, schemaVersion: null, currentSchemaVersion: PG_SCHEMA_VERSION, clockSkewMs: null };
  let probe;
  try {
    probe = await probePostgresLedger(spec);
  } catch (error) {
    if (!(error instanceof TradeError)) throw error;
    return { name: 'ledger', status: 'fail', message: error.message.replace(/; nothing was sent\.$/, ''), hint: error.hint, exitCode: error.exitCode };
  }
  report.ledger.schemaVersion = probe.version;
  // Rounded before it is signed: a skew of -0.3 ms is "+0 ms", not "0 ms" (Math.round gives -0).
  const skewMs = Math.round(probe.skewMs) || 0;
  report.ledger.clockSkewMs = skewMs;
  const skew = `clock ${skewMs >= 0 ? '+' : ''}${skewMs} ms against the server`;
  if (probe.version === 0)
    return { name: 'ledger', status: 'fail', message: `${where}: reachable, no schema yet`, hint: 'Run `trade guard init` once, from any machine of the desk.', exitCode: ExitCode.guard };
  if (probe.version !== probe.current)
    return {
      name: 'ledger',
      status: 'fail',
      message: `${where}: reachable, schema ${probe.version}, this trade needs ${probe.current}`,
      hint: probe.version < probe.current ? 'Run `trade guard init` to migrate it.' : 'Update trade on this machine.',
      exitCode: ExitCode.guard,
    };
  if (Math.abs(probe.skewMs) > SKEW_WARN_MS)
    return {
      name: 'ledger',
      status: 'warn',
      message: `${where}: reachable, schema ${probe.version}, ${skew}`,
      hint: "Set this machine's clock (NTP): the pace and duplicate windows compare the times of every machine's orders.",
    };
  return { name: 'ledger', status: 'pass', message: `${where}: reachable, schema ${probe.version}, ${skew}` };
}

const MARK: Record<CheckStatus, string> = { pass: '✔', warn: '!', fail: '✖' };

export function formatDoctorReport(report: DoctorReport, c: CommandContext['io']['color']): string[] {
  const rows: Array<[string, string]> = [];
  const profile = report.profile;
  if (profile !== null) rows.push(['profile', profile]);
  if (report.backend.value !== null) rows.push(['backend', `${report.backend.value} (${sourceText('backend', report.backend.source, profile)})`]);
  rows.push(['config', `${report.config.path}${report.config.exists ? '' : ' (no file yet)'}`]);
  rows.push(['data', `${report.data.path} (${report.data.source === 'TRADE_HOME' ? 'TRADE_HOME' : 'default'})`]);
  if (profile !== null)
    rows.push(['token', report.token.set ? `${report.token.masked} (${sourceText('token', report.token.source, profile)})` : 'not set']);
  if (report.ledger) rows.push(['ledger', report.ledger.where]);
  if (report.backend.value !== null && report.backend.value !== 'embedded') {
    for (const [key, v] of [['base-url', report.baseUrl], ['ws-url', report.wsUrl]] as const)
      rows.push([key, v.value === null ? 'not set' : `${v.value} (${sourceText(key, v.source, profile)})`]);
  }
  const width = Math.max(...rows.map(([k]) => k.length), ...report.checks.map((k) => k.name.length));
  const lines = [`trade ${report.version} (Node ${report.node}, ${report.platform})`, ''];
  lines.push(...rows.map(([k, v]) => `  ${k.padEnd(width)}  ${v}`), '');
  const paint = { pass: c.green, warn: c.yellow, fail: c.red };
  for (const check of report.checks) {
    lines.push(`${paint[check.status](MARK[check.status])} ${check.name.padEnd(width)}  ${check.message}`);
    if (check.hint && check.status !== 'pass') lines.push(`  ${' '.repeat(width)}  ${check.hint}`);
  }
  if (report.ok) lines.push('', c.green('All checks passed.'));
  return lines;
}

export async function runDoctor(ctx: CommandContext, options: DoctorOptions): Promise<void> {
  const report = await collectDoctorReport(ctx);
  if (options.json) ctx.io.out(JSON.stringify(report));
  else for (const line of formatDoctorReport(report, ctx.io.color)) ctx.io.out(line);
  const failed = report.checks.filter((k) => k.status === 'fail');
  // The report says what is wrong; stderr gets one line, and the exit code the first failure stands for.
  if (failed.length > 0)
    throw new IncompleteError(
      `${plural(failed.length, 'check')} failed: ${failed.map((k) => k.name).join(', ')}`,
      failed[0]!.exitCode ?? ExitCode.rejected,
    );
}
