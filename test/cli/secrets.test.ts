/**
 * The token never leaks: many CLI invocations as real subprocesses, across commands and failure
 * modes, against a real `trade serve` subprocess with --log, a closed port and a server that never
 * answers, with the token from `login --token-stdin` or TRADE_TOKEN, a wrong one, --dry-run and
 * invalid orders. Every byte they print, and the server's log, is searched for the tokens. The
 * errors the remote backends throw are searched too, whole: message, hint, stack and causes.
 */
import type { ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type Server, type Socket } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpBackend } from '../../src/backends/http.js';
import { createWsBackend } from '../../src/backends/ws.js';
import type { Backend } from '../../src/backends/types.js';
import { maskToken } from '../../src/config/keys.js';
import type { Env } from '../../src/config/paths.js';
import { parseOrder } from '../../src/service/order.js';
import { BIN, orderArgs, runBin, tempHome, type CliResult } from '../helpers/cli.js';
import { SERVE_SECRET, WRONG_SECRET } from '../helpers/tokens.js';
import { closedPort } from '../helpers/ports.js';
import { spawnRecorded, spawnSyncRecorded } from '../helpers/spawn.js';

const SECRETS = [SERVE_SECRET, WRONG_SECRET];
const LISTENING = /^trade serve listening on (http:\/\/127\.0\.0\.1:\d+)$/m;

interface Serve {
  child: ChildProcess;
  url: string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** `trade serve --port 0 --log` as a subprocess of the built bin, with the token from TRADE_SERVE_TOKEN. */
function startServe(env: Env): Promise<Serve> {
  const argv = ['serve', '--port', '0', '--log'];
  const child = spawnRecorded(process.execPath, [BIN, ...argv], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'], record: { kind: 'serve' } });
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return new Promise((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const match = LISTENING.exec(stderr);
      if (match && stderr.includes('stops it.\n')) resolve({ child, url: match[1]!, stderr: () => stderr, exited });
    });
    void exited.then((code) => reject(new Error(`trade serve exited ${code}:\n${stderr}`)));
  });
}


let serve: Serve;
let blackHole: Server;
const held: Socket[] = [];
let blackHoleUrl: string;
let closedUrl: string;
const homes: Array<() => void> = [];

function home(): Env {
  const { env, cleanup } = tempHome();
  homes.push(cleanup);
  return env;
}

beforeAll(async () => {
  serve = await startServe({ ...home(), TRADE_SERVE_TOKEN: SERVE_SECRET });
  // Accepts connections and never answers: requests time out after they were sent.
  blackHole = createServer((socket) => held.push(socket.on('error', () => {})));
  await new Promise<void>((resolve) => blackHole.listen(0, '127.0.0.1', resolve));
  blackHoleUrl = `http://127.0.0.1:${(blackHole.address() as { port: number }).port}`;
  closedUrl = `http://127.0.0.1:${await closedPort()}`;
});

afterAll(async () => {
  if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  for (const socket of held) socket.destroy();
  await new Promise((resolve) => blackHole.close(resolve));
  for (const cleanup of homes) cleanup();
});

interface Case {
  argv: string[];
  env: Env;
  stdin?: string;
  /** The exit codes this run may end with (positions move as the other runs trade). */
  codes: number[];
}

/** Runs cases a few at a time (each is a whole Node process), in order of start; results in input order. */
async function runAll(cases: Case[], parallel = 4): Promise<Array<Case & CliResult>> {
  const results: Array<Case & CliResult> = new Array(cases.length);
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const i = next++;
      const c = cases[i]!;
      results[i] = { ...c, ...(await runBin(c.argv, c.env, c.stdin)) };
    }
  };
  await Promise.all(Array.from({ length: Math.min(parallel, cases.length) }, worker));
  return results;
}

function expectNoSecret(text: string, where: string): void {
  for (const secret of SECRETS) {
    if (text.includes(secret)) throw new Error(`${where} holds a token:\n${text}`);
  }
}

