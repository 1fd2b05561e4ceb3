// Makes dist/cli.cache for scripts/build.js: V8's code cache of dist/cli.cjs, taken after running
// what start-up most needs (`--help`, `place --help` and an embedded `place` in a temporary home),
// so that the functions those run are in it already compiled. The file starts with the build id
// that bin/trade.js checks before giving the rest to V8.
'use strict';
const { mkdtempSync, rmSync, writeFileSync } = require('node:fs');
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
    for (const argv of (process.env.TRAIN === 'none' ? [] : process.env.TRAIN === 'place' ? [PLACE] : [['--help'], ['place', '--help'], PLACE])) {
      const code = await cli.run(argv, deps);
      // Not fatal: the cache then holds less, and the CLI compiles the rest when it runs.
      if (code !== 0) console.warn(`scripts/code-cache.cjs: trade ${argv.join(' ')} exited ${code}: ${stderr.trim()}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  writeFileSync(join(__dirname, '..', 'dist', 'cli.cache'), Buffer.concat([Buffer.from(`${buildId}\n`, 'latin1'), script.createCachedData()]));
}

makeCache().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
