/**
 * Where no prompt may appear: a pipe on stdin or stderr, --no-input, complete flags, bad flags.
 * The prompter factory is a spy, so these also show inquirer is never loaded on those paths.
 */
import { existsSync, readFileSync } from 'node:fs';
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

  it('the built CLI imports inquirer only from the module that prompts, itself imported on demand', () => {
    // esbuild's record of the CLI bundle (scripts/build.js): which module imports which, and how.
    const meta = JSON.parse(readFileSync(new URL('../../dist/cli.meta.json', import.meta.url), 'utf8')) as {
      inputs: Record<string, { imports: Array<{ path: string; kind: string }> }>;
    };
    const inputs = Object.keys(meta.inputs);
    // Not bundled: @inquirer/prompts is ES modules only, imported at run time (src/common/import-esm.ts).
    expect(inputs.filter((f) => f.includes('@inquirer/'))).toEqual([]);
    const files = inputs.filter((f) => !f.includes(':')); // not esbuild's virtual modules
    const importers = files.filter((f) => readFileSync(new URL(`../../${f}`, import.meta.url), 'utf8').includes("'@inquirer/prompts'"));
    expect(importers).toEqual(['src/cli/prompts.ts']);
    const toPrompts = Object.entries(meta.inputs).flatMap(([from, input]) =>
      input.imports.filter((i) => i.path === 'src/cli/prompts.ts').map((i) => `${from} ${i.kind}`),
    );
    expect(toPrompts).toEqual(['src/cli/context.ts dynamic-import']);
  });
});
