/**
 * `trade price source` and `trade price run`: where each instrument's prices come from on the
 * embedded engine (manual, demo, random, remote, replay), chosen for every instrument, a root or
 * one contract and kept in the store so every process sharing it agrees; and running the chosen
 * sources in the foreground (`trade serve` runs them too while it serves).
 */
import { resolve } from 'node:path';
import { parseAll, UsageError } from '../../common/errors.js';
import { parseInstrument } from '../../service/order.js';
import { contractSpec } from '../../service/contracts.js';
import { DEFAULT_SOURCE, type Engine, PRICE_SOURCES, type PriceSourceKind, type PriceSourceParams, type PriceSourceRecord } from '../../engine/engine.js';
import { requireEmbedded } from '../call.js';
import { type CommandContext, using } from '../context.js';
import { formatPrice } from '../format.js';
import { table } from '../io.js';
import { type StopWhen, untilSignal } from '../signals.js';
import { describeFeedPlan, type Feed, driveFeed, followFrom, parseSpeed, planWalk, releaseFeeds, type Tally } from './price-feed.js';

export interface SourceOptions {
  instrument?: string;
  reset?: boolean;
  speed?: string;
  seed?: string;
  interval?: string;
  maxTicks?: string;
  from?: string;
  json?: boolean;
}

/** What a source means, for the listing. */
const MEANING: Record<PriceSourceKind, string> = {
  manual: 'trade price set only; a MARKET order with no price is refused',
  demo: 'as manual, but an instrument with no price starts at its root\'s demo price',
  random: 'a seeded random walk while trade price run or trade serve drives it',
  remote: "the service's live quotes while trade price run or trade serve drives it",
  replay: 'a file of ticks or bars while trade price run or trade serve drives it',
};

/** The flags each source takes beyond --instrument. */
const SOURCE_FLAGS: Record<PriceSourceKind, ReadonlyArray<keyof SourceOptions>> = {
  manual: [],
  demo: [],
  random: ['seed', 'interval', 'maxTicks'],
  remote: ['from'],
  replay: ['speed'],
};
const FLAG_NAMES: Partial<Record<keyof SourceOptions, string>> = { speed: '--speed', seed: '--seed', interval: '--interval', maxTicks: '--max-ticks', from: '--from' };

/** `--instrument`: a root of the contract table (every contract of it) or one contract; none is every instrument. */
export function parseTarget(raw: string | undefined): string {
  if (raw === undefined) return '*';
  const upper = raw.trim().toUpperCase();
  if (/^[A-Z0-9]{1,12}$/.test(upper) && contractSpec(upper)) return upper;
  return parseAll<[string]>([() => parseInstrument(raw)], { hint: 'Nothing was changed.' })[0];
}

const targetName = (target: string) => (target === '*' ? 'every instrument' : target);

function describeParams(record: PriceSourceRecord): string {
  const p = record.params;
  const parts: string[] = [];
  if (p.file !== undefined) parts.push(p.file);
  if (p.speed !== undefined) parts.push(`speed ${p.speed === 0 ? 'max' : p.speed}`);
  if (p.seed !== undefined) parts.push(`seed ${p.seed}`);
  if (p.interval !== undefined) parts.push(`every ${p.interval} ms`);
  if (p.maxTicks !== undefined) parts.push(`up to ${p.maxTicks} ticks`);
  if (p.from !== undefined) parts.push(`from ${p.from}`);
  return parts.join(', ');
}

/** Checks a source's settings now, so a bad file or flag is refused when it is chosen, not when it runs. */
async function paramsOf(ctx: CommandContext, source: PriceSourceKind, target: string, file: string | undefined, options: SourceOptions): Promise<PriceSourceParams> {
  for (const key of Object.keys(FLAG_NAMES) as Array<keyof SourceOptions>) {
    if (options[key] !== undefined && !SOURCE_FLAGS[source].includes(key))
      throw new UsageError(`${FLAG_NAMES[key]} is not a setting of the ${source} source`, { hint: 'Nothing was changed.' });
  }
  if (source === 'replay') {
    if (file === undefined) throw new UsageError('The replay source needs a FILE: trade price source replay FILE [--instrument I]', { hint: 'Nothing was changed.' });
    const speed = parseSpeed(options.speed);
    const { planReplay } = await import('./price-replay.js');
    await planReplay([{ file, instrument: target === '*' ? undefined : target }]);
    return { file: resolve(file), speed };
  }
  if (file !== undefined) throw new UsageError(`A FILE goes with the replay source only, not ${source}`, { hint: 'Nothing was changed.' });
  if (source === 'random') {
    if (target === '*') throw new UsageError('A random walk is of one instrument or root: give --instrument', { hint: 'Nothing was changed.' });
    const plan = planWalk(target, { seed: options.seed, interval: options.interval, maxTicks: options.maxTicks });
    return { seed: plan.seed, interval: plan.interval, maxTicks: plan.maxTicks };
  }
  if (source === 'remote') {
    if (target === '*') throw new UsageError("Live quotes are followed per instrument or root: give --instrument", { hint: 'Nothing was changed.' });
    return { from: followFrom(await ctx.settings(), options.from) };
  }
  return {};
}

