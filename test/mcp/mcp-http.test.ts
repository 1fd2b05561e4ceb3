/**
 * `trade mcp --http PORT`: the streamable HTTP transport of the built bin on 127.0.0.1 only, an MCP
 * token of its own required (never the service token), Host and Origin checked, requests bounded
 * in size and number; driven by the MCP SDK's own HTTP client and by plain requests. The service
 * token appears in no byte the server writes: answers, log lines, the journal.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { OPERATION_NAMES } from '../../src/service/operations.js';
import { BIN, runBin, tempHome } from '../helpers/cli.js';
import { leaks } from '../helpers/token-forms.js';
import { spawnRecorded } from '../helpers/spawn.js';

/** The profile's service token: configured, and refused on this door. */
const SERVICE = 'mcp-http-service-token-3e8b1f07c6a4';
const LISTENING = /serving on http:\/\/127\.0\.0\.1:(\d+)\/mcp/;
const ORDER = { instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

let dir: { env: Env; cleanup: () => void };
let env: Env;
let child: ChildProcess;
let port: number;
let token: string;
let output = '';
const bodies: string[] = [];

async function makeToken(...flags: string[]): Promise<string> {
  const made = await runBin(['mcp', 'token', '--json', ...flags], env);
  expect(made.code, made.stderr).toBe(0);
  return (JSON.parse(made.stdout) as { token: string }).token;
}

beforeAll(async () => {
  dir = tempHome();
  env = { ...dir.env, TRADE_TOKEN: SERVICE };
  expect((await runBin(['price', 'set', 'ES 09-25', '4500'], env)).code).toBe(0);
  token = await makeToken();
  child = spawnRecorded(process.execPath, [BIN, 'mcp', '--tier', 'paper', '--http', '0', '--account', 'Sim101'], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
  port = await new Promise<number>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      output += d;
      const match = LISTENING.exec(output);
      if (match) resolve(Number(match[1]));
    });
    child.on('close', (code) => reject(new Error(`trade mcp exited (${code}):\n${output}`)));
  });
});
afterAll(async () => {
  if (child.exitCode === null) {
    const closed = new Promise((resolve) => child.on('close', resolve));
    child.kill('SIGTERM');
    await closed;
  }
  dir.cleanup();
});

interface Sent {
  host?: string;
  headers?: Record<string, string>;
  method?: string;
  body?: unknown;
  raw?: string;
  address?: string;
}

/** A raw request to the server: status, headers and body. */
function send(options: Sent) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request(
      {
        host: options.address ?? '127.0.0.1',
        port,
        path: '/mcp',
        method: options.method ?? 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          ...(options.host ? { Host: options.host } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () => {
          bodies.push(body);
          resolve({ status: res.statusCode!, headers: res.headers, body });
        });
      },
    );
    req.on('error', reject);
    req.end(options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body)));
  });
}

const bearer = (value: string) => ({ Authorization: `Bearer ${value}` });
const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };
const toolCall = (name: string, args: unknown, id = 2) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

