// Compiles once per run (the black-box suites start the compiled system as child processes).
import { execSync } from 'node:child_process';
import path from 'node:path';

export default function globalSetup(): void {
  if (process.env.SKIP_BUILD === '1') return;
  execSync('npm run build --silent', { cwd: path.resolve(__dirname, '../..'), stdio: 'inherit' });
}
