/** Any command as a child process, its output collected (no shell unless the command is one) and recorded for the secrets scan. */
import { spawnRecorded } from './spawn.js';

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export function exec(command: string, args: string[], options: { cwd?: string; env: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawnRecorded(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