async function sdkClient(value: string): Promise<Client> {
  const client = new Client({ name: 'trade-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: bearer(value) } }));
  return client;
}

async function history(): Promise<Array<{ source: string; outcome: string; rule: string | null }>> {
  return (JSON.parse((await runBin(['history', '--json'], env)).stdout) as { entries: never[] }).entries;
}

describe('trade mcp --http', () => {
  it('refuses a request without the MCP token, or with another one (401), before anything runs', async () => {
    const none = await send({ body: INITIALIZE });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    expect(JSON.parse(none.body)).toEqual({ error: 'invalid_token', error_description: 'An MCP token is required: Authorization: Bearer <the token trade mcp token made>' });
    const wrong = await send({ body: INITIALIZE, headers: bearer('trade_mcp_not-the-token') });
    expect(wrong.status).toBe(401);
    expect(JSON.parse(wrong.body).error_description).toBe('Invalid MCP token (rotated? trade mcp token --rotate makes a new one)');
    const basic = await send({ body: INITIALIZE, headers: { Authorization: `Basic ${Buffer.from(`x:${token}`).toString('base64')}` } });
    expect(basic.status).toBe(401);
    await expect(sdkClient('not-the-token')).rejects.toThrow();
  });

  it('refuses the service token with a 401 that says why, and says so on stderr', async () => {
    const refused = await send({ body: INITIALIZE, headers: bearer(SERVICE) });
    expect(refused.status).toBe(401);
    expect(JSON.parse(refused.body).error_description).toBe(
      "This is the profile's service token, which trade mcp refuses: an agent gets an MCP token of its own (trade mcp token), never the service token",
    );
    expect(refused.headers['www-authenticate']).toContain("error_description=\"This is the profile's service token");
    await expect(sdkClient(SERVICE)).rejects.toThrow();
    expect(output).toContain("trade mcp: refused a request that sent the profile's service token (401); give the agent the MCP token (trade mcp token)");
  });

  it('answers with the MCP token: the tools of the tier, GetQuote and PlaceOrder on embedded', async () => {
    const raw = await send({ body: INITIALIZE, headers: bearer(token) });
    expect(raw.status).toBe(200);
    expect(raw.body).toContain('"serverInfo":{"name":"trade"');
    const client = await sdkClient(token);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual([...OPERATION_NAMES, 'GuardStatus', 'Alert'].sort());
      const quote = (await client.callTool({ name: 'GetQuote', arguments: { instrument: 'ES 09-25' } })) as CallToolResult;
      expect(quote.structuredContent).toMatchObject({ instrument: 'ES 09-25', last: 4500, success: true });
      const placed = (await client.callTool({ name: 'PlaceOrder', arguments: ORDER })) as CallToolResult;
      expect(placed.isError).toBeFalsy();
      expect(placed.structuredContent).toMatchObject({ success: true, orderId: expect.any(String) });
    } finally {
      await client.close();
    }
    expect(await history()).toEqual([expect.objectContaining({ source: 'mcp', outcome: 'accepted' })]);
  });

  it('is bound to 127.0.0.1 only: another loopback address and ::1 are refused at connect', async () => {
    for (const address of ['127.0.0.2', '::1']) {
      const error = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
        const socket = connect({ host: address, port });
        socket.on('connect', () => {
          socket.destroy();
          resolve(undefined);
        });
        socket.on('error', resolve);
      });
      expect(error?.code, address).toMatch(/^(ECONNREFUSED|EADDRNOTAVAIL|ENETUNREACH)$/);
    }
  });

  it('refuses another Host (DNS rebinding) and a foreign Origin (a web page), token or not; its own are let in', async () => {
    for (const host of [`evil.example:${port}`, `127.0.0.1:${port + 1}`, 'localhost', `127.0.0.1.nip.io:${port}`]) {
      const rebound = await send({ body: INITIALIZE, host, headers: bearer(token) });
      expect(rebound.status, host).toBe(403);
      expect(JSON.parse(rebound.body).error.message).toBe(`Host refused: this server answers only 127.0.0.1:${port} and localhost:${port} (DNS rebinding protection)`);
    }
    for (const origin of ['http://evil.example', `http://localhost:${port + 1}`, 'null', `https://127.0.0.1:${port}`]) {
      const page = await send({ body: INITIALIZE, headers: { ...bearer(token), Origin: origin } });
      expect(page.status, origin).toBe(403);
      expect(JSON.parse(page.body).error.message).toBe(`Origin refused: a web page cannot call trade mcp; only http://127.0.0.1:${port} and http://localhost:${port} may`);
    }
    expect((await send({ body: INITIALIZE, host: `localhost:${port}`, headers: { ...bearer(token), Origin: `http://localhost:${port}` } })).status).toBe(200);
  });

  it('is stateless: GET (no event stream) is 405 with the token, 401 without', async () => {
    expect((await send({ method: 'GET', headers: bearer(token) })).status).toBe(405);
    expect((await send({ method: 'GET' })).status).toBe(401);
  });

  it('refuses a body over 256 KiB (413) and one that is not JSON (400); nothing is placed', async () => {
    const before = (await history()).length;
    const huge = await send({ body: toolCall('PlaceOrder', { ...ORDER, instrument: 'X'.repeat(300_000) }), headers: bearer(token) });
    expect(huge.status).toBe(413);
    expect(JSON.parse(huge.body).error.message).toBe('Request body too large: at most 262144 bytes');
    const broken = await send({ raw: '{"jsonrpc":"2.0",', headers: bearer(token) });
    expect(broken.status).toBe(400);
    expect(JSON.parse(broken.body).error).toEqual({ code: -32700, message: 'Parse error: the body is not JSON' });
    expect((await history()).length).toBe(before);
  });

  it('answers at most 16 requests at once (429 beyond), and the next one once a place is free', async () => {
    // Requests whose bodies never finish arriving hold their places.
    const sockets: Socket[] = [];
    for (let i = 0; i < 16; i++) {
      const socket = connect({ host: '127.0.0.1', port });
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.on('error', () => undefined);
      socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":`);
      sockets.push(socket);
    }
    // The server has read every one of them once an answer to a request sent after them comes back.
    let full: { status: number; headers: Record<string, unknown>; body: string } | undefined;
    for (let tries = 0; tries < 50 && full?.status !== 429; tries++) full = await send({ body: INITIALIZE, headers: bearer(token) });
    expect(full?.status).toBe(429);
    expect(full?.headers['retry-after']).toBe('1');
    expect(JSON.parse(full!.body).error.message).toBe('Too many requests at once (at most 16): try again');
    await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.once('close', resolve).destroy())));
    let next: { status: number } | undefined;
    for (let tries = 0; tries < 50 && next?.status !== 200; tries++) next = await send({ body: INITIALIZE, headers: bearer(token) });
    expect(next?.status).toBe(200);
  });

  it('rotates: the old token stops working at once, the new one works; revoked, none does', async () => {
    const old = token;
    token = await makeToken('--rotate');
    expect(token).not.toBe(old);
    expect(token).toMatch(/^trade_mcp_[A-Za-z0-9_-]{43}$/);
    const refused = await send({ body: INITIALIZE, headers: bearer(old) });
    expect(refused.status).toBe(401);
    expect((await send({ body: INITIALIZE, headers: bearer(token) })).status).toBe(200);
    // Kept as a hash, in a file of mode 0600: the token itself is nowhere on disk.
    const file = join(dir.env.TRADE_CONFIG_DIR!, 'mcp-tokens.json');
    expect(readFileSync(file, 'utf8')).not.toContain(token.slice('trade_mcp_'.length, 20));
    const revoked = await runBin(['mcp', 'token', '--revoke'], env);
    expect(revoked.stdout).toBe('The MCP token of profile default is revoked: trade mcp --http refuses it from now on.\n');
    const none = await send({ body: INITIALIZE, headers: bearer(token) });
    expect(none.status).toBe(401);
    expect(JSON.parse(none.body).error_description).toBe('Profile default has no MCP token (revoked?): trade mcp token makes one');
    token = await makeToken();
  });

  it('the service token appears in no byte it writes: answers, log lines and the journal, whatever an agent sends', async () => {
    const calls = [
      toolCall('GetAccount', { account: SERVICE }),
      toolCall('PlaceOrder', { ...ORDER, orderId: SERVICE.slice(0, 30) }),
      toolCall('PlaceOrder', { ...ORDER, account: SERVICE }),
      toolCall('GetQuote', { instrument: SERVICE }),
      toolCall('GuardStatus', {}),
    ];
    for (const body of calls) {
      const answered = await send({ body, headers: bearer(token) });
      expect(answered.status).toBe(200);
    }
    expect(bodies.join('\n')).toContain("an argument holds the profile's service token, which trade mcp never passes on");
    const journal = (await runBin(['history', '--json'], env)).stdout;
    const ledger = join(dir.env.TRADE_HOME!, 'guard.db');
    const files = [ledger, `${ledger}-wal`].map((f) => {
      try {
        return readFileSync(f).toString('latin1');
      } catch {
        return '';
      }
    });
    for (const text of [...bodies, output, journal, ...files]) expect(leaks(text, SERVICE)).toEqual([]);
  });

  it('without an MCP token, --http refuses to start (exit 3), though a service token is set', async () => {
    const h = tempHome();
    try {
      const result = await runBin(['mcp', '--http', '0'], { ...h.env, TRADE_TOKEN: SERVICE });
      expect(result.code).toBe(3);
      expect(result.stderr).toBe(
        'Error: trade mcp --http needs an MCP token of profile default: an agent sends it as Authorization: Bearer, never the service token\n' +
          '  Make one with trade mcp token (shown once), and give it to the agent. Nothing was started.\n',
      );
    } finally {
      h.cleanup();
    }
  });
});

