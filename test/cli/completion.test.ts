/**
 * Shell completion, driven through real bash: the generated script is sourced, COMP_WORDS and
 * friends set as readline would, `_trade` called, COMPREPLY printed. Live values come from the
 * built bin (`trade __complete`, on PATH as `trade`) reading a sandboxed store and config.
 * zsh and fish are not needed: their scripts are compared with bash's by what they name.
 */
import { GUARD_KEYS, LEDGER_KEYS } from '../../src/config/key-table.js';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { PassThrough } from 'node:stream';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { completionModel, VALUE_RULES } from '../../src/cli/completion-model.js';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import { buildProgram } from '../../src/cli/program.js';
import { BIN, runBin, runCli, tempHome } from '../helpers/cli.js';
import { spawnSyncRecorded } from '../helpers/spawn.js';

const home = tempHome();
const TOKEN = 'q7Zr2vKx91LmPw0sTa';
let script: string;
let shims: string;
let work: string;
let orderId: string;

beforeAll(async () => {
  const result = await runCli(['completion', 'bash'], home.env);
  expect(result.code).toBe(0);
  script = join(home.dir, 'trade.bash');
  writeFileSync(script, result.stdout);
  // `trade` on PATH is the built bin, as an installed package's would be.
  shims = join(home.dir, 'bin');
  mkdirSync(shims);
  writeFileSync(join(shims, 'trade'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(shims, 'trade'), 0o755);
  // A working directory with files to complete.
  work = join(home.dir, 'work');
  mkdirSync(work);
  for (const file of ['orders.jsonl', 'ticks.csv', 'token.txt']) writeFileSync(join(work, file), '');
  // The sandbox's store and config: accounts, an ATM template, a working order, a profile.
  const setup = async (argv: string[], input?: string) => {
    const r = await runBin(argv, home.env, input);
    expect(r.code, r.stderr).toBe(0);
    return r.stdout;
  };
  await setup(['accounts', 'add', 'Sim102']);
  await setup(['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16']);
  const placed = await setup(['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', '4000', '--tif', 'GTC', '--json']);
  orderId = (JSON.parse(placed) as { orderId: string }).orderId;
  await setup(['--profile', 'live', 'config', 'set', 'account', 'Live7']);
  await setup(['--profile', 'live', 'login', '--token-stdin'], TOKEN);
}, 60_000);
afterAll(() => home.cleanup());

/** Completes the last word as bash would, in `cwd`; returns COMPREPLY. */
function completeIn(cwd: string, env: Record<string, string | undefined>, ...words: string[]): string[] {
  const line = ['trade', ...words].join(' ');
  const program = [
    `source '${script}'`,
    'COMP_WORDS=("$@")',
    'COMP_CWORD=$(($# - 1))',
    `COMP_LINE='${line.replace(/'/g, "'\\''")}'`,
    'COMP_POINT=${#COMP_LINE}',
    '_trade',
    `printf '%s\\n' "\${COMPREPLY[@]}"`,
  ].join('; ');
  const result = spawnSyncRecorded('bash', ['--norc', '--noprofile', '-c', program, 'bash', 'trade', ...words], {
    cwd,
    env: { ...env, PATH: `${shims}:${process.env.PATH}` },
    encoding: 'utf8',
  });
  expect(result.stderr).toBe('');
  expect(result.status).toBe(0);
  return result.stdout.split('\n').filter(Boolean);
}

const complete = (...words: string[]) => completeIn(work, home.env, ...words);

function program() {
  const io = createIo({ stdin: new PassThrough(), stdout: { write: () => true }, stderr: { write: () => true } }, {});
  return buildProgram(createContext(io, {}), io);
}

describe('bash completion', () => {
  it('completes commands, subcommands and flags', () => {
    expect(complete('pl')).toEqual(['place']);
    expect(complete('accounts', '')).toEqual(['list', 'snapshot', 'add']);
    expect(complete('price', 'so')).toEqual(['source']);
    expect(complete('--profile', 'live', 'pos')).toEqual(['positions', 'position']);
    expect(complete('place', '--account', 'Sim101', '--ti')).toEqual(['--tif']);
    expect(complete('cancel', '--all-')).toEqual(['--all-accounts']);
    expect(complete('place', '--pro')).toEqual(['--profile']);
    // A command with nothing but flags offers them at an empty word.
    expect(complete('place', '')).toEqual(expect.arrayContaining(['--account', '--action', '--json', '--backend']));
    expect(complete('place', '')).not.toContain('--time-in-force'); // hidden from --help, understood
    expect(complete('__comp')).toEqual([]);
  });

  it('after a flag that takes a value offers its values, never flag names', () => {
    expect(complete('place', '--account', '')).toEqual(['Sim101', 'Sim102', 'Live7']);
    expect(complete('place', '--account', 's')).toEqual(['Sim101', 'Sim102']);
    expect(complete('place', '--quantity', '')).toEqual([]);
    expect(complete('place', '--limit-price', '-')).toEqual([]);
    expect(complete('place', '--order-id', '')).toEqual([]);
    // A value already given is skipped: what follows is a flag again.
    expect(complete('place', '--quantity', '2', '--dry')).toEqual(['--dry-run']);
    expect(complete('place', '--account', 'Sim101', '')).toEqual(expect.arrayContaining(['--instrument']));
  });

  it('--profile offers the profiles, --strategy the ATM templates (close --strategy: the strategies)', () => {
    expect(complete('--profile', '')).toEqual(['default', 'live']);
    expect(complete('doctor', '--profile', 'l')).toEqual(['live']);
    expect(complete('place', '--strategy', '')).toEqual(['Scalp']);
    expect(complete('reverse', '--strategy', 'sc')).toEqual(['Scalp']);
    expect(complete('close', '--strategy', '')).toEqual([]);
  });

  it('matches enum values in any case, and inserts their own spelling', () => {
    expect(complete('place', '--action', 'b')).toEqual(['BUY']);
    expect(complete('reverse', '--action', '')).toEqual(['BUY', 'SELL']);
    expect(complete('place', '--order-type', 'stop')).toEqual(['STOPMARKET', 'STOPLIMIT']);
    expect(complete('place', '--order-type', 'L')).toEqual(['LIMIT']);
    expect(complete('place', '--tif', 'gt')).toEqual(['GTC']);
    expect(complete('place', '--time-in-force', 'd')).toEqual(['DAY']);
    expect(complete('bracket', '--tif', '')).toEqual(['DAY', 'GTC']);
    expect(complete('--backend', 'W')).toEqual(['ws']);
    expect(complete('price', 'follow', 'ES', '--from', '')).toEqual(['http', 'ws']);
    expect(complete('flatten', '--side', 'S')).toEqual(['short']);
    expect(complete('place', '--require-position', 'F')).toEqual(['flat']);
    expect(complete('place', '--require-position', 'flat,l')).toEqual(['flat,long']);
    expect(complete('completion', '')).toEqual(['bash', 'zsh', 'fish']);
    expect(complete('config', 'set', 'base')).toEqual(['base-url']);
    expect(complete('config', 'set', 'to')).toEqual([]);
    expect(complete('config', 'get', 'TO')).toEqual(['token']);
    expect(complete('price', 'source', 'r')).toEqual(['random', 'remote', 'replay']);
    // --flag=value, which bash splits at the =.
    expect(complete('place', '--action', '=', 's')).toEqual(['SELL']);
    expect(complete('place', '--action', '=')).toEqual(['BUY', 'SELL']);
  });

  it('completes files where a file is expected', () => {
    expect(complete('batch', 'ord')).toEqual(['orders.jsonl']);
    expect(complete('batch', '').sort()).toEqual(['orders.jsonl', 'ticks.csv', 'token.txt']);
    expect(complete('serve', '--token-file', 'to')).toEqual(['token.txt']);
    expect(complete('serve', '--price-replay', 'ti')).toEqual(['ticks.csv']);
    expect(complete('price', 'replay', 'ti')).toEqual(['ticks.csv']);
    expect(complete('price', 'source', 'replay', 'ti')).toEqual(['ticks.csv']);
    expect(complete('price', 'source', 'replay', 'ticks.csv', 'x')).toEqual([]);
    // Not where no file is expected.
    expect(complete('place', '--account', 'ord')).toEqual([]);
    expect(complete('accounts', 'add', 'ord')).toEqual([]);
  });

  it('offers order ids from the store: working ones for cancel, filtered by --account', () => {
    expect(complete('cancel', '')).toEqual([orderId]);
    expect(complete('cancel', orderId.slice(0, 4))).toEqual([orderId]);
    expect(complete('modify', '--account', 'sim101', '')).toEqual([orderId]);
    expect(complete('cancel', '--account', 'Sim102', '')).toEqual([]);
    expect(complete('order', '')).toEqual([orderId]);
    expect(complete('replace', '')).toEqual([orderId]);
    expect(complete('cancel', orderId, '')).toEqual(expect.arrayContaining(['--account']));
  });

  it('offers instruments and roots, quoted for the shell', () => {
    expect(complete('place', '--instrument', 'ES')).toEqual(['ES\\ 09-25', 'ES']);
    expect(complete('quote', 'ES', 'N')).toEqual(['NQ', 'NG']);
    expect(complete('contract', 'set', 'M')).toEqual(expect.arrayContaining(['MES', 'MNQ']));
    expect(complete('account', '')).toEqual(['Sim101', 'Sim102', 'Live7']);
    expect(complete('atm', 'remove', '')).toEqual(['Scalp']);
    expect(complete('atm', 'add', '')).toEqual([]);
  });

  it('with no store, offers no live values and creates no store', () => {
    const fresh = tempHome();
    try {
      expect(completeIn(work, fresh.env, 'cancel', '')).toEqual([]);
      expect(completeIn(work, fresh.env, 'place', '--strategy', '')).toEqual([]);
      expect(completeIn(work, fresh.env, 'place', '--account', '')).toEqual([]);
      expect(completeIn(work, fresh.env, '--profile', '')).toEqual(['default']);
      expect(existsSync(join(fresh.env.TRADE_HOME!, 'trade.db'))).toBe(false);
      expect(existsSync(fresh.env.TRADE_HOME!)).toBe(false);
    } finally {
      fresh.cleanup();
    }
  });
});

describe('trade __complete', () => {
  it('answers from the store and the config, never the token; an unknown source is exit 2', async () => {
    const env = { ...home.env, TRADE_TOKEN: TOKEN, TRADE_PROFILE: 'live' };
    const all = await Promise.all(
      ['accounts', 'atm-templates', 'profiles', 'orders', 'working-orders', 'strategies', 'instruments', 'executions', 'roots'].map((s) => runCli(['__complete', s], env)),
    );
    for (const r of all) {
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).not.toContain(TOKEN);
    }
    expect(all[0]!.stdout).toBe('Sim101\nSim102\nLive7\n');
    expect(all[2]!.stdout).toBe('default\nlive\n');
    expect(all[5]!.stdout).toBe('');
    expect(await runCli(['__complete', 'tokens'], env)).toEqual({
      code: 2,
      stdout: '',
      stderr: "Error: Unknown completion source 'tokens': it is one of accounts, atm-templates, profiles, orders, working-orders, strategies, instruments, executions, roots\n",
    });
  });

  it('is hidden from trade --help', async () => {
    const help = await runCli(['--help'], home.env);
    expect(help.stdout).toContain('completion');
    expect(help.stdout).not.toContain('__complete');
    expect(program().commands.map((c) => c.name())).toContain('__complete');
  });
});

