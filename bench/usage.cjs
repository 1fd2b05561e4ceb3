// Preloaded with --require: writes this process's peak resident memory (KiB) and CPU time (user
// and system, seconds) to USAGE_FILE as JSON at exit.
'use strict';
const { writeFileSync } = require('node:fs');

process.on('exit', () => {
  const usage = process.resourceUsage();
  writeFileSync(process.env.USAGE_FILE, JSON.stringify({ maxRssKiB: usage.maxRSS, userSeconds: usage.userCPUTime / 1e6, systemSeconds: usage.systemCPUTime / 1e6 }));
});
