import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const pkg = JSON.parse(readFileSync(new URL('./package.json', import.meta.url), 'utf8')) as { version: string };

export default defineConfig({
  define: { __TRADE_VERSION__: JSON.stringify(pkg.version) },
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    globalSetup: ['./test/global-setup.ts'],
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'] } },
      // Runs after every file of `unit` has finished: it scans the output of all their CLI runs.
      { extends: true, test: { name: 'secrets-scan', include: ['test/**/*.scan.ts'], sequence: { groupOrder: 1 } } },
    ],
  },
});
