#!/usr/bin/env node
// Generates TypeScript from proto/ with ts-proto through buf (both from npm, so it runs offline).
// Output goes to gen/ (git-ignored): generated code is never edited by hand. It is generated into a
// temporary folder and swapped in, so a concurrent build never sees a half-written gen/.
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const fs = require('node:fs');

const root = path.resolve(__dirname, '..');
const buf = require.resolve('@bufbuild/buf/bin/buf', { paths: [root] });
const tmp = path.join(root, `.gen-${process.pid}`);
fs.rmSync(tmp, { recursive: true, force: true });
execFileSync(process.execPath, [buf, 'generate', '-o', tmp], { cwd: root, stdio: 'inherit' });
const old = path.join(root, `.gen-old-${process.pid}`);
if (fs.existsSync(path.join(root, 'gen'))) fs.renameSync(path.join(root, 'gen'), old);
fs.renameSync(path.join(tmp, 'gen'), path.join(root, 'gen'));
fs.rmSync(old, { recursive: true, force: true });
fs.rmSync(tmp, { recursive: true, force: true });
console.log('[gen] proto → gen/ (ts-proto)');
