#!/usr/bin/env node
// Entry of the `invoicing` admin CLI (package.json "bin"): builds on first use, then runs the compiled CLI.
const { existsSync } = require('node:fs');
const { execSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '../..');
const compiled = path.join(root, 'dist/deploy/cli/main.js');
if (!existsSync(compiled)) execSync('npm run build --silent', { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
require(compiled)
  .run(process.argv.slice(2))
  .then((code) => process.exit(code));
