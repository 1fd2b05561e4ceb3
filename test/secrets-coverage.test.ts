/**
 * The secrets scan (test/secrets.scan.ts) reads what every process of the suite printed. Here:
 * every way the suite starts a process records its output, so a process whose redaction is gone
 * (test/fixtures/print-token.cjs, preloaded) is caught by the scan's own check; and no test file
 * starts a process any other way than test/helpers/spawn.ts.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runBin, runCli, tempHome } from './helpers/cli.js';
import { exec } from './helpers/exec.js';
import { startBin } from './helpers/long-run.js';
import { findLeaks, readRuns, RUN_LOG_ENV } from './helpers/run-log.js';
import { killServes, startServe } from './helpers/serve-process.js';
import { spawnRecorded, spawnSyncRecorded } from './helpers/spawn.js';
import { runInPty, runInTerminal } from './helpers/terminal.js';
import { startMcp } from './mcp/helpers.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PRINT_TOKEN = fileURLToPath(new URL('./fixtures/print-token.cjs', import.meta.url));
const TOKEN = 'leak-check-token-5e1f0a9c37';

describe('every process the suite starts is read by the secrets scan', () => {
  let log: string;
  let saved: string | undefined;
  let home: ReturnType<typeof tempHome>;
  beforeEach(() => {
    // This file's deliberate leaks go to a record of their own, not the suite's.
    saved = process.env[RUN_LOG_ENV];
    log = mkdtempSync(join(tmpdir(), 'trade-leak-check-'));
    process.env[RUN_LOG_ENV] = log;
    home = tempHome();
  });
  afterEach(async () => {
    await killServes();
    process.env[RUN_LOG_ENV] = saved;
    rmSync(log, { recursive: true, force: true });
    home.cleanup();
  });

  const leaky = (extra: Record<string, string> = {}) => ({ ...home.env, TRADE_TOKEN: TOKEN, NODE_OPTIONS: `--require ${PRINT_TOKEN}`, ...extra });
  /** What the scan says of the runs recorded here: the streams each leaked on. */
  const caught = () => findLeaks(readRuns(log), []).map((leak) => leak.replace(/^.* > /, ''));

  it('runBin (the built bin)', async () => {
    await runBin(['--version'], leaky());
    expect(caught()).toEqual([
      'runBin (the built bin): `trade --version` (bin) printed a token on stdout',
      'runBin (the built bin): `trade --version` (bin) printed a token on stderr',
    ]);
  });

  it('startServe (trade serve, the shared helper), killed', async () => {
    const serve = await startServe(leaky(), 'serve-token-for-leak-check');
    serve.child.kill('SIGKILL');
    await serve.exited;
    expect(caught()).toEqual([
      'startServe (trade serve, the shared helper), killed: `trade serve --port 0` (serve) printed a token on stdout',
      'startServe (trade serve, the shared helper), killed: `trade serve --port 0` (serve) printed a token on stderr',
    ]);
  });

  it('startBin (a long run), stopped', async () => {
    const run = startBin(['watch', '--account', 'Sim101'], leaky());
    await run.line(/leaked/);
    await run.stop('SIGKILL');
    expect(caught()).toHaveLength(2);
  });

  it('exec (any command, here through a shell)', async () => {
    await exec('sh', ['-c', `"${process.execPath}" "${BIN}" --version`], { env: leaky() });
    expect(caught()).toEqual([
      `exec (any command, here through a shell): \`sh -c "${process.execPath}" "${BIN}" --version\` (process) printed a token on stdout`,
      `exec (any command, here through a shell): \`sh -c "${process.execPath}" "${BIN}" --version\` (process) printed a token on stderr`,
    ]);
  });

  it('spawnRecorded and spawnSyncRecorded, even when the caller ignores the output', async () => {
    const child = spawnRecorded(process.execPath, [BIN, '--version'], { env: leaky(), stdio: 'ignore' });
    await new Promise((resolve) => child.on('close', resolve));
    spawnSyncRecorded(process.execPath, [BIN, '--version'], { env: leaky(), encoding: 'utf8', stdio: 'inherit' });
    expect(caught()).toHaveLength(4);
  });

  it('runInPty (a real terminal)', async () => {
    await runInPty(['--version'], leaky(), async () => undefined);
    // A terminal has one screen: both streams come out of the pty on its stdout.
    expect(caught()).toEqual(['runInPty (a real terminal): `trade --version` (bin) printed a token on stdout']);
  });

  it('startMcp (an MCP stdio session)', async () => {
    const session = await startMcp(['mcp'], leaky({ LEAK_STDERR_ONLY: '1' }));
    await session.close();
    expect(caught()).toEqual(['startMcp (an MCP stdio session): `trade mcp` (bin) printed a token on stderr']);
  });

  it('runCli and runInTerminal (in-process) record what the CLI printed', async () => {
    await runCli(['config', 'list'], home.env);
    await runInTerminal(['config', 'list'], home.env, async () => undefined);
    expect(readRuns(log).map((r) => [r.kind, r.argv.join(' ')])).toEqual([
      ['cli', 'config list'],
      ['cli', 'config list'],
    ]);
  });
});

describe('no test starts a process but through test/helpers/spawn.ts', () => {
  /**
   * The global setup installs Debian packages and starts the PostgreSQL cluster before any test
   * runs (no test is running to record them), and hands neither a token.
   */
  const ALLOWED = ['test/helpers/spawn.ts', 'test/helpers/debian.ts', 'test/helpers/postgres.ts'];
  // Built from parts, so that this file does not match itself.
  const STDIO_CLIENT = new RegExp(['new', 'StdioClientTransport\\b'].join(' '));
  const files = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory() ? files(join(dir, entry.name)) : /\.(ts|mts|cts|js|mjs|cjs)$/.test(entry.name) ? [join(dir, entry.name)] : [],
    );

  it('no other file imports child_process (types aside) or the MCP SDK stdio client transport', () => {
    const offenders: string[] = [];
    for (const file of files(join(ROOT, 'test'))) {
      const path = relative(ROOT, file);
      if (ALLOWED.includes(path)) continue;
      const text = readFileSync(file, 'utf8');
      const imports = [...text.matchAll(/^import (?!type )[^;]*?from ['"](node:)?child_process['"]/gm), ...text.matchAll(/(require|import)\(\s*['"](node:)?child_process['"]\s*\)/g)];
      if (imports.length > 0) offenders.push(`${path}: starts a process with child_process`);
      if (STDIO_CLIENT.test(text)) offenders.push(`${path}: starts a process with the MCP SDK's StdioClientTransport`);
    }
    expect(offenders).toEqual([]);
  });
});
