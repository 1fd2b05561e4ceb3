/**
 * Streams for a command: data to stdout, messages to stderr. Colour follows NO_COLOR and
 * FORCE_COLOR, and is off when the stream is not a terminal.
 */
import { Chalk, type ChalkInstance } from 'chalk';
import type { Env } from '../config/paths.js';

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
  /** Colours for stdout and for stderr, each decided by its own stream. */
  color: ChalkInstance;
  errColor: ChalkInstance;
}

export function colorLevel(env: Env, stream: OutputStream): 0 | 1 | 2 | 3 {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === '0' || force === 'false') return 0;
    if (force === '2' || force === '3') return Number(force) as 2 | 3;
    return 1;
  }
  if (!stream.isTTY || env.TERM === 'dumb') return 0;
  return 1;
}

export function createIo(streams: { stdin: InputStream; stdout: OutputStream; stderr: OutputStream }, env: Env): Io {
  return {
    ...streams,
    out: (line = '') => void streams.stdout.write(`${line}\n`),
    err: (line = '') => void streams.stderr.write(`${line}\n`),
    color: new Chalk({ level: colorLevel(env, streams.stdout) }),
    errColor: new Chalk({ level: colorLevel(env, streams.stderr) }),
  };
}

/** Left-aligned columns with two spaces between them; a header row first. */
export function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}
