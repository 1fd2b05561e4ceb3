import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../helpers/cli.js';

const home = tempHome();
let script: string;
beforeAll(async () => {
  const result = await runCli(['completion', 'bash'], home.env);
  expect(result.code).toBe(0);
  script = join(home.dir, 'trade.bash');
  writeFileSync(script, result.stdout);
});
afterAll(() => home.cleanup());

/** Completes the words as bash would at the end of the line; returns COMPREPLY. */
function complete(...words: string[]): string[] {
  const array = ['trade', ...words].map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(' ');
  const program = `source '${script}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length}; _trade; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['--norc', '--noprofile', '-c', program], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean);
}

describe('trade completion', () => {
  it('bash completes commands, flags and enum values', () => {
    expect(complete('pl')).toEqual(['place']);
    expect(complete('place', '--order-type', 'L')).toEqual(['LIMIT']);
    expect(complete('place', '--order-type', 'S')).toEqual(['STOPMARKET', 'STOPLIMIT']);
    expect(complete('reverse', '--action', '')).toEqual(['BUY', 'SELL']);
    expect(complete('place', '--account', 'Sim101', '--ti')).toEqual(['--tif']);
    expect(complete('--backend', 'w')).toEqual(['ws']);
    expect(complete('accounts', '')).toEqual(expect.arrayContaining(['list', 'add']));
    expect(complete('config', 'set', 'base')).toEqual(['base-url']);
    expect(complete('config', 'get', 'to')).toEqual(['token']);
    expect(complete('--profile', 'live', 'pos')).toEqual(['positions', 'position']);
    expect(complete('flatten', '--side', '')).toEqual(['long', 'short']);
    expect(complete('place', '--require-position', 'f')).toEqual(['flat']);
    expect(complete('cancel', '--all-')).toEqual(['--all-accounts']);
  });

  it('zsh and fish scripts name every command', async () => {
    const zsh = (await runCli(['completion', 'zsh'], home.env)).stdout;
    expect(zsh).toMatch(/^#compdef trade\n/);
    expect(zsh).toContain('complete -F _trade trade');
    const fish = (await runCli(['completion', 'fish'], home.env)).stdout;
    for (const command of ['place', 'reverse', 'positions', 'orders', 'accounts', 'batch', 'config', 'login', 'completion'])
      expect(fish).toContain(`-a ${command} -d`);
    expect(fish).toContain("-l order-type -xa 'MARKET LIMIT STOPMARKET STOPLIMIT'");
  });

  it('refuses an unknown shell with exit 2', async () => {
    expect(await runCli(['completion', 'tcsh'], home.env)).toMatchObject({
      code: 2,
      stderr: "Error: Unknown shell 'tcsh': completion is available for bash, zsh, fish\n",
    });
  });
});
