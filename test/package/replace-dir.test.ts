/**
 * scripts/replace-dir.js: dist/types swapped whole by two or more builds of one checkout at once.
 * A build used to remove dist/types in place and then rename its own onto it; another build's
 * rename in between made the removal fail ("ENOTEMPTY: directory not empty, rmdir dist/types"),
 * which a CI run of build-while-running.test.ts once showed. Here three processes swap their own
 * copies of a directory onto one place as fast as they can: every swap succeeds, and the place
 * always ends holding one whole copy, with nothing left aside.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { exec } from '../helpers/exec.js';

const MODULE = fileURLToPath(new URL('../../scripts/replace-dir.js', import.meta.url));
const FILES = Array.from({ length: 40 }, (_, i) => `sub${i % 4}/f${i}.d.ts`);

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'trade-replace-dir-'));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A process that makes its own copy (every file names the process) and swaps it in, `times` times. */
const SWAPPER = `
const { mkdirSync, writeFileSync } = require('node:fs');
const { dirname, join } = require('node:path');
const [module, target, times, files] = process.argv.slice(1);
import(module).then(({ replaceDir }) => {
  for (let i = 0; i < Number(times); i++) {
    const copy = target + '.' + process.pid + '.partial';
    for (const name of JSON.parse(files)) {
      mkdirSync(dirname(join(copy, name)), { recursive: true });
      writeFileSync(join(copy, name), String(process.pid));
    }
    replaceDir(target, copy);
  }
});
`;

it('three processes swapping their copies onto one directory at once: every swap succeeds, one whole copy stays, nothing aside', async () => {
  const target = join(dir, 'types');
  mkdirSync(target);
  writeFileSync(join(target, 'stale.d.ts'), 'from before');
  const runs = await Promise.all(
    [1, 2, 3].map(() => exec(process.execPath, ['-e', SWAPPER, MODULE, target, '150', JSON.stringify(FILES)], { env: { PATH: process.env.PATH } })),
  );
  for (const run of runs) expect(run.code, run.stderr).toBe(0);
  const left = readdirSync(target, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath ?? entry.path, entry.name).slice(target.length + 1))
    .sort();
  expect(left).toEqual([...FILES].sort());
  // One process's copy, whole: every file written by the same process.
  expect(new Set(FILES.map((name) => readFileSync(join(target, name), 'utf8'))).size).toBe(1);
  expect(readdirSync(dir).sort()).toEqual(['types']);
});
