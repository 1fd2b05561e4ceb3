/**
 * Commands from Debian packages that some tests drive for real (curl, chromium, PostgreSQL's initdb). The global setup
 * makes sure each is there before any worker starts: found on the PATH, or installed with apt-get
 * when the suite runs as root on Debian (a fresh CI machine, or a newcomer's container); otherwise
 * the run stops at once with the package to install. A test never skips for want of one.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface DebianCommand {
  command: string;
  /**
   * Where the package puts it when that is not on the PATH, one `*` standing for a directory
   * (PostgreSQL's programs are in /usr/lib/postgresql/VERSION/bin).
   */
  path?: string;
  /** The Debian package that provides it. */
  debianPackage: string;
}

/** What the suite needs, and why. */
export const SUITE_COMMANDS: DebianCommand[] = [
  // test/server/client-stacks.test.ts: `curl --http2` and `curl --http1.0` against trade serve.
  { command: 'curl', debianPackage: 'curl' },
  // test/report/report-browser.test.ts: the HTML report in a real browser, through playwright-core.
  { command: 'chromium', debianPackage: 'chromium' },
  // test/cli/manual.test.ts: the man page, read by groff and rendered by man, as a user reads it.
  { command: 'groff', debianPackage: 'groff' },
  { command: 'man', debianPackage: 'man-db' },
  // test/helpers/postgres.ts: a throwaway PostgreSQL cluster for the desk ledger (src/guard/postgres-ledger.ts).
  { command: 'initdb', path: '/usr/lib/postgresql/*/bin/initdb', debianPackage: 'postgresql' },
  // test/guard/desk-tls.test.ts: a CA and the TLS certificate of a PostgreSQL server.
  { command: 'openssl', debianPackage: 'openssl' },
];

const onPath = (command: string) => spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).status === 0;

/** A path with one `*` directory: does any directory there hold the rest? */
function atPath(path: string): boolean {
  const [head, tail] = path.split('*') as [string, string | undefined];
  if (tail === undefined) return existsSync(path);
  const parent = dirname(`${head}x`);
  try {
    return readdirSync(parent).some((name) => name.startsWith(head.slice(parent.length + 1)) && existsSync(join(parent, `${name}${tail}`)));
  } catch {
    return false;
  }
}

const found = (c: DebianCommand | string) => (typeof c === 'string' ? onPath(c) : (c.path !== undefined && atPath(c.path)) || onPath(c.command));

function aptGet(args: string[]): boolean {
  const run = spawnSync('apt-get', args, { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, stdio: ['ignore', 'pipe', 'pipe'] });
  return run.status === 0;
}

/** Installs what is missing (apt-get, as root), or throws naming every package to install. */
export function ensureDebianCommands(commands: DebianCommand[] = SUITE_COMMANDS): void {
  const missing = commands.filter((c) => !found(c));
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map((c) => c.debianPackage))];
  const canInstall = process.getuid?.() === 0 && found('apt-get');
  if (canInstall) {
    const install = ['install', '-y', '--no-install-recommends', ...packages];
    if (!aptGet(install)) aptGet(['update']) && aptGet(install);
  }
  const still = missing.filter((c) => !found(c));
  if (still.length > 0)
    throw new Error(
      `The test suite drives ${still.map((c) => c.command).join(', ')}, which this machine lacks: install ${[...new Set(still.map((c) => c.debianPackage))].join(' ')} (apt-get install ${packages.join(' ')}) and run it again.`,
    );
}
