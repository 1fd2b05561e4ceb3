// Makes dist/cli.cache for scripts/build.js: V8's code cache of dist/cli.cjs, taken after running
// an embedded `place` in a temporary home (the main job), so that the functions it runs are in it
// already compiled. Only that: a cache also trained on `--help` and `place --help` (as before issue
// 34's seventh round) held 23 KB more, which every `place` deserialises, for a person's help at a
// terminal (`--help` to a pipe is answered from dist/help.txt); `place` paired 0.98x the CPU
// without it, a terminal's `--help` 1.05x. TRAIN=help makes that cache again, TRAIN=none one of
// the top level only, for comparing. The file starts with the build id that bin/trade.js checks
// before giving the rest to V8.
'use strict';
const { mkdtempSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { PassThrough } = require('node:stream');
const { loadCli } = require('../bin/trade.js');

const PLACE = ['place', '--account', 'Sim101', '--instrument', 'ES 09-25', '--action', 'BUY', '--quantity', '1', '--order-type', 'MARKET', '--tif', 'DAY'];

async function makeCache() {
  const { cli, script, buildId } = loadCli({ cache: false });
  const dir = mkdtempSync(join(tmpdir(), 'trade-code-cache-'));
  let stderr = '';
  const deps = {
    stdin: new PassThrough(),
    stdout: { write: () => true, isTTY: false },
    stderr: { write: (chunk) => ((stderr += chunk), true), isTTY: false },
    env: { HOME: dir, TRADE_HOME: join(dir, 'home'), TRADE_CONFIG_DIR: join(dir, 'config'), NO_COLOR: '1' },
  };
  try {
    for (const argv of (process.env.TRAIN === 'none' ? [] : process.env.TRAIN === 'help' ? [['--help'], ['place', '--help'], PLACE] : [PLACE])) {
      const code = await cli.run(argv, deps);
      // Not fatal: the cache then holds less, and the CLI compiles the rest when it runs.
      if (code !== 0) console.warn(`scripts/code-cache.cjs: trade ${argv.join(' ')} exited ${code}: ${stderr.trim()}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  // Whole or not at all, as scripts/build.js writes dist/: a `trade` starting meanwhile reads the old one.
  const file = join(__dirname, '..', 'dist', 'cli.cache');
  const partial = `${file}.${process.pid}.partial`;
  writeFileSync(partial, Buffer.concat([Buffer.from(`${buildId}\n`, 'latin1'), script.createCachedData()]));
  renameSync(partial, file);
}

makeCache().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
