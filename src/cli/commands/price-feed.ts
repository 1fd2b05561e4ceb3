/**
 * `trade price random INSTRUMENT` and `trade price follow INSTRUMENT...`: price sources run in
 * the foreground on the embedded engine, each price one `price set` (one transaction, filling the
 * working orders it crosses); a status line is kept at a terminal; Ctrl-C stops between two prices
 * with exit 0 and the summary. And the feeds `trade price run` and `trade serve` drive: these two
 * and a replay (price-replay.ts).
 */
import { parseAll, UsageError } from '../../common/errors.js';
import { parseInstrument, parsePrice } from '../../service/order.js';
import type { Engine } from '../../engine/engine.js';
import { onTick, nearestTicks, randomWalk, tickSizeOf } from '../../engine/price-feed.js';
import type { ReplayPlan } from '../../engine/replay-driver.js';
import { requireEmbedded } from '../call.js';
import { contractSpec, rootOf } from '../../service/contracts.js';
import { using, type CommandContext } from '../context.js';
import { formatPrice } from '../format.js';
import { numberOrText } from '../order-flags.js';
import { type StopWhen, untilSignal } from '../signals.js';
import type { Backend } from '../../backends/types.js';
import type { Settings } from '../../config/settings.js';
import { REMOTE_BACKENDS } from '../../config/keys.js';

export interface RandomOptions {
  start?: string;
  seed?: string;
  steps?: string;
  interval?: string;
  maxTicks?: string;
  tickSize?: string;
  json?: boolean;
}

/** What a run did, printed at its end. */
export interface Tally {
  records: number;
  prices: number;
  fills: number;
  cancelled: number;
  brackets: number;
  last: Map<string, number>;
  stopped?: string;
}

const newTally = (): Tally => ({ records: 0, prices: 0, fills: 0, cancelled: 0, brackets: 0, last: new Map() });

/** `--speed`: a multiple of real time from the file's times, or 0 (`max`) for as fast as the store writes. */
export function parseSpeed(text: string | undefined): number {
  if (text === undefined) return 1;
  if (text.trim().toLowerCase() === 'max') return 0;
  const speed = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(speed) || speed < 0 || speed > 1_000_000)
    throw new UsageError(`--speed must be a number from 0 to 1000000 (times real time; 0 or max: as fast as possible), got '${text}'`);
  return speed;
}

