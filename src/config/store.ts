/**
 * Writes to the config file through `conf` (atomic writes, file mode 0600), in a directory
 * kept at mode 0700. Loaded only by the commands that change the config; `conf` is ES modules
 * only: imported (src/common/import-esm.ts) when a store is opened.
 *
 * Each change is a read-modify-write of the whole file, so two processes changing it at once
 * (a script running `trade login` beside `trade config set`) would lose one change. A lock file
 * beside the config makes those cycles take turns.
 */
import { accessSync, closeSync, chmodSync, constants, mkdirSync, openSync, rmSync, statSync } from 'node:fs';
import { importEsm } from '../common/import-esm.js';
import { ConfigError, describeErrno } from '../common/errors.js';
import type Conf from 'conf';
import type { Env } from './paths.js';
import type { ConfigKey, ConfigValues } from './keys.js';
import { configDir, configPath, type ConfigFile, readConfigFile } from './settings.js';

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

/** A failed write, said with the folder it was in; what is not a file-system error is left as it is. */
function writeError(error: unknown, dir: string): unknown {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (error instanceof ConfigError || typeof code !== 'string' || !/^E[A-Z]+$/.test(code)) return error;
  const why =
    code === 'EACCES' || code === 'EPERM' ? `the folder is not writable by this user (${code})` : describeErrno(code);
  return new ConfigError(`Cannot write the config in ${dir}: ${why}. Nothing was changed.`, {
    code: 'config_unwritable',
    hint: `Make the folder writable (chmod u+w ${dir}), or set TRADE_CONFIG_DIR to a folder you can write.`,
    cause: error,
  });
}

/**
 * Creates the folder (mode 0700) or checks the one there. A folder its owner made read-only is
 * refused, never chmod-ed: that mode is the owner's choice (a config kept from changing), and
 * undoing it silently would write where they said not to. A folder others can read is narrowed
 * to its owner, which only takes permissions away.
 */
function prepareFolder(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  accessSync(dir, constants.W_OK | constants.X_OK);
  const mode = statSync(dir).mode & 0o777;
  if (mode & 0o077) chmodSync(dir, mode & 0o700);
}

export async function openConfigStore(env: Env): Promise<ConfigStore> {
  const { default: Conf } = await importEsm<typeof import('conf')>('conf');
  const dir = configDir(env);
  // conf would fail on a file that is not JSON with its own words; ours name the file.
  readConfigFile(env);
  let conf: Conf<ConfigFile>;
  try {
    prepareFolder(dir);
    conf = new Conf<ConfigFile>({
      projectName: 'trade',
      cwd: dir,
      configName: 'config',
      projectSuffix: '',
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
    });
  } catch (error) {
    throw writeError(error, dir);
  }
  const path = configPath(env);
  const lock = `${path}.lock`;
  const profiles = () => ({ ...(conf.get('profiles') ?? {}) });
  const write = (all: Record<string, ConfigValues>) => {
    conf.set('profiles', all);
    chmodSync(path, 0o600);
  };
  /** Rewriting a profile the file holds in another shape would lose what a person wrote there. */
  const checkShape = (profile: string) => {
    const all: unknown = conf.get('profiles') ?? {};
    const isObject = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v);
    const current = isObject(all) ? (all as Record<string, unknown>)[profile] : undefined;
    if (!isObject(all) || (current !== undefined && !isObject(current)))
      throw new ConfigError(`${path} does not hold its profiles as objects of keys; nothing was changed`, {
        code: 'bad_config',
        hint: 'Fix the file by hand (`trade config list` names what is wrong), or remove it.',
      });
  };
  const change = (profile: string, apply: () => void) => {
    try {
      withLock(lock, () => {
        checkShape(profile);
        apply();
      });
    } catch (error) {
      throw writeError(error, dir);
    }
  };
  return {
    path,
    get: (profile) => ({ ...(profiles()[profile] ?? {}) }),
    set(profile, key, value) {
      change(profile, () => {
        const all = profiles();
        all[profile] = { ...all[profile], [key]: value };
        write(all);
      });
    },
    unset(profile, key) {
      change(profile, () => {
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