export async function runPriceSource(ctx: CommandContext, rawSource: string | undefined, file: string | undefined, options: SourceOptions): Promise<void> {
  await requireEmbedded(ctx, 'price source');
  // The engine is opened first: it loads your own contracts (trade contract add), so that
  // `--instrument FDAX` is a root here too.
  await using(await ctx.openEngine(), async (engine) => {
    const target = parseTarget(options.instrument);
    if (rawSource === undefined && !options.reset) {
      if (options.instrument !== undefined) throw new UsageError('Give a SOURCE for --instrument, or --reset to forget its choice', { hint: "Run 'trade price source --help' for examples." });
      const chosen = engine.priceSources();
      const all = chosen.some((r) => r.target === '*') ? chosen : [DEFAULT_SOURCE, ...chosen];
      if (options.json) {
        ctx.io.out(JSON.stringify({ sources: all.map((r) => ({ ...r, default: r.updatedAt === undefined })), success: true }));
        return;
      }
      const rows = all.map((r) => [targetName(r.target), r.source + (r.updatedAt === undefined ? ' (default)' : ''), describeParams(r) || MEANING[r.source]]);
      for (const line of table(['FOR', 'SOURCE', 'SETTINGS'], rows)) ctx.io.out(line);
      return;
    }
    if (options.reset) {
      if (rawSource !== undefined) throw new UsageError('--reset forgets a choice: give no SOURCE with it', { hint: 'Nothing was changed.' });
      const removed = engine.clearPriceSource(target);
      if (options.json) ctx.io.out(JSON.stringify({ target, removed, success: true }));
      else ctx.io.out(removed ? `${targetName(target)}: back to ${target === '*' ? 'the default (demo)' : "every instrument's source"}` : `${targetName(target)} had no source of its own; nothing was changed`);
      return;
    }
    const source = rawSource!.trim().toLowerCase() as PriceSourceKind;
    if (!(PRICE_SOURCES as readonly string[]).includes(source))
      throw new UsageError(`SOURCE must be one of ${PRICE_SOURCES.join(', ')}, got '${rawSource}'`, { hint: 'Nothing was changed.' });
    const params = await paramsOf(ctx, source, target, file, options);
    const record = engine.setPriceSource(target, source, params);
    if (options.json) ctx.io.out(JSON.stringify({ ...record, success: true }));
    else {
      const settings = describeParams(record);
      ctx.io.out(`${targetName(target)}: ${source}${settings ? ` (${settings})` : ''}: ${MEANING[source]}`);
    }
  });
}

/** Sources that need a process to drive them. */
const DRIVEN: ReadonlySet<PriceSourceKind> = new Set(['random', 'remote', 'replay']);

/** The contract a target drives: itself, or a root's front month now. */
const contractOf = (target: string) => (target.includes(' ') ? target : parseAll<[string]>([() => parseInstrument(target)])[0]);

/**
 * The feeds of the chosen sources: every root's and contract's driven source (a random walk, the
 * service's quotes, a replay), and every instrument's replay; or, with `named`, those instruments'
 * own. Opens the service connection of the remote ones; a caller that will not drive them calls
 * releaseFeeds. Throws a UsageError when a named instrument's source is not one to run.
 */
