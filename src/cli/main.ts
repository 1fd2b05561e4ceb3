/**
 * run(argv, deps) → exit code. The only place that maps errors to exit codes; nothing else exits.
 */
import type { Env } from '../config/paths.js';
import { redact } from '../config/redact.js';
import { CancelledError, ExitCode, IncompleteError, RejectedError, TradeError } from '../order/errors.js';
import { createContext, type ContextOptions } from './context.js';
import { createIo, type InputStream, type Io, type OutputStream } from './io.js';
import { VERSION } from '../version.js';

export interface CliDeps extends ContextOptions {
  stdin: InputStream;
  stdout: OutputStream;
  stderr: OutputStream;
  env: Env;
}

export async function run(argv: string[], deps: CliDeps): Promise<number> {
  // Every line any command writes, to stdout or stderr, goes through the redactor: whatever a
  // server echoes back, no form of a known secret (the token) is printed.
  const io = createIo(deps, deps.env, (text) => redact(text, ctx.secrets()));
  const ctx = createContext(io, deps.env, deps);
  // Scripts ask for the version often; it needs no command tree, so commander is not even loaded.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.out(VERSION);
    return ExitCode.ok;
  }
  try {
    const { buildProgram } = await import('./program.js');
    const program = buildProgram(ctx, io);
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return ExitCode.usage;
    }
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
    return report(error, io, argv.includes('--json'));
  }
}

/** Commander's own errors (usage, help shown), known by their code without loading commander. */
function isCommanderError(error: unknown): error is { exitCode: number; code: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('commander.') && typeof (error as { exitCode?: unknown }).exitCode === 'number';
}

/** The error's report; io redacts it like every other line. */
function report(error: unknown, io: Io, json: boolean): number {
  if (isCommanderError(error)) {
    // Commander has already printed its message (or the help / version text).
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  if (error instanceof TradeError) {
    // A command that ends incomplete has already written its own results (a batch, a doctor report).
    // A refusal from the service is its body, whole (`{success:false, error, detail}` included).
    if (json && !(error instanceof IncompleteError)) io.out(JSON.stringify(error instanceof RejectedError ? error.body : { error: error.message }));
    // A person said no: not an error, just what happened.
    else if (error instanceof CancelledError) io.err(error.message);
    else io.err(io.errColor.red(`Error: ${error.message}`));
    if (error.hint) io.err(`  ${error.hint}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) io.out(JSON.stringify({ error: message }));
  io.err(io.errColor.red(`Unexpected error: ${message}`));
  return ExitCode.rejected;
}

/** The bin's entry: real streams and environment; sets the exit code and lets Node exit. */
export async function main(): Promise<void> {
  // A reader that has gone (`| head`, a supervisor that closed its pipe) loses the lines it would
  // have read; it must not kill the process: a `trade serve` keeps serving, a command keeps its
  // exit code.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  }
  process.exitCode = await run(process.argv.slice(2), {
    // Made on first use: Node builds process.stdin as a reader of its own (~3 ms), and a command
    // given all its flags never reads it.
    get stdin() {
      return process.stdin;
    },
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
  });
}
