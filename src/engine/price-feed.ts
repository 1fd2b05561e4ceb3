/**
 * Price sources that drive the engine's last prices (docs/paper-trading.md): a replay of ticks
 * or bars read from CSV or NDJSON, and a seeded random walk. Everything here is pure: a file's
 * lines are parsed one at a time (replay-file.ts streams them, twice), and the walk is the same
 * for the same seed.
 */
import { UsageError } from '../common/errors.js';
import { rootOf } from '../service/contracts.js';
import { nearestTicks, onTick, tickSizeOf } from '../service/ticks.js';

// The tick grid is the contract table's (src/service/ticks.ts); the engine's callers find it here too.
export { nearestTicks, onGrid, onTick, tickSizeOf } from '../service/ticks.js';

/** One record of a replay file: a tick (one price) or a bar (open, high, low, close). */
export interface FeedRecord {
  /** Where it is in the file (1-based), for messages. */
  line: number;
  /** Epoch milliseconds. */
  time: number;
  instrument?: string;
  /** The prices to set, in order: a tick's one price, a bar's path (barPath). */
  prices: number[];
  volume?: number;
  kind: 'tick' | 'bar';
}

const TIME_KEYS = ['time', 'timestamp', 'date', 'datetime'];
const PRICE_KEYS = ['price', 'last'];

/**
 * The order a bar's prices are set in (stated in README): a bar that closed at or above its open
 * is taken to have dipped first, open → low → high → close; one that closed below, open → high →
 * low → close. Consecutive equal prices are set once.
 */
export function barPath(open: number, high: number, low: number, close: number): number[] {
  const path = close >= open ? [open, low, high, close] : [open, high, low, close];
  return path.filter((price, i) => i === 0 || price !== path[i - 1]);
}

/** Epoch ms of each `YYYY-MM-DD` seen last: a file's dates change once a day, its times every line. */
let dayText = '';
let dayMs = NaN;

/** Two decimal digits at `i` as a number; NaN when either is not a digit. */
function two(text: string, i: number): number {
  const a = text.charCodeAt(i) - 48;
  const b = text.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : NaN;
}

/**
 * `2026-03-18T14:30:00.080Z` (or with a space, no zone, no fraction) between `s` and `n` of
 * `text`, without Date.parse: the date's midnight is kept, the rest is arithmetic. Undefined for
 * any other form (Date.parse then judges it, as before), so the two ways agree on every time they
 * both read.
 */
function isoTime(text: string, s = 0, n = text.length): number | undefined {
  if (n - s < 19 || text.charCodeAt(s + 4) !== 45 || text.charCodeAt(s + 7) !== 45 || text.charCodeAt(s + 13) !== 58 || text.charCodeAt(s + 16) !== 58) return undefined;
  const t = text.charCodeAt(s + 10);
  if (t !== 84 && t !== 32) return undefined;
  const hours = two(text, s + 11);
  const minutes = two(text, s + 14);
  const seconds = two(text, s + 17);
  if (!(hours < 24 && minutes < 60 && seconds < 60)) return undefined;
  let i = s + 19;
  let fraction = 0;
  if (i < n && text.charCodeAt(i) === 46) {
    let scale = 100;
    i++;
    const begin = i;
    for (; i < n; i++) {
      const d = text.charCodeAt(i) - 48;
      if (d < 0 || d > 9) break;
      fraction += d * scale;
      scale /= 10;
    }
    if (i === begin) return undefined;
    fraction = Math.floor(fraction + 1e-9);
  }
  if (i < n && text.charCodeAt(i) === 90) i++;
  if (i !== n) return undefined;
  if (!sameDay(text, s)) {
    const date = text.slice(s, s + 10);
    const ms = /^\d{4}-\d\d-\d\d$/.test(date) ? Date.parse(`${date}T00:00:00Z`) : NaN;
    if (Number.isNaN(ms)) return undefined;
    dayText = date;
    dayMs = ms;
  }
  return dayMs + ((hours * 60 + minutes) * 60 + seconds) * 1000 + fraction;
}

function sameDay(text: string, s: number): boolean {
  if (dayText.length !== 10) return false;
  for (let i = 0; i < 10; i++) if (text.charCodeAt(s + i) !== dayText.charCodeAt(i)) return false;
  return true;
}

