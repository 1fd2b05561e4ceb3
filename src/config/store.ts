/**
 * Writes to the config file through `conf` (atomic writes, file mode 0600), in a directory
 * kept at mode 0700. Loaded only by the commands that change the config.
 */
import { chmodSync, mkdirSync } from 'node:fs';
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
  const profiles = () => ({ ...(conf.get('profiles') ?? {}) });
  const write = (all: Record<string, ConfigValues>) => {
    conf.set('profiles', all);
    chmodSync(path, 0o600);
  };
  return {
    path,
    get: (profile) => ({ ...(profiles()[profile] ?? {}) }),
    set(profile, key, value) {
      const all = profiles();
      all[profile] = { ...all[profile], [key]: value };
      write(all);
    },
    unset(profile, key) {
      const all = profiles();
      if (!all[profile]) return;
      const { [key]: _, ...rest } = all[profile];
      all[profile] = rest;
      write(all);
    },
    profiles: () => Object.keys(profiles()),
  };
}
