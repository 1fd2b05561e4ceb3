/**
 * stdout and stderr written straight to their file descriptors until a command needs Node's
 * streams (src/cli/stdio.ts, issue 34). Real files, a real pipe and a real terminal where the case
 * can be made with them; the kernel's partial writes and a full non-blocking pipe (EAGAIN) with a
 * writer that behaves as write(2) then does.
 */
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { lazyOutput, notTerminal, writeWhole } from '../../src/cli/stdio.js';
import { spawnRecorded } from '../helpers/spawn.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'trade-stdio-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A real file open for writing, its path, and a stand-in stream that records what it is given. */
function fileOutput() {
  const path = join(dir, 'out.txt');
  const fd = openSync(path, 'w');
  const stream = new PassThrough();
  let streamed = '';
  stream.setEncoding('utf8').on('data', (d: string) => (streamed += d));
  let opened = 0;
  const output = lazyOutput(fd, () => {
    opened += 1;
    return stream as unknown as NodeJS.WriteStream;
  });
  return { output, fd, read: () => readFileSync(path, 'utf8'), streamed: () => streamed, opened: () => opened };
}

describe('notTerminal', () => {
  it('is true for a file, /dev/null and a pipe; false for a closed descriptor', () => {
    const file = openSync(join(dir, 'f'), 'w');
    const devNull = openSync('/dev/null', 'w');
    try {
      expect(notTerminal(file)).toBe(true);
      expect(notTerminal(devNull)).toBe(true);
    } finally {
      closeSync(file);
      closeSync(devNull);
    }
    expect(notTerminal(file)).toBe(false);
  });
});

describe('lazyOutput', () => {
  it('writes lines to a file in order without making the stream; isTTY and columns unset, as a file stream has them', () => {
    const f = fileOutput();
    try {
      expect(f.output.write('Placed BUY 1 ES 09-25 MARKET DAY\n')).toBe(true);
      (f.output.write as unknown as (chunk: Uint8Array) => boolean)(Buffer.from('  order id  ab\n'));
      f.output.write('é ✓\n');
      expect(f.output.isTTY).toBeUndefined();
      expect(f.output.columns).toBeUndefined();
      expect(f.read()).toBe('Placed BUY 1 ES 09-25 MARKET DAY\n  order id  ab\né ✓\n');
      expect(f.opened()).toBe(0);
    } finally {
      closeSync(f.fd);
    }
  });

  it('makes the stream once anything else is asked for, and every later write goes through it', async () => {
    const f = fileOutput();
    try {
      f.output.write('first\n');
      const cork = (f.output as unknown as { cork: () => void }).cork;
      expect(typeof cork).toBe('function');
      expect(f.opened()).toBe(1);
      f.output.write('second\n');
      f.output.write('third\n');
      await new Promise((resolve) => setImmediate(resolve));
      expect(f.read()).toBe('first\n');
      expect(f.streamed()).toBe('second\nthird\n');
      expect(f.opened()).toBe(1);
    } finally {
      closeSync(f.fd);
    }
  });

  it('calls a write callback, as a stream would', async () => {
    const f = fileOutput();
    try {
      await new Promise<void>((resolve) => (f.output.write as (chunk: string, cb: () => void) => boolean)('line\n', resolve));
      expect(f.read()).toBe('line\n');
    } finally {
      closeSync(f.fd);
    }
  });

  it('writes to a full non-blocking pipe whole and in order: what the pipe cannot take now goes through the stream', async () => {
    const { createHash } = await import('node:crypto');
    // A child that reads its stdin to the end and prints the hash of what it got. The parent's end
    // of the pipe is Node's own socket, non-blocking: a megabyte fills it, and write(2) says EAGAIN.
    const child = spawnRecorded(process.execPath, ['-e', "const h=require('crypto').createHash('sha256');process.stdin.on('data',d=>h.update(d)).on('end',()=>console.log(h.digest('hex')))"], { stdio: ['pipe', 'pipe', 'inherit'] });
    const stdin = child.stdin!;
    const fd = (stdin as unknown as { _handle: { fd: number } })._handle.fd;
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    const closed = new Promise((resolve) => child.on('close', resolve));
    let opened = 0;
    const output = lazyOutput(fd, () => {
      opened += 1;
      return stdin as unknown as NodeJS.WriteStream;
    });
    const expected = createHash('sha256');
    for (let i = 0; i < 10_000; i++) {
      const line = `${String(i).padStart(8, '0')} ${'x'.repeat(91)}\n`;
      expected.update(line);
      output.write(line);
    }
    stdin.end();
    await closed;
    expect(out).toBe(`${expected.digest('hex')}\n`);
    expect(opened).toBe(1);
  });
});

describe('writeWhole', () => {
  const data = Buffer.from('0123456789');

  it('writes what is left after a partial write, until all is written', () => {
    const writes: string[] = [];
    const left = writeWhole(1, data, (_fd, chunk) => {
      const n = Math.min(3, chunk.length);
      writes.push(Buffer.from(chunk.subarray(0, n)).toString());
      return n;
    });
    expect(left).toBeUndefined();
    expect(writes).toEqual(['012', '345', '678', '9']);
  });

  it('hands what is left to the stream when the descriptor cannot take it now (EAGAIN) or fails', () => {
    for (const code of ['EAGAIN', 'EIO']) {
      let calls = 0;
      const left = writeWhole(1, data, (_fd, chunk) => {
        calls += 1;
        if (calls === 1) return 4;
        throw Object.assign(new Error(code), { code });
      });
      expect(Buffer.from(left!).toString()).toBe('456789');
    }
  });

  it('drops the text when the reader has gone (EPIPE), as main does', () => {
    expect(writeWhole(1, data, () => { throw Object.assign(new Error('EPIPE'), { code: 'EPIPE' }); })).toBeUndefined();
  });
});
