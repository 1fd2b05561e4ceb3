/**
 * @inquirer/prompts bound to a command's streams: questions read stdin and draw on stderr, so
 * `--json` output on stdout stays clean while a person answers. Loaded only when a prompt is
 * really shown (context.ts imports this file on demand), never for flags-only runs or `--help`.
 * @inquirer/prompts is ES modules only: imported (src/common/import-esm.ts) when the prompter is made.
 */
import { Writable } from 'node:stream';
import { importEsm } from '../common/import-esm.js';
import { CancelledError } from '../common/errors.js';
import { wrapWords, type InputStream, type Io, type OutputStream } from './io.js';

export interface TextQuestion {
  message: string;
  /** Shown dimmed; Enter takes it, Backspace on an empty line clears it. */
  default?: string;
  /** Gets the trimmed answer; returns why it is refused, or undefined to accept it. */
  validate?: (value: string) => string | undefined;
}

export interface Choice<T extends string> {
  value: T;
  name?: string;
  /** Why the choice cannot be picked; shown beside it. */
  disabled?: string;
}

export interface SelectQuestion<T extends string> {
  message: string;
  choices: ReadonlyArray<Choice<T>>;
  default?: T;
}

export interface ConfirmQuestion {
  message: string;
  default: boolean;
}

/** What a command asks a person. Every method rejects with CancelledError on Ctrl-C. */
export interface Prompter {
  text(question: TextQuestion): Promise<string>;
  select<T extends string>(question: SelectQuestion<T>): Promise<T>;
  confirm(question: ConfirmQuestion): Promise<boolean>;
  /** Typed text shown as `*`, for the token. */
  secret(question: { message: string }): Promise<string>;
}

/**
 * Inquirer pipes its output into the stream it is given and ends that stream after each prompt.
 * Each prompt gets a fresh writable that forwards to stderr, so stderr itself is never ended.
 */
function promptOutput(stderr: OutputStream): Writable {
  const output = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, callback) {
      stderr.write(chunk.toString());
      callback();
    },
  });
  // Inquirer wraps lines at the terminal's width.
  return Object.defineProperties(output, {
    isTTY: { get: () => stderr.isTTY },
    columns: { get: () => stderr.columns },
  });
}

interface PromptContext {
  input: InputStream;
  output: Writable;
  signal: AbortSignal;
}

/**
 * Ctrl-C at an inquirer prompt rejects with ExitPromptError; the CLI calls that a cancel. Ctrl-D
 * on an empty line closes the prompt's readline, which pauses stdin but leaves the prompt waiting
 * forever, so stdin pausing while a question is open aborts it: also a cancel.
 */
async function cancellable<T>(io: Io, ask: (context: PromptContext) => Promise<T>): Promise<T> {
  const closed = new AbortController();
  const abort = () => closed.abort();
  io.stdin.on('pause', abort);
  try {
    return await ask({ input: io.stdin, output: promptOutput(io.stderr), signal: closed.signal });
  } catch (error) {
    if (error instanceof Error && (error.name === 'ExitPromptError' || error.name === 'AbortPromptError')) {
      throw new CancelledError();
    }
    throw error;
  } finally {
    io.stdin.off('pause', abort);
  }
}

/**
 * Why an answer is refused, wrapped at word boundaries to the terminal's width like the rest of
 * the output (inquirer would cut a long line mid-word); continuation lines line up under the
 * first, after inquirer's `> `. True: the answer is taken.
 */
function refusal(io: Io, why: string | undefined): string | true {
  if (why === undefined) return true;
  return wrapWords(why, io.errWidth === undefined ? undefined : Math.max(20, io.errWidth - 2)).join('\n  ');
}

export async function createPrompter(io: Io): Promise<Prompter> {
  const { confirm, input, password, select } = await importEsm<typeof import('@inquirer/prompts')>('@inquirer/prompts');
  return {
    text: (question) =>
      cancellable(io, async (context) => {
        const answer = await input(
          {
            message: question.message,
            default: question.default,
            validate: (value) => refusal(io, question.validate?.(value.trim())),
          },
          context,
        );
        return answer.trim();
      }),
    select: <T extends string>(question: SelectQuestion<T>) =>
      cancellable(io, (context) =>
        select<T>(
          {
            message: question.message,
            choices: question.choices.map((c) => ({
              value: c.value,
              name: c.name ?? c.value,
              // A blank choice ("none") is shown by its name once answered.
              short: c.value === '' ? (c.name ?? '') : c.value,
              disabled: c.disabled ?? false,
            })),
            default: question.default,
          },
          context,
        ),
      ),
    confirm: (question) => cancellable(io, (context) => confirm({ message: question.message, default: question.default }, context)),
    secret: (question) => cancellable(io, (context) => password({ message: question.message, mask: '*' }, context)),
  };
}
