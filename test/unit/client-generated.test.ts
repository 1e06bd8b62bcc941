// client/generated/api.d.ts is generated from the served OpenAPI document (`npm run gen:client`) and
// committed; it must be exactly what the generator makes of the document today — never edited, never stale.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(__dirname, '../..');

describe('the client types', () => {
  it('are what `npm run gen:client` generates from the document (run it after changing the document)', () => {
    const fresh = path.join(mkdtempSync(path.join(os.tmpdir(), 'client-gen-')), 'api.d.ts');
    execFileSync('bash', [path.join(root, 'scripts/gen-client.sh'), fresh], { cwd: root, stdio: 'pipe' });
    expect(readFileSync(path.join(root, 'client/generated/api.d.ts'), 'utf8') === readFileSync(fresh, 'utf8')).toBe(true);
  });
});
