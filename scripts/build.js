// Bundles src/ into dist/ with esbuild. Dynamic imports become their own chunks, so a command
// loads only the code it uses. The small pure-JS modules every start-up needs (commander, chalk,
// zod) are bundled in: resolving zod's ~200 ESM files alone costs more than running it.
// The rest stay external: better-sqlite3 is native, and the server, network and prompt
// packages load only on the commands that use them.
import { readFileSync, rmSync } from 'node:fs';
import { build } from 'esbuild';

const BUNDLED = new Set(['commander', 'chalk', 'zod']);
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
rmSync(new URL('../dist', import.meta.url), { recursive: true, force: true });
await build({
  entryPoints: { main: 'src/cli/main.ts', lib: 'src/lib.ts' },
  outdir: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: Object.keys(pkg.dependencies).filter((name) => !BUNDLED.has(name)),
  chunkNames: 'chunks/[name]-[hash]',
  // commander is CommonJS: its require('node:events') needs a real require inside the ESM bundle.
  banner: { js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);" },
  define: { __TRADE_VERSION__: JSON.stringify(pkg.version) },
  logLevel: 'warning',
});