/** What a script names: commands as "PATH CHILD", flags as "PATH FLAG", and the enum values. */
interface Named {
  commands: Set<string>;
  flags: Set<string>;
  values: Set<string>;
}

/** From the `case` tables bash and zsh share. */
function namedByTables(text: string): Named {
  const table = (fn: string) => {
    const body = text.slice(text.indexOf(`${fn}() {`), text.indexOf('\n}\n', text.indexOf(`${fn}() {`)));
    return [...body.matchAll(/^ {4}(.*)\) REPLY='([^']*)' ;;$/gm)].filter((m) => m[1] !== '*').map((m) => [m[1]!.replace(/^'|'$/g, ''), m[2]!] as const);
  };
  const commands = new Set(table('_trade_children').flatMap(([path, words]) => words.split(' ').map((w) => `${path} ${w}`.trim())));
  const flags = new Set(table('_trade_flags').flatMap(([path, words]) => words.split(' ').filter(Boolean).map((w) => `${path} ${w}`.trim())));
  const specs = [...table('_trade_value_of'), ...table('_trade_argument')].map(([, spec]) => spec);
  const values = new Set(specs.flatMap((spec) => (/^(choices|list) /.test(spec) ? spec.split(' ').slice(1) : [])));
  return { commands, flags, values };
}

