/**
 * Where a report's fills, marks and prices come from. On `embedded`, the engine's store: every
 * fill, the last prices and the one-minute bars. On `http` and `ws`, the execution history
 * (history.ts), first brought up to date with GetExecutions of the last 900 seconds per account
 * (recorded by the backend's recorder), the quotes (GetQuote) of open positions, and GetBars for
 * the charts; what cannot be read is said in the report's notes, and the report goes on without it.
 */
import type { Backend } from '../backends/types.js';
import type { Engine } from '../engine/engine.js';
import { ConfigError, RejectedError, TradeError } from '../common/errors.js';
import type { History } from './history.js';
import { MAX_LOOKBACK_S } from './recorder.js';
import type { ReportSource } from './report.js';
import { pairFills, type ReportFill } from './round-trips.js';
import type { Window } from './trading-days.js';

export interface Bar {
  /** The bar's start, epoch ms. */
  time: number;
  open: number;
  high: number;
  low: number;
  close: number;
}

export interface PriceSeries {
  instrument: string;
  /** Minutes per bar; 0 when there are no bars (the fills alone are drawn). */
  periodMinutes: number;
  bars: Bar[];
  /** Where the bars came from. */
  from: 'engine' | 'GetBars' | 'fills';
}

export interface ReportData {
  fills: ReportFill[];
  accounts: string[];
  marks: Map<string, number | undefined>;
  source: ReportSource;
  notes: string[];
}

/** Bar sizes a chart may use: the smallest that draws the window in at most MAX_BARS bars. */
const PERIODS = [1, 2, 5, 10, 15, 30, 60, 120, 240, 720, 1440] as const;
const MAX_BARS = 2000;

export function barMinutes(window: Window): number {
  const minutes = (window.to - window.from) / 60_000;
  return PERIODS.find((p) => minutes / p <= MAX_BARS) ?? 1440;
}

