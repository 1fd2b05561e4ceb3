/**
 * zod started when this module is, not on first use. In the CLI bundle zod loads the first time
 * one of its exports is read (scripts/build.js: lazyZod), which spares a `place` its start; a
 * server that validates every request imports this module first, so that zod starts with the
 * server's code, as it always did. Measured (bench/serve-pair.js, paired with the build before):
 * `trade serve` whose zod started at its first request answered HTTP place at 0.87–0.89× the
 * requests a second (CPU per request 1.12×); zod started at its import, 1.00×.
 */
import * as z from 'zod';

// Read here, so that the stand-in loads zod now (a read that a bundler may not drop).
if (z.NEVER === undefined) throw new Error('zod did not load');
