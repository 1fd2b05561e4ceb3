/**
 * `trade mcp` as a real child process of the built bin, driven by the MCP SDK's own client over a
 * stdio transport of the SDK's own framing (ReadBuffer, serializeMessage); the process is started
 * through test/helpers/spawn.ts, so all it prints is in the secrets scan's record.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { CallToolResult, JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { BIN } from '../helpers/cli.js';
import { type RecordedChild, spawnRecorded } from '../helpers/spawn.js';

/** The SDK's StdioClientTransport, as far as these tests use it, on a recorded process. */
class RecordedStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  child?: RecordedChild;
  private readonly buffer = new ReadBuffer();

  constructor(private readonly args: string[], private readonly env: Record<string, string>) {}

  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      // The SDK's own default environment (HOME, PATH, ...) under the test's.
      const child = spawnRecorded(process.execPath, this.args, { env: { ...getDefaultEnvironment(), ...this.env }, stdio: ['pipe', 'pipe', 'pipe'] });
      this.child = child;
      child.on('error', (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on('spawn', () => resolve());
      child.on('close', () => this.onclose?.());
      child.stdin!.on('error', (error) => this.onerror?.(error));
      child.stdout.on('data', (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (let message = this.buffer.readMessage(); message !== null; message = this.buffer.readMessage()) this.onmessage?.(message);
      });
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.child!.stdin!.write(serializeMessage(message))) resolve();
      else this.child!.stdin!.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const closed = new Promise((resolve) => child.once('close', resolve));
    // As the SDK does: end stdin, then a signal if the server does not go.
    child.stdin!.end();
    const timer = setTimeout(() => child.kill('SIGTERM'), 2000);
    await closed;
    clearTimeout(timer);
  }
}

export interface McpSession {
  client: Client;
  /** Every message the server sent, as JSON text, and everything it wrote to stderr. */
  seen(): string;
  stderr(): string;
  close(): Promise<void>;
}

const open = new Set<McpSession>();

/** Starts `trade mcp ARGS` over stdio with env (and PATH only besides), connected and initialized. */
export async function startMcp(args: string[], env: Env): Promise<McpSession> {
  const transport = new RecordedStdioTransport([BIN, ...args], { PATH: process.env.PATH ?? '', ...env } as Record<string, string>);
  let stderr = '';
  const messages: string[] = [];
  const client = new Client({ name: 'trade-test', version: '1.0.0' });
  // Every message the server sends, recorded before the client reads it; stderr as it comes.
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const read = transport.onmessage!;
    transport.onmessage = (message) => {
      messages.push(JSON.stringify(message));
      read(message);
    };
    await start();
    transport.child!.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  };
  try {
    await client.connect(transport);
  } catch (error) {
    throw new Error(`trade mcp did not start: ${(error as Error).message}\n${stderr}`);
  }
  const session: McpSession = {
    client,
    seen: () => `${messages.join('\n')}\n${stderr}`,
    stderr: () => stderr,
    async close() {
      open.delete(session);
      await client.close();
    },
  };
  open.add(session);
  return session;
}

/** Closes every session still open (for afterEach). */
export async function closeAll(): Promise<void> {
  await Promise.all([...open].map((s) => s.close()));
}

export async function call(session: McpSession, name: string, args: Record<string, unknown> = {}): Promise<CallToolResult> {
  return (await session.client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The text of a result's one content item. */
export function textOf(result: CallToolResult): string {
  expect(result.content).toHaveLength(1);
  const item = result.content[0]!;
  if (item.type !== 'text') throw new Error(`content is ${item.type}, not text`);
  return item.text;
}
