import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  define: { __TRADE_VERSION__: JSON.stringify(pkg.version) },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two files at a time on the 2-core CI machine: vitest's default (cores - 1) ran them one by
    // one, most of the time waiting on the processes and sockets the tests start (9.4 min -> 5.1 min).
    maxWorkers: 2,
    globalSetup: ['./test/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'] } },
      // Runs after every file of `unit` has finished: it scans the output of all their CLI runs.
      { extends: true, test: { name: 'secrets-scan', include: ['test/**/*.scan.ts'], sequence: { groupOrder: 1 } } },
    ],
  },
});
