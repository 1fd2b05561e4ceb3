/**
 * NDJSON lines from a stream, as they arrive: a line is handed on as soon as its newline is
 * read, so a producer that writes one request and waits for its result is answered (a pipe
 * held open is not read to its end first). Memory stays bounded by the line cap: an oversized
 * line is not kept, only counted and skipped up to its newline, and becomes that line's error;
 * the lines after it are read as usual.
 */

/** The longest line `trade batch` takes, in bytes, without its line ending. */
export const MAX_LINE_BYTES = 1024 * 1024;

export type InputLine =
  /** The line's text, its `\r\n` or `\n` removed. */
  | { number: number; text: string }
  /** A line refused before it is parsed: `status` as a server would answer it (413, 400). */
  | { number: number; status: number; error: string };

const NEWLINE = 0x0a;
const CR = 0x0d;

/** Lines of `source` (bytes or strings, e.g. a file stream or stdin), numbered from 1. */
export async function* readLines(source: AsyncIterable<Buffer | string>, maxBytes = MAX_LINE_BYTES): AsyncGenerator<InputLine> {
  // Fatal: a line that is not UTF-8 is refused, not read with replacement characters in it.
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let parts: Buffer[] = [];
  let size = 0;
  /** Set once the current line has passed the cap: its bytes are dropped up to its newline. */
  let oversized = false;
  /** Whether any byte of a line (its ending included) has been read since the last newline. */
  let started = false;
  let number = 0;

  const add = (part: Buffer) => {
    started ||= part.length > 0;
    if (oversized) return;
    // One byte of slack: a line of exactly maxBytes may still end in \r\n.
    if (size + part.length > maxBytes + 1) {
      oversized = true;
      parts = [];
      return;
    }
    parts.push(part);
    size += part.length;
  };

  const finish = (): InputLine => {
    number += 1;
    let bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
    if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, -1);
    const tooLong = oversized || bytes.length > maxBytes;
    parts = [];
    size = 0;
    oversized = false;
    started = false;
    if (tooLong) return { number, status: 413, error: `Invalid request: line: larger than ${maxBytes} bytes` };
    try {
      return { number, text: decoder.decode(bytes) };
    } catch {
      return { number, status: 400, error: 'Invalid request: line: not valid UTF-8' };
    }
  };

  for await (const chunk of source) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    for (let end = buffer.indexOf(NEWLINE, start); end !== -1; end = buffer.indexOf(NEWLINE, start)) {
      add(buffer.subarray(start, end));
      yield finish();
      start = end + 1;
    }
    add(buffer.subarray(start));
  }
  // A last line without a newline is a line; nothing after the last newline is none.
  if (started) yield finish();
}
