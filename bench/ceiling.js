// The ceilings of the two issue-34 figures not met (twelfth round): what `trade serve` HTTP place
// and `trade batch` over `ws` reach on this machine when the engine does no work at all.
//
// Builds a variant of this checkout whose simulator answers PlaceOrder at once with a constant
// id, without the engine (no SQLite, no order, no fill): everything else of `trade serve` (fastify,
// the token, the body's checks, the reply, the WebSocket RPC) and all of `trade batch` (the guard,
// its ledger and journal, the socket) unchanged. Then, round by round, on the same machine:
//   - HTTP place: the bare fastify route, this build's `trade serve`, the variant (bench/http.js's
//     load), each as a ratio to the bare route of its round, with the server's CPU a request;
//   - `trade batch` of 10,000 orders over `ws` with this build's client, against this build's
//     `trade serve` and against the variant: orders a second, the client's CPU an order (bash's
//     `times`) and the server's (/proc).
// The variant is an experiment, never shipped: it lives in a temporary directory and goes with it.
// Not part of `npm run bench`: a tool for deciding what the targets can be on a machine.
//
//   npm run build && node bench/ceiling.js [--rounds 3] [--seconds 4] [--orders 10000]
import { spawnSync } from 'node:child_process';
import { cpSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { writeOrders } from './batch.js';
import { load } from './http.js';
import { startBareServer, startTradeServe, TOKEN } from './servers.js';
import { BIN, childEnv, cpuSeconds, median, printTable, ROOT, tempDir } from './util.js';

const { values } = parseArgs({
  options: { rounds: { type: 'string', default: '3' }, seconds: { type: 'string', default: '4' }, orders: { type: 'string', default: '10000' } },
});
const ROUNDS = Number(values.rounds);
const SECONDS = Number(values.seconds);
const ORDERS = Number(values.orders);

/** The one change of the variant: PlaceOrder answered without the engine. */
const HANDLER = 'PlaceOrder: (engine, order) => placed(engine, engine.placeOrder(order)),';
const CONSTANT =
  "PlaceOrder: () => ok({ orderId: 'cb1fc8d4e1a84d29ae38fea964aaac8c' }, { order: null, cancelledOrderIds: [], bracketOrders: [] } as never),";

function buildVariant(dir) {
  const skip = new Set(['node_modules', 'dist', '.git', 'coverage']);
  cpSync(ROOT, dir, { recursive: true, filter: (source) => !skip.has(source.slice(ROOT.length).split('/')[0]) });
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  const file = join(dir, 'src', 'engine', 'service.ts');
  const source = readFileSync(file, 'utf8');
  if (source.split(HANDLER).length !== 2) throw new Error(`src/engine/service.ts no longer holds ${HANDLER} once: update bench/ceiling.js`);
  writeFileSync(file, source.replace(HANDLER, CONSTANT));
  const built = spawnSync(process.execPath, ['scripts/build.js'], { cwd: dir, env: childEnv(), encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`building the variant failed: ${built.stderr}`);
  return join(dir, 'bin', 'trade.js');
}

/** bash's `times`: the second line is the user and system time of the shell's children. */
function childrenCpuSeconds(text) {
  const line = text.trim().split('\n').at(-1);
  const [user, system] = line.split(' ').map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t);
    if (!m) throw new Error(`cannot read bash's times: ${line}`);
    return Number(m[1]) * 60 + Number(m[2]);
  });
  return user + system;
}

async function httpRound(bin, url, pid) {
  const before = cpuSeconds(pid);
  const r = await load(url, SECONDS);
  if (r.errors || r.non2xx) throw new Error(`${bin}: ${r.errors} errors, ${r.non2xx} non-2xx`);
  return { rps: r.requests.average, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / r.requests.total };
}

function batchRound(file, serve, dir) {
  const env = childEnv({ TRADE_HOME: join(dir, 'home'), TRADE_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1', TRADE_TOKEN: TOKEN, TRADE_BASE_URL: serve.url, TRADE_BACKEND: 'ws' });
  const script = `"${process.execPath}" "${BIN}" batch "${file}" --rate 0 >/dev/null || exit 1; times >&2`;
  const before = cpuSeconds(serve.pid);
  const start = process.hrtime.bigint();
  const run = spawnSync('bash', ['-c', script], { env, encoding: 'utf8' });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (run.status !== 0) throw new Error(`batch failed: ${run.stderr}`);
  return { rate: ORDERS / seconds, clientUs: (childrenCpuSeconds(run.stderr) * 1e6) / ORDERS, serverUs: ((cpuSeconds(serve.pid) - before) * 1e6) / ORDERS };
}

const { dir, cleanup } = tempDir('trade-ceiling-');
const servers = [];
try {
  console.error('building the variant (PlaceOrder without the engine) ...');
  const variantBin = buildVariant(join(dir, 'variant'));
  const file = join(dir, 'orders.ndjson');
  writeOrders(file, ORDERS);
  const runs = { bare: [], serve: [], variant: [], batchServe: [], batchVariant: [] };
  const bare = await startBareServer();
  servers.push(bare);
  await load(bare.url, 1);
  for (let round = 0; round < ROUNDS; round++) {
    console.error(`round ${round + 1} of ${ROUNDS}`);
    // Each round on fresh stores: the engine's store grows with every order placed.
    const serve = await startTradeServe(join(dir, `serve-${round}`));
    const variant = await startTradeServe(join(dir, `variant-${round}`), variantBin);
    servers.push(serve, variant);
    await load(serve.url, 1);
    await load(variant.url, 1);
    runs.bare.push((await load(bare.url, SECONDS)).requests.average);
    runs.serve.push(await httpRound('serve', serve.url, serve.pid));
    runs.variant.push(await httpRound('variant', variant.url, variant.pid));
    await serve.stop();
    await variant.stop();
    const batchServe = await startTradeServe(join(dir, `batch-serve-${round}`));
    const batchVariant = await startTradeServe(join(dir, `batch-variant-${round}`), variantBin);
    servers.push(batchServe, batchVariant);
    runs.batchServe.push(batchRound(file, batchServe, join(dir, `client-a-${round}`)));
    runs.batchVariant.push(batchRound(file, batchVariant, join(dir, `client-b-${round}`)));
    await batchServe.stop();
    await batchVariant.stop();
  }
  const ratio = (name) => median(runs[name].map((r, i) => r.rps / runs.bare[i])).toFixed(2);
  const med = (name, key) => Math.round(median(runs[name].map((r) => r[key])));
  printTable([
    ['figure', 'trade serve', 'without the engine', 'target'],
    ['bare fastify route', `${Math.round(median(runs.bare))} req/s`, '', ''],
    ['HTTP place, to the bare route', `${ratio('serve')}x (${med('serve', 'rps')} req/s)`, `${ratio('variant')}x (${med('variant', 'rps')} req/s)`, '>= 0.45x'],
    ['HTTP place, server CPU a request', `${med('serve', 'cpuUs')} us`, `${med('variant', 'cpuUs')} us`, ''],
    ['batch of ' + ORDERS + ' over ws', `${med('batchServe', 'rate')}/s`, `${med('batchVariant', 'rate')}/s`, '>= 12,000/s'],
    ['batch: client CPU an order', `${med('batchServe', 'clientUs')} us`, `${med('batchVariant', 'clientUs')} us`, ''],
    ['batch: server CPU an order', `${med('batchServe', 'serverUs')} us`, `${med('batchVariant', 'serverUs')} us`, ''],
  ]);
  console.log(JSON.stringify(runs));
} finally {
  for (const server of servers) await server.stop();
  cleanup();
}
