// Preloaded with --import: appends this process's peak resident memory (KiB) to RSS_FILE at exit.
import { appendFileSync } from 'node:fs';

process.on('exit', () => appendFileSync(process.env.RSS_FILE, `${process.resourceUsage().maxRSS}\n`));
