/**
 * `trade batch`: NDJSON requests in the WebSocket RPC form (any operation of the table, by any
 * of its WebSocket names), sent through one backend over one connection with bounded
 * concurrency, one JSON result line per input line, in input order. On a remote backend requests
 * are paced to the service's budget, and a line refused with 429 (nothing was executed) waits and
 * is sent again. After a transport failure nothing more is sent: the lines in flight are
 * "unknown", the rest "not sent", so a script knows exactly which orders to check.
 */
import { readFile } from 'node:fs/promises';
import { text } from 'node:stream/consumers';
import { createPacer, MIN_RETRY_MS, type Pacer, SERVICE_BURST, SERVICE_RATE } from '../../backends/pacer.js';
import type { Backend } from '../../backends/types.js';
import {
  ConfigError,
  ExitCode,
  IncompleteError,
  NetworkError,
  RateLimitedError,
  RejectedError,
  TradeError,
  UsageError,
  ValidationError,
} from '../../order/errors.js';
import { show } from '../../order/schema.js';
import { type ArgsOf, isOperationName, operationForRpc, type OperationName, OPERATIONS, parseArgs } from '../../service/operations.js';
import { using, type CommandContext } from '../context.js';

export interface BatchOptions {
  concurrency?: string;
  rate?: string;
  progress?: boolean;
}

/** How often one line is sent again after 429s before it is reported as rate limited. */
export const MAX_RATE_RETRIES = 10;

export interface BatchResult {
  line: number;
  id: unknown;
  status: number | null;
  /** The service's body, success or failure, exactly as it came. */
  data: unknown;
  /** Present only when the order's fate is not known from the reply. */
  outcome?: 'unknown' | 'not-sent';
}

type Parsed = { ok: true; name: OperationName; args: unknown; id: unknown } | { ok: false; id: unknown; error: string };

export function parseLine(raw: string): Parsed {
  let message: unknown;
  try {
    message = JSON.parse(raw);
  } catch {
    return { ok: false, id: null, error: 'Invalid request: the line is not valid JSON' };
  }
  if (message === null || typeof message !== 'object' || Array.isArray(message))
    return { ok: false, id: null, error: `Invalid request: the line must be a JSON object, got ${show(message)}` };
  const { api, args, id = null, action, ...rest } = message as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return { ok: false, id, error: `Invalid request: ${unknown[0]}: is not a known field` };
  if (action !== undefined && action !== 'rpc')
    return { ok: false, id, error: `Invalid request: action: must be 'rpc' when given, got ${show(action)}` };
  const name = typeof api === 'string' ? operationForRpc(api, (args ?? {}) as Record<string, unknown>) : undefined;
  if (name === undefined)
    return { ok: false, id, error: `Invalid request: api: must be one of ${Object.keys(OPERATIONS).join(', ')}, got ${show(api)}` };
  if (!isOperationName(name)) return { ok: false, id, error: name };
  return { ok: true, name, args, id };
}

function statusOf(error: TradeError): number | null {
  if (error instanceof ValidationError || error instanceof UsageError) return 400;
  if (error instanceof RejectedError) return error.status;
  if (error instanceof RateLimitedError) return 429;
  if (error instanceof ConfigError) return 401;
  return null;
}

function failure(line: number, id: unknown, error: unknown): BatchResult {
  if (!(error instanceof TradeError)) throw error;
  const data = error instanceof RejectedError ? error.body : { error: error.message };
  const result: BatchResult = { line, id, status: statusOf(error), data };
  if (error instanceof NetworkError) result.outcome = error.outcomeUnknown ? 'unknown' : 'not-sent';
  return result;
}

export function parseConcurrency(raw: string | undefined, backend: Backend['name']): number {
  if (raw === undefined) return backend === 'embedded' ? 1 : 64;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 1024)
    throw new UsageError(`--concurrency must be a whole number from 1 to 1024, got '${raw}'`);
  return n;
}

