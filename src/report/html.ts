/**
 * `trade report --html FILE`: one self-contained page that opens offline. Everything it shows is
 * in the file: the report's numbers as JSON, the page's own script and styles, and TradingView's
 * lightweight-charts (Apache-2.0; its standalone build read from node_modules and inlined, its
 * licence header kept). A Content-Security-Policy allows nothing to be fetched, so no request
 * leaves the page. The charts: the equity curve with its drawdown in a pane beneath, and a price
 * chart of each traded instrument (bars, or the fills alone) with every entry and exit marked;
 * the trades table sorts by any column, and a click on a row marks that trade on its chart. Light
 * or dark follows the reader's system setting. Times are Chicago's, as the service writes them.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { chicagoWallClock } from '../service/chicago.js';
import type { Report } from './report.js';
import type { PriceSeries } from './sources.js';
import { headline, noteLines, sections } from './table.js';
import { PAGE_SCRIPT, PAGE_STYLE } from './page.js';

/** lightweight-charts' standalone build (it defines `window.LightweightCharts`), read once. */
let library: string | undefined;
export function chartLibrary(): string {
  if (library === undefined) {
    // The package's exports name only its ES modules; its package.json is exported, and the
    // standalone build sits beside it in dist/. `require` is the CLI bundle's own (and vitest's).
    const root = dirname(require.resolve('lightweight-charts/package.json'));
    library = readFileSync(join(root, 'dist', 'lightweight-charts.standalone.production.js'), 'utf8');
  }
  return library;
}

/** Chicago's wall clock in seconds: the time a chart shows (it draws times as UTC). */
const wall = (ms: number) => Math.floor(chicagoWallClock(ms) / 1000);

interface ChartTrade {
  number: number;
  instrument: string;
  side: string;
  quantity: number;
  entry: { t: number; price: number } | null;
  exit: { t: number; price: number };
  net: number | null;
}

/** The page's data: the report, with every time the charts need as Chicago wall-clock seconds. */
export function pageData(report: Report, series: PriceSeries[]) {
  const bucket = (s: PriceSeries | undefined, ms: number) => (s && s.periodMinutes > 0 ? wall(Math.floor(ms / (s.periodMinutes * 60_000)) * s.periodMinutes * 60_000) : wall(ms));
  const byInstrument = new Map(series.map((s) => [s.instrument, s]));
  const trades: ChartTrade[] = report.trades.map((t) => {
    const s = byInstrument.get(t.instrument);
    return {
      number: t.number,
      instrument: t.instrument,
      side: t.side,
      quantity: t.quantity,
      entry: t.entryTime === null || t.entryPrice === null ? null : { t: bucket(s, Date.parse(t.entryTime)), price: t.entryPrice },
      exit: { t: bucket(s, Date.parse(t.exitTime)), price: t.exitPrice },
      net: t.netProfit,
    };
  });
  const charts = series.map((s) => {
    if (s.bars.length > 0) return { instrument: s.instrument, kind: 'bars', periodMinutes: s.periodMinutes, bars: s.bars.map((b) => ({ time: wall(b.time), open: b.open, high: b.high, low: b.low, close: b.close })) };
    // No bars: the trades' own prices, one point a second (the last one of a second).
    const points = new Map<number, number>();
    const own = report.trades.filter((t) => t.instrument === s.instrument);
    const fills = own.flatMap((t) => [...(t.entryTime !== null && t.entryPrice !== null ? [[Date.parse(t.entryTime), t.entryPrice]] : []), [Date.parse(t.exitTime), t.exitPrice]]) as Array<[number, number]>;
    for (const [ms, price] of fills.sort((a, b) => a[0] - b[0])) points.set(wall(ms), price);
    return { instrument: s.instrument, kind: 'fills', periodMinutes: 0, points: [...points.entries()].sort((a, b) => a[0] - b[0]).map(([time, value]) => ({ time, value })) };
  });
  // One point a second on the equity curve: trades closed by one fill share its time (the last one stands).
  const equity = new Map<number, { time: number; equity: number; drawdown: number }>();
  for (const p of report.equity) equity.set(wall(Date.parse(p.time)), { time: wall(Date.parse(p.time)), equity: p.equity, drawdown: p.drawdown });
  return {
    headline: headline(report),
    netProfit: report.summary.netProfit,
    equity: [...equity.values()].sort((a, b) => a.time - b.time),
    charts,
    trades,
    sections: sections(report),
    notes: noteLines(report),
  };
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** JSON safe inside a <script> element: no `<` at all, so no `</script>` or `<!--`. */
const scriptJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c');

export function renderHtml(report: Report, series: PriceSeries[]): string {
  const data = pageData(report, series);
  const lib = chartLibrary().replace(/<\/(script)/gi, '<\\/$1');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'">
<meta name="color-scheme" content="light dark">
<title>${escapeHtml(`trade report: ${report.accounts.join(', ')}`)}</title>
<style>${PAGE_STYLE}</style>
</head>
<body>
<header><h1>Trading report</h1><p id="headline"></p></header>
<main>
<section id="summary"><h2>Performance</h2><div id="figures"></div></section>
<section><h2>Equity and drawdown</h2><div id="equity" class="chart tall"></div></section>
<section><h2>Prices</h2><div id="prices"></div></section>
<section><h2>Trades</h2><p class="hint">Click a column to sort, a row to mark the trade on its chart.</p><div id="trades"></div></section>
<section id="open"></section>
<section id="days"></section>
<section id="notes"></section>
</main>
<footer>Made by <code>trade report</code>. Charts by TradingView Lightweight Charts™ (Apache License 2.0).</footer>
<script type="application/json" id="report-data">${scriptJson(data)}</script>
<script>${lib}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}
