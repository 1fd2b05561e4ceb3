// Writes the command reference (docs/commands.md) and the man page (trade.1) from the command tree
// (src/cli/manual.ts renders both). `npm run docs` after changing a command; test/cli/manual.test.ts
// fails when the committed files differ from what the tree gives.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
// Inside the project, so that the bundle's imports of packages (commander) resolve from node_modules.
const dir = join(ROOT, 'node_modules', '.cache', 'trade-docs');
mkdirSync(dir, { recursive: true });
try {
  const outfile = join(dir, 'manual.mjs');
  await build({
    entryPoints: [join(ROOT, 'src/cli/manual.ts')],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    define: { __TRADE_VERSION__: JSON.stringify(pkg.version) },
    logLevel: 'warning',
  });
  const { commandReference, manPage } = await import(pathToFileURL(outfile).href);
  for (const [file, text] of [
    ['docs/commands.md', commandReference()],
    ['trade.1', manPage()],
  ]) {
    writeFileSync(join(ROOT, file), text);
    console.log(`wrote ${file}`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
