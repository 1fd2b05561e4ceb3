/**
 * Writes to the config file through `conf` (atomic writes, file mode 0600), in a directory
 * kept at mode 0700. Loaded only by the commands that change the config.
 *
 * Each change is a read-modify-write of the whole file, so two processes changing it at once
 * (a script running `trade login` beside `trade config set`) would lose one change. A lock file
 * beside the config makes those cycles take turns.
 */
import { closeSync, chmodSync, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import { ConfigError } from '../order/errors.js';
import Conf from 'conf';
import type { Env } from './paths.js';
import type { ConfigKey, ConfigValues } from './keys.js';
import { configDir, configPath, type ConfigFile } from './settings.js';

export interface ConfigStore {
  readonly path: string;
  get(profile: string): ConfigValues;
  set(profile: string, key: ConfigKey, value: string): void;
  unset(profile: string, key: ConfigKey): void;
  profiles(): string[];
}

const LOCK_WAIT_MS = 10_000;
/** A lock older than this was left by a process that died while holding it. */
const LOCK_STALE_MS = 30_000;

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Runs `change` while holding `lock`, a file created exclusively; waits for another holder. */
export function withLock<T>(lock: string, change: () => T): T {
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      try {
        if (Date.now() - statSync(lock).mtimeMs > LOCK_STALE_MS) rmSync(lock, { force: true });
      } catch {
        // The holder removed it between our two calls: try again at once.
      }
      if (Date.now() > deadline)
        throw new ConfigError(`The config is locked by another trade process (${lock}); try again, or remove the lock if none is running`);
      sleep(5 + Math.random() * 10);
    }
  }
  try {
    return change();
  } finally {
    rmSync(lock, { force: true });
  }
}

export function openConfigStore(env: Env): ConfigStore {
  const dir = configDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const conf = new Conf<ConfigFile>({
    projectName: 'trade',
    cwd: dir,
    configName: 'config',
    projectSuffix: '',
    configFileMode: 0o600,
    accessPropertiesByDotNotation: false,
  });
  const path = configPath(env);
  const lock = `${path}.lock`;
  const profiles = () => ({ ...(conf.get('profiles') ?? {}) });
  const write = (all: Record<string, ConfigValues>) => {
    conf.set('profiles', all);
    chmodSync(path, 0o600);
  };
  return {
    path,
    get: (profile) => ({ ...(profiles()[profile] ?? {}) }),
    set(profile, key, value) {
      withLock(lock, () => {
        const all = profiles();
        all[profile] = { ...all[profile], [key]: value };
        write(all);
      });
    },
    unset(profile, key) {
      withLock(lock, () => {
        const all = profiles();
        if (!all[profile]) return;
        const { [key]: _, ...rest } = all[profile];
        all[profile] = rest;
        write(all);
      });
    },
    profiles: () => Object.keys(profiles()),
  };
}
