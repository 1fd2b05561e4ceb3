// A replay at the scale of real sessions (issue 29): a generated file of ES ticks replayed from the
// CLI at --speed max into a store holding 20 resting orders and one ATM bracket. Ticks per second
// end to end (the whole `trade price replay` process: start-up, both passes over the file, the
// store's writes) and the process's peak resident memory. The files are generated here, never
// shipped. `node bench/replay.js [--bin PATH] [--sizes 1000000,5000000]` runs it alone, against
// any build (the run before a change: `--bin /tmp/base/bin/trade.js`). Beside the wall time it
// records the process's CPU time and the machine's load average, since on a shared machine the
// wall time says as much about the neighbours as about the code.
import { spawnSync } from 'node:child_process';
import { createWriteStream, readFileSync, rmSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, childEnv, tempDir } from './util.js';

const USAGE = fileURLToPath(new URL('./usage.cjs', import.meta.url));

export const INSTRUMENT = 'ES 03-27';
const START = Date.parse('2026-03-16T13:30:00Z');
const TICK = 0.25;

/** mulberry32, as the engine's random walk: the same file every run. */
function seeded(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Writes `count` ticks as CSV (`time,price`): a walk of one tick a step between 4975 and 5025,
 * 1 to 120 ms apart (a busy ES day is about a million ticks). Every tick moves the price, so each
 * is a price set: the hardest case for the engine.
 */
export async function writeTicks(file, count, seed = 29) {
  const random = seeded(seed);
  const out = createWriteStream(file);
  let time = START;
  let ticks = 5000 / TICK;
  const write = (text) => (out.write(text) ? undefined : new Promise((resolve) => out.once('drain', resolve)));
  await write('time,price\n');
  let chunk = '';
  for (let i = 0; i < count; i++) {
    time += 1 + Math.floor(random() * 120);
    ticks += random() < 0.5 ? -1 : 1;
    if (ticks < 4975 / TICK) ticks += 2;
    if (ticks > 5025 / TICK) ticks -= 2;
    chunk += `${new Date(time).toISOString()},${ticks * TICK}\n`;
    if (chunk.length > 1 << 16) {
      await write(chunk);
      chunk = '';
    }
  }
  await write(chunk);
  await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())));
}

function trade(bin, home, args) {
  const result = spawnSync(process.execPath, [bin, ...args], { env: childEnv({ TRADE_HOME: home }), encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`trade ${args.join(' ')} exited ${result.status}: ${result.stderr}`);
  return result.stdout;
}

/**
 * The store the replay runs on: a price, one ATM entry (its stop and target then work), ten
 * resting GTC limits inside the walk's range (they fill during the replay) and ten outside it
 * (they work to the end, so every tick is checked against them).
 */
export function prepareStore(bin, home) {
  const place = (action, price) =>
    trade(bin, home, ['place', '--account', 'Sim101', '--instrument', INSTRUMENT, '--action', action, '--quantity', '1', '--order-type', 'LIMIT', '--limit-price', String(price), '--tif', 'GTC', '--json']);
  trade(bin, home, ['price', 'set', INSTRUMENT, '5000']);
  trade(bin, home, ['atm', 'add', 'Scalp', '--stop-loss', '8', '--profit-target', '16']);
  trade(bin, home, ['place', '--account', 'Sim101', '--instrument', INSTRUMENT, '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'GTC', '--strategy', 'Scalp', '--json']);
  for (let i = 0; i < 5; i++) {
    place('BUY', 4990 - 3 * i);
    place('SELL', 5010 + 3 * i);
    place('BUY', 4900 - i);
    place('SELL', 5100 + i);
  }
}

/** One replay of `count` ticks with `bin`: wall time, ticks/s, peak RSS, and what it printed. */
export async function replayOnce(bin, count) {
  const { dir, cleanup } = tempDir('trade-bench-replay-');
  try {
    const file = join(dir, 'ticks.csv');
    await writeTicks(file, count);
    const home = join(dir, 'home');
    prepareStore(bin, home);
    const usageFile = join(dir, 'usage.json');
    const argv = ['--require', USAGE, bin, 'price', 'replay', file, '--instrument', INSTRUMENT, '--speed', 'max', '--json'];
    const start = process.hrtime.bigint();
    const run = spawnSync(process.execPath, argv, { env: childEnv({ TRADE_HOME: home, USAGE_FILE: usageFile }), encoding: 'utf8', maxBuffer: 1 << 26 });
    const seconds = Number(process.hrtime.bigint() - start) / 1e9;
    const usage = JSON.parse(readFileSync(usageFile, 'utf8'));
    const measured = { seconds: round(seconds, 2), cpuSeconds: round(usage.userSeconds + usage.systemSeconds, 2), peakMiB: round(usage.maxRssKiB / 1024, 1), load: round(loadavg()[0], 1) };
    if (run.status !== 0) return { ticks: count, ok: false, exit: run.status, error: errorLine(run.stderr), ...measured };
    const summary = JSON.parse(run.stdout.trim().split('\n').pop());
    return { ticks: count, ok: true, ticksPerSecond: Math.round(count / seconds), ...measured, fills: summary.fills };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    cleanup();
  }
}

const round = (n, digits) => Number(n.toFixed(digits));
/** The line of stderr that says what went wrong (`Error: …`), else its first. */
const errorLine = (stderr) => stderr.split('\n').find((l) => l.startsWith('Error')) ?? stderr.trim().split('\n')[0];

export async function benchReplay({ bin = BIN, sizes = [1_000_000, 5_000_000] } = {}) {
  const runs = [];
  for (const size of sizes) runs.push(await replayOnce(bin, size));
  return { runs, note: `CSV of ${INSTRUMENT} ticks, 20 resting GTC limits and one ATM entry with its bracket; trade price replay --speed max --json, wall time of the process` };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const flag = (name) => {
    const i = process.argv.indexOf(name);
    return i > 0 ? process.argv[i + 1] : undefined;
  };
  const sizes = (flag('--sizes') ?? '1000000,5000000').split(',').map(Number);
  const result = await benchReplay({ bin: flag('--bin') ?? BIN, sizes });
  console.log(JSON.stringify(result, null, 2));
}
