import { existsSync } from 'node:fs';
import path from 'node:path';

/** The checkout (or image) root: the nearest folder above this file holding package.json. */
export const repoRoot: string = (() => {
  let dir = __dirname;
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above ' + __dirname);
    dir = parent;
  }
  return dir;
})();
