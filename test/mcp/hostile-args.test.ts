/**
 * Hostile tool arguments on `trade mcp` (issue 31), sent as raw JSON-RPC lines on stdio, as any
 * client could write them (the SDK's own client would clean some up first): wrong types, huge
 * strings and arrays, `__proto__` and `constructor` keys, unknown fields, a tool outside the tier.
 * Each is answered with a short, clear error, and the store, the guard's ledger and its journal
 * are byte for byte as they were.
 */
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/config/paths.js';
import { BIN, runBin, tempHome } from '../helpers/cli.js';
import { spawnRecorded } from '../helpers/spawn.js';

const ORDER = { instrument: 'ES 09-25', action: 'BUY', quantity: 1, orderType: 'MARKET', timeInForce: 'DAY' };

let dir: { env: Env; cleanup: () => void };

interface RawMcp {
  /** Sends one JSON-RPC line as written (a `__proto__` key stays a key) and waits for its answer. */
  rpc(line: string | Record<string, unknown>): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

/** `trade mcp --tier TIER` on stdio, spoken to in raw lines. */
async function startRaw(tier: string): Promise<RawMcp> {
  const child = spawnRecorded(process.execPath, [BIN, 'mcp', '--tier', tier, '--account', 'Sim101'], { env: { PATH: process.env.PATH, ...dir.env } }) as ChildProcessWithoutNullStreams;
  const waiting = new Map<number, (answer: Record<string, unknown>) => void>();
  let nextId = 1;
  let buffer = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    buffer += d;
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const message = JSON.parse(buffer.slice(0, nl)) as { id?: number } & Record<string, unknown>;
      buffer = buffer.slice(nl + 1);
      if (typeof message.id === 'number') waiting.get(message.id)?.(message);
    }
  });
  const rpc = (line: string | Record<string, unknown>) => {
    const id = nextId++;
    const text = typeof line === 'string' ? line.replace('"id":0', `"id":${id}`) : JSON.stringify({ jsonrpc: '2.0', id, ...line });
    return new Promise<Record<string, unknown>>((resolve) => {
      waiting.set(id, resolve);
      child.stdin.write(`${text}\n`);
    });
  };
  await rpc({ method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } } });
  child.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  return {
    rpc,
    async close() {
      child.stdin.end();
      await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.once('close', resolve)));
    },
  };
}

let paper: RawMcp;
let read: RawMcp;

const callLine = (name: string, argumentsJson: string) => `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"${name}","arguments":${argumentsJson}}}`;

