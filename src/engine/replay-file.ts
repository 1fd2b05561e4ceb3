/**
 * A replay file read as a stream (issue 29): CSV or NDJSON, each also gzip-compressed (told by
 * its first two bytes, whatever its name). It is read twice: a first pass checks every record (times in order, prices positive and on the tick, bars whole, an
 * instrument for each) before anything is set, and a second pass hands the records of the window
 * to the replay in batches; a file changed in between (its size, time or inode) is refused.
 * Memory holds one chunk of the file, whatever its size.
 */
import { createReadStream } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { parseAll, UsageError } from '../common/errors.js';
import { parseInstrument } from '../service/order.js';
import { contractSpec, rootOf } from '../service/contracts.js';
import { createFeedParser, type FeedRecord, feedError, nearestTicks, onGrid } from './price-feed.js';
import { createBatch, pushRecord } from './replay-batch.js';
import type { ReplayBatch } from './types.js';

const CHUNK = 256 * 1024;

/** Where the file is read to, for a progress line: bytes of the file (compressed, for gzip). */
export interface ReadProgress {
  bytes: number;
  size: number;
}

/** The replay's window: records at or after `fromMs` and before `toMs`. */
export interface ReplayWindow {
  fromMs?: number;
  toMs?: number;
}

/** A replay file checked whole: what it holds and how to read it again. */
export interface ReplayFile {
  file: string;
  size: number;
  gzip: boolean;
  /** Records in the file, bars among them; the first and last record's time. */
  records: number;
  bars: number;
  firstMs: number;
  lastMs: number;
  /** Records in the window, and the first and last one's time. */
  inWindow: number;
  windowFirstMs: number;
  windowLastMs: number;
  /** The instrument of each name the file uses ('' for records with none: --instrument). */
  instruments: Map<string, string>;
  /** The file's size and time when it was checked: a file changed since is refused. */
  stamp: string;
}

const cannotRead = (file: string, error: unknown) => {
  const code = (error as NodeJS.ErrnoException).code;
  return new UsageError(`Cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (error as Error).message}`, {
    hint: 'Nothing was replayed.',
  });
};

/** Whole lines of the file, a chunk's worth at a time: those of `text` from `start` to `end`; `first` is the number of the first. */
interface Lines {
  text: string;
  start: number;
  end: number;
  first: number;
}

/** Calls `each` with every line of a chunk (its bounds in the chunk's text) and its number. */
function eachLine(chunk: Lines, each: (text: string, from: number, to: number, number: number) => void): void {
  const { text, end } = chunk;
  let number = chunk.first;
  for (let start = chunk.start; start < end; ) {
    let newline = text.indexOf('\n', start);
    if (newline < 0 || newline > end) newline = end;
    each(text, start, newline, number++);
    start = newline + 1;
  }
}

/** The lines of the file's text, chunk by chunk; `progress` follows the bytes read. */
async function* lines(file: string, gzip: boolean, progress: ReadProgress): AsyncGenerator<Lines> {
  const raw = createReadStream(file, { highWaterMark: CHUNK });
  const stream: Readable = gzip ? raw.pipe(createGunzip({ chunkSize: CHUNK })) : raw;
  if (gzip) raw.on('error', (error) => stream.destroy(error));
  const decoder = new StringDecoder('utf8');
  let rest = '';
  let number = 0;
  try {
    for await (const chunk of stream) {
      progress.bytes = raw.bytesRead;
      // The chunk's text is read where it is (a string made of two is slower to read by character):
      // only the line the last chunk left unfinished is joined, on its own.
      const text = decoder.write(chunk as Buffer);
      let start = 0;
      if (rest !== '') {
        const newline = text.indexOf('\n');
        if (newline < 0) {
          rest += text;
          continue;
        }
        const line = rest + text.slice(0, newline + 1);
        yield { text: line, start: 0, end: line.length, first: ++number };
        start = newline + 1;
      }
      const end = text.lastIndexOf('\n') + 1;
      rest = text.slice(Math.max(start, end));
      if (end <= start) continue;
      yield { text, start, end, first: number + 1 };
      for (let i = text.indexOf('\n', start); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) number++;
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code?.startsWith('Z_')) throw new UsageError(`${file}: not a whole gzip file (${(error as Error).message})`, { hint: 'Nothing was replayed past the damage.' });
    throw cannotRead(file, error);
  } finally {
    raw.destroy();
  }
  rest += decoder.end();
  if (rest !== '') yield { text: rest, start: 0, end: rest.length, first: number + 1 };
}

/** A replay file: checked (`check`), then read (`records`) as often as needed. Each pass opens it anew: nothing stays open between them. */
export interface OpenReplayFile {
  check(fallback: string | undefined, window: ReplayWindow, progress?: ReadProgress): Promise<ReplayFile>;
  records(checked: ReplayFile, fallback: string | undefined, window: ReplayWindow, progress?: ReadProgress): AsyncGenerator<ReplayBatch>;
}

