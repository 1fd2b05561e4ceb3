/**
 * The HTML report in a real browser (Debian's chromium, driven by playwright-core) with the
 * network blocked: it draws with no console error and no request, the equity curve ends at the
 * net profit, the trades table has the fixture's rows, a click on a row marks that trade on its
 * chart, and the columns sort. Screenshots go to test-output/ (git-ignored).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../helpers/cli.js';
import { launchChromium } from '../helpers/chromium.js';
import { fixtureStore, NOW, SUMMARY, TRADES } from './fixture.js';

const OUTPUT = fileURLToPath(new URL('../../test-output/', import.meta.url));
let home: ReturnType<typeof tempHome>;
let file: string;
let browser: Awaited<ReturnType<typeof launchChromium>>;
/** One page for the light-scheme tests, which run in order on it (each page costs about a second). */
let light: Opened;

beforeAll(async () => {
  home = tempHome();
  fixtureStore(join(home.env.TRADE_HOME!, 'trade.db'));
  file = join(home.dir, 'report.html');
  const made = await runCli(['report', '--account', 'Sim101', '--from', '2025-09-02', '--to', '2025-09-03', '--html', file], home.env, { engine: { now: () => new Date(NOW) } });
  expect(made.code).toBe(0);
  browser = await launchChromium();
  mkdirSync(OUTPUT, { recursive: true });
  light = await open();
});
afterAll(async () => {
  await browser?.close();
  home?.cleanup();
});

interface Opened {
  page: Page;
  errors: string[];
  requests: string[];
}

/** The report opened from its file, every request but the file's own refused and recorded. */
async function open(colorScheme: 'light' | 'dark' = 'light'): Promise<Opened> {
  const page = await browser.context.newPage();
  await page.emulateMedia({ colorScheme });
  const errors: string[] = [];
  const requests: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') errors.push(`${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
  page.on('requestfailed', (request) => errors.push(`request failed: ${request.url()}`));
  await page.route('**/*', async (route) => {
    const url = route.request().url();
    if (url === `file://${file}`) return route.continue();
    requests.push(url);
    return route.abort('blockedbyclient');
  });
  await page.goto(`file://${file}`);
  await page.waitForFunction(() => (window as unknown as { tradeReport?: unknown }).tradeReport !== undefined);
  return { page, errors, requests };
}

describe('the HTML report in chromium, offline', () => {
  it('draws with no console error and makes no request', async () => {
    const { page, errors, requests } = light;
    // Every chart has drawn its canvas.
    expect(await page.locator('canvas').count()).toBeGreaterThan(3);
    expect(errors).toEqual([]);
    expect(requests).toEqual([]);
    await page.screenshot({ path: join(OUTPUT, 'report.png'), fullPage: true });
    // README's picture (docs/report.png is this, made smaller): the equity curve and the first price chart.
    const top = (await page.locator('#equity').boundingBox())!;
    const bottom = (await page.locator('#prices .chart').first().boundingBox())!;
    await page.screenshot({ path: join(OUTPUT, 'readme-report.png'), fullPage: true, clip: { x: 0, y: top.y - 40, width: 1100, height: bottom.y + bottom.height - top.y + 48 } });
  });

  it('ends the equity curve at the net profit, with the drawdown beneath', async () => {
    const { page } = light;
    const last = await page.evaluate(() => {
      const r = (window as any).tradeReport;
      return { equity: r.equity.data().at(-1).value, drawdown: r.drawdown.data().at(-1).value, points: r.equity.data().length };
    });
    expect(last).toEqual({ equity: SUMMARY.netProfit, drawdown: -6, points: 8 });
  });

  it("lists the fixture's trades, in the order they closed", async () => {
    const { page } = light;
    const rows = await page.locator('#trades-table tbody tr').evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td'), (td) => td.textContent)));
    expect(rows.map((r) => [r[0], r[1], r[2], r[3], r[5], r[7], r[10]])).toEqual(
      TRADES.map((t, i) => [String(i + 1), t.instrument, t.side, String(t.quantity), String(t.entryPrice), String(t.exitPrice), t.netProfit.toFixed(2)]),
    );
  });

  it('a click on a row marks that trade on its chart: its entry and exit, and lines at their prices', async () => {
    const { page, errors } = light;
    await page.locator('#trades-table tbody tr[data-trade="3"]').click();
    const selected = await page.evaluate(() => (window as any).tradeReport.selected());
    // T3: short 2 NQ, sold at 21000 (entry), bought back at 20950 (exit).
    expect(selected.number).toBe(3);
    expect(selected.instrument).toBe('NQ 09-25');
    expect(selected.markers.map((m: any) => [m.id, m.price, m.shape, m.size, m.text])).toEqual([
      ['t3-entry', 21000, 'arrowDown', 2, '#3 entry 21000'],
      ['t3-exit', 20950, 'arrowUp', 2, '#3 exit 20950'],
    ]);
    expect(selected.priceLines).toEqual([21000, 20950]);
    expect(await page.locator('#trades-table tbody tr.selected').getAttribute('data-trade')).toBe('3');
    // Another row: the first trade's marks go back to plain ones.
    await page.locator('#trades-table tbody tr[data-trade="6"]').click();
    const again = await page.evaluate(() => (window as any).tradeReport.selected());
    expect(again.markers.map((m: any) => m.id)).toEqual(['t6-entry', 't6-exit']);
    const nq = await page.evaluate(() => (window as any).tradeReport.prices['NQ 09-25'].markers.markers().filter((m: any) => m.size === 2).length);
    expect(nq).toBe(0);
    await page.locator('#chart-ES-09-25').screenshot({ path: join(OUTPUT, 'report-selected.png') });
    expect(errors).toEqual([]);
  });

  it('sorts the trades by a column, and back', async () => {
    const { page, errors, requests } = light;
    const net = () => page.locator('#trades-table tbody tr').evaluateAll((trs) => trs.map((tr) => tr.querySelector('td:last-child')!.textContent));
    const header = page.locator('#trades-table th', { hasText: 'NET P&L' });
    await header.click();
    expect(await net()).toEqual(['-504.00', '-504.00', '-202.00', '496.00', '498.00', '746.00', '1996.00']);
    await header.click();
    expect(await net()).toEqual(['1996.00', '746.00', '498.00', '496.00', '-202.00', '-504.00', '-504.00']);
    // Still nothing asked of the network, nothing wrong, after every click.
    expect({ errors, requests }).toEqual({ errors: [], requests: [] });
  });

  it('follows the system: dark when the reader asks for dark', async () => {
    const { page, errors } = await open('dark');
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe('rgb(19, 23, 34)');
    await page.screenshot({ path: join(OUTPUT, 'report-dark.png'), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it('is one file: the chart library is inlined whole, its licence header kept', () => {
    const html = readFileSync(file, 'utf8');
    expect(html).toContain('@license\n * TradingView Lightweight Charts™');
    expect(html.match(/<script\b/g)).toHaveLength(3);
    expect(html).not.toMatch(/<script[^>]+src=/);
  });
});
