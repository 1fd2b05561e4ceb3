/** `trade mcp` as a real child process of the built bin, driven by the MCP SDK's own client. */
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { expect } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { BIN } from '../helpers/cli.js';

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
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    env: { PATH: process.env.PATH ?? '', ...env } as Record<string, string>,
    stderr: 'pipe',
  });
  let stderr = '';
  (transport.stderr as Readable).setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const messages: string[] = [];
  const client = new Client({ name: 'trade-test', version: '1.0.0' });
  // Every message the server sends, recorded before the client reads it.
  const start = transport.start.bind(transport);
  transport.start = async () => {
    const read = transport.onmessage!;
    transport.onmessage = (message) => {
      messages.push(JSON.stringify(message));
      read(message);
    };
    await start();
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
