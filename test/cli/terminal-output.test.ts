/** Colour (NO_COLOR, FORCE_COLOR, terminals) and width (help, tables), as a user's terminal or pipe sees them. */
import { PassThrough } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { run } from '../../src/cli/main.js';
import { colorLevel, fitTable } from '../../src/cli/io.js';
import type { Env } from '../../src/config/paths.js';
import { orderArgs, runBin, tempHome, type CliResult } from '../helpers/cli.js';

const ESC = '\x1b[';
const GREEN_PLACED = `${ESC}32mPlaced BUY 1 ES 09-25 MARKET DAY${ESC}39m\n`;

let env: Env;
let cleanup: () => void;
beforeEach(() => {
  ({ env, cleanup } = tempHome());
  delete env.NO_COLOR; // tempHome turns colour off; these tests decide it themselves
});
afterEach(() => cleanup());

class Stream {
  text = '';
  constructor(
    readonly isTTY: boolean,
    readonly columns?: number,
  ) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

/** In-process, with stdout and stderr as terminals (or not) of a given width. */
async function cliAt(argv: string[], extraEnv: Env, terminal: { tty: boolean; columns?: number }): Promise<CliResult> {
  const stdout = new Stream(terminal.tty, terminal.columns);
  const stderr = new Stream(terminal.tty, terminal.columns);
  const stdin = new PassThrough();
  stdin.end();
  const code = await run(argv, { stdin, stdout, stderr, env: { ...env, ...extraEnv } });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe('colour', () => {
  it('is off when stdout and stderr are pipes: no ANSI codes anywhere', async () => {
    const placed = await runBin(['place', ...orderArgs()], env);
    expect(placed.code).toBe(0);
    expect(placed.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n/);
    const failed = await runBin(['plac'], env);
    const positions = await runBin(['positions'], env);
    for (const text of [placed.stdout, placed.stderr, failed.stderr, positions.stdout, positions.stderr]) expect(text).not.toContain(ESC);
  });

  it('FORCE_COLOR=1 turns it on even through a pipe: the success line is green, errors red', async () => {
    const placed = await runBin(['place', ...orderArgs()], { ...env, FORCE_COLOR: '1' });
    expect(placed.code).toBe(0);
    expect(placed.stdout.startsWith(GREEN_PLACED)).toBe(true);
    const failed = await runBin(['place', ...orderArgs({ '--quantity': '0' })], { ...env, FORCE_COLOR: '1' });
    expect(failed.code).toBe(2);
    expect(failed.stderr.startsWith(`${ESC}31mError: Invalid request: quantity`)).toBe(true);
  });

  it('NO_COLOR=1 turns it off, at a terminal and over FORCE_COLOR', async () => {
    const atTerminal = await cliAt(['place', ...orderArgs()], { NO_COLOR: '1' }, { tty: true, columns: 100 });
    expect(atTerminal.code).toBe(0);
    expect(atTerminal.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n/);
    expect(atTerminal.stdout + atTerminal.stderr).not.toContain(ESC);
    const both = await runBin(['place', ...orderArgs()], { ...env, NO_COLOR: '1', FORCE_COLOR: '1' });
    expect(both.stdout).toMatch(/^Placed BUY 1 ES 09-25 MARKET DAY\n/);
    expect(both.stdout + both.stderr).not.toContain(ESC);
  });

  it('is on at a terminal by default, and off for TERM=dumb or FORCE_COLOR=0', async () => {
    expect((await cliAt(['place', ...orderArgs()], {}, { tty: true, columns: 100 })).stdout.startsWith(GREEN_PLACED)).toBe(true);
    expect((await cliAt(['place', ...orderArgs()], { TERM: 'dumb' }, { tty: true })).stdout).not.toContain(ESC);
    expect((await cliAt(['place', ...orderArgs()], { FORCE_COLOR: '0' }, { tty: true })).stdout).not.toContain(ESC);
  });

  it('follows no-color.org and force-color.org: an empty value counts as unset', () => {
    const tty = { isTTY: true, write: () => true };
    const pipe = { isTTY: false, write: () => true };
    expect(colorLevel({}, tty)).toBe(1);
    expect(colorLevel({}, pipe)).toBe(0);
    expect(colorLevel({ NO_COLOR: '' }, tty)).toBe(1);
    expect(colorLevel({ NO_COLOR: '0' }, tty)).toBe(0);
    expect(colorLevel({ FORCE_COLOR: '' }, pipe)).toBe(0);
    expect(colorLevel({ FORCE_COLOR: 'true' }, pipe)).toBe(1);
    expect(colorLevel({ FORCE_COLOR: '3' }, pipe)).toBe(3);
    expect(colorLevel({ FORCE_COLOR: 'false' }, tty)).toBe(0);
  });
});

describe('width', () => {
  it("help wraps at the terminal's width, else at COLUMNS, else at 80", async () => {
    const narrow = await cliAt(['positions', '--help'], {}, { tty: true, columns: 60 });
    const wide = await cliAt(['positions', '--help'], {}, { tty: true, columns: 120 });
    const piped = await cliAt(['positions', '--help'], {}, { tty: false });
    const columns = await cliAt(['positions', '--help'], { COLUMNS: '120' }, { tty: false });
    // Examples are never wrapped (they are commands to copy), nor is one word longer than the width.
    const wrappable = (l: string) => !l.startsWith('  $ ') && l.trim().includes(' ');
    const longest = (text: string) => Math.max(...text.split('\n').filter(wrappable).map((l) => l.length));
    expect(longest(narrow.stdout)).toBeLessThanOrEqual(60);
    expect(longest(piped.stdout)).toBeLessThanOrEqual(80);
    expect(longest(wide.stdout)).toBeGreaterThan(80);
    expect(columns.stdout).toBe(wide.stdout);
  });

  it('the orders table leaves out its least needed columns to fit a terminal, and says which', async () => {
    const placed = await cliAt(['place', ...orderArgs(), '--json'], {}, { tty: false });
    const { orderId } = JSON.parse(placed.stdout);
    const at80 = await cliAt(['orders', '--account', 'Sim101'], { NO_COLOR: '1' }, { tty: true, columns: 80 });
    expect(at80.code).toBe(0);
    const lines = at80.stdout.trimEnd().split('\n');
    // Prices and quantities stay; the id is its unique prefix; the time, account and TIF go first.
    expect(lines[0]).toBe('ORDER ID  INSTRUMENT  ACTION  QTY  TYPE    LIMIT  STOP  STATE   FILLED  AVG FILL');
    expect(lines[1]).toBe(`${orderId.slice(0, 8)}  ES 09-25    BUY     1    MARKET  —      —     Filled  1       6000`);
    for (const line of lines) expect(line.length).toBeLessThanOrEqual(80);
    expect(at80.stderr).toContain('Not shown, to fit the terminal: TIME, ACCOUNT, TIF (widen it, or use --json).\n');
    // The note itself wraps at the terminal's width, at spaces.
    const at40 = await cliAt(['orders', '--account', 'Sim101'], { NO_COLOR: '1' }, { tty: true, columns: 40 });
    const note = at40.stderr.split('\n').filter((l) => !l.startsWith('backend:') && l !== '');
    expect(note).toEqual(['Not shown, to fit the terminal: TIME,', 'ACCOUNT, TIF, TYPE, ORDER ID, FILLED,', 'AVG FILL, STOP (widen it, or use', '--json).']);
    // Piped, nothing is left out, whatever COLUMNS says.
    const piped = await cliAt(['orders', '--account', 'Sim101'], { COLUMNS: '80' }, { tty: false });
    expect(piped.stdout.split('\n')[0]).toBe(
      'ORDER ID                          ACCOUNT  INSTRUMENT  ACTION  QTY  TYPE    LIMIT  STOP  TIF  STATE   FILLED  AVG FILL  TIME',
    );
    expect(piped.stderr).not.toContain('Not shown');
  });

  it('fitTable leaves out optional columns in order, only as many as needed', () => {
    const header = ['ID', 'NAME', 'NOTE', 'WHEN'];
    const rows = [['1', 'alpha', 'a long note here', '2025-09-03']];
    expect(fitTable(header, rows, { width: 100, optional: ['WHEN', 'NOTE'] })).toEqual({
      lines: ['ID  NAME   NOTE              WHEN', '1   alpha  a long note here  2025-09-03'],
      hidden: [],
    });
    expect(fitTable(header, rows, { width: 30, optional: ['WHEN', 'NOTE'] })).toEqual({
      lines: ['ID  NAME   NOTE', '1   alpha  a long note here'],
      hidden: ['WHEN'],
    });
    expect(fitTable(header, rows, { width: 5, optional: ['WHEN', 'NOTE'] }).lines).toEqual(['ID  NAME', '1   alpha']);
  });
});
