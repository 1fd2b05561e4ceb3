/**
 * What a command's run function is given: streams, environment, settings and a way to open the
 * backend. Tests build one with fake streams and a temporary TRADE_HOME / TRADE_CONFIG_DIR;
 * nothing here touches the network or the user's home unless the environment says so.
 */
import { dirname } from 'node:path';
import type { Backend } from '../backends/types.js';
import type { Engine, EngineOptions } from '../engine/engine.js';
import { redact } from '../config/redact.js';
import { type Env, storePath } from '../config/paths.js';
import type { GlobalFlags, Settings } from '../config/settings.js';
import type { LedgerSpec } from '../guard/ledger.js';
import type { Io } from './io.js';
import type { Prompter } from './prompts.js';

export interface CommandContext {
  io: Io;
  env: Env;
  /** Settings for this run (flag > env > config profile > default), read once. */
  settings(): Promise<Settings>;
  /** The embedded engine's store file. */
  storeFile(): string;
  /**
   * Opens the backend that serves orders, behind the guard (src/guard/): every request that moves
   * money is judged and journaled first. The caller closes it. `source` names the sender in the
   * guard's journal (cli, batch).
   */
  openBackend(options?: { source?: string }): Promise<Backend>;
  /** The guard's ledger: this machine's SQLite file beside the store, or a desk's PostgreSQL server (guard.ledger). */
  ledgerSpec(): Promise<LedgerSpec>;
  /** Opens the embedded engine itself, for commands that only the simulation has (accounts). */
  openEngine(): Promise<Engine>;
  /** The account to use when --account is not given (TRADE_ACCOUNT, else the config's `account`). */
  defaultAccount(): Promise<string | undefined>;
  /** The time now: the engine's clock when a test gives one (ContextOptions.engine.now), else the system's. */
  now(): Date;
  /** Secrets that must never be printed (the token, once known): a frozen list, the same one until a secret is added or TRADE_TOKEN changes. */
  secrets(): readonly string[];
  /** Adds a secret to redact from every line printed from now on (a token typed at `trade login`). */
  addSecret(secret: string): void;
  /** Asks a person, on stdin and stderr. Loads inquirer on first use, so only when a prompt is shown. */
  prompter(): Promise<Prompter>;
}

export interface ContextOptions {
  /** Passed to the embedded engine; tests inject a clock. */
  engine?: EngineOptions;
  /** Replaces the inquirer prompter; tests inject scripted answers. */
  prompter?: (io: Io) => Prompter;
}

export interface MutableContext extends CommandContext {
  /** Set by the program before an action runs: --backend, --profile, --insecure. */
  setGlobalFlags(flags: GlobalFlags): void;
}

export function createContext(io: Io, env: Env, options: ContextOptions = {}): MutableContext {
  let flags: GlobalFlags = {};
  let settings: Settings | undefined;
  const known: string[] = [];
  /** The last list secrets() gave (redact() reuses its compiled redactor while the list is the same). */
  let listed: { count: number; token: string | undefined; list: readonly string[] } | undefined;
  const ctx: MutableContext = {
    io,
    env,
    setGlobalFlags(next) {
      flags = next;
      settings = undefined;
    },
    async settings() {
      if (!settings) {
        const { resolveSettings } = await import('../config/settings.js');
        settings = resolveSettings(env, flags);
      }
      for (const secret of settings.secrets) if (!known.includes(secret)) known.push(secret);
      return settings;
    },
    storeFile: () => storePath(env),
    async openBackend(open = {}) {
      const settings = await ctx.settings();
      // A bad rule is refused before anything opens: the guard never runs on half its rules.
      const rules = settings.guardRules();
      const [{ openBackend }, { guardBackend }] = await Promise.all([import('../backends/resolve.js'), import('../guard/guard.js')]);
      const ledger = await ctx.ledgerSpec();
      const opened = await openBackend(settings, storePath(env), options.engine);
      const inner = settings.backend === 'embedded' ? opened : await recordExecutions(opened, settings, env, io, ctx.now);
      return guardBackend(inner, {
        rules,
        ledger,
        machine: settings.machine,
        profile: settings.profile,
        source: open.source ?? 'cli',
        clock: options.engine?.now,
        confirmLive: flags.confirmLive,
        // Asked only when confirm-live needs an answer: reading io.stdin makes process.stdin
        // (a stream, ~3 ms of start-up), which an order that asks nothing does not need.
        askLive: (account) => (io.stdin.isTTY && io.stderr.isTTY ? askLive(ctx, account) : Promise.resolve(false)),
        warn: (message) => io.err(io.errColor.yellow(`Warning: ${message}`)),
        redact: (text) => redact(text, ctx.secrets()),
      });
    },
    async ledgerSpec() {
      const settings = await ctx.settings();
      const url = settings.guardLedger;
      if (url === 'sqlite') {
        const { ledgerPath } = await import('../guard/ledger.js');
        return { kind: 'sqlite', file: ledgerPath(storePath(env)) };
      }
      return { kind: 'postgres', url, machine: settings.machine, dataDir: dirname(storePath(env)), timeoutMs: settings.ledgerTimeoutMs };
    },
    async openEngine() {
      const { createEngine } = await import('../engine/engine.js');
      return createEngine(storePath(env), options.engine);
    },
    async defaultAccount() {
      return (await ctx.settings()).account;
    },
    now: () => (options.engine?.now ? options.engine.now() : new Date()),
    secrets() {
      // Read at every call (the environment is the process's), once: process.env is slow to read.
      const token = env.TRADE_TOKEN || undefined;
      // `known` only grows, so its length says whether a secret was added.
      if (listed?.count !== known.length || listed.token !== token)
        listed = { count: known.length, token, list: Object.freeze(token === undefined ? [...known] : [...known, token]) };
      return listed.list;
    },
    addSecret(secret) {
      if (secret !== '' && !known.includes(secret)) known.push(secret);
    },
    async prompter() {
      if (options.prompter) return options.prompter(io);
      const { createPrompter } = await import('./prompts.js');
      return createPrompter(io);
    },
  };
  return ctx;
}

/** A remote backend that keeps the execution history (`trade report`, src/report/recorder.ts). */
async function recordExecutions(backend: Backend, settings: Settings, env: Env, io: Io, now: () => Date): Promise<Backend> {
  const [{ recordingBackend }, { historyPath, historyService, openHistory }] = await Promise.all([
    import('../report/recorder.js'),
    import('../report/history.js'),
  ]);
  return recordingBackend(backend, {
    service: historyService(settings.backend, settings.backend === 'http' ? settings.baseUrl : settings.wsUrl),
    history: () => openHistory(historyPath(storePath(env))),
    clock: () => now().getTime(),
    warn: (message) => io.err(io.errColor.yellow(`Warning: ${message}`)),
  });
}

/** confirm-live at a terminal: the account's name typed back, exactly. */
async function askLive(ctx: CommandContext, account: string): Promise<boolean> {
  const prompter = await ctx.prompter();
  ctx.io.err(ctx.io.errColor.yellow(`${account} is not a simulation account: this order is real.`));
  const typed = await prompter.text({ message: `Type the account name (${account}) to send it:` });
  return typed.trim() === account;
}

/** Runs `use` with a resource and always releases it, even when `use` throws. */
export async function using<T extends { close(): unknown }, R>(resource: T, use: (r: T) => Promise<R> | R): Promise<R> {
  try {
    return await use(resource);
  } finally {
    await resource.close();
  }
}
