// 1. Start-up: trade --version, --help and place (embedded), interleaved round by round with two
//    baselines: bare `node -e 0`, and the floor of an embedded place (bench/floor.cjs: open the
//    SQLite store with the engine's pragmas and commit one row). Then the peak memory of place and
//    of both baselines. Every process runs without the start-up variables (util.js childEnv).
import { join } from 'node:path';
import { BIN, FLOOR, median, peakRss, tempDir, timeRun } from './util.js';

const PLACE = ['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'];

const ratio = (a, b) => +(a / b).toFixed(2);

export function benchStartup({ rounds = 31, rssRounds = 7 } = {}) {
  const { dir, cleanup } = tempDir();
  const env = { TRADE_HOME: join(dir, 'home'), TRADE_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1' };
  const cases = {
    node: ['-e', '0'],
    floor: [FLOOR, join(dir, 'floor.db')],
    version: [BIN, '--version'],
    help: [BIN, '--help'],
    place: [BIN, ...PLACE],
  };
  try {
    // Create both stores first: measure a warm place, as in a script loop.
    timeRun(cases.place, env);
    timeRun(cases.floor, env);
    const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < rounds; i++) for (const [name, argv] of Object.entries(cases)) times[name].push(timeRun(argv, env));
    const ms = Object.fromEntries(Object.entries(times).map(([name, t]) => [name, median(t)]));
    const rssFile = join(dir, 'rss');
    const rss = { node: [], floor: [], place: [] };
    for (let i = 0; i < rssRounds; i++) for (const name of Object.keys(rss)) rss[name].push(peakRss(cases[name], env, rssFile));
    const kib = Object.fromEntries(Object.entries(rss).map(([name, r]) => [name, median(r)]));
    const result = { rounds, node: { medianMs: +ms.node.toFixed(1) }, floor: { medianMs: +ms.floor.toFixed(1), ratioToNode: ratio(ms.floor, ms.node) } };
    for (const name of ['version', 'help', 'place']) {
      result[name] = { medianMs: +ms[name].toFixed(1), ratioToNode: ratio(ms[name], ms.node), ratioToFloor: ratio(ms[name], ms.floor) };
    }
    result.peakRss = {
      nodeKiB: kib.node,
      floorKiB: kib.floor,
      placeKiB: kib.place,
      floorRatioToNode: ratio(kib.floor, kib.node),
      placeRatioToNode: ratio(kib.place, kib.node),
      placeRatioToFloor: ratio(kib.place, kib.floor),
    };
    return result;
  } finally {
    cleanup();
  }
}
