#!/usr/bin/env node
// Generates TypeScript from proto/ with ts-proto through buf (both from npm, so it runs offline).
// Output goes to gen/ (git-ignored): generated code is never edited by hand.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
const buf = require.resolve('@bufbuild/buf/bin/buf', { paths: [root] });
fs.rmSync(path.join(root, 'gen'), { recursive: true, force: true });
execFileSync(process.execPath, [buf, 'generate'], { cwd: root, stdio: 'inherit' });
console.log('[gen] proto → gen/ (ts-proto)');
