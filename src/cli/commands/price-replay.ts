/**
 * `trade price replay FILE...`: files of ticks or bars (CSV or NDJSON, either gzip-compressed)
 * streamed into the embedded engine while the replay drives the store's session clock (issue 29).
 * Every file is checked whole first (a streaming pass: nothing is set when any record is bad),
 * then replayed in a second pass at `--speed` times its pace, in groups of one transaction each.
 * At a terminal a progress line is kept on stderr (nothing of it in a script or with --json);
 * Ctrl-C stops between two groups with exit 0 and the summary.
 */
import { basename } from 'node:path';
import { parseAll, UsageError } from '../../common/errors.js';
import { parseInstrument } from '../../service/order.js';
import type { ClockState } from '../../service/session-clock.js';
import { replayTime } from '../../service/session-clock.js';
import { parseTime } from '../../engine/price-feed.js';
import { openReplayFile, type ReadProgress, type ReplayWindow } from '../../engine/replay-file.js';
import { driveReplay, planProgress, type ReplayPlan, type ReplaySource, type ReplayTally } from '../../engine/replay-driver.js';
import { requireEmbedded } from '../call.js';
import { using, type CommandContext } from '../context.js';
import { formatPrice } from '../format.js';
import { untilSignal } from '../signals.js';
import { parseSpeed, statusLine } from './price-feed.js';

export interface ReplayOptions {
  instrument?: string;
  speed?: string;
  from?: string;
  to?: string;
  /** Start with the clock paused at the first record (trade sandbox clock resume, or step). */
  paused?: boolean;
  json?: boolean;
}

/** `--from`/`--to`: a time as the file's are written (ISO 8601, no zone is UTC; epoch s or ms). */
export function parseWindow(options: { from?: string; to?: string }): ReplayWindow {
  const time = (flag: string, text: string | undefined) => {
    if (text === undefined) return undefined;
    const ms = parseTime(text.trim());
    if (ms === undefined) throw new UsageError(`${flag} must be a time like 2026-03-18T14:30:00Z (no zone: UTC) or epoch seconds or milliseconds, got '${text}'`, { hint: 'Nothing was replayed.' });
    return ms;
  };
  const window = { fromMs: time('--from', options.from), toMs: time('--to', options.to) };
  if (window.fromMs !== undefined && window.toMs !== undefined && window.toMs <= window.fromMs)
    throw new UsageError(`--to (${new Date(window.toMs).toISOString()}) must be after --from (${new Date(window.fromMs).toISOString()})`, { hint: 'Nothing was replayed.' });
  return window;
}

/** --instrument, checked: the instrument of records that name none. */
export const fallbackInstrument = (raw: string | undefined) =>
  raw === undefined ? undefined : parseAll<[string]>([() => parseInstrument(raw)], { hint: 'Nothing was replayed.' })[0];

/**
 * Opens and checks every file (the first pass: nothing is set), each with its own --instrument.
 * `onChecking` sees the bytes read so far.
 */
export async function planReplay(
  files: Array<{ file: string; instrument?: string }>,
  window: ReplayWindow = {},
  onChecking: (file: string, progress: ReadProgress) => void = () => undefined,
): Promise<ReplayPlan> {
  const sources: ReplaySource[] = [];
  for (const { file, instrument } of files) {
    const reader = await openReplayFile(file);
    const progress: ReadProgress = { bytes: 0, size: 0 };
    onChecking(file, progress);
    sources.push({ file: await reader.check(instrument, window, progress), reader, fallback: instrument, progress });
  }
  const checked = sources.map((s) => s.file);
  return {
    sources,
    window,
    total: checked.reduce((n, f) => n + f.inWindow, 0),
    bars: checked.reduce((n, f) => n + f.bars, 0),
    firstMs: Math.min(...checked.map((f) => f.windowFirstMs)),
    lastMs: Math.max(...checked.map((f) => f.windowLastMs)),
    describe: checked.map((f) => f.file).join(', '),
  };
}

const iso = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString());

/** What a replay did, in one line. */
export function describeReplay(plan: ReplayPlan, tally: ReplayTally): string {
  return `replayed ${tally.records} of ${plan.total} records (${plan.bars} bars, ${plan.total - plan.bars} ticks) from ${iso(tally.firstMs ?? plan.firstMs)} to ${iso(tally.lastMs ?? plan.firstMs)}`;
}

