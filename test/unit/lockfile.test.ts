// The lock file is shared by every developer's platform: `npm ci` installs exactly what it lists, so a
// platform binary missing from it (buf for `npm run lint`, swc for jest, sharp's libvips) is missing on
// that platform's machines. `npm install` keeps entries it finds but does not always write other
// platforms' optional packages when the lock is regenerated; this test catches such a lock.
import { readFileSync } from 'node:fs';
import path from 'node:path';

type LockEntry = { optionalDependencies?: Record<string, string>; os?: string[]; cpu?: string[] };
const lock = JSON.parse(readFileSync(path.resolve(__dirname, '../../package-lock.json'), 'utf8')) as {
  packages: Record<string, LockEntry>;
};

/** Where node would find `dependency` from the package installed at `from`: nested first, then upwards. */
function resolveFrom(from: string, dependency: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${dependency}`;
    if (lock.packages[candidate]) return candidate;
    if (!base) return undefined;
    const parent = base.lastIndexOf('/node_modules/');
    base = parent < 0 ? '' : base.slice(0, parent);
  }
}

describe('package-lock.json is complete for every platform', () => {
  const optional = Object.entries(lock.packages).flatMap(([from, entry]) =>
    Object.keys(entry.optionalDependencies ?? {}).map((dependency) => ({ from, dependency })),
  );

  it('lists platform packages at all (the check below is not vacuous)', () => {
    expect(optional.map((o) => o.dependency)).toEqual(expect.arrayContaining(['@bufbuild/buf-darwin-arm64', '@swc/core-darwin-arm64', '@swc/core-win32-x64-msvc']));
  });

  it('has an entry for every optional dependency of every package', () => {
    const missing = optional.filter(({ from, dependency }) => !resolveFrom(from, dependency)).map(({ from, dependency }) => `${from} → ${dependency}`);
    expect(missing).toEqual([]);
  });

  it.each([
    ['darwin', 'arm64'],
    ['darwin', 'x64'],
    ['linux', 'x64'],
    ['linux', 'arm64'],
    ['win32', 'x64'],
  ])('has buf and swc binaries for %s-%s', (os, cpu) => {
    for (const parent of ['@bufbuild/buf', '@swc/core']) {
      const binaries = Object.keys(lock.packages[`node_modules/${parent}`].optionalDependencies ?? {})
        .map((name) => lock.packages[`node_modules/${name}`])
        .filter((entry) => entry?.os?.includes(os) && entry.cpu?.includes(cpu));
      expect(binaries.length).toBeGreaterThan(0);
    }
  });
});