/** Every row of every table of a SQLite file (and its WAL's effect): "changed nothing" is equality. */
function dump(file: string): Record<string, unknown[]> {
  if (!existsSync(file)) return {};
  const db = new Database(file, { readonly: true });
  try {
    const tables = db.prepare<[], { name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    return Object.fromEntries(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}"`).all()]));
  } finally {
    db.close();
  }
}

const stateOf = () => ({ store: dump(join(dir.env.TRADE_HOME!, 'trade.db')), ledger: dump(join(dir.env.TRADE_HOME!, 'guard.db')) });

beforeAll(async () => {
  dir = tempHome();
  expect((await runBin(['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'], dir.env)).code).toBe(0);
  [paper, read] = await Promise.all([startRaw('paper'), startRaw('read')]);
});
afterAll(async () => {
  await Promise.all([paper.close(), read.close()]);
  dir.cleanup();
});

/** The tool error's text; fails when the call was not a tool error. */
function toolError(answer: Record<string, unknown>): string {
  const result = answer.result as { isError?: boolean; content: Array<{ text: string }> } | undefined;
  expect(result?.isError, JSON.stringify(answer).slice(0, 300)).toBe(true);
  return result!.content[0]!.text;
}

describe('hostile tool arguments', () => {
  const cases: Array<[string, string, string, string]> = [
    ['wrong types', 'PlaceOrder', '{"account":123,"instrument":["ES 09-25"],"action":"BUY","quantity":"1","orderType":"MARKET","timeInForce":"DAY"}', "Invalid request: account: must be a account name, got 123; instrument: must be a string like 'ES 09-25', got an array; quantity: must be a whole number, got '1'"],
    ['a huge string', 'PlaceOrder', JSON.stringify({ ...ORDER, instrument: 'X'.repeat(2_000_000) }), "Invalid request: instrument: must be <SYMBOL> <MM-YY> (e.g. 'ES 09-25'), or ES, ES1!, ESH26, ESH6, ES MAR26; got 'XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX...'"],
    ['a huge account', 'Flatten', JSON.stringify({ account: 'A'.repeat(500_000) }), 'Invalid request: account: must be at most 64 characters'],
    ['a huge array', 'PlaceOrder', JSON.stringify({ ...ORDER, extra: Array(200_000).fill('x') }), 'Invalid request: extra: is not a known field'],
    ['a huge array as a value', 'GetQuote', JSON.stringify({ instrument: Array(200_000).fill('ES 09-25') }), 'Invalid request: instrument: must be an instrument or a comma list of them, got an array'],
    ['a __proto__ key', 'PlaceOrder', `{"instrument":"ES 09-25","action":"BUY","orderType":"MARKET","timeInForce":"DAY","__proto__":{"quantity":500}}`, 'Invalid request: __proto__: is not a known field'],
    ['a __proto__ key beside every field', 'PlaceOrder', `{"instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY","__proto__":{"account":"Other"}}`, 'Invalid request: __proto__: is not a known field'],
    ['a __proto__ key one level down', 'Flatten', '{"account":{"__proto__":{"length":1}}}', 'Invalid request: __proto__: is not a known field'],
    ['a constructor key', 'PlaceOrder', `{"instrument":"ES 09-25","action":"BUY","quantity":1,"orderType":"MARKET","timeInForce":"DAY","constructor":{"prototype":{"polluted":true}}}`, 'Invalid request: constructor: is not a known field'],
    ['an unknown field', 'PlaceOrder', JSON.stringify({ ...ORDER, qty: 5 }), 'Invalid request: qty: is not a known field'],
    ['a thousand unknown fields', 'GetQuote', JSON.stringify(Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`f${i}`, i]))), 'Invalid request: instrument: is required; f0: is not a known field; f1: is not a known field; f2: is not a known field; f3: is not a known field; f4: is not a known field; f5: is not a known field; f6: is not a known field; f7: is not a known field; f8: is not a known field; and 991 more'],
  ];

  it.each(cases)('%s: a short, clear error; nothing changed', async (_what, tool, args, message) => {
    const before = stateOf();
    const text = toolError(await paper.rpc(callLine(tool, args)));
    expect(text).toBe(message);
    expect(text.length).toBeLessThan(600);
    expect(stateOf()).toEqual(before);
  });

  it('a tool outside the tier is a tool that does not exist; nothing changed, nothing journaled', async () => {
    const before = stateOf();
    for (const [tool, args] of [
      ['PlaceOrder', JSON.stringify({ ...ORDER, account: 'Sim101' })],
      ['FlattenEverything', '{}'],
      ['__proto__', '{}'],
      ['constructor', '{}'],
    ] as const) {
      const answer = await read.rpc(callLine(tool, args));
      expect(answer.error, tool).toEqual({ code: -32602, message: `MCP error -32602: Tool ${tool} not found` });
    }
    expect(stateOf()).toEqual(before);
    expect(before.ledger.journal).toHaveLength(1);
  });

  it('the servers are still answering', async () => {
    expect(((await read.rpc(callLine('GetQuote', '{"instrument":"ES 09-25"}'))).result as { isError?: boolean }).isError).toBeFalsy();
    const answer = await paper.rpc(callLine('GetPosition', '{"instrument":"ES 09-25"}'));
    expect((answer.result as { structuredContent: unknown }).structuredContent).toMatchObject({ marketPosition: 'Long', quantity: 1 });
  });
});
