import { CONFIG_KEYS, type ConfigKey, ENV_FOR, maskLedgerUrl, maskToken, maskWebhookUrl, normalizeValue, requireKey, showValue } from '../../config/keys.js';
import { type GuardKey, isGuardKey, type LedgerKey } from '../../config/key-table.js';
import { configPath, readSafely, type SettingProblem, type Settings, type Source } from '../../config/settings.js';
import { ConfigError, ExitCode, IncompleteError, UsageError } from '../../common/errors.js';
import type { CommandContext } from '../context.js';
import { table } from '../io.js';

export interface ConfigShowOptions {
  showToken?: boolean;
  json?: boolean;
}

interface Effective {
  key: ConfigKey;
  value?: string;
  source: Source | 'derived';
  problem?: SettingProblem;
}

/** Every key's value in effect; a key that cannot be used is listed with its problem instead. */
function effective(settings: Settings): Effective[] {
  const value: Record<Exclude<ConfigKey, GuardKey | LedgerKey>, () => string | undefined> = {
    token: () => settings.token,
    'base-url': () => settings.baseUrl,
    'ws-url': () => settings.wsUrl,
    backend: () => settings.backend,
    account: () => settings.account,
    timeout: () => String(settings.timeoutMs / 1000),
    'webhook-url': () => settings.webhookUrl,
  };
  return CONFIG_KEYS.map((key) => {
    const problem = settings.problem(key);
    if (problem) return { key, source: problem.source, problem };
    // A ws-url derived from a bad base-url is unknown, not an error of its own.
    const v = readSafely(isGuardKey(key) || key.startsWith('guard.') ? () => settings.guardText(key as GuardKey | LedgerKey) : value[key as keyof typeof value]);
    return { key, value: v, source: settings.sources[key] ?? (key === 'ws-url' && v ? 'derived' : 'default') };
  });
}

function shown(entry: Effective, showToken: boolean): string | undefined {
  if (entry.key === 'guard.ledger' && entry.value !== undefined) return maskLedgerUrl(entry.value);
  if ((entry.key !== 'token' && entry.key !== 'webhook-url') || entry.value === undefined || showToken) return entry.value;
  return entry.key === 'token' ? maskToken(entry.value) : maskWebhookUrl(entry.value);
}

/** How a bad value appears in the list: escaped, and never a token's text. */
function shownProblem(problem: SettingProblem): string {
  if (!('raw' in problem)) return 'unreadable';
  if (problem.key === 'guard.ledger' && typeof problem.raw === 'string') return `invalid: ${showValue(maskLedgerUrl(problem.raw))}`;
  return problem.key === 'token' || problem.key === 'webhook-url' ? 'invalid' : `invalid: ${showValue(problem.raw)}`;
}

/** The distinct messages (an unreadable file is one problem, however many keys it hides). */
function problemMessages(settings: Settings): string[] {
  return [...new Set(settings.problems.map((p) => p.error.message))];
}

/** After a full listing, bad settings make the exit code 3, each named with its source. */
function failOnProblems(settings: Settings): void {
  const messages = problemMessages(settings);
  if (messages.length === 1) throw new IncompleteError(messages[0]!, ExitCode.config);
  if (messages.length > 1)
    throw new IncompleteError(`${messages.length} settings cannot be used:\n${messages.map((m) => `  ${m}`).join('\n')}`, ExitCode.config);
}

async function openStore(ctx: CommandContext) {
  const { openConfigStore } = await import('../../config/store.js');
  return openConfigStore(ctx.env);
}

async function currentProfile(ctx: CommandContext): Promise<string> {
  return (await ctx.settings()).profile;
}

export async function runConfigSet(ctx: CommandContext, key: string, value: string): Promise<void> {
  const k = requireKey(key);
  if (k === 'token')
    throw new UsageError('The token is not set on the command line, where `ps` and shell history would show it.', {
      hint: 'Use `trade login` (a masked prompt) or `trade login --token-stdin < file`.',
    });
  const normalized = normalizeValue(k, value);
  const profile = await currentProfile(ctx);
  (await openStore(ctx)).set(profile, k, normalized);
  ctx.io.err(`Set ${k} = ${k === 'webhook-url' ? maskWebhookUrl(normalized) : k === 'guard.ledger' ? maskLedgerUrl(normalized) : normalized} (profile ${profile})`);
  if (ctx.env[ENV_FOR[k]]) ctx.io.err(`Note: ${ENV_FOR[k]} is set and overrides it.`);
}

export async function runConfigUnset(ctx: CommandContext, key: string): Promise<void> {
  const k = requireKey(key);
  const profile = await currentProfile(ctx);
  (await openStore(ctx)).unset(profile, k);
  ctx.io.err(`Unset ${k} (profile ${profile})`);
}

/** Where data goes: redacted like all output, unless the person asked to see the token. */
function dataOut(ctx: CommandContext, options: ConfigShowOptions): (line: string) => void {
  return options.showToken ? ctx.io.outSecret : ctx.io.out;
}

export async function runConfigGet(ctx: CommandContext, key: string, options: ConfigShowOptions): Promise<void> {
  const k = requireKey(key);
  const settings = await ctx.settings();
  const entry = effective(settings).find((e) => e.key === k)!;
  if (entry.problem) throw entry.problem.error;
  const value = shown(entry, options.showToken ?? false);
  const out = dataOut(ctx, options);
  if (options.json) {
    out(JSON.stringify({ key: k, value: value ?? null, source: entry.source }));
    return;
  }
  if (value === undefined) throw new ConfigError(`${k} is not set (profile ${settings.profile})`, { code: 'not_set' });
  out(value);
}

export async function runConfigList(ctx: CommandContext, options: ConfigShowOptions): Promise<void> {
  const settings = await ctx.settings();
  const entries = effective(settings);
  const out = dataOut(ctx, options);
  if (options.json) {
    const values = Object.fromEntries(
      entries.map((e) => [
        e.key,
        e.problem
          ? { value: null, source: e.source, error: e.problem.error.message }
          : { value: shown(e, options.showToken ?? false) ?? null, source: e.source },
      ]),
    );
    out(JSON.stringify({ profile: settings.profile, path: configPath(ctx.env), values }));
  } else {
    ctx.io.err(`profile ${settings.profile} (${configPath(ctx.env)})`);
    const rows = entries.map((e) => [
      e.key,
      e.problem ? shownProblem(e.problem) : (shown(e, options.showToken ?? false) ?? '(not set)'),
      e.source,
    ]);
    for (const line of table(['KEY', 'VALUE', 'SOURCE'], rows)) out(line);
  }
  failOnProblems(settings);
}

export function runConfigPath(ctx: CommandContext): void {
  ctx.io.out(configPath(ctx.env));
}
