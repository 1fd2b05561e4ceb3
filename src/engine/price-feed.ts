/**
 * Price sources that drive the engine's last prices (README "Paper trading"): a replay of ticks
 * or bars read from CSV or NDJSON, and a seeded random walk. Everything here is pure: the file is
 * read whole and checked before the first price is set, and the walk is the same for the same seed.
 */
import { UsageError } from '../order/errors.js';
import { contractSpec, rootOf } from '../service/contracts.js';

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

/** The most records a replay file may hold. */
export const MAX_RECORDS = 2_000_000;

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

/** Epoch ms from ISO 8601 text or a number of epoch seconds (≤ 1e11) or milliseconds. */
function parseTime(raw: unknown): number | undefined {
  if (typeof raw === 'number' && Number.isFinite(raw)) return raw <= 1e11 ? raw * 1000 : raw;
  if (typeof raw !== 'string' || raw.trim() === '') return undefined;
  const text = raw.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return parseTime(Number(text));
  // A date and time without a zone is read as UTC, so a file means the same on every machine.
  const iso = /^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
  const ms = Date.parse(iso);
  return Number.isNaN(ms) ? undefined : ms;
}

function parseNumber(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isFinite(raw) ? raw : undefined;
  if (typeof raw !== 'string' || !/^\s*-?\d+(\.\d+)?\s*$/.test(raw)) return undefined;
  return Number(raw);
}

const fail = (file: string, line: number, why: string) =>
  new UsageError(`${file}, line ${line}: ${why}`, { hint: 'Nothing was replayed: every record is checked before the first price is set.' });

/** One record from its fields (CSV columns by header name, or an NDJSON object's keys, any case). */
function toRecord(file: string, line: number, fields: Record<string, unknown>): FeedRecord {
  const get = (keys: string[]) => keys.map((k) => fields[k]).find((v) => v !== undefined && v !== '');
  const rawTime = get(TIME_KEYS);
  if (rawTime === undefined) throw fail(file, line, 'time: is required (ISO 8601, or epoch seconds or milliseconds)');
  const time = parseTime(rawTime);
  if (time === undefined) throw fail(file, line, `time: not a time, got '${String(rawTime).slice(0, 40)}'`);
  const price = (key: string, raw: unknown) => {
    const value = parseNumber(raw);
    if (value === undefined || value <= 0) throw fail(file, line, `${key}: must be a positive number, got '${String(raw).slice(0, 40)}'`);
    return value;
  };
  const instrument = typeof fields.instrument === 'string' && fields.instrument.trim() !== '' ? fields.instrument.trim() : undefined;
  const rawVolume = get(['volume']);
  const volume = rawVolume === undefined ? undefined : parseNumber(rawVolume);
  if (rawVolume !== undefined && (volume === undefined || volume < 0)) throw fail(file, line, `volume: must be a number from 0, got '${String(rawVolume).slice(0, 40)}'`);
  const bar = ['open', 'high', 'low', 'close'].map((k) => fields[k]);
  if (bar.some((v) => v !== undefined && v !== '')) {
    const [open, high, low, close] = ['open', 'high', 'low', 'close'].map((k) => price(k, fields[k])) as [number, number, number, number];
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
 * The records of a replay file: NDJSON (each line a JSON object) or CSV with a header row naming
 * the columns (time, and price or open/high/low/close; volume and instrument optional). Times must
 * not go back. Throws a UsageError naming the line and field of the first problem.
 */
export function parseFeed(file: string, text: string): FeedRecord[] {
  const lines = text.split(/\r?\n/);
  const records: FeedRecord[] = [];
  const first = lines.findIndex((l) => l.trim() !== '');
  if (first < 0) throw new UsageError(`${file} holds no records`, { hint: 'Nothing was replayed.' });
  const ndjson = lines[first]!.trim().startsWith('{');
  let header: string[] | undefined;
  for (let i = first; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (raw === '' || raw.startsWith('#')) continue;
    let fields: Record<string, unknown>;
    if (ndjson) {
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch {
        throw fail(file, i + 1, 'not valid JSON');
      }
      if (value === null || typeof value !== 'object' || Array.isArray(value)) throw fail(file, i + 1, 'not a JSON object');
      fields = Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toLowerCase(), v]));
    } else if (!header) {
      header = csvFields(raw).map((h) => h.toLowerCase());
      if (!header.some((h) => TIME_KEYS.includes(h))) throw fail(file, i + 1, `the header names no time column (${TIME_KEYS.join(', ')}); got '${raw.slice(0, 80)}'`);
      continue;
    } else {
      const values = csvFields(raw);
      if (values.length !== header.length) throw fail(file, i + 1, `${values.length} fields, the header has ${header.length}`);
      fields = Object.fromEntries(header.map((h, k) => [h, values[k]]));
    }
    const record = toRecord(file, i + 1, fields);
    const before = records[records.length - 1];
    if (before && record.time < before.time) throw fail(file, i + 1, `time: goes back (${new Date(record.time).toISOString()} after ${new Date(before.time).toISOString()})`);
    records.push(record);
    if (records.length > MAX_RECORDS) throw fail(file, i + 1, `more than ${MAX_RECORDS} records; split the file`);
  }
  if (records.length === 0) throw new UsageError(`${file} holds no records, only a header`, { hint: 'Nothing was replayed.' });
  return records;
}

/** Whether a price is a whole number of ticks of `tickSize`. */
export function onGrid(price: number, tickSize: number): boolean {
  const ticks = price / tickSize;
  return Math.abs(ticks - Math.round(ticks)) < 1e-6;
}

/** Whether a price is on the root's tick grid (always, for a root the table does not have). */
export function onTick(instrument: string, price: number): boolean {
  const spec = contractSpec(rootOf(instrument));
  return !spec || onGrid(price, spec.tickSize);
}

/** The two prices on the grid either side of an off-tick price: `5000.1` of ES → [5000, 5000.25]. */
export function nearestTicks(instrument: string, price: number): [number, number] {
  const size = contractSpec(rootOf(instrument))?.tickSize ?? 0.01;
  const below = Math.floor(price / size + 1e-9) * size;
  const round = (n: number) => Number(n.toFixed(10));
  return [round(below), round(below + size)];
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

/** The tick size of an instrument's root, when the table has it. */
export function tickSizeOf(instrument: string): number | undefined {
  return contractSpec(rootOf(instrument))?.tickSize;
}