describe('the token in errors the remote backends throw', () => {
  /** Message, hint, stack, cause chain and every own property, as deep as util.inspect goes. */
  function everything(error: unknown): string {
    return `${inspect(error, { depth: 12, showHidden: true })}\n${(error as Error).stack}\n${inspect((error as Error).cause, { depth: 12, showHidden: true })}`;
  }

  const order = parseOrder({ account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' });

  it('connection refused, no answer, a refused token: over http and ws, nowhere in the error', async () => {
    const targets: Array<[string, string]> = [
      [closedUrl, SERVE_SECRET],
      [blackHoleUrl, SERVE_SECRET],
      [serve.url, WRONG_SECRET], // refused by the server: 401
    ];
    const backends: Backend[] = targets.flatMap(([url, token]) => [
      createHttpBackend({ baseUrl: url, token, timeoutMs: 500 }),
      createWsBackend({ wsUrl: `${url.replace('http', 'ws')}/ws/stream`, baseUrl: url, token, timeoutMs: 500 }),
    ]);
    const errors = await Promise.all(
      backends.flatMap((backend) =>
        [
          () => backend.call('PlaceOrder', order),
          () => backend.call('GetAllPositions', {}),
          () => backend.call('Cancel', { account: 'Sim101', orderId: 'f'.repeat(32) }),
        ].map((call) =>
          call().then(
            () => new Error(`${backend.label} answered`),
            (error: unknown) => ({ backend: backend.label, error }),
          ),
        ),
      ),
    );
    await Promise.all(backends.map((backend) => backend.close()));
    expect(errors).toHaveLength(18);
    for (const failure of errors) {
      if (failure instanceof Error) throw failure;
      expect(failure.error).toBeInstanceOf(Error);
      expectNoSecret(everything(failure.error), `an error of ${failure.backend}`);
    }
  });
});

describe('the token in CLI output', () => {
  it('never appears in stdout or stderr of any command, backend or failure, nor in the --log lines of trade serve', async () => {
    const ES = orderArgs();
    const NQ = orderArgs({ '--instrument': 'NQ 12-25' });
    // Logged in: the token comes from the config file.
    const loggedIn = home();
    // One after the other: two processes writing one config file at once, the last one wins.
    const login = await runAll(
      [
        { argv: ['login', '--token-stdin'], env: loggedIn, stdin: `${SERVE_SECRET}\n`, codes: [0] },
        { argv: ['config', 'set', 'base-url', serve.url], env: loggedIn, codes: [0] },
      ],
      1,
    );
    const http = { ...loggedIn, TRADE_BACKEND: 'http' };
    const ws = { ...loggedIn, TRADE_BACKEND: 'ws' };
    // From the environment, against the server, a closed port, a server that never answers, another host.
    const fromEnv = { ...home(), TRADE_TOKEN: SERVE_SECRET, TRADE_BASE_URL: serve.url };
    const wrong = { ...home(), TRADE_TOKEN: WRONG_SECRET, TRADE_BASE_URL: serve.url };
    const closed = { ...home(), TRADE_TOKEN: SERVE_SECRET, TRADE_BASE_URL: closedUrl };
    const silent = { ...home(), TRADE_TOKEN: SERVE_SECRET, TRADE_BASE_URL: blackHoleUrl, TRADE_TIMEOUT: '0.5' };
    const remote = { ...home(), TRADE_TOKEN: SERVE_SECRET, TRADE_BASE_URL: 'http://trading.example.com' };
    const batch = `${JSON.stringify({ id: 1, api: 'PlaceOrder', args: parseOrder({ account: 'Sim101', instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' }) })}\n{"id":2,"api":"PlaceOrder","args":{"account":"Sim101"}}\nnot json\n`;

    const cases: Case[] = [
      { argv: ['config', 'list'], env: loggedIn, codes: [0] },
      { argv: ['config', 'list', '--json'], env: fromEnv, codes: [0] },
      { argv: ['config', 'get', 'token'], env: loggedIn, codes: [0] },
      { argv: ['config', 'get', 'token', '--json'], env: fromEnv, codes: [0] },
      { argv: ['config', 'set', 'token', SERVE_SECRET], env: home(), codes: [2] },
      { argv: ['place', ...ES], env: http, codes: [0] },
      { argv: ['place', ...ES, '--json'], env: ws, codes: [0] },
      { argv: ['place', ...ES, '--dry-run'], env: http, codes: [0] },
      { argv: ['place', ...ES, '--dry-run', '--json'], env: ws, codes: [0] },
      { argv: ['reverse', ...orderArgs({ '--action': 'SELL' }), '--dry-run'], env: fromEnv, codes: [0] },
      { argv: ['--backend', 'http', 'reverse', ...orderArgs({ '--action': 'SELL' })], env: fromEnv, codes: [0, 1] },
      { argv: ['--backend', 'ws', 'reverse', ...NQ], env: fromEnv, codes: [1] },
      { argv: ['--backend', 'http', 'positions', '--json'], env: fromEnv, codes: [0] },
      { argv: ['positions'], env: ws, codes: [0] },
      { argv: ['orders', '--account', 'Sim101'], env: http, codes: [0] },
      { argv: ['cancel', 'f'.repeat(32), '--account', 'Sim101'], env: http, codes: [1] },
      { argv: ['cancel', 'f'.repeat(32), '--account', 'Sim101', '--json'], env: ws, codes: [1] },
      { argv: ['close', '--account', 'Sim101', '--instrument', 'NQ 12-25'], env: http, codes: [1] },
      { argv: ['close', '--account', 'Sim101', '--instrument', 'ES 09-25', '--json'], env: ws, codes: [0, 1] },
      { argv: ['batch', '--concurrency', '2'], env: http, stdin: batch, codes: [1] },
      { argv: ['batch'], env: ws, stdin: batch, codes: [1] },
      // Invalid orders: refused before anything is sent.
      { argv: ['place', ...orderArgs({ '--quantity': '0' })], env: http, codes: [2] },
      { argv: ['place', ...orderArgs({ '--instrument': 'ES 13-25', '--order-type': 'LIMIT' }), '--json'], env: ws, codes: [2] },
      { argv: ['place', ...ES, '--bogus-flag'], env: http, codes: [2] },
      // A wrong token, refused by the server over both transports.
      { argv: ['--backend', 'http', 'place', ...ES], env: wrong, codes: [3] },
      { argv: ['--backend', 'ws', 'place', ...ES, '--json'], env: wrong, codes: [3] },
      { argv: ['--backend', 'http', 'positions'], env: wrong, codes: [3] },
      // Nothing listening, nothing answering, and a host the token must not be sent to in clear.
      { argv: ['--backend', 'http', 'place', ...ES], env: closed, codes: [4] },
      { argv: ['--backend', 'ws', 'place', ...ES], env: closed, codes: [4] },
      { argv: ['--backend', 'http', 'place', ...ES, '--json'], env: silent, codes: [4] },
      { argv: ['--backend', 'ws', 'positions'], env: silent, codes: [4] },
      { argv: ['--backend', 'http', 'place', ...ES], env: remote, codes: [3] },
      // The embedded backend never needs the token, but has it in its environment.
      { argv: ['place', ...NQ, '--dry-run', '--json'], env: fromEnv, codes: [0] },
    ];
    const results = [...login, ...(await runAll(cases))];
    for (const r of results) {
      expect(r.codes, `trade ${r.argv.join(' ')} exited ${r.code}:\n${r.stderr}`).toContain(r.code);
      expectNoSecret(r.stdout, `stdout of trade ${r.argv.join(' ')}`);
      expectNoSecret(r.stderr, `stderr of trade ${r.argv.join(' ')}`);
    }
    // The masked form is what a person sees of it.
    expect(results.find((r) => r.argv.join(' ') === 'config get token')!.stdout).toBe(`${maskToken(SERVE_SECRET)}\n`);

    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const log = serve.stderr();
    expectNoSecret(log, 'the --log of trade serve');
    // The log saw the runs above: successes, refusals of the wrong token, the WebSocket.
    expect(log).toMatch(/ POST \/v1\/api\/accounts\/Sim101\/orders\/place 200 /);
    expect(log).toMatch(/ POST \/v1\/api\/accounts\/Sim101\/orders\/place 401 /);
    expect(log).toMatch(/ GET \/ws\/stream 101/);
    expect(log).toMatch(/ WS PlaceOrder id=\S+ 200 /);
  });
});


describe('the token at rest', () => {
  /** `trade login --token-stdin` under a umask that would leave new files world-readable. */
  function loginUnderUmask(env: Env, token: string) {
    const argv = ['login', '--token-stdin'];
    const result = spawnSyncRecorded('sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, BIN, ...argv], {
      env: { PATH: process.env.PATH, ...env },
      input: `${token}\n`,
      encoding: 'utf8',
    });
    return result;
  }

  const modes = (env: Env) => {
    const file = join(env.TRADE_CONFIG_DIR!, 'config.json');
    return { dir: statSync(env.TRADE_CONFIG_DIR!).mode & 0o777, file: statSync(file).mode & 0o777, text: readFileSync(file, 'utf8') };
  };

  it('is written to a 0600 file in a 0700 directory even under umask 000', () => {
    const env = home();
    const result = loginUnderUmask(env, SERVE_SECRET);
    expect(result.status).toBe(0);
    expect(modes(env)).toMatchObject({ dir: 0o700, file: 0o600 });
    expect(modes(env).text).toContain(SERVE_SECRET);
  });

  it('tightens a config directory and file that were left open (0777 and 0666) when it writes the token', () => {
    const env = home();
    mkdirSync(env.TRADE_CONFIG_DIR!, { recursive: true });
    chmodSync(env.TRADE_CONFIG_DIR!, 0o777);
    const file = join(env.TRADE_CONFIG_DIR!, 'config.json');
    writeFileSync(file, JSON.stringify({ profiles: { default: { account: 'Sim101' } } }));
    chmodSync(file, 0o666);
    expect(loginUnderUmask(env, SERVE_SECRET).status).toBe(0);
    expect(modes(env)).toMatchObject({ dir: 0o700, file: 0o600 });
    expect(JSON.parse(modes(env).text)).toEqual({ profiles: { default: { account: 'Sim101', token: SERVE_SECRET } } });
  });
});
