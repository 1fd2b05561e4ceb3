/**
 * `trade report` on embedded, run as a user runs it: the fixture (fixture.ts, figures by hand) in
 * a store under a temporary TRADE_HOME, then the command's exact output, its JSON, its refusals
 * (exit 2, nothing read), the HTML file and --open.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, tempHome } from '../helpers/cli.js';
import { until } from '../helpers/in-process.js';
import { BY_INSTRUMENT, expectHandComputed, fixtureStore, NOW, SUMMARY, WINDOW } from './fixture.js';

let home: ReturnType<typeof tempHome>;
const clock = { engine: { now: () => new Date(NOW) } };
const report = (args: string[], extra = {}) => runCli(['report', ...args], home.env, { ...clock, ...extra });
const BOTH_DAYS = ['--account', 'Sim101', '--from', '2025-09-02', '--to', '2025-09-03'];

beforeAll(() => {
  home = tempHome();
  fixtureStore(join(home.env.TRADE_HOME!, 'trade.db'));
});
afterAll(() => home.cleanup());

describe('trade report (embedded)', () => {
  it('prints the figures overall and per instrument, per day, the trades and the open position: the hand-computed numbers', async () => {
    const { code, stdout, stderr } = await report(BOTH_DAYS);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toBe(
      `Report of Sim101, 2025-09-01 17:00 to 2025-09-03 17:00 Chicago time (embedded ${join(home.env.TRADE_HOME!, 'trade.db')})

Performance
                       ALL             ES 09-25        NQ 09-25
Net profit             2526.00         234.00          2292.00
Gross profit           3736.00         1242.00         2494.00
Gross loss             -1210.00        -1008.00        -202.00
Commission             24.00           16.00           8.00
Trades                 7               4               3
Winners / losers       4 / 3           2 / 2           2 / 1
Win rate               57.14%          50.00%          66.67%
Profit factor          3.0876          1.2321          12.3465
Average trade          360.86          58.50           764.00
Average win            934.00          621.00          1247.00
Average loss           -403.33         -504.00         -202.00
Largest win            1996.00         746.00          1996.00
Largest loss           -504.00         -504.00         -202.00
Average duration       38m 34s         47m 30s         26m 40s
Max drawdown           504.00 (0.50%)  504.00 (0.50%)  202.00 (0.20%)
Longest losing streak  1               1               1
Sharpe ratio (daily)   ${SUMMARY.sharpeRatio}         ${BY_INSTRUMENT[0]!.sharpeRatio}         ${BY_INSTRUMENT[1]!.sharpeRatio}

By trading day
DAY         TRADES  WIN RATE  NET PROFIT  GROSS PROFIT  GROSS LOSS  COMMISSION  MAX DRAWDOWN
2025-09-02  4       50.00%    1786.00     2492.00       -706.00     14.00       504.00
2025-09-03  3       66.67%    740.00      1244.00       -504.00     10.00       504.00

Trades
#  INSTRUMENT  SIDE   QTY  ENTRY TIME        ENTRY  EXIT TIME         EXIT   DURATION  COMMISSION  NET P&L
1  ES 09-25    Long   1    2025-09-02 09:00  6000   2025-09-02 09:30  6010   30m 0s    4.00        496.00
2  ES 09-25    Long   1    2025-09-02 09:00  6000   2025-09-02 10:00  5990   1h 0m     4.00        -504.00
3  NQ 09-25    Short  2    2025-09-02 10:30  21000  2025-09-02 11:00  20950  30m 0s    4.00        1996.00
4  NQ 09-25    Long   1    2025-09-02 11:00  20950  2025-09-02 11:30  20940  30m 0s    2.00        -202.00
5  ES 09-25    Long   1    2025-09-02 16:30  6005   2025-09-02 18:00  6020   1h 30m    4.00        746.00
6  ES 09-25    Short  1    2025-09-03 09:00  6030   2025-09-03 09:10  6040   10m 0s    4.00        -504.00
7  NQ 09-25    Long   1    2025-09-03 10:00  21000  2025-09-03 10:20  21025  20m 0s    2.00        498.00

Open positions (not in the figures)
ACCOUNT  INSTRUMENT  POSITION  QTY  AVG PRICE  MARKET  UNREALIZED P&L  SINCE
Sim101   ES 09-25    Long      1    6050       6060    500.00          2025-09-03 11:00
`,
    );
  });

  it('--json prints the same numbers as one object', async () => {
    const { code, stdout } = await report([...BOTH_DAYS, '--json']);
    expect(code).toBe(0);
    const json = JSON.parse(stdout) as Record<string, any>;
    expect(stdout.trim().split('\n')).toHaveLength(1);
    expectHandComputed(json);
    expect({ from: json.from, to: json.to, source: json.source, notes: json.notes }).toEqual({
      ...WINDOW, source: { backend: 'embedded', store: join(home.env.TRADE_HOME!, 'trade.db') }, notes: [],
    });
  });

  it('fits a terminal: at 80 columns the least needed columns go, and stderr says which', async () => {
    const out = { text: '', isTTY: true, columns: 80, write(chunk: string) { this.text += chunk; return true; } };
    const err = { text: '', isTTY: true, columns: 80, write(chunk: string) { this.text += chunk; return true; } };
    const { code } = await report([...BOTH_DAYS, '--instrument', 'NQU5'], { stdout: out, stderr: err });
    expect(code).toBe(0);
    expect(out.text.split('\n').every((line) => line.length <= 80 || line.startsWith('Report of'))).toBe(true);
    expect(out.text).toContain(
      '#  INSTRUMENT  SIDE   QTY  ENTRY  EXIT TIME         EXIT   COMMISSION  NET P&L\n1  NQ 09-25    Short  2    21000  2025-09-02 11:00  20950  4.00        1996.00\n',
    );
    expect(out.text).toContain('DAY         TRADES  WIN RATE  NET PROFIT  GROSS PROFIT  GROSS LOSS  MAX DRAWDOWN\n2025-09-02  2       50.00%    1794.00');
    expect(err.text).toContain('Not shown, to fit the terminal: COMMISSION (widen it, or use --json).\n');
    expect(err.text).toContain('Not shown, to fit the terminal: ENTRY TIME, DURATION (widen it, or use --json).\n');
    expect(err.text).toContain('NQU5 → NQ 09-25\n');
  });

  it('names the default account on stderr, as the lists do; with none, every account', async () => {
    const { stdout, stderr } = await runCli(['report', '--days', '2'], { ...home.env, TRADE_ACCOUNT: 'Sim101' }, clock);
    expect(stderr).toBe('account Sim101 (from TRADE_ACCOUNT); --all-accounts for every account\n');
    expect(stdout).toMatch(/^Report of Sim101, 2025-09-01 17:00 to 2025-09-03 11:30 Chicago time/);
    const all = JSON.parse((await report(['--days', '2', '--json'])).stdout) as { accounts: string[]; summary: unknown; capital: number };
    expect(all.accounts).toEqual(['Sim101']);
    expect(all.summary).toEqual(SUMMARY);
  });

  it.each([
    [['--days', '2', '--from', '2025-09-02'], 'Error: Give --days or --from/--to, not both'],
    [['--days', '0'], "Error: --days takes a whole number of trading days from 1 to 3660, got '0'"],
    [['--from', 'monday'], "Error: --from takes a trading day (2025-09-03) or a time (2025-09-03T09:30, Chicago; or with Z or an offset), got 'monday'"],
    [['--from', '2025-09-03', '--to', '2025-09-02'], 'Error: --to (2025-09-02T22:00:00.000Z) must be after --from (2025-09-02T22:00:00.000Z)'],
    [['--capital', '-5'], "Error: --capital takes an amount of money above 0 (100000), got '-5'"],
    [['--open'], 'Error: --open opens the page --html writes: give --html FILE too'],
    [['--account', 'Sim101', '--all-accounts'], 'Error: Give --account or --all-accounts, not both'],
    [['--follow', '--to', '2025-09-03'], 'Error: --follow reports up to now: give no --to'],
  ])('refuses %j with exit 2, reading nothing', async (args, message) => {
    const { code, stdout, stderr } = await report(args);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr.split('\n')[0]).toBe(message);
  });

  it('an unknown account is the service\'s refusal (exit 1)', async () => {
    const { code, stderr } = await report(['--account', 'Sim999']);
    expect(code).toBe(1);
    expect(stderr).toBe('Error: Account Sim999 not found\n');
  });

  it('--html writes one self-contained file: the report\'s data, the chart library inlined, a policy that fetches nothing', async () => {
    const file = join(home.dir, 'report.html');
    const { code, stderr } = await report([...BOTH_DAYS, '--json', '--html', file]);
    expect(code).toBe(0);
    expect(stderr).toMatch(new RegExp(`^Wrote ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(\\d+ KiB\\): opens offline, nothing is fetched\\.\\n$`));
    const html = readFileSync(file, 'utf8');
    expect(html).toContain("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; script-src 'unsafe-inline'");
    expect(html).toContain('TradingView Lightweight Charts™ v5');
    expect(html).not.toMatch(/<(link|img|iframe)\b|\bsrc="http|href="http/i);
    const data = JSON.parse(/<script type="application\/json" id="report-data">(.*?)<\/script>/s.exec(html)![1]!) as { netProfit: number; trades: unknown[]; charts: Array<{ instrument: string; kind: string; bars: unknown[] }> };
    expect(data.netProfit).toBe(2526);
    expect(data.trades).toHaveLength(7);
    // One-minute bars from the engine: the window is two days (2,880 minutes), so 2-minute bars.
    expect(data.charts.map((c) => [c.instrument, c.kind])).toEqual([['ES 09-25', 'bars'], ['NQ 09-25', 'bars']]);
  });

  it('--open opens the file with the desktop\'s opener (xdg-open here), which it leaves running', async () => {
    const bin = join(home.dir, 'bin');
    mkdirSync(bin, { recursive: true });
    const said = join(home.dir, 'opened.txt');
    writeFileSync(join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${said}'\n`);
    chmodSync(join(bin, 'xdg-open'), 0o755);
    const file = join(home.dir, 'open.html');
    const { code } = await runCli(['report', ...BOTH_DAYS, '--html', file, '--open'], { ...home.env, PATH: `${bin}:${process.env.PATH}` }, clock);
    expect(code).toBe(0);
    await until('the opener to run', () => existsSync(said) && readFileSync(said, 'utf8') !== '');
    expect(readFileSync(said, 'utf8')).toBe(file);
  });

  it('--open with no opener installed writes the file and says how to open it, exit 0', async () => {
    const file = join(home.dir, 'no-opener.html');
    const { code, stderr } = await runCli(['report', ...BOTH_DAYS, '--html', file, '--open'], { ...home.env, PATH: join(home.dir, 'empty') }, clock);
    expect(code).toBe(0);
    expect(stderr).toContain(`Warning: could not open it (xdg-open was not found); open ${file} in a browser.\n`);
    expect(existsSync(file)).toBe(true);
  });
});
