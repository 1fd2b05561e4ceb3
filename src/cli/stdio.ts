/**
 * stdout and stderr for the bin, made only when a command needs more than a line written (issue
 * 34). Node builds process.stdout and process.stderr as streams on first use, which loads its
 * stream modules (and `net` for a pipe, `tty` for a terminal): about 5 ms of a `trade place` that
 * writes six lines to a pipe or a file. Until a command asks for anything else (a terminal's
 * width, cork, an event, a prompt), a line is written straight to the file descriptor, whole and
 * in order; from then on everything goes through Node's own stream, as before.
 */
import { fstatSync, statSync, writeSync } from 'node:fs';
import type { OutputStream } from './io.js';

/** Whether fd is certainly no terminal: a pipe, a file, a socket or /dev/null (node:tty costs ~5 ms). The bin has its own copy. */
export function notTerminal(fd: number): boolean {
  if (process.platform === 'win32') return false;
  try {
    const stat = fstatSync(fd);
    return !stat.isCharacterDevice() || stat.rdev === statSync('/dev/null').rdev;
  } catch {
    return false;
  }
}

type Write = (fd: number, data: Uint8Array) => number;

/**
 * Writes `data` to fd whole; returns what is left for the stream to write when the descriptor
 * cannot take it now (EAGAIN: a full non-blocking pipe) or fails otherwise (the stream then meets
 * the same error and reports it as it always has), or undefined once it is all written. A reader
 * that has gone (EPIPE) loses it, as main's handler of the stream's error says.
 */
export function writeWhole(fd: number, data: Uint8Array, write: Write = writeSync): Uint8Array | undefined {
  let rest = data;
  while (rest.length > 0) {
    try {
      rest = rest.subarray(write(fd, rest));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EPIPE') return undefined;
      return rest;
    }
  }
  return undefined;
}

/**
 * fd 1 or 2 as an OutputStream: `write` goes straight to the descriptor, `isTTY` and `columns`
 * are read without the stream when the descriptor is no terminal; anything else, or a write the
 * descriptor cannot take, makes the stream (`open`), which serves every later call.
 */
export function lazyOutput(fd: number, open: () => NodeJS.WriteStream, write: Write = writeSync): OutputStream {
  let stream: NodeJS.WriteStream | undefined;
  let plain: boolean | undefined;
  const real = () => (stream ??= open());
  const isPlain = () => stream === undefined && (plain ??= notTerminal(fd));
  const direct = (chunk: string | Uint8Array, ...rest: unknown[]): boolean => {
    if (stream || !isPlain()) return (real().write as (...args: unknown[]) => boolean)(chunk, ...rest);
    const left = writeWhole(fd, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk, write);
    if (left) return real().write(left, ...(rest as [])) as boolean;
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    if (callback) process.nextTick(callback);
    return true;
  };
  return new Proxy({} as OutputStream, {
    get(_target, property) {
      if (property === 'write') return direct;
      // As Node's stream of a pipe or a file has them: neither is set.
      if ((property === 'isTTY' || property === 'columns') && isPlain()) return undefined;
      const target = real();
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
    set: (_target, property, value) => Reflect.set(real(), property, value),
    has: (_target, property) => property === 'write' || Reflect.has(real(), property),
  });
}
