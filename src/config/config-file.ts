/**
 * The config file, read as plain JSON: its place and its contents. Nothing else is loaded, so the
 * commands that only read it (the profile check, `trade __complete`) start fast.
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConfigError, describeErrno } from '../common/errors.js';
import type { ConfigValues } from './keys.js';
import type { Env } from './paths.js';

/** The file: { "profiles": { "<name>": { "<key>": "<value>" } } }; as read, any JSON may be anywhere. */
export interface ConfigFile {
  profiles?: Record<string, ConfigValues>;
}

export function configDir(env: Env): string {
  if (env.TRADE_CONFIG_DIR) return env.TRADE_CONFIG_DIR;
  const home = env.HOME || homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Preferences', 'trade');
  if (process.platform === 'win32') return join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'trade', 'Config');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'trade');
}

export function configPath(env: Env): string {
  return join(configDir(env), 'config.json');
}

export function readConfigFile(env: Env): ConfigFile {
  const file = configPath(env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError(`Cannot read the config file ${file}: ${code ? describeErrno(code) : (error as Error).message}`, {
      code: 'config_unreadable',
      hint: `Make ${dirname(file)} and the file readable by this user, or set TRADE_CONFIG_DIR to another folder.`,
    });
  }
  try {
    const parsed = JSON.parse(text) as unknown;
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
    return parsed as ConfigFile;
  } catch {
    throw new ConfigError(`The config file ${file} is not valid JSON; fix or remove it`, { code: 'bad_config' });
  }
}

