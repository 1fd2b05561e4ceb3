/** `trade serve` as a command: flags, the token's sources, start-up output, and shutdown on a signal. */
import type { ChildProcess } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer, type Server } from 'node:net';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import Database from 'better-sqlite3';
import { request } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runServe } from '../../src/cli/commands/serve.js';
import { createContext } from '../../src/cli/context.js';
import { createIo } from '../../src/cli/io.js';
import type { Env } from '../../src/config/paths.js';
import { BIN, runCli, tempHome } from '../helpers/cli.js';
import { ES_MARKET } from './harness.js';
import { spawnRecorded } from '../helpers/spawn.js';

const PLACE = '/v1/api/accounts/Sim101/orders/place';
const LISTENING = /^trade serve listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

let env: Env;
let dir: string;
let cleanup: () => void;
const children: ChildProcess[] = [];
beforeEach(() => ({ env, dir, cleanup } = tempHome()));
afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  cleanup();
});

function place(url: string, token: string, body: unknown = ES_MARKET) {
  return request(`${url}${PLACE}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: typeof body === 'string' || body instanceof Readable ? body : JSON.stringify(body),
  });
}

/** Starts the built bin's `serve` and resolves once it says where it listens. */
function spawnServe(args: string[], extraEnv: Env = {}) {
  const child = spawnRecorded(process.execPath, [BIN, 'serve', '--port', '0', ...args], {
    env: { PATH: process.env.PATH, ...env, ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
    record: { kind: 'serve' },
  });
  children.push(child);
  let stderr = '';
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const url = new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const match = LISTENING.exec(stderr);
      // The whole banner, token line included, ends with how to stop it.
      if (match && stderr.includes('stops it.\n')) resolve(match[1]!);
    });
    void exited.then((code) => reject(new Error(`serve exited ${code} before listening:\n${stderr}`)));
  });
  return { child, url, exited, stderr: () => stderr, stdout: () => stdout };
}

describe('trade serve (the built bin)', () => {
  it('serves the store, and on SIGTERM finishes, closes the store and exits 0', async () => {
    const serve = spawnServe([], { TRADE_SERVE_TOKEN: 'from-the-env-123' });
    const url = await serve.url;
    const reply = await place(url, 'from-the-env-123');
    expect(reply.statusCode).toBe(200);
    const { orderId } = (await reply.body.json()) as { orderId: string };
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    expect(serve.stdout()).toBe('');
    // The webhook's address is random for a run without --webhook: one URL-safe id and secret.
    const webhook = /^ {2}webhook {5}(\S+) {2}\(TradingView alerts: text, key= the token; random for this run, --webhook ID\/SECRET keeps one\)$/m.exec(serve.stderr());
    expect(webhook?.[1]).toMatch(new RegExp(`^${url}/v1/send/[0-9a-f]{16}/[A-Za-z0-9_-]{32}$`));
    expect(serve.stderr()).toBe(
      [
        `trade serve listening on ${url}`,
        `  websocket   ${url.replace('http', 'ws')}/ws/stream`,
        webhook![0],
        `  store       ${join(env.TRADE_HOME!, 'trade.db')}`,
        '  token       from TRADE_SERVE_TOKEN',
        '  rate limit  off',
        '  Ctrl-C (SIGINT) or SIGTERM stops it.',
        'trade serve: SIGTERM, finishing in-flight requests',
        'trade serve stopped',
        '',
      ].join('\n'),
    );
    const db = new Database(join(env.TRADE_HOME!, 'trade.db'), { readonly: true });
    expect(db.prepare('SELECT id FROM orders').all()).toEqual([{ id: orderId }]);
    db.close();
  });

  it('generates a token when none is configured, prints it once, and stops on SIGINT', async () => {
    const serve = spawnServe([]);
    const url = await serve.url;
    const token = /^ {2}token {7}(\S+) {2}\(generated for this run; set TRADE_SERVE_TOKEN or --token-file to keep one\)$/m.exec(
      serve.stderr(),
    )![1]!;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(serve.stderr().split(token)).toHaveLength(2);
    expect((await place(url, 'guess')).statusCode).toBe(401);
    expect((await place(url, token)).statusCode).toBe(200);
    serve.child.kill('SIGINT');
    expect(await serve.exited).toBe(0);
  });

  it('reads --token-file, logs one line per request with --log, and never prints the token', async () => {
    const file = join(dir, 'token');
    writeFileSync(file, 'file-token-abcdef\n');
    chmodSync(file, 0o600);
    const serve = spawnServe(['--token-file', file, '--log', '--rate-limit', '180/min'], { TRADE_SERVE_TOKEN: 'loses-to-the-file' });
    const url = await serve.url;
    expect((await place(url, 'loses-to-the-file')).statusCode).toBe(401);
    expect((await place(url, 'file-token-abcdef')).statusCode).toBe(200);
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const stderr = serve.stderr();
    expect(stderr).toContain(`  token       from ${file}\n  rate limit  180/min, burst 20\n`);
    expect(stderr).toMatch(new RegExp(`Z 127\\.0\\.0\\.1 POST ${PLACE} 401 [\\d.]+ms\\n.*Z 127\\.0\\.0\\.1 POST ${PLACE} 200 `));
    expect(stderr).not.toContain('file-token-abcdef');
  });

  it('keeps serving when whoever read its stderr has gone (a closed pipe is not a crash)', async () => {
    const serve = spawnServe(['--log'], { TRADE_SERVE_TOKEN: 'pipe-token-0123456789' });
    const url = await serve.url;
    // As `trade serve --log 2>&1 | head -1` would: the reader goes away; every request then logs a line.
    serve.child.stderr!.destroy();
    for (let i = 0; i < 20; i++) expect((await place(url, 'pipe-token-0123456789')).statusCode).toBe(200);
    expect(serve.child.exitCode).toBeNull();
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  });

  it('two servers and the CLI share one store', async () => {
    const token = { TRADE_SERVE_TOKEN: 'shared-store-token' };
    const servers = [spawnServe([], token), spawnServe([], token)];
    const urls = await Promise.all(servers.map((s) => s.url));
    const [replies, cli] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, (_, i) => place(urls[i % 2]!, 'shared-store-token'))),
      runCli(['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'SELL', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'], env),
    ]);
    expect(replies.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    await Promise.all(replies.map((r) => r.body.dump()));
    expect(cli.code).toBe(0);
    const position = await request(`${urls[1]}/v1/api/accounts/Sim101/position?instrument=ES%2009-25`, {
      headers: { authorization: 'Bearer shared-store-token' },
    });
    expect(await position.body.json()).toMatchObject({ marketPosition: 'Long', quantity: 19 });
    for (const s of servers) s.child.kill('SIGTERM');
    expect(await Promise.all(servers.map((s) => s.exited))).toEqual([0, 0]);
  });

  it('a request in flight when SIGTERM comes is finished before the process exits', async () => {
    const serve = spawnServe([], { TRADE_SERVE_TOKEN: 'in-flight-token' });
    const url = await serve.url;
    const body = new PassThrough();
    const text = JSON.stringify(ES_MARKET);
    body.write(text.slice(0, 20));
    const pending = place(url, 'in-flight-token', body);
    await new Promise((resolve) => setTimeout(resolve, 200));
    serve.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    body.end(text.slice(20));
    const reply = await pending;
    expect(reply.statusCode).toBe(200);
    expect(await reply.body.json()).toEqual({ orderId: expect.stringMatching(/^[0-9a-f]{32}$/), success: true });
    expect(await serve.exited).toBe(0);
  });
});

describe('trade serve (in process)', () => {
  it('runs until told to stop, then stops listening and returns', async () => {
    let stop!: (reason: string) => void;
    const stopped = new Promise<string>((resolve) => (stop = resolve));
    let stderr = '';
    const io = createIo(
      { stdin: new PassThrough(), stdout: { write: () => true }, stderr: { write: (s: string) => ((stderr += s), true) } },
      env,
    );
    const ctx = createContext(io, { ...env, TRADE_SERVE_TOKEN: 'in-process-token' });
    const running = runServe(ctx, { port: '0' }, { stopWhen: () => ({ stopped, dispose: () => {} }) });
    while (!LISTENING.test(stderr)) await new Promise((resolve) => setTimeout(resolve, 10));
    const url = LISTENING.exec(stderr)![1]!;
    expect((await place(url, 'in-process-token')).statusCode).toBe(200);
    stop('test');
    await running;
    expect(stderr).toMatch(/trade serve: test, finishing in-flight requests\ntrade serve stopped\n$/);
    await expect(request(`${url}/v1/api/positions`)).rejects.toThrow();
  });
});

describe('trade serve flags', () => {
  let blocker: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (blocker ? blocker.close(() => resolve()) : resolve())));

  it('refuses bad flags with exit 2 before listening', async () => {
    const cases: Array<[string[], string]> = [
      [['--port', 'http'], "--port must be a whole number from 0 to 65535 (0 picks a free port), got 'http'"],
      [['--port', '65536'], "--port must be a whole number from 0 to 65535 (0 picks a free port), got '65536'"],
      [['--rate-limit', '10/fortnight'], "--rate-limit must look like 180/min (a whole number from 1, per s, min or h), got '10/fortnight'"],
      [['--rate-limit', '10/s', '--burst', '0'], "--burst must be a whole number from 1, got '0'"],
      [['--burst', '5'], '--burst needs --rate-limit, e.g. --rate-limit 180/min --burst 20'],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['serve', ...args], env);
      expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 2, stderr: `Error: ${message}\n` });
    }
  });

  it('refuses an unusable token with exit 3, never showing it', async () => {
    const missing = join(dir, 'no-such-file');
    expect(await runCli(['serve', '--token-file', missing], env)).toMatchObject({
      code: 3,
      stderr: `Error: Cannot read the token file '${missing}' (ENOENT)\n`,
    });
    const file = join(dir, 'token');
    writeFileSync(file, '\n');
    expect((await runCli(['serve', '--token-file', file], env)).stderr).toBe(`Error: The token in the token file '${file}' is empty\n`);
    const spaced = await runCli(['serve'], { ...env, TRADE_SERVE_TOKEN: 'two secret-words' });
    expect(spaced).toEqual({
      code: 3,
      stdout: '',
      stderr:
        "Error: The token in TRADE_SERVE_TOKEN has spaces or characters outside visible ASCII\n  It must fit an 'Authorization: Bearer <token>' header unchanged.\n",
    });
  });

  it('a port in use is exit 2 with a hint', async () => {
    blocker = createNetServer();
    await new Promise<void>((resolve) => blocker!.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const result = await runCli(['serve', '--port', String(port)], { ...env, TRADE_SERVE_TOKEN: 'some-token' });
    expect(result).toEqual({
      code: 2,
      stdout: '',
      stderr: `Error: Cannot listen on 127.0.0.1:${port}: the address is in use\n  Choose another --port, or --port 0 for any free one.\n`,
    });
  });

  it('is in the help, with examples, and `trade --help` does not load the server', async () => {
    const help = await runCli(['--help'], env);
    // The summary may wrap at the help's width (as test/cli/__snapshots__/help.test.ts.snap shows it).
    // The program's list names each command with its arguments only (issue 33's grouped help).
    expect(help.stdout).toMatch(/\n {2}serve +Serve the service's API over the embedded\s+engine\n/);
    const serveHelp = await runCli(['serve', '--help'], env);
    for (const flag of ['--host <host>', '--port <port>', '--token-file <file>', '--rate-limit <rate>', '--burst <n>', '--log'])
      expect(serveHelp.stdout).toContain(flag);
    expect(serveHelp.stdout).toContain('$ trade serve --token-file ~/.trade-token --rate-limit 180/min --burst 20');
    // In the CLI bundle (esbuild's metafile, scripts/build.js), the command tree (src/cli/tree/)
    // imports the serve command only from its run function, dynamically, and only server modules
    // import fastify.
    const meta = JSON.parse(readFileSync(join(BIN, '..', '..', 'dist', 'cli.meta.json'), 'utf8')) as {
      inputs: Record<string, { imports: Array<{ path: string; kind: string }> }>;
    };
    const importersOf = (target: string) =>
      Object.entries(meta.inputs).flatMap(([from, input]) => input.imports.filter((i) => i.path === target).map((i) => `${from} ${i.kind}`));
    expect(importersOf('src/cli/commands/serve.ts')).toEqual(['src/cli/tree/testing.ts dynamic-import']);
    expect(importersOf('fastify').every((i) => i.startsWith('src/server/'))).toBe(true);
    expect(importersOf('fastify')).not.toEqual([]);
  });
});
