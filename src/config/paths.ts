import { homedir } from 'node:os';
import { join } from 'node:path';

export type Env = Record<string, string | undefined>;

/** Where the embedded engine keeps its store: TRADE_HOME, else the platform's data directory. */
export function dataDir(env: Env): string {
  if (env.TRADE_HOME) return env.TRADE_HOME;
  const home = env.HOME || homedir();
  if (process.platform === 'darwin') return join(home, 'Library', 'Application Support', 'trade');
  if (process.platform === 'win32') return join(env.LOCALAPPDATA || join(home, 'AppData', 'Local'), 'trade', 'Data');
  return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'trade');
}

export function storePath(env: Env): string {
  return join(dataDir(env), 'trade.db');
}