const stampOf = async (file: string) => {
  try {
    const info = await stat(file);
    return { size: info.size, stamp: `${info.size}:${info.mtimeMs}:${info.ino}` };
  } catch (error) {
    throw cannotRead(file, error);
  }
};

export async function openReplayFile(file: string): Promise<OpenReplayFile> {
  let handle: FileHandle | undefined;
  const magic = Buffer.alloc(2);
  try {
    handle = await open(file, 'r');
    if ((await handle.stat()).isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
    await handle.read(magic, 0, 2, 0);
  } catch (error) {
    throw cannotRead(file, error);
  } finally {
    await handle?.close();
  }
  const gzip = magic[0] === 0x1f && magic[1] === 0x8b;

  /** The record's instrument: its own name resolved once, else --instrument. */
  function instrumentOf(record: FeedRecord, fallback: string | undefined, resolved: Map<string, string>): string {
    const name = record.instrument ?? '';
    const known = resolved.get(name);
    if (known !== undefined) return known;
    if (record.instrument === undefined) {
      if (fallback === undefined) throw feedError(file, record.line, 'instrument: is required (a column, or --instrument for the whole file)');
      resolved.set('', fallback);
      return fallback;
    }
    const instrument = parseAll<[string]>([() => parseInstrument(record.instrument)], { hint: `Nothing was replayed (${file}, line ${record.line}).` })[0];
    resolved.set(name, instrument);
    return instrument;
  }

  return {
    async check(fallback, window, progress = { bytes: 0, size: 0 }) {
      const { size, stamp } = await stampOf(file);
      progress.size = size;
      const parser = createFeedParser(file);
      const instruments = new Map<string, string>();
      const ticks = new Map<string, number | undefined>();
      let records = 0;
      let bars = 0;
      let firstMs = NaN;
      let lastMs = NaN;
      let inWindow = 0;
      let windowFirstMs = NaN;
      let windowLastMs = NaN;
      const each = (text: string, from: number, to: number, number: number) => {
        const record = parser.lineAt(text, from, to, number);
        if (!record) return;
        const instrument = instrumentOf(record, fallback, instruments);
        let tick = ticks.get(instrument);
        if (!ticks.has(instrument)) ticks.set(instrument, (tick = contractSpec(rootOf(instrument))?.tickSize));
        if (tick !== undefined) {
          for (const price of record.prices) {
            if (onGrid(price, tick)) continue;
            const [below, above] = nearestTicks(instrument, price);
            throw feedError(file, number, `${price} is not a multiple of the tick size ${tick} of ${rootOf(instrument)}; the nearest valid prices are ${below} and ${above}`);
          }
        }
        if (records === 0) firstMs = record.time;
        lastMs = record.time;
        records++;
        if (record.kind === 'bar') bars++;
        if ((window.fromMs === undefined || record.time >= window.fromMs) && (window.toMs === undefined || record.time < window.toMs)) {
          if (inWindow === 0) windowFirstMs = record.time;
          windowLastMs = record.time;
          inWindow++;
        }
      };
      for await (const chunk of lines(file, gzip, progress)) eachLine(chunk, each);
      parser.end();
      if (inWindow === 0) {
        const span = `${new Date(firstMs).toISOString()} to ${new Date(lastMs).toISOString()}`;
        throw new UsageError(`${file} has no record in the window (${records} records, from ${span})`, { hint: 'Nothing was replayed: choose --from and --to inside the file.' });
      }
      return { file, size, gzip, records, bars, firstMs, lastMs, inWindow, windowFirstMs, windowLastMs, instruments, stamp };
    },

    async *records(checked, fallback, window, progress = { bytes: 0, size: 0 }) {
      const { size, stamp } = await stampOf(file);
      progress.size = size;
      if (stamp !== checked.stamp) throw new UsageError(`${file} changed after it was checked`, { hint: 'Nothing was replayed from it: run the replay again.' });
      const parser = createFeedParser(file);
      const instruments = new Map(checked.instruments);
      const from = window.fromMs ?? -Infinity;
      const to = window.toMs ?? Infinity;
      try {
        let ended = false;
        let out = createBatch(8192);
        const each = (text: string, fromAt: number, toAt: number, number: number) => {
          if (ended) return;
          const record = parser.lineAt(text, fromAt, toAt, number);
          if (!record || record.time < from) return;
          if (record.time >= to) {
            ended = true;
            return;
          }
          // The parser fills one record again for the next line: the batch copies what it keeps.
          pushRecord(out, instrumentOf(record, fallback, instruments), record.time, record.prices[0]!, record.prices);
        };
        for await (const chunk of lines(file, gzip, progress)) {
          eachLine(chunk, each);
          if (out.length > 0) {
            yield out;
            out = createBatch(8192);
          }
          if (ended) return;
        }
      } catch (error) {
        // The file was checked whole: a problem now means it changed while it was replayed.
        if (error instanceof UsageError && !error.message.startsWith(`Cannot read`))
          throw new UsageError(`${file} changed while it was replayed: ${error.message}`, { hint: 'The prices set before that line stay; the rest of the file was not replayed.' });
        throw error;
      }
    },
  };
}
