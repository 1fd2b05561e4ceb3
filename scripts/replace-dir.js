// One directory replaced by another, whole, while other processes may be doing the same to it
// (two builds of one checkout at once: scripts/build.js, dist/types).
import { renameSync, rmSync } from 'node:fs';

/**
 * Renames `replacement` onto `dir`. The old `dir` is first renamed aside, to a name of this
 * process's own (`<dir>-old.<pid>.partial`), and removed there, never in place: another process
 * may rename its own directory onto `dir` meanwhile, and a removal in place would then find that
 * one not empty. A directory is not renamed onto a full one either: tried again.
 */
export function replaceDir(dir, replacement) {
  const aside = `${dir}-old.${process.pid}.partial`;
  for (let tries = 1; ; tries++) {
    try {
      renameSync(dir, aside);
    } catch (error) {
      if (error.code !== 'ENOENT') throw error;
    }
    rmSync(aside, { recursive: true, force: true });
    try {
      renameSync(replacement, dir);
      return;
    } catch (error) {
      if ((error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') || tries === 50) throw error;
    }
  }
}
