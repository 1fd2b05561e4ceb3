/**
 * `trade batch`: NDJSON requests in the WebSocket RPC form (any operation of the table, by any
 * of its WebSocket names), sent through one backend over one connection with bounded
 * concurrency, one JSON result line per input line, in input order. Input is read and sent line
 * by line as it arrives, so a producer holding a pipe open gets each result before it writes
 * the next line. On a remote backend requests are paced to the service's budget, and a line
 * refused with 429 (nothing was executed) waits and is sent again.
 *
 * Every line gets exactly one result line, whatever fails (batch-results.ts). A refusal, a store
 * error or a crash in one line's handling is that line's result, and the next line is tried.
 * After a transport or authentication failure nothing more is sent: the lines in flight are
 * "unknown", the rest "not sent", so a script knows exactly which orders to check.
 */
import { open } from 'node:fs/promises';
import { createPacer, MIN_RETRY_MS, SERVICE_BURST, SERVICE_RATE } from '../../backends/pacer.js';
import type { Backend } from '../../backends/types.js';
import { ConfigError, formatIssues, IncompleteError, NetworkError, RateLimitedError, TradeError, UsageError } from '../../common/errors.js';
import { show } from '../../service/order.js';
import { isOperationName, operationForRpc, type OperationName, OPERATIONS, parseArgs } from '../../service/operations.js';
import { duplicateKeyIssues, parseStrictJson } from '../../service/strict-json.js';
import { type BatchResult, crashed, createTally, failure, notSent, refused, type Stop, type Tally } from '../batch-results.js';
import { using, type CommandContext } from '../context.js';
import { type InputLine, readLines } from '../ndjson.js';

export type { BatchResult } from '../batch-results.js';

export interface BatchOptions {
  concurrency?: string;
  rate?: string;
  progress?: boolean;
}

/** How often one line is sent again after 429s before it is reported as rate limited. */
export const MAX_RATE_RETRIES = 10;

type Parsed = { ok: true; name: OperationName; args: unknown; id: unknown } | { ok: false; id: unknown; error: string };

export function parseLine(raw: string): Parsed {
  const parsed = parseStrictJson(raw);
  if (!parsed.ok && parsed.invalid) return { ok: false, id: null, error: 'Invalid request: the line is not valid JSON' };
  const message = parsed.value;
  if (message === null || typeof message !== 'object' || Array.isArray(message))
    return { ok: false, id: null, error: `Invalid request: the line must be a JSON object, got ${show(message)}` };
  const { api, args, id = null, action, ...rest } = message as Record<string, unknown>;
  if (!parsed.ok) {
    // An id given twice names no line: which one would a script look for?
    const echoed = parsed.duplicates.some((path) => path.length === 1 && path[0] === 'id') ? null : id;
    return { ok: false, id: echoed, error: formatIssues(duplicateKeyIssues('line', parsed.duplicates)) };
  }
  const unknown = Object.keys(rest);
  if (unknown.length > 0) return { ok: false, id, error: `Invalid request: ${unknown[0]}: is not a known field` };
  if (action !== undefined && action !== 'rpc')
    return { ok: false, id, error: `Invalid request: action: must be 'rpc' when given, got ${show(action)}` };
  const name = typeof api === 'string' ? operationForRpc(api, (args ?? {}) as Record<string, unknown>) : undefined;
  if (name === undefined)
    return { ok: false, id, error: `Invalid request: api: must be one of ${Object.keys(OPERATIONS).join(', ')}, got ${show(api)}` };
  if (!isOperationName(name)) return { ok: false, id, error: name };
  // `args: null` is no args, as a null field is an absent one (service-reference.md §1.3).
  return { ok: true, name, args: args ?? {}, id };
}

