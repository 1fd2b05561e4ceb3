/**
 * A person at a terminal, for tests. `runInTerminal` runs the CLI in-process with stdin and stderr
 * that claim to be TTYs, so the real inquirer prompts draw and read keys; `runInPty` runs the
 * built bin inside a real pseudo-terminal made by util-linux `script`. Both let a test wait for a
 * question before typing its answer, with bounded waits that fail with the screen so far.
 */
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { stripVTControlCharacters } from 'node:util';
import { run, type CliDeps } from '../../src/cli/main.js';
import type { Env } from '../../src/config/paths.js';
import { BIN, type CliResult } from './cli.js';
import { recordRun, secretsOf } from './run-log.js';
import { spawnRecorded } from './spawn.js';

/**
 * The screen a person would see after `raw` was written to a terminal: applies the few escape
 * sequences inquirer and readline use (cursor up/down/column, erase line, erase below) and drops
 * the rest (colours, cursor show/hide). Lines are not wrapped; trailing blanks are trimmed.
 */
export function renderScreen(raw: string): string {
  const lines: string[] = [''];
  let row = 0;
  let col = 0;
  const put = (text: string) => {
    const line = lines[row]!.padEnd(col);
    lines[row] = line.slice(0, col) + text + line.slice(col + text.length);
    col += text.length;
  };
  // eslint-disable-next-line no-control-regex
  const tokens = raw.match(/\x1b\[[0-9;?]*[A-Za-z]|\r|\n|[^\x1b\r\n]+/g) ?? [];
  for (const token of tokens) {
    if (token === '\r') col = 0;
    else if (token === '\n') {
      row += 1;
      col = 0;
      while (lines.length <= row) lines.push('');
    } else if (token.startsWith('\x1b[')) {
      const n = Number.parseInt(token.slice(2), 10);
      const count = Number.isNaN(n) ? 1 : n;
      switch (token.at(-1)) {
        case 'A': row = Math.max(0, row - count); break;
        case 'B': row += count; while (lines.length <= row) lines.push(''); break;
        case 'G': col = Math.max(0, count - 1); break;
        case 'K': lines[row] = token === '\x1b[2K' ? '' : lines[row]!.slice(0, col); break;
        case 'J': lines[row] = lines[row]!.slice(0, col); lines.length = row + 1; break;
        default: break; // colours, cursor visibility
      }
    } else put(token);
  }
  return lines.map((l) => l.trimEnd()).join('\n').replace(/\n+$/, '\n');
}

/** The answered questions inquirer leaves on the screen (`✔ Question answer`). */
export function answered(screen: string): string[] {
  return screen.split('\n').filter((line) => line.startsWith('✔ '));
}

export const KEY = { enter: '\r', down: '\x1b[B', up: '\x1b[A', backspace: '\x7f', ctrlC: '\x03', ctrlD: '\x04' } as const;

const WAIT_MS = 5_000;

/** What a test does at the terminal: wait for text on the screen, then type. */
export interface Terminal {
  /** Resolves once `text` appears after everything already waited for. */
  waitFor(text: string): Promise<void>;
  /** Types keys one at a time, as a person would. */
  type(...keys: string[]): Promise<void>;
  /** Waits for the question, then types the answer keys. */
  answer(question: string, ...keys: string[]): Promise<void>;
  /** Everything drawn so far, without escape sequences. */
  screen(): string;
}

function createTerminal(write: (keys: string) => void, events: EventEmitter, shown: () => string, ended: () => boolean): Terminal {
  let seen = 0;
  const terminal: Terminal = {
    screen: () => stripVTControlCharacters(shown()),
    waitFor: (text) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const at = terminal.screen().indexOf(text, seen);
          if (at >= 0) {
            seen = at + text.length;
            done();
            resolve();
          } else if (ended()) {
            done();
            reject(new Error(`the CLI ended before showing ${JSON.stringify(text)}; screen:\n${terminal.screen()}`));
          }
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${JSON.stringify(text)} did not appear within ${WAIT_MS} ms; screen:\n${terminal.screen()}`));
        }, WAIT_MS);
        const done = () => {
          clearTimeout(timer);
          events.off('change', check);
        };
        events.on('change', check);
        check();
      }),
    async type(...keys) {
      for (const key of keys) {
        write(key);
        // Let the prompt handle one key (and redraw) before the next.
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    async answer(question, ...keys) {
      await terminal.waitFor(question);
      await terminal.type(...keys);
    },
  };
  return terminal;
}

class TtyInput extends PassThrough {
  isTTY = true;
  isRaw = false;
  setRawMode(mode: boolean): this {
    this.isRaw = mode;
    return this;
  }
}

class TtyOutput extends EventEmitter {
  text = '';
  columns = 200;
  constructor(readonly isTTY: boolean) {
    super();
  }
  write(chunk: string): boolean {
    this.text += chunk;
    this.emit('change');
    return true;
  }
}

export interface TerminalRun extends CliResult {
  /** stderr as a person sees it at the end: answered prompts and messages. */
  screen: string;
}

/**
 * Runs the CLI in-process with terminal stdin and stderr (stdout stays a plain capture, as when
 * piping `--json`). `act` plays the person; the run's result is returned once both are done.
 */
export async function runInTerminal(
  argv: string[],
  env: Env,
  act: (terminal: Terminal) => Promise<void>,
  extra: Partial<CliDeps> & { stdinIsTTY?: boolean; stderrIsTTY?: boolean } = {},
): Promise<TerminalRun> {
  const stdin = new TtyInput();
  stdin.isTTY = extra.stdinIsTTY ?? true;
  const stderr = new TtyOutput(extra.stderrIsTTY ?? true);
  const stdout = new TtyOutput(false);
  let ended = false;
  const running = run(argv, { stdin, stdout, stderr, env, ...extra }).finally(() => {
    ended = true;
    stderr.emit('change');
  });
  const terminal = createTerminal((keys) => stdin.write(keys), stderr, () => stderr.text, () => ended);
  const [code] = await Promise.all([running, act(terminal)]);
  stdin.end();
  recordRun({ kind: 'cli', argv, secrets: secretsOf(argv, env), stdout: stdout.text, stderr: stderr.text });
  return { code, stdout: stdout.text, stderr: stderr.text, screen: renderScreen(stderr.text) };
}

/**
 * Runs the built bin in a real pseudo-terminal: `script` gives it a pty for stdin, stdout and
 * stderr, and copies what the test types (on script's stdin) to it. The screen mixes stdout and
 * stderr, as a terminal does.
 */
export async function runInPty(argv: string[], env: Env, act: (terminal: Terminal) => Promise<void>): Promise<{ code: number; screen: string; raw: string }> {
  const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const command = [process.execPath, BIN, ...argv].map(quote).join(' ');
  const child = spawnRecorded('script', ['-qfec', command, '/dev/null'], {
    env: { PATH: process.env.PATH, SHELL: '/bin/sh', TERM: 'xterm', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    record: { kind: 'bin', argv },
  });
  const events = new EventEmitter();
  let shown = '';
  let ended = false;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    shown += d;
    events.emit('change');
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    shown += d;
    events.emit('change');
  });
  const closed = new Promise<number>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      ended = true;
      events.emit('change');
      resolve(code ?? -1);
    });
  });
  const terminal = createTerminal((keys) => child.stdin!.write(keys), events, () => shown, () => ended);
  const killer = setTimeout(() => child.kill(), 20_000);
  try {
    await act(terminal);
    // script's stdin stays open until the command is done: closing it early would hang up the pty.
    const code = await closed;
    return { code, screen: renderScreen(shown), raw: shown };
  } finally {
    clearTimeout(killer);
    if (!ended) child.kill();
    child.stdin!.end();
  }
}
