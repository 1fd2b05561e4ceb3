/**
 * `trade mcp --http PORT`: the streamable HTTP transport of the built bin on 127.0.0.1 only, the
 * configured token required, driven by the MCP SDK's own HTTP client and by plain requests.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { OPERATION_NAMES } from '../../src/service/operations.js';
import { BIN, runBin, tempHome } from '../helpers/cli.js';

const TOKEN = 'mcp-http-token-3e8b1f07c6a4';
const LISTENING = /serving on http:\/\/127\.0\.0\.1:(\d+)\/mcp/;

let dir: { env: Env; cleanup: () => void };
let child: ChildProcess;
let port: number;
let stderr = '';
const bodies: string[] = [];

beforeAll(async () => {
  dir = tempHome();
  const env: Env = { ...dir.env, TRADE_TOKEN: TOKEN };
  expect((await runBin(['price', 'set', 'ES 09-25', '4500'], env)).code).toBe(0);
  child = spawn(process.execPath, [BIN, 'mcp', '--tier', 'paper', '--http', '0', '--account', 'Sim101'], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  port = await new Promise<number>((resolve, reject) => {
    child.stderr!.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const match = LISTENING.exec(stderr);
      if (match) resolve(Number(match[1]));
    });
    child.on('close', (code) => reject(new Error(`trade mcp exited (${code}):\n${stderr}`)));
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

/** A raw request to the server: status, headers and body. */
function send(options: { host?: string; headers?: Record<string, string>; method?: string; body?: unknown; address?: string }) {
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
    req.end(options.body === undefined ? undefined : JSON.stringify(options.body));
  });
}

const INITIALIZE = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } } };

async function sdkClient(token: string): Promise<Client> {
  const client = new Client({ name: 'trade-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  return client;
}

describe('trade mcp --http', () => {
  it('refuses a request without the token, or with another one (401), before anything runs', async () => {
    const none = await send({ body: INITIALIZE });
    expect(none.status).toBe(401);
    expect(none.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
    const wrong = await send({ body: INITIALIZE, headers: { Authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    const basic = await send({ body: INITIALIZE, headers: { Authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString('base64')}` } });
    expect(basic.status).toBe(401);
    await expect(sdkClient('not-the-token')).rejects.toThrow();
  });

  it('answers with the token: the tools of the tier, GetQuote and PlaceOrder on embedded', async () => {
    const raw = await send({ body: INITIALIZE, headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(raw.status).toBe(200);
    expect(raw.body).toContain('"serverInfo":{"name":"trade"');

    const client = await sdkClient(TOKEN);
    try {
      const names = (await client.listTools()).tools.map((t) => t.name).sort();
      expect(names).toEqual([...OPERATION_NAMES, 'GuardStatus', 'Alert'].sort());
      const quote = (await client.callTool({ name: 'GetQuote', arguments: { instrument: 'ES 09-25' } })) as CallToolResult;
      expect(quote.structuredContent).toMatchObject({ instrument: 'ES 09-25', last: 4500, success: true });
      const placed = (await client.callTool({
        name: 'PlaceOrder',
        arguments: { instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' },
      })) as CallToolResult;
      expect(placed.isError).toBeFalsy();
      expect(placed.structuredContent).toMatchObject({ success: true, orderId: expect.any(String) });
      const echoed = (await client.callTool({ name: 'GetAccount', arguments: { account: TOKEN } })) as CallToolResult;
      expect(echoed.isError).toBe(true);
      expect(JSON.stringify(echoed)).toContain('[redacted]');
      expect(JSON.stringify(echoed)).not.toContain(TOKEN);
    } finally {
      await client.close();
    }
    const history = JSON.parse((await runBin(['history', '--json'], { ...dir.env, TRADE_TOKEN: TOKEN })).stdout) as { entries: Array<{ source: string; outcome: string }> };
    expect(history.entries).toEqual([expect.objectContaining({ source: 'mcp', outcome: 'accepted' })]);
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

  it('refuses a request for another host name (DNS rebinding), token or not', async () => {
    const rebound = await send({ body: INITIALIZE, host: `evil.example:${port}`, headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(rebound.status).toBe(403);
  });

  it('is stateless: GET (no event stream) is 405 with the token, 401 without', async () => {
    expect((await send({ method: 'GET', headers: { Authorization: `Bearer ${TOKEN}` } })).status).toBe(405);
    expect((await send({ method: 'GET' })).status).toBe(401);
  });

  it('the token appears in no answer and no log line', () => {
    expect(bodies.length).toBeGreaterThan(3);
    for (const text of [...bodies, stderr]) expect(text).not.toContain(TOKEN);
    expect(stderr).toContain("every request needs Authorization: Bearer <the profile's token>");
  });

  it('without a configured token, --http refuses to start (exit 3)', async () => {
    const h = tempHome();
    try {
      const result = await runBin(['mcp', '--http', '0'], h.env);
      expect(result.code).toBe(3);
      expect(result.stderr).toContain('trade mcp --http needs the configured token');
    } finally {
      h.cleanup();
    }
  });
});