export function parseConcurrency(raw: string | undefined, backend: Backend['name']): number {
  if (raw === undefined) return 64;
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

/** Where the lines come from: a file, or stdin ('-' or nothing), which must not be a terminal. */
async function openInput(ctx: CommandContext, file: string | undefined): Promise<{ source: AsyncIterable<Buffer | string>; close(): Promise<void> }> {
  if (file === undefined || file === '-') {
    if (ctx.io.stdin.isTTY)
      throw new UsageError('trade batch reads NDJSON from a file or a pipe, not from a terminal.', {
        hint: 'Run `trade batch orders.ndjson` or `producer | trade batch -`.',
      });
    return { source: ctx.io.stdin as AsyncIterable<Buffer | string>, close: async () => undefined };
  }
  // Opened before the backend, so a missing file is a usage error and nothing is opened or sent.
  const handle = await open(file, 'r').catch((error: NodeJS.ErrnoException) => {
    throw new UsageError(`Cannot read ${file}: ${error.code ?? error.message}`);
  });
  return { source: handle.createReadStream(), close: () => handle.close().catch(() => undefined) };
}

interface Progress {
  read(): void;
  increment(): void;
  stop(): void;
}

/** A bar on stderr; its total is the lines read so far, since a stream's length is not known ahead. */
async function startProgress(ctx: CommandContext): Promise<Progress> {
  const { default: cliProgress } = await import('cli-progress');
  const bar = new cliProgress.SingleBar(
    { stream: ctx.io.stderr as NodeJS.WritableStream, format: 'batch [{bar}] {value}/{total} lines', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  let total = 0;
  bar.start(0, 0);
  return { read: () => bar.setTotal(++total), increment: () => bar.increment(), stop: () => bar.stop() };
}

export async function runBatch(ctx: CommandContext, file: string | undefined, options: BatchOptions): Promise<void> {
  const input = await openInput(ctx, file);
  let backend: Backend;
  try {
    backend = await ctx.openBackend({ source: 'batch' });
  } catch (error) {
    await input.close();
    throw error;
  }
  const stop: Stop = {};
  const tally = createTally();
  try {
    await using(backend, async () => {
      const concurrency = parseConcurrency(options.concurrency, backend.name);
      const rate = parseRate(options.rate, backend.name);
      const progress = options.progress !== false && ctx.io.stderr.isTTY ? await startProgress(ctx) : undefined;
      try {
        await runLines(ctx, backend, readLines(input.source), { concurrency, rate, progress, stop, tally });
      } finally {
        progress?.stop();
      }
    });
  } finally {
    await input.close();
  }
  // An input that failed before its first line is a file that cannot be read (a directory, say).
  if (stop.readFailure && tally.lines === 0) throw new UsageError(`Cannot read ${file ?? 'stdin'}: ${stop.readFailure}`);
  const code = tally.exitCode(stop);
  if (code !== 0) throw new IncompleteError(tally.summary(stop), code);
  ctx.io.err(tally.summary(stop));
}

/** The results of blank lines: nothing is written for them (see flush). */
const blanks = new WeakSet<BatchResult>();
function blank(line: number): BatchResult {
  const result: BatchResult = { line, id: null, status: 200, data: null };
  blanks.add(result);
  return result;
}

interface RunState {
  concurrency: number;
  rate: number;
  progress?: Progress;
  stop: Stop;
  tally: Tally;
}

/**
 * The worker pool: each worker takes the next line as it is read, answers it, and the results
 * are written in input order. No worker reads more than `readAhead` lines past the first one not
 * yet written, so one slow line cannot make the answered lines after it pile up in memory.
 */
async function runLines(ctx: CommandContext, backend: Backend, lines: AsyncGenerator<InputLine>, state: RunState): Promise<void> {
  const { stop, tally, progress } = state;
  const pacer = createPacer(state.rate, SERVICE_BURST);
  const readAhead = 2 * state.concurrency;
  const done = new Map<number, BatchResult>();
  let read = 0;
  // On the embedded engine the lines run in their order: each one's call starts only after every
  // line before it has started (or was answered without one), and the calls that start together
  // share one commit (group commit). A remote service answers concurrent requests in any order.
  const turns = backend.name === 'embedded' ? createTurns() : undefined;
  const turnOf = new WeakMap<InputLine, number>();
  let waiting: Array<() => void> = [];
  /** The last line written (or skipped as blank), in input order. */
  let written = 0;

  // The result lines answered in one burst (the replies of one group commit) leave in one write:
  // stdout is corked at the first and uncorked once the burst's promise callbacks have run.
  const stdout = ctx.io.stdout as Partial<Pick<NodeJS.WriteStream, 'cork' | 'uncork'>>;
  let corked = false;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    stdout.uncork!();
  };
  const flush = () => {
    for (let result = done.get(written + 1); result; result = done.get(written + 1)) {
      done.delete(result.line);
      written = result.line;
      // A blank line asks for nothing: no result line, and it does not count as a line of the batch.
      if (blanks.has(result)) continue;
      if (!corked && stdout.cork && stdout.uncork) {
        corked = true;
        stdout.cork();
        process.nextTick(uncork);
      }
      ctx.io.out(JSON.stringify(result));
      tally.add(result);
    }
    const wake = waiting;
    waiting = [];
    for (const resolve of wake) resolve();
  };

  async function next(): Promise<InputLine | undefined> {
    while (read - written >= readAhead) await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      const item = await lines.next();
      if (item.done) return undefined;
      turnOf.set(item.value, read);
      read += 1;
      progress?.read();
      return item.value;
    } catch (error) {
      // The generator is finished after a throw: every worker's next read ends too.
      stop.readFailure ??= (error as NodeJS.ErrnoException).code ?? (error as Error).message;
      return undefined;
    }
  }

  /** One line's result; never throws, so no line can go without one. */
  async function answer(item: InputLine): Promise<BatchResult> {
    const turn = turnOf.get(item)!;
    let started = false;
    const start = () => {
      if (started) return;
      started = true;
      turns?.release(turn);
    };
    try {
      return await answerInTurn(item, turn, start);
    } finally {
      start();
    }
  }

  async function answerInTurn(item: InputLine, turn: number, start: () => void): Promise<BatchResult> {
    const line = item.number;
    if ('text' in item && item.text.trim() === '') return blank(line);
    if ('error' in item) return refused(line, null, item.status, item.error);
    let id: unknown = null;
    /** Whether the request was handed to the backend, and may have been executed. */
    let sent = false;
    let movesMoney = false;
    try {
      const parsed = parseLine(item.text);
      id = parsed.id;
      if (!parsed.ok) return refused(line, parsed.id, 400, parsed.error);
      movesMoney = OPERATIONS[parsed.name].movesMoney;
      const args = parseArgs(parsed.name, parsed.args, 'client');
      for (let attempt = 0; ; attempt++) {
        if (stop.broken) return notSent(line, id);
        await pacer.take();
        // Checked again after the wait, just before sending: a failure seen meanwhile stops it.
        if (stop.broken) return notSent(line, id);
        try {
          sent = true;
          if (turns) await turns.wait(turn);
          const pending = backend.call(parsed.name, args);
          start();
          const reply = await pending;
          return { line, id, status: 200, data: reply.body };
        } catch (error) {
          // §7.2: a 429 executed nothing; wait for Retry-After, or until the bucket would hold a
          // token and at least MIN_RETRY_MS, and send the same request again. Nothing else is.
          if (!(error instanceof RateLimitedError) || attempt >= MAX_RATE_RETRIES) throw error;
          sent = false;
          pacer.drain();
          const after = error.retryAfterSeconds === undefined ? 0 : error.retryAfterSeconds * 1000;
          await sleep(Math.max(after, MIN_RETRY_MS, pacer.waitMs()));
        }
      }
    } catch (error) {
      if (error instanceof TradeError) {
        // Lines that waited on one handshake share its one failure: the first line reports it,
        // the others were never written.
        if (error === stop.broken) return notSent(line, id);
        if (error instanceof NetworkError || error instanceof ConfigError) stop.broken ??= error;
        return failure(line, id, error);
      }
      return crashed(line, id, error, !sent ? 'not-sent' : movesMoney ? 'unknown' : undefined);
    }
  }

  async function worker(): Promise<void> {
    for (let item = await next(); item; item = await next()) {
      done.set(item.number, await answer(item));
      progress?.increment();
      flush();
    }
  }

  try {
    await Promise.all(Array.from({ length: state.concurrency }, worker));
    flush();
  } finally {
    uncork();
  }
}

/**
 * Turns 0, 1, 2, … taken in order: `wait(n)` resolves once every turn before n is released, and
 * each turn is released once (its call started, or it will make none).
 */
function createTurns(): { wait(turn: number): Promise<void>; release(turn: number): void } {
  let next = 0;
  const released = new Set<number>();
  const waiting = new Map<number, () => void>();
  return {
    wait(turn) {
      return turn === next ? Promise.resolve() : new Promise<void>((resolve) => waiting.set(turn, resolve));
    },
    release(turn) {
      released.add(turn);
      while (released.delete(next)) next++;
      const wake = waiting.get(next);
      if (wake) {
        waiting.delete(next);
        wake();
      }
    },
  };
}
