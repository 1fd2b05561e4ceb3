// Small helpers for the benchmarks: timing, medians, subprocesses, tables.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const BIN = join(ROOT, 'bin', 'trade.js');
export const RSS = join(ROOT, 'bench', 'rss.cjs');
export const FLOOR = join(ROOT, 'bench', 'floor.cjs');

/**
 * Variables that change how any Node process starts, whatever it runs: NODE_OPTIONS (flags,
 * preloads), NODE_EXTRA_CA_CERTS (reads and parses a certificate file at start-up: ~3x slower
 * bare node on this machine), NODE_V8_COVERAGE, NODE_COMPILE_CACHE, UV_THREADPOOL_SIZE, ...:
 * every NODE_* and UV_* variable. No child process of the benchmarks gets them, on either side
 * of a comparison, and run.js prints which were removed.
 */
const STARTUP_VARIABLE = /^(NODE_|UV_)/;
export const REMOVED_VARIABLES = Object.keys(process.env).filter((name) => STARTUP_VARIABLE.test(name)).sort();

/** The environment for a child process: this one's without the start-up variables, plus `extra`. */
export function childEnv(extra = {}) {
  return { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !STARTUP_VARIABLE.test(name))), ...extra };
}

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSeconds(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

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
/** `trade ARGV` run to its end: its exit code and what it printed. */
export function runTrade(argv, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...argv], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export function timeRun(argv, env) {
  const start = process.hrtime.bigint();
  const result = spawnSync(process.execPath, argv, { env: childEnv(env), stdio: ['ignore', 'ignore', 'pipe'] });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (result.status !== 0) throw new Error(`${argv.join(' ')} exited ${result.status}: ${result.stderr}`);
  return ms;
}

/**
 * Peak RSS (KiB) of one run, measured inside the child at exit by a CommonJS preload (--require:
 * it starts no ES module loader, which would add to both sides).
 */
export function peakRss(argv, env, file) {
  rmSync(file, { force: true });
  timeRun(['--require', RSS, ...argv], { ...env, RSS_FILE: file });
  return Number(readFileSync(file, 'utf8').trim());
}

export function startProcess(argv, env) {
  return spawn(process.execPath, argv, { env: childEnv(env), stdio: ['pipe', 'pipe', 'pipe'] });
}

/** `trade serve --port 0 ARGS` on env; resolves with the process and its URL once it listens. */
export async function startServe(args, env) {
  const child = startProcess([BIN, 'serve', '--port', '0', ...args], env);
  let stderr = '';
  const url = await new Promise((resolve, reject) => {
    child.stderr.setEncoding('utf8').on('data', (d) => {
      stderr += d;
      const match = /^trade serve listening on (http:\/\/\S+)$/m.exec(stderr);
      if (match && stderr.includes('stops it.')) resolve(match[1]);
    });
    child.on('exit', (code) => reject(new Error(`trade serve exited ${code}:\n${stderr}`)));
  });
  return { child, url };
}

export function printTable(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => String(r[i]).length)));
  for (const row of rows) console.log(row.map((c, i) => String(c).padEnd(widths[i])).join('  ').trimEnd());
}
