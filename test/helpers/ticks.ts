/**
 * Replay files made by the tests (issue 29), never shipped: ticks as CSV or NDJSON, plain or
 * gzip-compressed, written as a stream so a large one costs no memory.
 */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createGzip } from 'node:zlib';
import type { Writable } from 'node:stream';

export interface Tick {
  time: number;
  price: number;
  instrument?: string;
}

/** A saw of `count` ticks from `start`, `stepMs` apart: up `height` ticks of 0.25, then down again. */
export function sawTicks(count: number, options: { start: number; stepMs: number; from?: number; height?: number; instrument?: string }): Tick[] {
  const height = options.height ?? 8;
  return Array.from({ length: count }, (_, i) => {
    const phase = i % (2 * height);
    const up = phase <= height ? phase : 2 * height - phase;
    return { time: options.start + i * options.stepMs, price: (options.from ?? 5000) + 0.25 * up, instrument: options.instrument };
  });
}

/** The text of one tick: a CSV line (time,price[,instrument]) or an NDJSON object. */
export function tickLine(tick: Tick, format: 'csv' | 'ndjson'): string {
  const time = new Date(tick.time).toISOString();
  if (format === 'ndjson') return `${JSON.stringify({ time, price: tick.price, ...(tick.instrument ? { instrument: tick.instrument } : {}) })}\n`;
  return tick.instrument ? `${time},${tick.price},${tick.instrument}\n` : `${time},${tick.price}\n`;
}

/** Writes ticks (an array, or `count` made by `make(i)`, so a large file needs no array) to `file`. */
export async function writeTickFile(
  file: string,
  ticks: Tick[] | { count: number; make: (i: number) => Tick | string },
  options: { format?: 'csv' | 'ndjson'; gzip?: boolean; instrumentColumn?: boolean } = {},
): Promise<void> {
  const format = options.format ?? 'csv';
  const out = createWriteStream(file);
  const sink: Writable = options.gzip ? createGzip() : out;
  if (options.gzip) sink.pipe(out);
  const write = async (text: string) => {
    if (!sink.write(text)) await once(sink, 'drain');
  };
  if (format === 'csv') await write(options.instrumentColumn ? 'time,price,instrument\n' : 'time,price\n');
  const count = Array.isArray(ticks) ? ticks.length : ticks.count;
  let chunk = '';
  for (let i = 0; i < count; i++) {
    const tick = Array.isArray(ticks) ? ticks[i]! : ticks.make(i);
    chunk += typeof tick === 'string' ? tick : tickLine(tick, format);
    if (chunk.length > 1 << 16) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  sink.end();
  await once(out, 'close');
}