/** Bars of `minutes` each from one-minute bars (UTC-aligned buckets). */
export function mergeBars(bars: Bar[], minutes: number): Bar[] {
  if (minutes === 1) return bars;
  const size = minutes * 60_000;
  const out: Bar[] = [];
  for (const bar of bars) {
    const start = Math.floor(bar.time / size) * size;
    const last = out[out.length - 1];
    if (last && last.time === start) Object.assign(last, { high: Math.max(last.high, bar.high), low: Math.min(last.low, bar.low), close: bar.close });
    else out.push({ ...bar, time: start });
  }
  return out;
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The instruments with a position open at the window's end. */
const openInstruments = (fills: ReportFill[], to: number) => [...new Set(pairFills(fills.filter((f) => f.time <= to)).open.map((o) => o.instrument))];

/** The engine's store: every fill of the accounts, and their open positions marked at the last price at the window's end. */
export function embeddedData(engine: Engine, accounts: string[] | undefined, window: Window): ReportData {
  const names = accounts === undefined ? engine.listAccounts() : accounts.map((a) => engine.resolveAccount(a));
  const notes: string[] = [];
  const fills: ReportFill[] = [];
  let unpriced = 0;
  for (const account of names)
    for (const f of engine.listFills({ account })) {
      if (f.price === null) {
        unpriced += 1;
        continue;
      }
      fills.push({
        id: f.executionId, account: f.account, instrument: f.instrument, action: f.action, quantity: f.quantity, price: f.price,
        time: Date.parse(f.time), commission: f.commission, orderId: f.orderId, positionAfter: Math.abs(f.positionAfter),
      });
    }
  if (unpriced > 0) notes.push(`${unpriced} fill${unpriced === 1 ? '' : 's'} had no known price (a MARKET order before any price was set): left out.`);
  const now = engine.now().getTime();
  const marks = new Map<string, number | undefined>();
  for (const instrument of openInstruments(fills, window.to)) {
    const last = window.to >= now ? engine.lastPrice(instrument) : engine.minuteBars(instrument, window.from, window.to).at(-1)?.close;
    marks.set(instrument, last ?? lastFillPrice(fills, instrument, window.to));
  }
  return { fills, accounts: names, marks, source: { backend: 'embedded', store: engine.file }, notes };
}

function lastFillPrice(fills: ReportFill[], instrument: string, to: number): number | undefined {
  return fills.filter((f) => f.instrument === instrument && f.time <= to).at(-1)?.price;
}

/** The engine's minute bars of an instrument over the window, in bars of `minutes`. */
export function embeddedBars(engine: Engine, instrument: string, window: Window, minutes: number): PriceSeries {
  const bars = engine.minuteBars(instrument, window.from, window.to).map(({ minute, open, high, low, close }) => ({ time: minute, open, high, low, close }));
  return { instrument, periodMinutes: minutes, bars: mergeBars(bars, minutes), from: 'engine' };
}

export interface RemoteContext {
  backend: Backend;
  history: History;
  service: string;
  now: number;
  /** Read GetExecutions of the last 900 s of each account first (false: the history as it is). */
  refresh: boolean;
}

/** Every page of one account's GetExecutions of the last 900 s (recorded by the backend's recorder as it goes). */
async function refresh(backend: Backend, account: string): Promise<void> {
  let cursor: string | undefined;
  for (let pages = 0; pages === 0 || (cursor !== undefined && pages < 1000); pages++) {
    const read = await backend.call('GetExecutions', { account, lookbackTime: MAX_LOOKBACK_S, ...(cursor === undefined ? {} : { cursor }) });
    const next = (read.body as { nextCursor?: unknown } | null)?.nextCursor;
    cursor = typeof next === 'string' && next !== '' && next !== cursor ? next : undefined;
  }
}

/**
 * The execution history of the accounts (every account ListAccounts names when none is given),
 * brought up to date first, and their open positions marked: at the quote when the window ends
 * now, else at the last bar (GetBars) or fill before its end.
 */
export async function remoteData(ctx: RemoteContext, accounts: string[] | undefined, window: Window): Promise<ReportData> {
  const { backend, history, service } = ctx;
  const notes: string[] = [];
  const names = accounts ?? (await backend.call('ListAccounts', {})).value.accounts.map((a) => a.name);
  let refreshed = true;
  for (const account of ctx.refresh ? names : []) {
    try {
      await refresh(backend, account);
    } catch (error) {
      // A token the service refuses, or an account it does not have, is the person's to fix now;
      // anything else (a platform not connected, a network failure) leaves the history as it is.
      if (error instanceof ConfigError || !(error instanceof TradeError) || (error instanceof RejectedError && error.status === 404)) throw error;
      refreshed = false;
      notes.push(`The history could not be brought up to date for ${account} (${message(error)}): the report has what it had seen before.`);
    }
  }
  const fills = history.fills(service, names, window.to);
  const marks = new Map<string, number | undefined>();
  for (const instrument of openInstruments(fills, window.to)) {
    let mark: number | undefined;
    try {
      if (window.to >= ctx.now) {
        const quote = (await backend.call('GetQuote', { instrument: [instrument] })).value;
        const last = (Array.isArray(quote) ? quote[0] : quote)?.last;
        mark = typeof last === 'number' && last > 0 ? last : undefined;
      } else mark = (await remoteBars(backend, instrument, window, barMinutes(window))).bars.at(-1)?.close;
    } catch (error) {
      if (error instanceof ConfigError || !(error instanceof TradeError)) throw error;
      notes.push(`No price for ${instrument} (${message(error)}): its open position is marked at its last fill.`);
    }
    marks.set(instrument, mark ?? lastFillPrice(fills, instrument, window.to));
  }
  const seen = history.seen(service, names).map((s) => ({ account: s.account, from: new Date(s.from).toISOString(), to: new Date(s.to).toISOString() }));
  return { fills, accounts: names, marks, source: { backend: backend.name as 'http' | 'ws', service, history: history.file, seen, refreshed }, notes };
}

/** GetBars of an instrument over the window; throws what the service refused. */
export async function remoteBars(backend: Backend, instrument: string, window: Window, minutes: number): Promise<PriceSeries> {
  const read = await backend.call('GetBars', {
    instrument, periodType: 'minute', period: minutes, from: new Date(window.from).toISOString(), to: new Date(window.to).toISOString(), limit: 5000,
  });
  const list = (read.value as { bars?: unknown }).bars;
  const bars: Bar[] = [];
  for (const raw of Array.isArray(list) ? list : []) {
    const b = raw as Record<string, unknown>;
    const time = typeof b.epoch === 'number' ? b.epoch : typeof b.time === 'string' ? Date.parse(b.time) : NaN;
    const values = [b.open, b.high, b.low, b.close];
    if (!Number.isFinite(time) || !values.every((v) => typeof v === 'number' && Number.isFinite(v))) continue;
    bars.push({ time, open: b.open as number, high: b.high as number, low: b.low as number, close: b.close as number });
  }
  bars.sort((a, b) => a.time - b.time);
  return { instrument, periodMinutes: minutes, bars, from: 'GetBars' };
}

/** The price series of every instrument the report traded, from the engine or GetBars; the fills alone where neither answers. */
export async function priceSeries(
  instruments: string[],
  window: Window,
  read: (instrument: string, minutes: number) => Promise<PriceSeries> | PriceSeries,
  notes: string[],
): Promise<PriceSeries[]> {
  const minutes = barMinutes(window);
  const out: PriceSeries[] = [];
  for (const instrument of instruments) {
    try {
      const series = await read(instrument, minutes);
      out.push(series.bars.length > 0 ? series : { instrument, periodMinutes: 0, bars: [], from: 'fills' });
    } catch (error) {
      if (error instanceof ConfigError || !(error instanceof TradeError)) throw error;
      notes.push(`No bars for ${instrument} (${message(error)}): its chart draws the fills alone.`);
      out.push({ instrument, periodMinutes: 0, bars: [], from: 'fills' });
    }
  }
  return out;
}
