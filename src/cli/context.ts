/**
 * What a command's run function is given: streams, environment and a way to open the backend.
 * Tests build one with fake streams and a temporary TRADE_HOME; nothing here touches the network
 * or the user's home unless the environment says so.
 */
import type { Backend } from '../backends/types.js';
import type { Engine, EngineOptions } from '../engine/engine.js';
import { type Env, storePath } from '../config/paths.js';
import type { Io } from './io.js';
import type { Prompter } from './prompts.js';

export interface CommandContext {
  io: Io;
  env: Env;
  /** Opens the backend that serves orders. The caller closes it. */
  openBackend(): Promise<Backend>;
  /** Opens the embedded engine itself, for commands that only the simulation has (accounts). */
  openEngine(): Promise<Engine>;
  /** The account to use when --account is not given (TRADE_ACCOUNT, later the config store). */
  defaultAccount(): Promise<string | undefined>;
  /** Asks a person, on stdin and stderr. Loads inquirer on first use, so only when a prompt is shown. */
  prompter(): Promise<Prompter>;
}

export interface ContextOptions {
  /** Passed to the embedded engine; tests inject a clock. */
  engine?: EngineOptions;
  /** Replaces the inquirer prompter; tests inject scripted answers. */
  prompter?: (io: Io) => Prompter;
}

export function createContext(io: Io, env: Env, options: ContextOptions = {}): CommandContext {
  return {
    io,
    env,
    async openBackend() {
      const { createEmbeddedBackend } = await import('../backends/embedded.js');
      return createEmbeddedBackend({ file: storePath(env), ...options.engine });
    },
    async openEngine() {
      const { createEngine } = await import('../engine/engine.js');
      return createEngine(storePath(env), options.engine);
    },
    async defaultAccount() {
      return env.TRADE_ACCOUNT || undefined;
    },
    async prompter() {
      if (options.prompter) return options.prompter(io);
      const { createPrompter } = await import('./prompts.js');
      return createPrompter(io);
    },
  };
}

/** Runs `use` with a resource and always releases it, even when `use` throws. */
export async function using<T extends { close(): unknown }, R>(resource: T, use: (r: T) => Promise<R> | R): Promise<R> {
  try {
    return await use(resource);
  } finally {
    await resource.close();
  }
}
