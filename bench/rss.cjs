// Preloaded with --require: appends this process's peak resident memory (KiB) to RSS_FILE at exit.
'use strict';
const { appendFileSync } = require('node:fs');

process.on('exit', () => appendFileSync(process.env.RSS_FILE, `${process.resourceUsage().maxRSS}\n`));
