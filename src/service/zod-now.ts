/**
 * zod started when this module is, not on first use. In the CLI bundle zod loads the first time
 * one of its exports is read (scripts/build.js: lazyZod), which spares a `place` its start. A
 * server that validates every request imports this module first, so that zod starts before the
 * service's and the server's modules, as it did before the stand-in. Measured with
 * bench/serve-pair.js, paired with the build before: a `trade serve` whose zod started where the
 * stand-in first loaded it (in the middle of the server's modules, still before any request)
 * answered HTTP place at 0.87–0.89× the requests a second in three pairings (CPU per request
 * 1.12–1.14×); with zod started first, 1.00× and 1.10×. Why the order matters is not known.
 */
import * as z from 'zod';

// Read here, so that the stand-in loads zod now (a read that a bundler may not drop).
if (z.NEVER === undefined) throw new Error('zod did not load');
