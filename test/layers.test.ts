/**
 * One direction in the house: no import cycle between the top-level folders of src/ (static,
 * dynamic and type-only imports alike), and src/common/, which every layer may use, uses none.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { folderCycles, folderEdges } from './helpers/import-graph.js';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

describe('the folders of src/', () => {
  const edges = folderEdges(SRC);

  it('import each other in one direction: no cycle', () => {
    // A failure lists each cycle's folders and the imports that make it.
    expect(folderCycles(edges)).toEqual([]);
  });

  it('see the imports there are, dynamic ones included', () => {
    // The guard reads its rules' syntax from config/ and the trading day from service/.
    expect(edges.map((e) => `${e.from} -> ${e.to}`)).toEqual(expect.arrayContaining(['cli -> config', 'guard -> config', 'guard -> service']));
    // `trade halt` loads the session's close with import(), inside its run function.
    expect(edges.find((e) => e.from === 'cli' && e.to === 'service')!.via).toContain('cli/commands/guard.ts -> service/session.ts');
  });

  it('common/ (errors, version) imports no other folder', () => {
    expect(edges.filter((e) => e.from === 'common')).toEqual([]);
  });
});

describe('the cycle finder', () => {
  const dir = mkdtempSync(join(tmpdir(), 'trade-layers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  };
  write('lib.ts', "export { a } from './a/a.js';\n");
  write('a/a.ts', "import type { B } from '../b/b.js';\nexport const a = 1;\n");
  write('b/b.ts', "export type B = number;\nexport async function late() { return import('../c/c.js'); }\n");
  write('c/c.ts', "import { a } from '../a/a.js';\nexport const c = a;\n");
  write('d/d.ts', "import { version } from '../lib.js';\nexport const d = version;\n");
  write('e/e.ts', "import { c } from '../c/c.js';\nimport './local.js';\nimport 'node:fs';\nexport const e = c;\n");

  it('finds a cycle made of type-only and dynamic imports, and one through a file in the root', () => {
    const edges = folderEdges(dir);
    const cycles = folderCycles(edges);
    expect(cycles.map((c) => c.folders)).toEqual([['a', 'b', 'c']]);
    expect(cycles[0]!.edges.flatMap((e) => e.via).sort()).toEqual(['a/a.ts -> b/b.ts', 'b/b.ts -> c/c.ts', 'c/c.ts -> a/a.ts']);
    write('a/more.ts', "import { d } from '../d/d.js';\nexport const more = d;\n");
    expect(folderCycles(folderEdges(dir)).map((c) => c.folders)).toEqual([['.', 'a', 'b', 'c', 'd']]);
  });
});
