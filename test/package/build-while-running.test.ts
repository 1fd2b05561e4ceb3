/**
 * `npm run build` (scripts/build.js) while `trade` runs from the same checkout: a test suite
 * started beside a rebuild, a bot's `trade place` while its operator rebuilds. The build replaces
 * dist/ file by file, each written whole and renamed onto its place, so every `trade` started
 * meanwhile runs the old build or the new one. Before, the build emptied dist/ first and esbuild
 * wrote the bundle before its wrap: a `trade` started then failed ("Cannot find module" or
 * "module is not defined", which a CI run of the suite once showed).
 *
 * In a copy of the checkout (its sources, its built dist/, node_modules linked), so that this
 * file's build never touches the dist/ other test files are running.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exec, type Ran } from '../helpers/exec.js';
import { spawnSyncRecorded } from '../helpers/spawn.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const PLACE = ['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY', '--json'];

let dir: string;
let copy: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'trade-build-'));
  copy = join(dir, 'project');
  const skip = new Set(['node_modules', '.git', 'coverage']);
  cpSync(ROOT, copy, { recursive: true, filter: (path) => !skip.has(relative(ROOT, path)) && !path.endsWith('.tgz') });
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(copy, 'node_modules'), 'dir');
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function trade(argv: string[], home: string): Promise<Ran> {
  return exec(process.execPath, [join(copy, 'bin', 'trade.js'), ...argv], {
    env: { PATH: process.env.PATH, HOME: home, TRADE_HOME: join(home, 'data'), TRADE_CONFIG_DIR: join(home, 'config'), NO_COLOR: '1' },
  });
}

it('every trade started while builds run answers, from the old build or a new one', async () => {
  const dist = join(copy, 'dist');
  const before = readdirSync(dist).sort();
  // What a build stopped midway leaves (a process that has ended) goes; what one still running is
  // writing (this process stands for it) stays.
  const ended = spawnSyncRecorded(process.execPath, ['-e', '0'], { encoding: 'utf8' }).pid!;
  const stopped = [`cli.cjs.${ended}.partial`, `chunks/lib-X.js.${ended}.partial`, `types.${ended}.partial/lib.d.ts`];
  const inProgress = `help.txt.${process.pid}.partial`;
  for (const name of [...stopped, inProgress]) {
    mkdirSync(dirname(join(dist, name)), { recursive: true });
    writeFileSync(join(dist, name), 'partial');
  }
  // Two builds, the second started a moment after the first (`npm test` and `npm run bench` at
  // once, say): neither takes the other's files in progress for leftovers.
  const run = () => exec(process.execPath, [join(copy, 'scripts', 'build.js')], { cwd: copy, env: process.env });
  let done = false;
  const builds = Promise.all([run(), new Promise((resolve) => setTimeout(resolve, 300)).then(run)]).finally(() => {
    done = true;
  });
  const runs: Array<{ argv: string[]; ran: Ran }> = [];
  // place (the bundle and its code cache), --version (version.txt), --help to a pipe (help.txt),
  // one after another until the build has finished.
  const commands = [PLACE, ['--version'], ['--help']];
  while (!done) {
    const argv = commands[runs.length % commands.length]!;
    runs.push({ argv, ran: await trade(argv, join(dir, `home-${runs.length}`)) });
  }
  for (const built of await builds) expect(built.code, built.stderr).toBe(0);

  // Enough runs to have started across the build's steps (it takes seconds; a run ~0.1 s).
  expect(runs.length).toBeGreaterThanOrEqual(9);
  const failed = runs.filter(({ ran }) => ran.code !== 0).map(({ argv, ran }) => `trade ${argv.join(' ')} exited ${ran.code}: ${ran.stderr}`);
  expect(failed).toEqual([]);
  for (const { argv, ran } of runs) {
    if (argv === PLACE) expect(JSON.parse(ran.stdout)).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
    else if (argv[0] === '--version') expect(ran.stdout).toBe(`${VERSION}\n`);
    else expect(ran.stdout).toMatch(/^Usage: trade /);
  }
  // The builds leave what they always made, none of their own partial files and none of a
  // stopped build's; another's in progress is left to it.
  for (const name of stopped) expect(existsSync(join(dist, name)), name).toBe(false);
  expect(existsSync(join(dist, `types.${ended}.partial`))).toBe(false);
  expect(readdirSync(dist).sort()).toEqual([...before, inProgress].sort());
});
