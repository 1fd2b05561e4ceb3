/**
 * run(argv, deps) → exit code. The only place that maps errors to exit codes; nothing else exits.
 */
import type { Env } from '../config/paths.js';
import { redact, stripInvisible } from '../config/redact.js';
import { CancelledError, ExitCode, GuardError, IncompleteError, RejectedError, TradeError, UsageError } from '../common/errors.js';
import { createContext, type ContextOptions } from './context.js';
import { createIo, type InputStream, type Io, type OutputStream } from './io.js';
import { VERSION } from '../common/version.js';
import { endWithCommand, leftForExit } from '../common/at-exit.js';
import { lazyOutput } from './stdio.js';

export interface CliDeps extends ContextOptions {
  stdin: InputStream;
  stdout: OutputStream;
  stderr: OutputStream;
  env: Env;
}

export async function run(argv: string[], deps: CliDeps): Promise<number> {
  // Every line any command writes, to stdout or stderr, goes through the redactor: whatever a
  // server echoes back, no form of a known secret (the token) is printed. Then the C1 controls and
  // bidi overrides a service may have sent are written as \u escapes: a table or a message has
  // none left (they are removed where it is made), and JSON (--json) reads back the same.
  const io = createIo(deps, deps.env, (text) => escapeC1(redact(text, ctx.secrets())));
  const ctx = createContext(io, deps.env, deps);
  // Scripts ask for the version often; it needs no command tree, so commander is not even loaded.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.out(VERSION);
    return ExitCode.ok;
  }
  try {
    const { buildProgram } = await import('./program.js');
    const program = buildProgram(ctx, io, argv);
    if (argv.length === 0) {
      program.outputHelp({ error: true });
      return ExitCode.usage;
    }
    const nested = helpTarget(program, argv);
    if (nested) {
      // `trade help price set`: commander's help command takes one name; the whole path is meant.
      nested.outputHelp();
      return ExitCode.ok;
    }
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
    return report(error, io, argv.includes('--json'));
  }
}

interface CommandNode {
  readonly commands: readonly CommandNode[];
  name(): string;
  aliases(): string[];
  outputHelp(): void;
}

/**
 * `trade help NAME...` for a command that does not exist is an error (exit 2) with the nearest
 * name, not the whole help as if nothing were wrong. A path of two names or more (`trade help
 * price set`) is the command whose help to show; one name goes on to commander's help.
 */
function helpTarget(program: CommandNode, argv: string[]): CommandNode | undefined {
  if (argv[0] !== 'help') return undefined;
  let node = program;
  for (const word of argv.slice(1)) {
    if (word.startsWith('-')) return undefined;
    const names = node.commands.filter((c) => c.name() !== 'help');
    const found = names.find((c) => c.name() === word || c.aliases().includes(word));
    if (!found) {
      const near = nearest(word, names.map((c) => c.name()));
      const where = node === program ? 'trade' : `trade ${argv.slice(1, argv.indexOf(word)).join(' ')}`;
      throw new UsageError(`Unknown command '${word}'${node === program ? '' : ` of ${where}`}${near ? ` (did you mean ${near}?)` : ''}`, {
        hint: `Run '${where} --help' for the commands there are.`,
      });
    }
    node = found;
  }
  return argv.length > 2 ? node : undefined;
}

/** The closest name, by edit distance (at most 2, or a prefix), or undefined. */
function nearest(word: string, names: string[]): string | undefined {
  const distance = (a: string, b: string): number => {
    const row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      let diagonal = row[0]!;
      row[0] = i;
      for (let j = 1; j <= b.length; j++) {
        const above = row[j]!;
        row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
        diagonal = above;
      }
    }
    return row[b.length]!;
  };
  const scored = names.map((name) => ({ name, d: name.startsWith(word) || word.startsWith(name) ? 1 : distance(word, name) }));
  const best = scored.filter((s) => s.d <= 2).sort((a, b) => a.d - b.d)[0];
  return best?.name;
}

/** Commander's own errors (usage, help shown), known by their code without loading commander. */
function isCommanderError(error: unknown): error is { exitCode: number; code: string } {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.startsWith('commander.') && typeof (error as { exitCode?: unknown }).exitCode === 'number';
}

/** C1 controls (U+0080-U+009F: 8-bit CSI and OSC among them) and bidi controls, as `\uXXXX`. */
const C1_AND_BIDI = /[\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
const escapeC1 = (text: string) => text.replace(C1_AND_BIDI, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

/**
 * A message as plain text, line by line: an error may carry what a service or a file said, and a
 * terminal escape in it must not drive the terminal (clear the screen, retitle the window).
 */
const plain = (text: string) => text.split('\n').map(stripInvisible).join('\n');

/** The error's report; io redacts it like every other line. */
function report(error: unknown, io: Io, json: boolean): number {
  if (isCommanderError(error)) {
    // Commander has already printed its message (or the help / version text).
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  if (error instanceof TradeError) {
    // A command that ends incomplete has already written its own results (a batch, a doctor report).
    // A refusal from the service is its body, whole (`{success:false, error, detail}` included).
    if (json && !(error instanceof IncompleteError)) io.out(JSON.stringify(error instanceof RejectedError || error instanceof GuardError ? error.body : { error: error.message }));
    // A person said no: not an error, just what happened.
    else if (error instanceof CancelledError) io.err(plain(error.message));
    else io.err(io.errColor.red(`Error: ${plain(error.message)}`));
    if (error.hint) io.err(`  ${plain(error.hint)}`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  if (json) io.out(JSON.stringify({ error: message }));
  io.err(io.errColor.red(`Unexpected error: ${plain(message)}`));
  return ExitCode.rejected;
}

/**
 * The bin's entry: real streams and environment; sets the exit code and lets Node exit. A command
 * that left SQLite connections for the end of the process (src/common/at-exit.ts: their logs are
 * synced, not checkpointed) ends it here, once what it wrote to stdout and stderr has gone out:
 * Node's own exit would close them, checkpointing each.
 */
export async function main(): Promise<void> {
  endWithCommand();
  const made: NodeJS.WriteStream[] = [];
  // A reader that has gone (`| head`, a supervisor that closed its pipe) loses the lines it would
  // have read; it must not kill the process: a `trade serve` keeps serving, a command keeps its
  // exit code.
  const opened = (stream: NodeJS.WriteStream) => {
    made.push(stream);
    return stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
  };
  process.exitCode = await run(process.argv.slice(2), {
    // Made on first use: Node builds process.stdin as a reader of its own (~3 ms), and a command
    // given all its flags never reads it; and stdout and stderr are Node's streams only once a
    // command needs more of them than lines written to a pipe or a file (stdio.ts).
    get stdin() {
      return process.stdin;
    },
    stdout: lazyOutput(1, () => opened(process.stdout)),
    stderr: lazyOutput(2, () => opened(process.stderr)),
    env: process.env,
  });
  if (leftForExit() === 0) return;
  // Lines written straight to a pipe or a file are out already; a stream's are once it calls back.
  await Promise.all(made.map((stream) => new Promise<void>((resolve) => stream.write('', () => resolve()))));
  process.exit();
}