/** The summary of a replay, as --json prints it (beside the file or files). */
export function replaySummary(tally: ReplayTally) {
  return {
    records: tally.records,
    prices: tally.prices,
    fills: tally.fills,
    expiredOrders: tally.expired,
    cancelledOrders: tally.cancelled,
    bracketOrders: tally.brackets,
    firstTime: tally.firstMs === undefined ? null : iso(tally.firstMs),
    lastTime: tally.lastMs === undefined ? null : iso(tally.lastMs),
    seconds: Number(tally.seconds.toFixed(3)),
    recordsPerSecond: tally.seconds > 0 ? Math.round(tally.records / tally.seconds) : 0,
    lastPrices: Object.fromEntries(tally.last),
    ...(tally.stopped ? { stopped: tally.stopped } : {}),
  };
}

const duration = (seconds: number) =>
  !Number.isFinite(seconds) ? '?' : seconds >= 3600 ? `${Math.floor(seconds / 3600)}h${String(Math.floor((seconds % 3600) / 60)).padStart(2, '0')}m` : seconds >= 60 ? `${Math.floor(seconds / 60)}m${String(Math.floor(seconds % 60)).padStart(2, '0')}s` : `${Math.ceil(seconds)}s`;

/**
 * The progress line: percent of the file read, records a second, the replayed time, the time
 * left (from the bytes left at full speed, from the replayed time left at a pace), fills, the
 * last prices.
 */
export function progressText(plan: ReplayPlan, tally: ReplayTally, clock: ClockState): string {
  const { bytes, size } = planProgress(plan);
  const percent = size > 0 ? Math.min(100, Math.floor((bytes / size) * 100)) : 0;
  const rate = tally.seconds > 0 ? Math.round(tally.records / tally.seconds) : 0;
  const now = replayTime(clock, Date.now());
  const left = clock.paused ? 'paused' : clock.speed === 0 ? `${duration(tally.seconds > 0 && bytes > 0 ? ((size - bytes) * tally.seconds) / bytes : NaN)} left` : `${duration((plan.lastMs - now) / 1000 / clock.speed)} left`;
  const last = [...tally.last].map(([i, p]) => `${i} ${formatPrice(p)}`).join(', ');
  // The last prices last: a narrow terminal cuts them, not the figures.
  return `${percent}%  ${rate.toLocaleString('en-US')} records/s  ${iso(now).slice(0, 19)}Z  ${left}  fills ${tally.fills}  ${last}`;
}

/**
 * Replays files of ticks or bars into the engine's last prices at `--speed` times their pace,
 * merged by time; each file is checked whole before the first price is set.
 */
export async function runPriceReplay(ctx: CommandContext, files: string[], options: ReplayOptions): Promise<void> {
  const speed = parseSpeed(options.speed);
  const window = parseWindow(options);
  const fallback = fallbackInstrument(options.instrument);
  const shown = options.json !== true && ctx.io.stderr.isTTY === true;
  const status = statusLine(ctx, shown);
  // Reading and checking the files sets nothing: the flags and the files are judged first.
  let checking: { file: string; progress: ReadProgress } | undefined;
  const timer = setInterval(() => checking && status.show(`checking ${basename(checking.file)}  ${checking.progress.size ? Math.floor((checking.progress.bytes / checking.progress.size) * 100) : 0}%`), 100);
  let plan: ReplayPlan;
  try {
    plan = await planReplay(files.map((file) => ({ file, instrument: fallback })), window, (file, progress) => (checking = { file, progress }));
  } finally {
    clearInterval(timer);
  }
  const stop = untilSignal();
  let tally: ReplayTally;
  try {
    await requireEmbedded(ctx, 'price replay');
    tally = await using(await ctx.openEngine(), (engine) => driveReplay(engine, plan, speed, stop.stopped, (t, clock) => shown && status.show(progressText(plan, t, clock)), { paused: options.paused }));
  } finally {
    stop.dispose();
    status.done();
  }
  const file = files.length === 1 ? { file: files[0] } : { files };
  if (options.json) {
    ctx.io.out(JSON.stringify({ ...file, ...replaySummary(tally), success: true }));
    return;
  }
  const prices = [...tally.last].map(([i, p]) => `${i} ${formatPrice(p)}`).join(', ') || 'none';
  ctx.io.out(`${tally.stopped ? `Stopped (${tally.stopped}) after` : 'Done:'} ${describeReplay(plan, tally)}`);
  ctx.io.out(`  last price  ${prices}`);
  const extra = [tally.brackets ? `${tally.brackets} bracket orders placed` : '', tally.cancelled ? `${tally.cancelled} orders cancelled` : '', tally.expired ? `${tally.expired} DAY orders expired` : ''].filter(Boolean);
  ctx.io.out(`  fills       ${[String(tally.fills), ...extra].join(', ')}`);
  ctx.io.out(`  rate        ${replaySummary(tally).recordsPerSecond.toLocaleString('en-US')} records/s (${tally.seconds.toFixed(1)} s)`);
}
