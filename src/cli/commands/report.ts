/**
 * `trade report`: what the trading did, in numbers and in pictures (issue 30). Reads the fills of
 * one account or several over a window (the current trading day by default), pairs them into
 * trades and prints the figures as tables (`--json`: the same numbers as one object), writes a
 * self-contained HTML page (`--html FILE`, `--open`), and with `--follow` prints it again at every
 * new execution until Ctrl-C. On embedded it reads the store; on http and ws the execution history
 * (src/report/), brought up to date first. What it is made of is in src/report/.
 */
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Backend } from '../../backends/types.js';
import type { EmbeddedBackend } from '../../backends/embedded.js';
import { STARTING_CASH } from '../../engine/market.js';
import { parseAll, UsageError } from '../../common/errors.js';
import { parseInstrument } from '../../service/order.js';
import type { Report } from '../../report/report.js';
import type { PriceSeries, ReportData } from '../../report/sources.js';
import type { Window } from '../../report/trading-days.js';
import { accountScope, showScope } from '../account-scope.js';
import { using, type CommandContext } from '../context.js';
import { fitTable, note, printTable } from '../io.js';
import type { WatchDeps } from './watch.js';

export interface ReportOptions {
  account?: string;
  allAccounts?: boolean;
  from?: string;
  to?: string;
  days?: string;
  instrument?: string;
  capital?: string;
  json?: boolean;
  html?: string;
  open?: boolean;
  follow?: boolean;
}

const HINT = "Nothing was read. Run 'trade report --help' for examples.";

function parseCapital(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = /^\s*\d+(\.\d+)?\s*$/.test(text) ? Number(text) : NaN;
  if (!(value > 0)) throw new UsageError(`--capital takes an amount of money above 0 (100000), got '${text}'`, { hint: HINT });
  return value;
}

interface Plan {
  window: Window;
  accounts: string[] | undefined;
  instrument: string | undefined;
  capital: number | undefined;
}

/** Reads what the report is made of and builds it; with `html`, the price series of what it traded too. */
async function produce(ctx: CommandContext, backend: Backend, plan: Plan, html: boolean, refresh: boolean): Promise<{ report: Report; series: PriceSeries[] }> {
  const [{ buildReport }, sources] = await Promise.all([import('../../report/report.js'), import('../../report/sources.js')]);
  let data: ReportData;
  let bars: (instrument: string, minutes: number) => Promise<PriceSeries> | PriceSeries;
  if (backend.name === 'embedded') {
    const { engine } = backend as EmbeddedBackend;
    data = sources.embeddedData(engine, plan.accounts, plan.window);
    bars = (instrument, minutes) => sources.embeddedBars(engine, instrument, plan.window, minutes);
  } else {
    const [{ historyPath, historyService, openHistory }] = await Promise.all([import('../../report/history.js')]);
    const settings = await ctx.settings();
    const history = openHistory(historyPath(ctx.storeFile()));
    try {
      const service = historyService(settings.backend, settings.backend === 'http' ? settings.baseUrl : settings.wsUrl);
      data = await sources.remoteData({ backend, history, service, now: ctx.now().getTime(), refresh }, plan.accounts, plan.window);
    } finally {
      history.close();
    }
    bars = (instrument, minutes) => sources.remoteBars(backend, instrument, plan.window, minutes);
  }
  const report = buildReport({ ...data, window: plan.window, instrument: plan.instrument, capital: plan.capital ?? STARTING_CASH * Math.max(1, data.accounts.length) });
  if (!html) return { report, series: [] };
  const traded = [...new Set([...report.trades.map((t) => t.instrument), ...report.openPositions.map((p) => p.instrument)])].sort();
  const series = await sources.priceSeries(traded, plan.window, bars, report.notes);
  return { report, series };
}

async function output(ctx: CommandContext, options: ReportOptions, report: Report, series: PriceSeries[]): Promise<void> {
  if (options.json) ctx.io.out(JSON.stringify(report));
  else {
    const { headline, noteLines, sections } = await import('../../report/table.js');
    ctx.io.out(headline(report));
    for (const section of sections(report)) {
      ctx.io.out();
      ctx.io.out(section.title);
      if (section.rows.length === 0) ctx.io.out('None.');
      else printTable(ctx.io, fitTable(section.header, section.rows, { width: ctx.io.width, optional: section.optional }));
    }
    const notes = noteLines(report);
    if (notes.length > 0) {
      ctx.io.out();
      ctx.io.out('Notes');
      for (const line of notes) ctx.io.out(`- ${line}`);
    }
  }
  if (options.html === undefined) return;
  const { renderHtml } = await import('../../report/html.js');
  const file = resolve(options.html);
  const page = renderHtml(report, series);
  writeFileSync(file, page);
  note(ctx.io, `Wrote ${file} (${Math.round(Buffer.byteLength(page) / 1024)} KiB): opens offline, nothing is fetched.`);
  if (!options.open) return;
  const { openInBrowser } = await import('../open-file.js');
  const failed = await openInBrowser(file, ctx.env as NodeJS.ProcessEnv);
  if (failed) ctx.io.err(ctx.io.errColor.yellow(`Warning: could not open it (${failed}); open ${file} in a browser.`));
}

export async function runReport(ctx: CommandContext, options: ReportOptions, deps: WatchDeps = {}): Promise<void> {
  const scope = await accountScope(ctx, options, 'report');
  const { reportWindow } = await import('../../report/trading-days.js');
  const [instrument] = parseAll<[string | undefined]>([() => (options.instrument === undefined ? undefined : parseInstrument(options.instrument))], { hint: HINT });
  const capital = parseCapital(options.capital);
  if (instrument !== undefined) {
    const { showResolved } = await import('./place.js');
    showResolved(ctx, options.instrument, instrument);
  }
  if (options.open && options.html === undefined) throw new UsageError('--open opens the page --html writes: give --html FILE too', { hint: HINT });
  const plan: Plan = { window: reportWindow(options, ctx.now().getTime()), accounts: scope.account === undefined ? undefined : [scope.account], instrument, capital };
  if (!options.follow) {
    const backend = await ctx.openBackend();
    const { report, series } = await using(backend, (b) => produce(ctx, b, plan, options.html !== undefined, true));
    showScope(ctx, scope);
    await output(ctx, options, report, series);
    return;
  }
  if (options.to !== undefined) throw new UsageError('--follow reports up to now: give no --to', { hint: HINT });
  const [{ watch }, { watchExecutions }] = await Promise.all([import('./watch.js'), import('../watch-feeds.js')]);
  await watch(ctx, `executions of ${scope.account ?? 'every account'} for the report`, deps, async (fc) => {
    showScope(ctx, scope);
    let running: Promise<void> = Promise.resolve();
    let first = true;
    // One report at a time, each up to the time it is made; executions that come meanwhile make the next.
    const again = () => {
      running = running.then(async () => {
        const now = { ...plan, window: { ...plan.window, to: Math.max(plan.window.from + 1, ctx.now().getTime()) } };
        const { report, series } = await produce(ctx, fc.backend, now, options.html !== undefined, first);
        if (!first && !options.json) ctx.io.out();
        first = false;
        await output(ctx, options, report, series);
      });
      return running;
    };
    await again();
    let pending = false;
    await watchExecutions(fc, plan.accounts, 0, () => {
      if (pending) return;
      pending = true;
      // Executions read in one poll make one report.
      setImmediate(() => {
        pending = false;
        void again().catch((error: unknown) => fc.note(`The report could not be made again: ${error instanceof Error ? error.message : String(error)}`));
      });
    });
    await running;
  });
}
