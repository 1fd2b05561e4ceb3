/** A long-running command (watch, price follow) run in-process, with captured streams and a stop the test pulls. */
import { PassThrough } from 'node:stream';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import type { Env } from '../../src/config/paths.js';

export function inProcess(env: Env, reason = 'the test') {
  const capture = () => ({ text: '', isTTY: false, write(chunk: string) { this.text += chunk; return true; } });
  const stdout = capture();
  const stderr = capture();
  const ctx = createContext(createIo({ stdin: new PassThrough(), stdout, stderr }, env), env);
  let pull: (reason: string) => void = () => undefined;
  const stopWhen = () => ({ stopped: new Promise<string>((resolve) => (pull = resolve)), dispose: () => undefined });
  const lines = () => stdout.text.split('\n').slice(0, -1);
  return { ctx, stdout, stderr, lines, deps: { stopWhen }, stop: () => pull(reason) };
}

/** Waits until `check` holds, polling every 10 ms; fails naming `what` after `ms`. */
export async function until(what: string, check: () => boolean, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