const POWERS = [1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/**
 * A positive decimal `\d+(\.\d+)?` between `s` and `e`, as Number() reads it: the digits as
 * one whole number divided by a power of ten, both exact, so the quotient is the correctly
 * rounded decimal. Undefined for anything else (a sign, an exponent, too many digits).
 */
function decimal(text: string, s: number, e: number): number | undefined {
  let whole = 0;
  let digits = 0;
  let scale = -1;
  for (let i = s; i < e; i++) {
    const c = text.charCodeAt(i) - 48;
    if (c >= 0 && c <= 9) {
      whole = whole * 10 + c;
      digits++;
      if (scale >= 0) scale++;
    } else if (c === -2 && scale < 0 && digits > 0) scale = 0;
    else return undefined;
  }
  if (digits === 0 || digits > 15 || scale === 0) return undefined;
  return scale > 0 ? whole / POWERS[scale]! : whole;
}

/** Epoch ms from ISO 8601 text or a number of epoch seconds (≤ 1e11) or milliseconds. */
export function parseTime(raw: unknown): number | undefined {
  if (typeof raw === 'number' && Number.isFinite(raw)) return raw <= 1e11 ? raw * 1000 : raw;
  if (typeof raw !== 'string') return undefined;
  const fast = isoTime(raw);
  if (fast !== undefined) return fast;
  const text = raw.trim();
  if (text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return parseTime(Number(text));
  // A date and time without a zone is read as UTC, so a file means the same on every machine.
  const iso = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

const NUMBER = /^\s*-?\d+(\.\d+)?\s*$/;

function parseNumber(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  if (typeof raw !== 'string' || !NUMBER.test(raw)) return undefined;
  return Number(raw);
}

export const feedError = (file: string, line: number, why: string) =>
  new UsageError(`${file}, line ${line}: ${why}`, { hint: 'Nothing was replayed: every record is checked before the first price is set.' });
const fail = feedError;

/** A record's fields by name: a CSV line's columns, or an NDJSON object's keys (lower-cased). */
type Fields = (key: string) => unknown;

const BAR_KEYS = ['open', 'high', 'low', 'close'] as const;

/** One record from its fields. */
function toRecord(file: string, line: number, field: Fields): FeedRecord {
  const get = (keys: readonly string[]) => {
    for (const key of keys) {
      const value = field(key);
      if (value !== undefined && value !== '') return value;
    }
    return undefined;
  };
  const rawTime = get(TIME_KEYS);
  if (rawTime === undefined) throw fail(file, line, 'time: is required (ISO 8601, or epoch seconds or milliseconds)');
  const time = parseTime(rawTime);
  if (time === undefined) throw fail(file, line, `time: not a time, got '${String(rawTime).slice(0, 40)}'`);
  const price = (key: string, raw: unknown) => {
    const value = parseNumber(raw);
    if (value === undefined || value <= 0) throw fail(file, line, `${key}: must be a positive number, got '${String(raw ?? '').slice(0, 40)}'`);
    return value;
  };
  const rawInstrument = field('instrument');
  const instrument = typeof rawInstrument === 'string' && rawInstrument.trim() !== '' ? rawInstrument.trim() : undefined;
  const rawVolume = get(['volume']);
  const volume = rawVolume === undefined ? undefined : parseNumber(rawVolume);
  if (rawVolume !== undefined && (volume === undefined || volume < 0)) throw fail(file, line, `volume: must be a number from 0, got '${String(rawVolume).slice(0, 40)}'`);
  if (BAR_KEYS.some((k) => field(k) !== undefined && field(k) !== '')) {
    const [open, high, low, close] = BAR_KEYS.map((k) => price(k, field(k))) as [number, number, number, number];
    if (high < Math.max(open, close, low)) throw fail(file, line, `high: ${high} is below the bar's open, close or low`);
    if (low > Math.min(open, close)) throw fail(file, line, `low: ${low} is above the bar's open or close`);
    return { line, time, instrument, prices: barPath(open, high, low, close), volume, kind: 'bar' };
  }
  const tick = get(PRICE_KEYS);
  if (tick === undefined) throw fail(file, line, 'price: is required (or open, high, low and close for a bar)');
  return { line, time, instrument, prices: [price('price', tick)], volume, kind: 'tick' };
}

/** Splits one CSV line (commas; double quotes around a field, "" inside it). */
function csvFields(text: string): string[] {
  // Most lines have no quote and no space to trim: a plain split.
  if (!text.includes('"')) {
    const plain = text.split(',');
    if (!/\s/.test(text)) return plain;
    return plain.map((f) => f.trim());
  }
  const fields: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') fields.push(field.trim()), (field = '');
    else field += c;
  }
  fields.push(field.trim());
  return fields;
}

/**
 * Reads a replay file one line at a time: NDJSON (each line a JSON object) or CSV with a header
 * row naming the columns (time, and price or open/high/low/close; volume and instrument
 * optional), told apart by the first line that is not blank. Times must not go back. Each
 * problem is a UsageError naming the file, line and field. Holds nothing but the header and the
 * last time, so a file of any size is read in constant memory.
 */
export function createFeedParser(file: string) {
  let format: 'csv' | 'ndjson' | undefined;
  let columns: Map<string, number> | undefined;
  let values: string[] = [];
  let headerWidth = 0;
  let last: number | undefined;
  let records = 0;
  /** A tick file's columns (one time and one price column, no bar columns): lines read by fastTick. */
  let ticks: { time: number; price: number; volume: number; instrument: number } | undefined;
  let instrumentText = '';

  /** What fastTick returns: one object, filled again for every line (its reader copies what it keeps). */
  const scratch: FeedRecord = { line: 0, time: 0, instrument: undefined, prices: [0], volume: undefined, kind: 'tick' };

  /**
   * The common line of a tick CSV (no quote, no blank field, no space around a field, an ISO
   * time) read in place from `from` to `to` of `text`, into the scratch record; undefined for any
   * other line, which the general path then reads and judges.
   */
  function fastTick(text: string, from: number, to: number, number: number): FeedRecord | undefined {
    const t = ticks!;
    let end = to;
    if (end > from && text.charCodeAt(end - 1) === 13) end--;
    let time: number | undefined;
    let price: number | undefined;
    let volume: number | undefined;
    let instrument: string | undefined;
    let field = 0;
    for (let start = from; ; field++) {
      let comma = text.indexOf(',', start);
      if (comma < 0 || comma > end) comma = end;
      if (comma === start || text.charCodeAt(start) <= 32 || text.charCodeAt(comma - 1) <= 32) return undefined;
      // A time or a number with a quote in it is read by neither: only the other fields are looked at for one.
      if (field === t.time) {
        time = isoTime(text, start, comma);
        if (time === undefined) return undefined;
      } else if (field === t.price) {
        price = decimal(text, start, comma);
        if (price === undefined || price <= 0) return undefined;
      } else if (field === t.volume) {
        volume = decimal(text, start, comma);
        if (volume === undefined) return undefined;
      } else {
        for (let i = start; i < comma; i++) if (text.charCodeAt(i) === 34) return undefined;
        if (field === t.instrument) {
          // Most lines name the instrument the one before did: the same string, not a new one.
          let same = comma - start === instrumentText.length;
          for (let k = 0; same && k < instrumentText.length; k++) same = text.charCodeAt(start + k) === instrumentText.charCodeAt(k);
          if (!same) instrumentText = text.slice(start, comma);
          instrument = instrumentText;
        }
      }
      if (comma === end) break;
      start = comma + 1;
    }
    field++;
    if (field !== headerWidth || time === undefined || price === undefined) return undefined;
    scratch.line = number;
    scratch.time = time;
    scratch.instrument = instrument;
    scratch.prices[0] = price;
    scratch.volume = volume;
    return scratch;
  }

  const csvField: Fields = (key) => {
    const at = columns!.get(key);
    return at === undefined ? undefined : values[at];
  };
  return {
    /** The record on a line (1-based), or undefined for a blank line, a comment or the header. */
    line(text: string, number: number): FeedRecord | undefined {
      const record = this.lineAt(text, 0, text.length, number);
      return record === scratch ? { ...record, prices: [...record.prices] } : record;
    },

    /**
     * The record on the line from `from` to `to` of `text`; undefined for a blank line, a comment
     * or the header. A common tick line comes back in one record object used again for the next
     * line: whoever keeps a record copies it.
     */
    lineAt(text: string, from: number, to: number, number: number): FeedRecord | undefined {
      let record = ticks && fastTick(text, from, to, number);
      if (record) {
        if (last !== undefined && record.time < last) throw fail(file, number, `time: goes back (${new Date(record.time).toISOString()} after ${new Date(last).toISOString()})`);
        last = record.time;
        records++;
        return record;
      }
      const raw = text.slice(from, to).trim();
      if (raw === '' || raw.startsWith('#')) return undefined;
      format ??= raw.startsWith('{') ? 'ndjson' : 'csv';
      if (format === 'ndjson') {
        let value: unknown;
        try {
          value = JSON.parse(raw);
        } catch {
          throw fail(file, number, 'not valid JSON');
        }
        if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail(file, number, 'not a JSON object');
        const fields = new Map(Object.entries(value).map(([k, v]) => [k.toLowerCase(), v as unknown]));
        record = toRecord(file, number, (key) => fields.get(key));
      } else if (!columns) {
        const header = csvFields(raw).map((h) => h.toLowerCase());
        if (!header.some((h) => TIME_KEYS.includes(h))) throw fail(file, number, `the header names no time column (${TIME_KEYS.join(', ')}); got '${raw.slice(0, 80)}'`);
        columns = new Map();
        header.forEach((name, i) => columns!.has(name) || columns!.set(name, i));
        headerWidth = header.length;
        const count = (keys: readonly string[]) => keys.filter((k) => columns!.has(k)).length;
        if (count(TIME_KEYS) === 1 && count(PRICE_KEYS) === 1 && count(BAR_KEYS) === 0) {
          const at = (keys: readonly string[]) => keys.map((k) => columns!.get(k)).find((i) => i !== undefined) ?? -1;
          ticks = { time: at(TIME_KEYS), price: at(PRICE_KEYS), volume: at(['volume']), instrument: at(['instrument']) };
        }
        return undefined;
      } else {
        values = csvFields(raw);
        if (values.length !== headerWidth) throw fail(file, number, `${values.length} fields, the header has ${headerWidth}`);
        record = toRecord(file, number, csvField);
      }
      if (last !== undefined && record.time < last)
        throw fail(file, number, `time: goes back (${new Date(record.time).toISOString()} after ${new Date(last).toISOString()})`);
      last = record.time;
      records++;
      return record;
    },
    /** Call after the last line: a file with no record is refused. */
    end(): void {
      if (records > 0) return;
      throw new UsageError(columns ? `${file} holds no records, only a header` : `${file} holds no records`, { hint: 'Nothing was replayed.' });
    },
  };
}

/** The records of a whole replay file's text (createFeedParser over every line). */
export function parseFeed(file: string, text: string): FeedRecord[] {
  const parser = createFeedParser(file);
  const records: FeedRecord[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const record = parser.line(line, i + 1);
    if (record) records.push(record);
  });
  parser.end();
  return records;
}

/** Checks every price of every record against its instrument's tick; throws naming the first off it. */
export function checkTicks(file: string, records: FeedRecord[], instrumentOf: (record: FeedRecord) => string): void {
  for (const record of records) {
    const instrument = instrumentOf(record);
    const off = record.prices.find((p) => !onTick(instrument, p));
    if (off !== undefined) {
      const [below, above] = nearestTicks(instrument, off);
      throw fail(file, record.line, `${off} is not a multiple of the tick size ${tickSizeOf(instrument)} of ${rootOf(instrument)}; the nearest valid prices are ${below} and ${above}`);
    }
  }
}

/** mulberry32: a small, fast generator whose sequence is fixed by its 32-bit seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A seeded random walk on the tick grid: each step moves between -maxTicks and +maxTicks ticks
 * (uniformly, never below one tick above zero). The same seed, start and sizes give the same walk.
 */
export function randomWalk(options: { seed: number; start: number; tickSize: number; maxTicks: number }): () => number {
  const next = seededRandom(options.seed);
  const round = (n: number) => Number(n.toFixed(10));
  let price = options.start;
  return () => {
    const step = Math.floor(next() * (2 * options.maxTicks + 1)) - options.maxTicks;
    price = round(Math.max(options.tickSize, price + step * options.tickSize));
    return price;
  };
}

