// npm run bench: every figure is a median over repeated runs, with its baseline measured in the
// same session. Prints a table and writes bench/results.json. Not part of `npm test`.
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { benchBatch } from './batch.js';
import { benchBounds } from './bounds.js';
import { benchEngine } from './engine.js';
import { benchGuard } from './guard.js';
import { benchHttp } from './http.js';
import { benchReplay } from './replay.js';
import { benchStartup } from './startup.js';
import { printTable, REMOVED_VARIABLES } from './util.js';
import { benchWs } from './ws.js';

const results = { date: new Date().toISOString(), node: process.version, cpus: cpus().length, removedVariables: REMOVED_VARIABLES };
const removed = `removed from every child process (both sides of every ratio): ${REMOVED_VARIABLES.join(', ') || 'none was set'}`;
console.error(`start-up variables (NODE_*, UV_*) ${removed}`);
console.error('start-up…');
results.startup = benchStartup();
console.error('engine…');
results.engine = await benchEngine();
console.error('guard…');
results.guard = await benchGuard();
console.error('trade serve over HTTP…');
results.http = await benchHttp();
console.error('WebSocket RPC…');
results.ws = await benchWs();
console.error('trade batch…');
results.batch = await benchBatch();
console.error('trade serve under abuse…');
results.bounds = await benchBounds();
console.error('trade price replay of 1M and 5M ticks…');
results.replay = await benchReplay();

const s = results.startup;
const mib = (kib) => `${(kib / 1024).toFixed(1)} MiB`;
console.log(`Start-up variables (NODE_*, UV_*) ${removed}.`);
console.log(`Start-up: medians of ${s.rounds} interleaved rounds; bare = node -e 0 (${s.node.medianMs} ms), floor = bench/floor.cjs (${s.floor.medianMs} ms, ${s.floor.ratioToNode}x bare).`);
printTable([
  ['benchmark', 'result', 'baseline', 'ratio', 'target'],
  ['trade --version', `${s.version.medianMs} ms`, 'bare / floor', `${s.version.ratioToNode}x / ${s.version.ratioToFloor}x`, '<= 1.15x bare'],
  ['trade --help', `${s.help.medianMs} ms`, 'bare / floor', `${s.help.ratioToNode}x / ${s.help.ratioToFloor}x`, '<= 1.3x bare'],
  ['trade place (embedded)', `${s.place.medianMs} ms`, 'bare / floor', `${s.place.ratioToNode}x / ${s.place.ratioToFloor}x`, '<= 2.0x bare, <= 1.15x floor'],
  ['trade place peak RSS', mib(s.peakRss.placeKiB), `bare ${mib(s.peakRss.nodeKiB)} / floor ${mib(s.peakRss.floorKiB)}`, `${s.peakRss.placeRatioToNode}x / ${s.peakRss.placeRatioToFloor}x`, '<= 1.35x bare'],
  ['engine place, one per transaction', `${results.engine.placePerSecond} orders/s`, '', '', '>= 8000/s'],
  ['engine place, grouped (256)', `${results.engine.groupedPlacePerSecond} orders/s`, '', '', '>= 20000/s'],
  ['engine reverse', `${results.engine.reversePerSecond} reverses/s`, '', '', ''],
  ['guard, every rule on, per place (embedded)', `+${results.guard.addedMs} ms`, `bare place: ${results.guard.bareMedianMs} ms`, `${(results.guard.guardedMedianMs / results.guard.bareMedianMs).toFixed(2)}x`, '< 1 ms added'],
  ['guard account lock, taken and let go', `${results.guard.accountLockMedianUs} µs`, '', '', ''],
  ['serve HTTP place', `${results.http.servePlacePerSecond} req/s`, `bare fastify: ${results.http.barePerSecond} req/s`, `${results.http.ratioToBare}x`, '>= 0.45x'],
  ['serve HTTP GetPositions (20 positions)', `${results.http.positionsPerSecond} req/s, p99 ${results.http.positionsP99Ms} ms`, `bare fastify: ${results.http.barePerSecond} req/s`, `${results.http.positionsRatioToBare}x`, '>= 0.6x'],
  ['serve HTTP p99', `${results.http.serveP99Ms} ms`, `bare: ${results.http.bareP99Ms} ms`, '', ''],
  ['WS RPC, 1 connection', `${results.ws.rpcPerSecond} orders/s`, '', '', ''],
  ['batch embedded', `${results.batch.embedded} orders/s`, `shell loop: ${results.batch.shellLoop}/s`, `${(results.batch.embedded / results.batch.shellLoop).toFixed(0)}x`, ''],
  ['batch http', `${results.batch.http} orders/s`, `shell loop: ${results.batch.shellLoop}/s`, `${(results.batch.http / results.batch.shellLoop).toFixed(0)}x`, ''],
  ['batch ws', `${results.batch.ws} orders/s`, `shell loop: ${results.batch.shellLoop}/s`, `${(results.batch.ws / results.batch.shellLoop).toFixed(0)}x`, '>= 12000/s'],
  ['serve: another WS client beside one that never reads', `${results.bounds.wsBesideGreedyMs} ms (max ${results.bounds.wsBesideGreedyMaxMs} ms)`, `quiet: ${results.bounds.wsQuietMs} ms`, `${results.bounds.wsRatio}x`, ''],
  ['serve: another HTTP client beside 200 pipelined reads', `${results.bounds.httpBesidePipelinedMs} ms (max ${results.bounds.httpBesidePipelinedMaxMs} ms)`, `quiet: ${results.bounds.httpQuietMs} ms`, `${results.bounds.httpRatio}x`, ''],
  ...results.replay.runs.map((r) => [
    `price replay ${r.ticks / 1e6}M ticks, --speed max`,
    r.ok ? `${r.ticksPerSecond} ticks/s, peak ${r.peakMiB} MiB` : `exit ${r.exit}: ${r.error}`,
    `${r.seconds} s wall, ${r.cpuSeconds} s CPU, load ${r.load}`,
    '',
    '>= 250000/s, < 150 MiB',
  ]),
]);
writeFileSync(new URL('./results.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
console.error('wrote bench/results.json');
