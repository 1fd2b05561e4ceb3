/**
 * Opens a file in the person's default browser (`trade report --open`): `open` on macOS, `start`
 * on Windows, `xdg-open` elsewhere (which honours $BROWSER and the desktop's choice). The opener
 * runs on its own, detached; that it could not start is said, never an error of the command, whose
 * file is written already.
 */
import { spawn } from 'node:child_process';

export function openerFor(platform: NodeJS.Platform, file: string): { command: string; args: string[] } {
  if (platform === 'darwin') return { command: 'open', args: [file] };
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '""', file] };
  return { command: 'xdg-open', args: [file] };
}

/** Resolves once the opener has started (undefined), or with why it could not. */
export function openInBrowser(file: string, env: NodeJS.ProcessEnv, platform: NodeJS.Platform = process.platform): Promise<string | undefined> {
  const { command, args } = openerFor(platform, file);
  return new Promise((resolve) => {
    const child = spawn(command, args, { detached: true, stdio: 'ignore', env: { ...process.env, ...env } });
    child.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ENOENT' ? `${command} was not found` : `${command}: ${error.message}`));
    child.once('spawn', () => {
      child.unref();
      resolve(undefined);
    });
  });
}