function wholeFlag(flag: string, text: string | undefined, min: number, max: number, fallback: number): number {
  if (text === undefined) return fallback;
  const value = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got '${text}'`);
  return value;
}

/** Waits, or less when the run is stopped meanwhile. */
function pause(ms: number, stopped: Promise<string>): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    void stopped.then(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** Sets one price and counts what it did. */
function setOne(engine: Engine, tally: Tally, instrument: string, price: number): void {
  if (tally.last.get(instrument) === price) return;
  const outcome = engine.setPrice(instrument, price);
  tally.prices++;
  tally.fills += outcome.fills.length;
  tally.cancelled += outcome.cancelledOrderIds.length;
  tally.brackets += outcome.bracketOrders.length;
  tally.last.set(instrument, price);
}

/** A one-line status at a terminal (unless `shown` is false), rewritten in place at most ten times a second. */
export function statusLine(ctx: CommandContext, enabled = true): { show(text: string): void; done(): void } {
  const tty = enabled && ctx.io.stderr.isTTY === true;
  let shown = 0;
  let width = 0;
  return {
    show(text) {
      if (!tty || Date.now() - shown < 100) return;
      shown = Date.now();
      // A terminal that reports no size (0 columns, as some ptys) is taken to have 80.
      const line = text.slice(0, Math.max(20, (ctx.io.stderr.columns || 80) - 1));
      ctx.io.stderr.write(`\r${line.padEnd(width)}`);
      width = line.length;
    },
    done() {
      if (tty && width > 0) ctx.io.stderr.write(`\r${' '.repeat(width)}\r`);
    },
  };
}

function printTally(ctx: CommandContext, what: string, tally: Tally, json: boolean | undefined, extra: Record<string, unknown> = {}): void {
  const last = Object.fromEntries(tally.last);
  if (json) {
    ctx.io.out(JSON.stringify({ ...extra, records: tally.records, prices: tally.prices, fills: tally.fills, cancelledOrders: tally.cancelled, bracketOrders: tally.brackets, lastPrices: last, ...(tally.stopped ? { stopped: tally.stopped } : {}), success: true }));
    return;
  }
  const prices = [...tally.last].map(([i, p]) => `${i} ${formatPrice(p)}`).join(', ') || 'none';
  ctx.io.out(`${tally.stopped ? `Stopped (${tally.stopped}) after` : 'Done:'} ${what}`);
  ctx.io.out(`  last price  ${prices}`);
  ctx.io.out(`  fills       ${tally.fills}${tally.brackets ? `, ${tally.brackets} bracket orders placed` : ''}${tally.cancelled ? `, ${tally.cancelled} orders cancelled` : ''}`);
}

/** A random walk's settings, checked. */
export interface WalkPlan {
  instrument: string;
  seed: number;
  steps: number;
  interval: number;
  maxTicks: number;
  tickSize: number;
  start?: number;
}

/** Checks a walk's flags; throws a UsageError naming the flag. */
export function planWalk(rawInstrument: string, options: RandomOptions): WalkPlan {
  const [instrument] = parseAll<[string]>([() => parseInstrument(rawInstrument)], { hint: "Nothing was changed. Run 'trade price random --help' for examples." });
  const seed = wholeFlag('--seed', options.seed, 0, 4_294_967_295, Math.floor(Math.random() * 4_294_967_296));
  const steps = wholeFlag('--steps', options.steps, 1, 100_000_000, Infinity);
  const interval = wholeFlag('--interval', options.interval, 0, 3_600_000, 1000);
  const maxTicks = wholeFlag('--max-ticks', options.maxTicks, 1, 1000, 4);
  const tickSize = tickSizeOf(instrument) ?? (options.tickSize === undefined ? undefined : parseAll<[number]>([() => parsePrice(numberOrText(options.tickSize))])[0]);
  if (tickSize === undefined)
    throw new UsageError(`--tick-size is needed: ${instrument} is not in the contract table`, { hint: 'Nothing was changed. e.g. --tick-size 0.01' });
  const start = options.start === undefined ? undefined : parseAll<[number]>([() => parsePrice(numberOrText(options.start))])[0];
  if (start !== undefined && !onTick(instrument, start)) {
    const [below, above] = nearestTicks(instrument, start);
    throw new UsageError(`--start ${start} is not a multiple of the tick size ${tickSize}; the nearest valid prices are ${below} and ${above}`, { hint: 'Nothing was changed.' });
  }
  return { instrument, seed, steps, interval, maxTicks, tickSize, start };
}

/** Where a walk starts: its --start, else the last price, else the root's demo price. */
export function walkStart(engine: Engine, plan: WalkPlan): number | undefined {
  return plan.start ?? engine.lastPrice(plan.instrument) ?? contractSpec(rootOf(plan.instrument))?.demoPrice;
}

/** Walks until its steps are done or `stopped` resolves; `onStep` after each step. */
export async function driveWalk(engine: Engine, plan: WalkPlan, stopped: Promise<string>, onStep: (tally: Tally, step: number) => void = () => undefined): Promise<Tally> {
  const start = walkStart(engine, plan);
  if (start === undefined) throw new UsageError(`No price is known for ${plan.instrument} and ${rootOf(plan.instrument)} has no demo price: give the walk a --start price`, { hint: 'Nothing was changed.' });
  const tally = newTally();
  let stop: string | undefined;
  void stopped.then((reason) => (stop = reason));
  const next = randomWalk({ seed: plan.seed, start, tickSize: plan.tickSize, maxTicks: plan.maxTicks });
  for (let i = 0; i < plan.steps; i++) {
    if (i > 0) await pause(plan.interval, stopped);
    await Promise.resolve();
    if (stop) break;
    setOne(engine, tally, plan.instrument, next());
    tally.records++;
    onStep(tally, i);
  }
  tally.stopped = stop;
  return tally;
}

/** What a walk did, in one line. */
export const describeWalk = (plan: WalkPlan, tally: Tally) =>
  `${tally.records} steps of a random walk of ${plan.instrument} (seed ${plan.seed}, up to ${plan.maxTicks} ticks a step)`;

/**
 * A seeded random walk on the instrument's tick grid, one price every `--interval` ms (0: as
 * fast as possible) for `--steps` prices, or until Ctrl-C. The seed is printed, so a run can be
 * repeated exactly.
 */
export async function runPriceRandom(ctx: CommandContext, rawInstrument: string, options: RandomOptions): Promise<void> {
  const plan = planWalk(rawInstrument, options);
  await requireEmbedded(ctx, 'price random');
  const stop = untilSignal();
  const status = statusLine(ctx);
  let tally: Tally;
  try {
    tally = await using(await ctx.openEngine(), (engine) =>
      driveWalk(engine, plan, stop.stopped, (t, i) =>
        status.show(`${plan.instrument} ${formatPrice(t.last.get(plan.instrument)!)}  step ${i + 1}${Number.isFinite(plan.steps) ? `/${plan.steps}` : ''}  seed ${plan.seed}  fills ${t.fills}`),
      ),
    );
  } finally {
    stop.dispose();
    status.done();
  }
  printTally(ctx, describeWalk(plan, tally), tally, options.json, { instrument: plan.instrument, seed: plan.seed });
}

export interface FollowOptions {
  from?: string;
  json?: boolean;
}

/**
 * Live prices from the remote service into the simulator (the `remote` source): the service's
 * quotes of the instruments — its WebSocket `marketData` stream with `--from ws`, GetQuote polled
 * within the request budget with `--from http`, read with the profile's URL and token — set as the
 * engine's last prices as they change, filling what they cross. Orders stay in the simulator:
 * nothing but quote reads is sent. Runs until Ctrl-C (exit 0); a lost connection ends it (exit 4).
 */
/** Where `price follow` reads: the profile's backend when remote, else ws; never embedded. */
export function followFrom(settings: Settings, flag: string | undefined): 'http' | 'ws' {
  const from = flag ?? (settings.backend === 'embedded' ? 'ws' : settings.backend);
  if (!(REMOTE_BACKENDS as readonly string[]).includes(from)) throw new UsageError(`--from must be http or ws (the service the prices come from), got '${from}'`);
  return from as 'http' | 'ws';
}

/**
 * Sets the remote service's quotes of the instruments as the engine's last prices as they change,
 * until `stopped` resolves; `onPrice` after each price set. A price the simulator refuses (off the
 * tick) is skipped, said once per instrument through `note`. Rejects when the feed fails (a lost
 * connection).
 */
export async function driveFollow(
  engine: Engine,
  remote: Backend,
  instruments: string[],
  timeoutMs: number,
  stopped: Promise<string>,
  note: (line: string) => void,
  onPrice: (tally: Tally, line: { instrument: string; price: number; fills: number; time: string }) => void = () => undefined,
): Promise<Tally> {
  const { watchQuotes } = await import('../watch-feeds.js');
  const tally = newTally();
  let problem: string | undefined;
  const controller = new AbortController();
  const running = watchQuotes({ backend: remote, signal: controller.signal, note, timeoutMs }, instruments, (quote) => {
    const instrument = quote.instrument ?? '';
    const price = quote.last;
    if (!instruments.includes(instrument) || typeof price !== 'number' || !(price > 0)) return;
    if (tally.last.get(instrument) === price) return;
    const fills = tally.fills;
    try {
      setOne(engine, tally, instrument, price);
    } catch (error) {
      if (problem !== instrument) note(`Skipped ${instrument} ${price}: ${(error as Error).message}`);
      problem = instrument;
      return;
    }
    tally.records++;
    onPrice(tally, { instrument, price, fills: tally.fills - fills, time: new Date().toISOString() });
  });
  try {
    const reason = await Promise.race([stopped, running.then(() => undefined)]);
    if (reason !== undefined) tally.stopped = reason;
  } finally {
    controller.abort();
    await running.catch(() => undefined);
  }
  // A feed that ended on its own failed: its error is the caller's.
  if (tally.stopped === undefined) await running;
  return tally;
}

export async function runPriceFollow(ctx: CommandContext, rawInstruments: string[], options: FollowOptions, deps: { stopWhen?: StopWhen } = {}): Promise<void> {
  const instruments = parseAll(
    rawInstruments.map((raw) => () => parseInstrument(raw)),
    { hint: "Nothing was changed. Run 'trade price follow --help' for examples." },
  ) as string[];
  const settings = await ctx.settings();
  const from = followFrom(settings, options.from);
  const { openBackend } = await import('../../backends/resolve.js');
  const stop = (deps.stopWhen ?? untilSignal)();
  const status = statusLine(ctx);
  let tally: Tally;
  try {
    const remote = await openBackend({ ...settings, backend: from }, ctx.storeFile());
    tally = await using(remote, async () =>
      using(await ctx.openEngine(), async (engine) => {
        const note = (line: string) => ctx.io.err(ctx.io.errColor.dim(line));
        note(`Following quotes of ${instruments.join(', ')} from ${remote.label} into the simulator (${engine.file}). Ctrl-C stops.`);
        return driveFollow(engine, remote, instruments, settings.timeoutMs, stop.stopped, note, (t, line) => {
          if (options.json) ctx.io.out(JSON.stringify(line));
          else ctx.io.out(`${line.time.slice(11, 19)}  ${line.instrument}  ${formatPrice(line.price)}${line.fills ? `  filled ${line.fills}` : ''}`);
          status.show(`${line.instrument} ${formatPrice(line.price)}  prices ${t.prices}  fills ${t.fills}`);
        });
      }),
    );
  } finally {
    stop.dispose();
    status.done();
  }
  ctx.io.err(`Stopped (${tally.stopped}) after ${tally.prices} prices from ${from}; ${tally.fills} fills.`);
}

/** A price source ready to drive: checked whole, its service connection (follow) already open. */
export type Feed =
  | { kind: 'replay'; plan: ReplayPlan; speed: number; describe: string; paused?: boolean }
  | { kind: 'random'; plan: WalkPlan; describe: string }
  | { kind: 'follow'; remote: Backend; instruments: string[]; timeoutMs: number; describe: string };

export const describeFeedPlan = {
  replay: (plan: ReplayPlan, speed: number) => `replaying ${plan.describe} (${plan.total} records) at ${speed === 0 ? 'full speed' : `${speed}× its pace`}`,
  random: (plan: WalkPlan) => `a random walk of ${plan.instrument} (seed ${plan.seed}), a step every ${plan.interval} ms`,
  follow: (instruments: string[], label: string) => `following ${instruments.join(', ')} from ${label}`,
};

/**
 * Drives one feed until it ends or `stopped` resolves; `done` is told how a finite one ended.
 * A follow's service connection is closed when it ends.
 */
export async function driveFeed(engine: Engine, feed: Feed, stopped: Promise<string>, note: (line: string) => void, onStep: (tally: Tally) => void = () => undefined): Promise<{ tally: Tally; summary: string }> {
  try {
    if (feed.kind === 'replay') {
      const [{ driveReplay }, { describeReplay }] = await Promise.all([import('../../engine/replay-driver.js'), import('./price-replay.js')]);
      const tally = await driveReplay(engine, feed.plan, feed.speed, stopped, (t) => onStep(t), { paused: feed.paused });
      return { tally, summary: `price replay ${tally.stopped ? 'stopped' : 'done'}: ${describeReplay(feed.plan, tally)}` };
    }
    if (feed.kind === 'random') {
      const tally = await driveWalk(engine, feed.plan, stopped, (t) => onStep(t));
      return { tally, summary: `random walk ${tally.stopped ? 'stopped' : 'done'}: ${describeWalk(feed.plan, tally)}` };
    }
    const tally = await driveFollow(engine, feed.remote, feed.instruments, feed.timeoutMs, stopped, note, (t) => onStep(t));
    return { tally, summary: `following ${feed.instruments.join(', ')} stopped after ${tally.prices} prices` };
  } finally {
    if (feed.kind === 'follow') await feed.remote.close();
  }
}

/** Closes what feeds hold (a follow's connection) when they will never be driven. */
export async function releaseFeeds(feeds: readonly Feed[]): Promise<void> {
  for (const feed of feeds) if (feed.kind === 'follow') await feed.remote.close();
}
