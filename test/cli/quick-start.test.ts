/**
 * README's Quick start, run as written: every command of its sh blocks, in order, from the clone's
 * root, with a fresh store, config and npm global folder (a sandbox), and what its comments and its
 * shown output say checked. `npm ci` and `npm test` are not run here (the suite is what `npm test`
 * runs, and a second install would rebuild what the other tests use): they must be exactly the
 * commands of `.ci/run`, which CI runs on a clean clone.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { exec, type Ran } from '../helpers/exec.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The section's text, from its heading to the next heading of the same level. */
function section(heading: string): string {
  const start = README.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`README has no "${heading}"`);
  const end = README.indexOf('\n## ', start + heading.length + 2);
  return README.slice(start, end < 0 ? undefined : end);
}

/** The commands of the section's sh blocks, a line continued with a backslash joined to the next. */
function commands(text: string): string[] {
  const out: string[] = [];
  for (const block of text.matchAll(/```sh\n([\s\S]*?)```/g)) {
    let pending = '';
    for (const line of block[1]!.split('\n')) {
      if (line.trim() === '') continue;
      if (line.endsWith('\\')) pending += `${line.slice(0, -1)} `;
      else {
        out.push(pending + line);
        pending = '';
      }
    }
  }
  return out;
}

/** The shown output block that follows the section's first sh block. */
function shownOutput(text: string): string {
  const match = /```sh\n[\s\S]*?```\n[\s\S]*?```\n([\s\S]*?)```/.exec(text);
  if (!match) throw new Error('the Quick start shows no output block after its first commands');
  return match[1]!;
}

const QUICK_START = section('## Quick start');
const sandbox = mkdtempSync(join(tmpdir(), 'trade-quick-start-'));
const prefix = join(sandbox, 'npm-global');
// A new user's environment: no trade settings, npm's global folder in the sandbox (on PATH, as
// npm's global bin is), and nothing an outer `npm test` exports (npm_config_*, npm_package_*),
// except npm's cache.
const env: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(npm_|TRADE_)/i.test(k) || k === 'npm_config_cache')),
  HOME: sandbox,
  TRADE_HOME: join(sandbox, 'home'),
  TRADE_CONFIG_DIR: join(sandbox, 'config'),
  NO_COLOR: '1',
  npm_config_prefix: prefix,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  PATH: `${join(prefix, 'bin')}:${process.env.PATH}`,
};

afterAll(() => rmSync(sandbox, { recursive: true, force: true }));

/** One README line, by bash (which reads its quotes and comments), from the clone's root. */
const sh = (command: string): Promise<Ran> => exec('bash', ['--noprofile', '--norc', '-c', command], { cwd: ROOT, env });

/** What each command's comment (or the shown output) says, checked on what it printed. */
const CLAIMS: Array<{ command: RegExp; check: (ran: Ran) => void }> = [
  {
    command: /^npx trade place .*"ES 09-25"/,
    check: (ran) => {
      const shown = shownOutput(QUICK_START).replace('/home/you/.local/share/trade/trade.db', join(env.TRADE_HOME!, 'trade.db'));
      expect(ran.stdout.replace(/order id {2}[0-9a-f]{32}/, 'order id  2ea6bcace215a4d965afa9907f5c88fd')).toBe(shown);
    },
  },
  {
    command: /^npx trade place .*"NQ 12-25".*--strategy Scalp/,
    check: (ran) => {
      expect(ran.stdout).toContain('filled 2 @ 21000');
      expect(ran.stdout).toMatch(/stop-loss +SELL 2 NQ 12-25 STOPMARKET stop 20998 DAY, working/);
      expect(ran.stdout).toMatch(/target +SELL 2 NQ 12-25 LIMIT limit 21004 DAY, working/);
    },
  },
  {
    command: /^npx trade price set "NQ 12-25" 21005/,
    check: (ran) => {
      expect(ran.stdout).toMatch(/filled +SELL 2 LIMIT @ 21004 in Sim101 \(ATM profit-target/);
      expect(ran.stdout).toMatch(/cancelled +[0-9a-f]{32} \(OCO\)/);
    },
  },
  {
    command: /^npx trade positions --all/,
    check: (ran) => expect(ran.stdout).toMatch(/^Sim101 +NQ 12-25 +Flat +0 /m),
  },
  {
    command: /^npx trade orders --account Sim101/,
    check: (ran) => {
      const nq = ran.stdout.split('\n').filter((line) => line.includes('NQ 12-25'));
      expect(nq).toHaveLength(3);
      expect(nq.find((l) => / BUY +2 +MARKET /.test(l))).toMatch(/ Filled +2 +21000 /);
      expect(nq.find((l) => / SELL +2 +STOPMARKET /.test(l))).toMatch(/ Cancelled +0 /);
      expect(nq.find((l) => / SELL +2 +LIMIT /.test(l))).toMatch(/ Filled +2 +21004 /);
    },
  },
  {
    command: /^npx trade report --account Sim101/,
    check: (ran) => {
      // The bracket trade: BUY 2 NQ at 21000, the target filled at 21004: 4 × 2 × 20 = 160.00, no commission set.
      expect(ran.stdout).toMatch(/^Net profit +160\.00 /m);
      expect(ran.stdout).toMatch(/^1 +NQ 12-25 +Long +2 +\S+ \S+ +21000 +\S+ \S+ +21004 /m);
      // The ES order of the first command is still open, at the price it filled at.
      expect(ran.stdout).toMatch(/^Sim101 +ES 09-25 +Long +1 +6000 +6000 +0\.00 /m);
    },
  },
  {
    command: /^npm link --ignore-scripts/,
    check: () => expect(existsSync(join(prefix, 'bin', 'trade'))).toBe(true),
  },
  {
    command: /^trade --version/,
    check: (ran) => expect(ran.stdout).toBe(`${VERSION}\n`),
  },
  {
    command: /^npm unlink -g trade/,
    check: () => expect(existsSync(join(prefix, 'bin', 'trade'))).toBe(false),
  },
];

describe('README Quick start', () => {
  const all = commands(QUICK_START);

  it('sets up and tests with exactly the commands CI runs', () => {
    const ci = readFileSync(join(ROOT, '.ci', 'run'), 'utf8').split('\n').map((l) => l.trim()).filter((l) => /^npm /.test(l));
    const npmSteps = all.map((c) => c.replace(/\s+#.*$/, '').trim()).filter((c) => c === 'npm ci' || c === 'npm test');
    expect(npmSteps).toEqual(['npm ci', 'npm test']);
    expect(ci).toEqual(npmSteps);
    // CI mode: a snapshot missing from the commit fails instead of being written and passing.
    expect(readFileSync(join(ROOT, '.ci', 'run'), 'utf8')).toMatch(/^export CI=true$/m);
  });

  it('every claim checked names a command the Quick start has', () => {
    for (const claim of CLAIMS) expect(all.filter((c) => claim.command.test(c)), String(claim.command)).toHaveLength(1);
  });

  it('runs every other command as written, in order, and each does what README says', async () => {
    const run = all.filter((c) => !/^npm (ci|test)\b/.test(c));
    expect(run.length).toBeGreaterThanOrEqual(10);
    for (const command of run) {
      const ran = await sh(command);
      expect({ command, code: ran.code, stderr: ran.code === 0 ? '' : ran.stderr }).toEqual({ command, code: 0, stderr: '' });
      for (const claim of CLAIMS.filter((c) => c.command.test(command))) claim.check(ran);
    }
  }, 90_000);
});
