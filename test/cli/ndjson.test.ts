import { describe, expect, it } from 'vitest';
import { type InputLine, MAX_LINE_BYTES, readLines } from '../../src/cli/ndjson.js';

async function all(chunks: Iterable<Buffer | string> | AsyncIterable<Buffer | string>, max?: number): Promise<InputLine[]> {
  const out: InputLine[] = [];
  for await (const line of readLines(chunks as AsyncIterable<Buffer | string>, max)) out.push(line);
  return out;
}

async function* from(chunks: Array<Buffer | string>): AsyncGenerator<Buffer | string> {
  yield* chunks;
}

describe('readLines', () => {
  it('splits on \\n across chunks, drops one \\r before it, keeps empty lines and a last line without a newline', async () => {
    expect(await all(from(['{"a":', '1}\r\n\n{"b"', ':2}\n{"c":3}']))).toEqual([
      { number: 1, text: '{"a":1}' },
      { number: 2, text: '' },
      { number: 3, text: '{"b":2}' },
      { number: 4, text: '{"c":3}' },
    ]);
    expect(await all(from(['x\n']))).toEqual([{ number: 1, text: 'x' }]);
    expect(await all(from([]))).toEqual([]);
  });

  it('decodes a character split between chunks, and refuses a line that is not UTF-8', async () => {
    const euro = Buffer.from('"€"\n');
    expect(await all(from([euro.subarray(0, 2), euro.subarray(2)]))).toEqual([{ number: 1, text: '"€"' }]);
    expect(await all(from([Buffer.from([0x22, 0xff, 0x22, 0x0a]), 'ok\n']))).toEqual([
      { number: 1, status: 400, error: 'Invalid request: line: not valid UTF-8' },
      { number: 2, text: 'ok' },
    ]);
  });

  it('takes a line of exactly the cap (with or without \\r) and refuses one byte more', async () => {
    const at = 'x'.repeat(16);
    expect(await all(from([`${at}\r\n${at}\n${at}y\n${at}y`]), 16)).toEqual([
      { number: 1, text: at },
      { number: 2, text: at },
      { number: 3, status: 413, error: 'Invalid request: line: larger than 16 bytes' },
      { number: 4, status: 413, error: 'Invalid request: line: larger than 16 bytes' },
    ]);
  });

  it('skips an oversized line without holding it: 1 GiB on one line costs no memory, and the next line is read', async () => {
    const mib = Buffer.alloc(1024 * 1024, 0x61);
    // The same buffer again and again: a reader that kept the line would need the whole GiB.
    async function* huge(): AsyncGenerator<Buffer | string> {
      for (let i = 0; i < 1024; i++) yield mib;
      yield '\n{"next":true}\n';
    }
    const before = process.memoryUsage();
    const lines = await all(huge());
    const after = process.memoryUsage();
    expect(lines).toEqual([
      { number: 1, status: 413, error: `Invalid request: line: larger than ${MAX_LINE_BYTES} bytes` },
      { number: 2, text: '{"next":true}' },
    ]);
    expect(after.arrayBuffers - before.arrayBuffers).toBeLessThan(64 * 1024 * 1024);
    expect(after.rss - before.rss).toBeLessThan(256 * 1024 * 1024);
  });

  it('hands each line on as soon as its newline is read, before the source has more', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    async function* held(): AsyncGenerator<Buffer | string> {
      yield 'first\nsec';
      await gate;
      yield 'ond\n';
    }
    const reader = readLines(held());
    expect((await reader.next()).value).toEqual({ number: 1, text: 'first' });
    const second = reader.next();
    release();
    expect((await second).value).toEqual({ number: 2, text: 'second' });
    expect((await reader.next()).done).toBe(true);
  });
});