function namedByFish(text: string): Named {
  const unquote = (s: string) => s.replace(/^'|'$/g, '').replace(/\\'/g, "'");
  const commands = new Set<string>();
  const flags = new Set<string>();
  const values = new Set<string>();
  const everywhere: string[] = [];
  const paths = new Set<string>(['']);
  for (const m of text.matchAll(/^complete -c trade -n '__trade_at \\'([^']*)\\'' -a (\S+) -d /gm)) {
    commands.add(`${m[1]} ${m[2]}`.trim());
    paths.add(`${m[1]} ${m[2]}`.trim());
  }
  for (const line of text.split('\n').filter((l) => /^complete -c trade .*-[ls] /.test(l))) {
    const where = /-n '__trade_in \\'([^']*)\\''/.exec(line);
    const names = [...line.matchAll(/ -l (\S+)| -s (\S+)/g)].map((m) => (m[1] ? `--${m[1]}` : `-${m[2]}`));
    if (where) for (const n of names) flags.add(`${where[1]} ${n}`.trim());
    else everywhere.push(...names);
    const choices = / -x -a '([^(][^']*)'/.exec(line) ?? /__trade_list ([^)]*)\)/.exec(line);
    if (choices) for (const v of unquote(choices[1]!).split(' ')) values.add(v);
  }
  for (const path of paths) for (const n of everywhere) flags.add(`${path} ${n}`.trim());
  for (const m of text.matchAll(/-n '__trade_arg [^\n]* -x -a '([^(][^']*)'$/gm)) for (const v of m[1]!.split(' ')) values.add(v);
  return { commands, flags, values };
}

describe('zsh and fish scripts', () => {
  it('name the same commands, flags and enum values as the bash one', async () => {
    const bash = namedByTables((await runCli(['completion', 'bash'], home.env)).stdout);
    const zshText = (await runCli(['completion', 'zsh'], home.env)).stdout;
    const fishText = (await runCli(['completion', 'fish'], home.env)).stdout;
    expect(zshText).toMatch(/^#compdef trade\n/);
    expect(zshText).toContain('compdef _trade trade');
    expect(zshText).not.toContain('bashcompinit');
    const zsh = namedByTables(zshText);
    const fish = namedByFish(fishText);
    // The bash side is the tree itself, so a script that drops something fails here.
    expect(bash.commands).toContain('price source');
    expect(bash.commands).not.toContain('__complete');
    expect(bash.flags).toContain('serve --token-file');
    expect(bash.flags).toContain('place --profile');
    expect(bash.values).toEqual(new Set(['BUY', 'SELL', 'MARKET', 'LIMIT', 'STOPMARKET', 'STOPLIMIT', 'DAY', 'GTC', 'embedded', 'http', 'ws', 'long', 'short', 'flat', 'bash', 'zsh', 'fish', 'manual', 'demo', 'random', 'remote', 'replay', 'base-url', 'ws-url', 'backend', 'account', 'timeout', 'webhook-url', 'token', 'read', 'paper', 'trade', ...GUARD_KEYS, ...LEDGER_KEYS]));
    for (const other of [zsh, fish]) {
      expect([...other.commands].sort()).toEqual([...bash.commands].sort());
      expect([...other.flags].sort()).toEqual([...bash.flags].sort());
      expect([...other.values].sort()).toEqual([...bash.values].sort());
    }
  });

  it('fish asks trade __complete for live values and completes files where bash does', async () => {
    const fish = (await runCli(['completion', 'fish'], home.env)).stdout;
    expect(fish).toContain("-n '__trade_in \\'serve\\'' -l token-file -r -F");
    expect(fish).toContain("-n '__trade_arg \\'batch\\' 0' -r -F");
    expect(fish).toContain("-n '__trade_arg \\'cancel\\' 0' -x -a '(__trade_live working-orders)'");
    expect(fish).toContain("complete -c trade -l profile -x -a '(__trade_live profiles)'");
  });
});

describe('the completion model', () => {
  it('uses every value rule: none names a flag or argument the tree does not have', () => {
    expect([...completionModel(program()).rulesUsed].sort()).toEqual(Object.keys(VALUE_RULES).sort());
  });

  it('refuses an unknown shell with exit 2, naming the shells', async () => {
    expect(await runCli(['completion', 'tcsh'], home.env)).toMatchObject({
      code: 2,
      stdout: '',
      stderr: "Error: Unknown shell 'tcsh': completion is available for bash, zsh, fish\n",
    });
  });
});
