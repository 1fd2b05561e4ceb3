// Small helpers for the benchmarks: timing, medians, subprocesses, tables.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'trade.js');
export const RSS = join(ROOT, 'bench', 'rss.mjs');

export function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function tempDir(prefix = 'trade-bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Wall time of one process run, in milliseconds. Throws if it fails. */
export function timeRun(argv, env) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}

/** Peak RSS (KiB) of one run, measured inside the child at exit. */
export function peakRss(argv, env, file) {
  rmSync(file, { force: true });
  timeRun(['--import', RSS, ...argv], { ...env, RSS_FILE: file });
  return Number(readFileSync(file, 'utf8').trim());
}

export function startProcess(argv, env) {
  return spawn(process.execPath, argv, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
}

export function printTable(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  for (const row of rows) console.log(row.map((c, i) => String(c).padEnd(widths[i])).join('  ').trimEnd());
}
