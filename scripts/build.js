// Bundles src/ into dist/ with esbuild. Dynamic imports become their own chunks, so a command
// loads only the code it uses. Dependencies stay external (better-sqlite3 is native).
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { main: 'src/cli/main.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  chunkNames: 'chunks/[name]-[hash]',
  define: { __TRADE_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});