export async function planChosenFeeds(ctx: CommandContext, engine: Engine, named: string[]): Promise<Feed[]> {
  const chosen: Array<{ instrument: string | undefined; record: PriceSourceRecord }> = [];
  if (named.length > 0) {
    for (const instrument of named) {
      const record = engine.priceSourceOf(instrument);
      if (!DRIVEN.has(record.source))
        throw new UsageError(`${instrument}'s price source is ${record.source}: there is nothing to run`, { hint: 'Choose one first: trade price source random|remote|replay --instrument ' + JSON.stringify(instrument) });
      chosen.push({ instrument, record });
    }
  } else {
    for (const record of engine.priceSources()) {
      if (!DRIVEN.has(record.source)) continue;
      chosen.push({ instrument: record.target === '*' ? undefined : contractOf(record.target), record });
    }
  }
  const feeds: Feed[] = [];
  const follow = new Map<'http' | 'ws', string[]>();
  // The chosen replays are one replay, merged by time: one clock drives them all.
  const replays = chosen.filter((c) => c.record.source === 'replay');
  const speeds = [...new Set(replays.map((c) => c.record.params.speed ?? 1))];
  if (speeds.length > 1)
    throw new UsageError(`The chosen replays have different speeds (${replays.map((c) => `${targetName(c.record.target)}: ${c.record.params.speed === 0 ? 'max' : (c.record.params.speed ?? 1)}`).join(', ')}): one clock drives them all`, {
      hint: 'Choose one speed: trade price source replay FILE --instrument I --speed N for each.',
    });
  try {
    if (replays.length > 0) {
      const { planReplay } = await import('./price-replay.js');
      const plan = await planReplay(replays.map((c) => ({ file: c.record.params.file!, instrument: c.instrument })));
      feeds.push({ kind: 'replay', plan, speed: speeds[0]!, describe: describeFeedPlan.replay(plan, speeds[0]!) });
    }
    for (const { instrument, record } of chosen) {
      const p = record.params;
      if (record.source === 'replay') continue;
      if (record.source === 'random') {
        const plan = planWalk(instrument!, { seed: p.seed === undefined ? undefined : String(p.seed), interval: p.interval === undefined ? undefined : String(p.interval), maxTicks: p.maxTicks === undefined ? undefined : String(p.maxTicks) });
        feeds.push({ kind: 'random', plan, describe: describeFeedPlan.random(plan) });
      } else {
        const from = p.from ?? 'ws';
        follow.set(from, [...(follow.get(from) ?? []), instrument!]);
      }
    }
    if (follow.size > 0) {
      const settings = await ctx.settings();
      const { openBackend } = await import('../../backends/resolve.js');
      for (const [from, instruments] of follow) {
        const remote = await openBackend({ ...settings, backend: from }, ctx.storeFile());
        feeds.push({ kind: 'follow', remote, instruments, timeoutMs: settings.timeoutMs, describe: describeFeedPlan.follow(instruments, remote.label) });
      }
    }
  } catch (error) {
    await releaseFeeds(feeds);
    throw error;
  }
  return feeds;
}

export interface RunOptions {
  json?: boolean;
}

/**
 * Drives the chosen sources in the foreground until every finite one (a replay, a walk with a
 * number of steps) has ended and no endless one remains, or Ctrl-C (exit 0).
 */
export async function runPriceRun(ctx: CommandContext, rawInstruments: string[], options: RunOptions, deps: { stopWhen?: StopWhen } = {}): Promise<void> {
  const named = parseAll(rawInstruments.map((raw) => () => parseInstrument(raw)), { hint: "Nothing was changed. Run 'trade price run --help' for examples." }) as string[];
  await requireEmbedded(ctx, 'price run');
  const stop = (deps.stopWhen ?? untilSignal)();
  try {
    await using(await ctx.openEngine(), async (engine) => {
      const feeds = await planChosenFeeds(ctx, engine, named);
      if (feeds.length === 0) {
        await releaseFeeds(feeds);
        throw new UsageError('No price source to run: every instrument takes its prices by hand (manual or demo)', {
          hint: 'Choose one: trade price source random --instrument ES, trade price source remote --instrument ES, or trade price source replay FILE --instrument ES',
        });
      }
      const note = (line: string) => ctx.io.err(ctx.io.errColor.dim(line));
      for (const feed of feeds) note(`Running ${feed.describe} into the simulator (${engine.file}).`);
      note('Ctrl-C stops.');
      const results = await Promise.allSettled(feeds.map((feed) => driveFeed(engine, feed, stop.stopped, note)));
      const report: Array<{ source: Feed['kind']; describe: string; tally?: Tally; summary?: string; error?: string }> = results.map((result, i) =>
        result.status === 'fulfilled'
          ? { source: feeds[i]!.kind, describe: feeds[i]!.describe, tally: result.value.tally, summary: result.value.summary }
          : { source: feeds[i]!.kind, describe: feeds[i]!.describe, error: (result.reason as Error).message },
      );
      if (options.json) {
        ctx.io.out(
          JSON.stringify({
            feeds: report.map((r) => ({
              source: r.source,
              describe: r.describe,
              ...(r.tally ? { prices: r.tally.prices, fills: r.tally.fills, lastPrices: Object.fromEntries(r.tally.last), ...(r.tally.stopped ? { stopped: r.tally.stopped } : {}) } : {}),
              ...(r.error ? { error: r.error } : {}),
            })),
            success: report.every((r) => !r.error),
          }),
        );
      } else {
        for (const r of report) {
          if (r.error) ctx.io.err(ctx.io.errColor.red(`${r.describe}: ${r.error}`));
          else ctx.io.out(`${r.summary}; ${r.tally!.fills} fills; last ${[...r.tally!.last].map(([i, p]) => `${i} ${formatPrice(p)}`).join(', ') || 'none'}`);
        }
      }
      // The first failure is the command's (a lost connection: exit 4), after every feed was reported.
      const failed = results.find((r) => r.status === 'rejected');
      if (failed) throw failed.reason;
    });
  } finally {
    stop.dispose();
  }
}
