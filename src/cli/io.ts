/**
 * Streams for a command: data to stdout, messages to stderr. Colour follows NO_COLOR and
 * FORCE_COLOR, and is off when the stream is not a terminal. Tables are fitted to the terminal's
 * width only at a terminal: piped output is never cut.
 */
import { type ColorLevel, type Colors, createColors } from './colors.js';
import type { Env } from '../config/paths.js';
import { stripInvisible } from '../config/redact.js';

export interface OutputStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

export interface InputStream extends NodeJS.ReadableStream {
  isTTY?: boolean;
}

export interface Io {
  stdin: InputStream;
  stdout: OutputStream;
  stderr: OutputStream;
  /** One line of data to stdout. */
  out(line?: string): void;
  /** One line of message to stderr. */
  err(line?: string): void;
  /**
   * One line of data to stdout that a person asked to contain the token (`config get|list
   * --show-token`): the only line that is not redacted.
   */
  outSecret(line: string): void;
  /** Colours for stdout and for stderr, each decided by its own stream. */
  color: Colors;
  errColor: Colors;
  /** The width to fit tables to: set only when stdout is a terminal. */
  width?: number;
  /** The width messages wrap at: set only when stderr is a terminal. */
  errWidth?: number;
}

/**
 * NO_COLOR (no-color.org) wins; then FORCE_COLOR (force-color.org: 0 or false off, 2 or 3 more
 * colours, anything else on, even when piped); otherwise colour only at a terminal.
 * Either variable set to the empty string counts as unset.
 */
export function colorLevel(env: Env, stream: OutputStream): ColorLevel {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '') {
    if (force === '0' || force === 'false') return 0;
    if (force === '2' || force === '3') return Number(force) as 2 | 3;
    return 1;
  }
  if (!stream.isTTY || env.TERM === 'dumb') return 0;
  return 1;
}

function columnsFromEnv(env: Env): number | undefined {
  const n = Number(env.COLUMNS);
  return env.COLUMNS && Number.isInteger(n) && n > 0 ? n : undefined;
}

/** A terminal that does not say how wide it is is taken to be this wide. */
export const DEFAULT_WIDTH = 80;

/**
 * A terminal's width: COLUMNS when set (as `ls` and Python do), else the stream's own, else 80.
 * Undefined when the stream is not a terminal: piped output is never fitted.
 */
export function terminalWidth(stream: OutputStream, env: Env): number | undefined {
  if (!stream.isTTY) return undefined;
  return columnsFromEnv(env) ?? (stream.columns && stream.columns > 0 ? stream.columns : DEFAULT_WIDTH);
}

/** The width help text wraps at: the terminal's, else COLUMNS, else undefined (commander's 80). */
export function helpWidth(stream: OutputStream, env: Env): number | undefined {
  return terminalWidth(stream, env) ?? columnsFromEnv(env);
}

/**
 * Text broken into lines of at most `width` characters at spaces; a word longer than the width
 * gets a line of its own, whole (an id or a path is never cut). Without a width, one line.
 */
export function wrapWords(text: string, width: number | undefined): string[] {
  if (width === undefined || text.length <= width) return [text];
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/ +/)) {
    if (line === '') line = word;
    else if (line.length + 1 + word.length <= width) line += ` ${word}`;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/**
 * A stream whose text passes through `redact` on its way out; everything else (isTTY, columns,
 * events, cursor moves) is the stream's own.
 */
function redactingStream<T extends OutputStream>(stream: T, redact: (text: string) => string): T {
  return new Proxy(stream, {
    get(target, property) {
      if (property === 'write') {
        return (chunk: unknown, ...rest: unknown[]) => {
          const text = typeof chunk === 'string' ? chunk : chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : chunk;
          return (target.write as (...args: unknown[]) => unknown).call(target, typeof text === 'string' ? redact(text) : text, ...rest);
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * The command's streams. With `redact`, everything written to stdout and stderr (lines, tables,
 * JSON, prompts, help, progress) passes through it first: the one output sink of main's context.
 */
export function createIo(
  streams: { stdin: InputStream; stdout: OutputStream; stderr: OutputStream },
  env: Env,
  redact?: (text: string) => string,
): Io {
  const stdout = redact ? redactingStream(streams.stdout, redact) : streams.stdout;
  const stderr = redact ? redactingStream(streams.stderr, redact) : streams.stderr;
  return {
    // Read through, so that process.stdin is made only when a command reads it (main.ts).
    get stdin() {
      return streams.stdin;
    },
    stdout,
    stderr,
    out: (line = '') => void stdout.write(`${line}\n`),
    err: (line = '') => void stderr.write(`${line}\n`),
    outSecret: (line) => void streams.stdout.write(`${line}\n`),
    color: createColors(colorLevel(env, streams.stdout)),
    errColor: createColors(colorLevel(env, streams.stderr)),
    width: terminalWidth(streams.stdout, env),
    errWidth: terminalWidth(streams.stderr, env),
  };
}

export interface FittedTable {
  lines: string[];
  /** Columns left out to fit the width. */
  hidden: string[];
}

export interface TableOptions {
  /** Fit to this width; undefined never leaves anything out. */
  width?: number;
  /** Header names that may be left out to fit, the least needed first. */
  optional?: string[];
}

/**
 * Left-aligned columns with two spaces between them; a header row first. When the table is wider
 * than `width`, the optional columns are left out one by one until it fits; a table that still
 * does not fit is printed whole and the terminal wraps it. Cells are never cut, so an order id on
 * screen can always be copied. Every cell is plain text: its control characters and terminal
 * escape sequences are removed (a name a service sent must not drive the terminal, nor break the
 * columns), whatever the command put in it.
 */
export function fitTable(header: string[], given: string[][], options: TableOptions = {}): FittedTable {
  const rows = given.map((row) => row.map((cell) => stripInvisible(cell)));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  let shown = header.map((_, i) => i);
  const total = (columns: number[]) => columns.reduce((sum, i) => sum + widths[i]!, 0) + 2 * (columns.length - 1);
  const hidden: string[] = [];
  if (options.width !== undefined) {
    for (const name of options.optional ?? []) {
      if (total(shown) <= options.width) break;
      const index = header.indexOf(name);
      if (index < 0 || !shown.includes(index)) continue;
      shown = shown.filter((i) => i !== index);
      hidden.push(name);
    }
  }
  const line = (cells: string[]) =>
    shown
      .map((i, k) => (k === shown.length - 1 ? (cells[i] ?? '') : (cells[i] ?? '').padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return { lines: [line(header), ...rows.map(line)], hidden };
}

export function table(header: string[], rows: string[][]): string[] {
  return fitTable(header, rows).lines;
}

/** A space `note` does not break a line at. */
export const NO_BREAK = '\u00a0';

/** A message on stderr, wrapped at word boundaries to stderr's terminal width. */
export function note(io: Io, text: string): void {
  for (const line of wrapWords(text, io.errWidth)) io.err(io.errColor.dim(line.replaceAll(NO_BREAK, ' ')));
}

/** Writes a fitted table to stdout, and says on stderr which columns were left out. */
export function printTable(io: Io, fitted: FittedTable): void {
  for (const line of fitted.lines) io.out(line);
  // A column's name (ORDER ID) is kept on one line: its space does not break.
  const names = fitted.hidden.map((name) => name.replaceAll(' ', NO_BREAK)).join(', ');
  if (fitted.hidden.length > 0) note(io, `Not shown, to fit the terminal: ${names} (widen it, or use --json).`);
}
