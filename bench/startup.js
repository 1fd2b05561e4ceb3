// 1. Start-up: trade --version, --help and place (embedded) against bare `node -e 0`, interleaved.
import { join } from 'node:path';
import { BIN, median, peakRss, tempDir, timeRun } from './util.js';

const PLACE = ['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'];

export function benchStartup({ rounds = 25 } = {}) {
  const { dir, cleanup } = tempDir();
  const env = { TRADE_HOME: join(dir, 'home'), TRADE_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1' };
  const cases = {
    node: ['-e', '0'],
    version: [BIN, '--version'],
    help: [BIN, '--help'],
    place: [BIN, ...PLACE],
  };
  try {
    timeRun(cases.place, env); // create the store first: measure a warm place, as in a script loop
    const times = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
    for (let i = 0; i < rounds; i++) for (const [name, argv] of Object.entries(cases)) times[name].push(timeRun(argv, env));
    const base = median(times.node);
    const rssFile = join(dir, 'rss');
    const rss = { node: [], place: [] };
    for (let i = 0; i < 5; i++) {
      rss.node.push(peakRss(cases.node, env, rssFile));
      rss.place.push(peakRss(cases.place, env, rssFile));
    }
    const result = {};
    for (const name of ['version', 'help', 'place']) {
      result[name] = { medianMs: +median(times[name]).toFixed(1), ratioToNode: +(median(times[name]) / base).toFixed(2) };
    }
    result.node = { medianMs: +base.toFixed(1) };
    result.placePeakRss = {
      nodeKiB: median(rss.node),
      placeKiB: median(rss.place),
      ratioToNode: +(median(rss.place) / median(rss.node)).toFixed(2),
    };
    return result;
  } finally {
    cleanup();
  }
}