/** `--rate N` requests per second (0: no pacing); by default the service's 3/s on a remote backend. */
export function parseRate(raw: string | undefined, backend: Backend['name']): number {
  if (raw === undefined) return backend === 'embedded' ? 0 : SERVICE_RATE;
  const n = Number(raw);
  if (raw.trim() === '' || !Number.isFinite(n) || n < 0 || n > 100_000)
    throw new UsageError(`--rate must be a number of requests per second from 0 (no pacing) to 100000, got '${raw}'`);
  return n;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One request, paced; a 429 (nothing was executed, §7.2) waits for Retry-After, or until the
 * bucket would hold a token and at least MIN_RETRY_MS, and sends the same request again. No
 * other failure is ever sent again.
 */
async function paced<K extends OperationName>(backend: Backend, pacer: Pacer, name: K, args: ArgsOf<K>) {
  for (let attempt = 0; ; attempt++) {
    await pacer.take();
    try {
      return await backend.call(name, args);
    } catch (error) {
      if (!(error instanceof RateLimitedError) || attempt >= MAX_RATE_RETRIES) throw error;
      pacer.drain();
      const after = error.retryAfterSeconds === undefined ? 0 : error.retryAfterSeconds * 1000;
      await sleep(Math.max(after, MIN_RETRY_MS, pacer.waitMs()));
    }
  }
}

async function readInput(ctx: CommandContext, file: string | undefined): Promise<string[]> {
  let content: string;
  if (file === undefined || file === '-') {
    if (ctx.io.stdin.isTTY)
      throw new UsageError('trade batch reads NDJSON from a file or a pipe, not from a terminal.', {
        hint: 'Run `trade batch orders.ndjson` or `producer | trade batch -`.',
      });
    content = await text(ctx.io.stdin);
  } else {
    try {
      content = await readFile(file, 'utf8');
    } catch (error) {
      throw new UsageError(`Cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
  }
  const lines = content.split('\n');
  if (lines.at(-1) === '') lines.pop();
  return lines.map((l) => l.replace(/\r$/, ''));
}

interface Progress {
  increment(): void;
  stop(): void;
}

async function startProgress(ctx: CommandContext, total: number): Promise<Progress> {
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    { stream: ctx.io.stderr as NodeJS.WritableStream, format: 'batch [{bar}] {value}/{total} lines | {eta}s left', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return { increment: () => bar.increment(), stop: () => bar.stop() };
}

export async function runBatch(ctx: CommandContext, file: string | undefined, options: BatchOptions): Promise<void> {
  const lines = await readInput(ctx, file);
  const backend = await ctx.openBackend();
  const concurrency = parseConcurrency(options.concurrency, backend.name);
  const pacer = createPacer(parseRate(options.rate, backend.name), SERVICE_BURST);
  const progress = options.progress !== false && ctx.io.stderr.isTTY ? await startProgress(ctx, lines.length) : undefined;
  const results: Array<BatchResult | undefined> = new Array(lines.length);
  let written = 0;
  const flush = () => {
    while (written < results.length && results[written] !== undefined) ctx.io.out(JSON.stringify(results[written++]));
  };
  let broken: TradeError | undefined;
  let next = 0;

  async function handle(index: number): Promise<void> {
    const line = index + 1;
    const parsed = parseLine(lines[index]!);
    if (!parsed.ok) {
      results[index] = { line, id: parsed.id, status: 400, data: { error: parsed.error } };
      return;
    }
    try {
      const args = parseArgs(parsed.name, parsed.args, 'client');
      if (broken) throw broken;
      const reply = await paced(backend, pacer, parsed.name, args);
      results[index] = { line, id: parsed.id, status: 200, data: reply.body };
    } catch (error) {
      if (broken && error === broken) {
        results[index] = { line, id: parsed.id, status: null, data: { error: 'Not sent: an earlier request failed in transport' }, outcome: 'not-sent' };
        return;
      }
      const result = failure(line, parsed.id, error);
      if (error instanceof NetworkError || error instanceof ConfigError) broken ??= error;
      results[index] = result;
    }
  }

  async function worker(): Promise<void> {
    while (next < lines.length) {
      const index = next++;
      await handle(index);
      progress?.increment();
      flush();
    }
  }

  try {
    await using(backend, () => Promise.all(Array.from({ length: Math.min(concurrency, Math.max(lines.length, 1)) }, worker)));
  } finally {
    progress?.stop();
  }
  flush();
  const code = exitCode(results as BatchResult[], broken);
  if (code !== ExitCode.ok) throw new IncompleteError(summary(results as BatchResult[], broken), code);
}

function exitCode(results: BatchResult[], broken: TradeError | undefined): number {
  if (broken) return broken.exitCode;
  if (results.some((r) => r.status === 429)) return ExitCode.rateLimited;
  if (results.some((r) => r.status !== 200)) return ExitCode.rejected;
  return ExitCode.ok;
}

function summary(results: BatchResult[], broken: TradeError | undefined): string {
  const count = (f: (r: BatchResult) => boolean) => results.filter(f).length;
  const parts = [`${count((r) => r.status === 200)} succeeded`, `${count((r) => r.status !== null && r.status !== 200)} rejected`];
  const unknown = count((r) => r.outcome === 'unknown');
  const notSent = count((r) => r.outcome === 'not-sent');
  if (unknown) parts.push(`${unknown} outcome unknown (check with \`trade orders\`)`);
  if (notSent) parts.push(`${notSent} not sent`);
  const head = `Batch of ${results.length} lines: ${parts.join(', ')}.`;
  return broken ? `${head} Stopped after: ${broken.message}` : head;
}