describe('trade mcp token', () => {
  it('is shown once: a second one is refused (exit 2) unless --rotate; --rotate and --revoke go alone', async () => {
    const h = tempHome();
    try {
      const made = await runBin(['mcp', 'token'], h.env);
      expect(made.code).toBe(0);
      expect(made.stdout).toMatch(/^trade_mcp_[A-Za-z0-9_-]{43}\n$/);
      expect(made.stderr).toContain('MCP token made for profile default; it is shown only now');
      const again = await runBin(['mcp', 'token'], h.env);
      expect(again.code).toBe(2);
      expect(again.stdout).toBe('');
      expect(again.stderr).toMatch(/^Error: Profile default already has an MCP token \(made \d{4}-\d\d-\d\dT[\d:.]+Z\); it is not shown again\n/);
      expect((await runBin(['mcp', 'token', '--rotate', '--revoke'], h.env)).code).toBe(2);
      const mode = (await import('node:fs')).statSync(join(h.env.TRADE_CONFIG_DIR!, 'mcp-tokens.json')).mode & 0o777;
      expect(mode).toBe(0o600);
      expect((await runBin(['mcp', 'token', '--revoke', '--json'], h.env)).stdout).toBe('{"profile":"default","revoked":true,"success":true}\n');
      expect((await runBin(['mcp', 'token', '--revoke'], h.env)).stdout).toBe('Profile default has no MCP token.\n');
    } finally {
      h.cleanup();
    }
  });
});
