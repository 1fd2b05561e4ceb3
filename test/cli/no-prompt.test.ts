/**
 * Where no prompt may appear: a pipe on stdin or stderr, --no-input, complete flags, bad flags.
 * The prompter factory is a spy, so these also show inquirer is never loaded on those paths.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import type { Prompter } from '../../src/cli/prompts.js';
import { orderArgs, tempHome } from '../helpers/cli.js';
import { runInTerminal } from '../helpers/terminal.js';

let env: Env;
let cleanup: () => void;
let prompter: ReturnType<typeof vi.fn<() => Prompter>>;
beforeEach(() => {
  ({ env, cleanup } = tempHome());
  prompter = vi.fn<() => Prompter>(() => {
    throw new Error('no prompt expected');
  });
});
afterEach(() => cleanup());

const MISSING =
  'Error: Missing required flags: --instrument, --action, --quantity, --order-type, --tif\n' +
  "  Nothing was sent. Run 'trade place --help' for an example.\n";
const noPerson = async () => {};

describe('no prompt', () => {
  it.each([
    { name: 'stdin is not a terminal', stdinIsTTY: false, stderrIsTTY: true, argv: [] as string[] },
    { name: 'stderr is not a terminal', stdinIsTTY: true, stderrIsTTY: false, argv: [] },
    { name: '--no-input at a terminal', stdinIsTTY: true, stderrIsTTY: true, argv: ['--no-input'] },
  ])('$name: exit 2 at once naming every missing flag', async ({ stdinIsTTY, stderrIsTTY, argv }) => {
    const result = await runInTerminal(['place', '--account', 'Sim101', ...argv], env, noPerson, { stdinIsTTY, stderrIsTTY, prompter });
    expect(result).toMatchObject({ code: 2, stdout: '', stderr: MISSING });
    expect(prompter).not.toHaveBeenCalled();
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
  });

  it('-i without a terminal is a usage error', async () => {
    const result = await runInTerminal(['place', ...orderArgs(), '-i'], env, noPerson, { stdinIsTTY: false, prompter });
    expect(result).toMatchObject({
      code: 2,
      stderr: 'Error: --interactive needs a terminal: stdin and stderr must both be terminals\n  Nothing was sent. Give every order flag instead.\n',
    });
  });

  it('-i with --no-input is a usage error', async () => {
    const result = await runInTerminal(['reverse', ...orderArgs(), '-i', '--no-input'], env, noPerson, { prompter });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--interactive and --no-input contradict each other');
  });

  it('a bad flag value at a terminal is a usage error before any question', async () => {
    const result = await runInTerminal(['place', '--quantity', '0', '--order-type', 'market', '--limit-price', '5'], env, noPerson, { prompter });
    expect(result).toMatchObject({
      code: 2,
      stderr:
        'Error: Invalid request: quantity: must be at least 1, got 0; limitPrice: is not used by MARKET orders; remove it\n' +
        "  Nothing was sent. Check --quantity, --limit-price; run 'trade place --help' for examples.\n",
    });
    expect(prompter).not.toHaveBeenCalled();
    expect(existsSync(join(env.TRADE_HOME!, 'trade.db'))).toBe(false);
  });

  it('complete flags at a terminal send at once; -y changes nothing there', async () => {
    const result = await runInTerminal(['place', ...orderArgs(), '-y', '--json'], env, noPerson, { prompter });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    expect(prompter).not.toHaveBeenCalled();
  });

  it('the built bin imports inquirer only from the chunk that prompts, loaded on demand', () => {
    const dist = new URL('../../dist/', import.meta.url);
    const files = ['main.js', ...readdirSync(new URL('chunks/', dist)).map((f) => `chunks/${f}`)];
    const importers = files.filter((f) => readFileSync(new URL(f, dist), 'utf8').includes('@inquirer/'));
    expect(importers).toEqual([expect.stringMatching(/^chunks\/prompts-[\w-]+\.js$/)]);
    const chunk = importers[0]!.slice('chunks/'.length);
    for (const f of files) {
      const code = readFileSync(new URL(f, dist), 'utf8');
      // Only ever `import("./prompts-….js")`, never a static import.
      expect(code).not.toMatch(new RegExp(`from\\s*["'][./]*(chunks/)?${chunk.replace('.', '\\.')}["']`));
      if (code.includes(chunk)) expect(code).toMatch(new RegExp(`import\\(\\s*["'][./]*(chunks/)?${chunk.replace('.', '\\.')}["']\\s*\\)`));
    }
  });
});
