// Preloaded (--require) into every rehearsed process: records each module resolved outside the image's /app
// and each file touched below a forbidden root (the repository, its node_modules), one JSON line per event in
// IMAGE_REHEARSAL_AUDIT. boot.js turns every line into a problem: the image would not have that file.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const Module = require('node:module');

const app = process.env.IMAGE_REHEARSAL_APP;
const forbidden = (process.env.IMAGE_REHEARSAL_FORBIDDEN ?? '').split(path.delimiter).filter(Boolean);
const out = process.env.IMAGE_REHEARSAL_AUDIT;
const append = fs.appendFileSync;
const seen = new Set();
const record = (kind, file) => {
  const key = `${kind} ${file}`;
  if (seen.has(key)) return;
  seen.add(key);
  append(out, JSON.stringify({ kind, file }) + '\n');
};
const under = (file, root) => file === root || file.startsWith(root + path.sep);

const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const file = resolve.call(this, request, ...rest);
  if (path.isAbsolute(file) && !under(file, app) && file !== __filename) record('module outside /app', file);
  return file;
};

const check = (p) => {
  if (typeof p !== 'string' && !(p instanceof URL)) return;
  const file = path.resolve(p instanceof URL ? p.pathname : p);
  if (forbidden.some((root) => under(file, root))) record('file outside the image', file);
};
for (const name of ['openSync', 'readFileSync', 'readdirSync', 'existsSync', 'statSync', 'createReadStream', 'open', 'readFile', 'readdir', 'stat']) {
  const original = fs[name];
  fs[name] = function (p, ...rest) {
    check(p);
    return original.call(this, p, ...rest);
  };
}
for (const name of ['open', 'readFile', 'readdir', 'stat']) {
  const original = fs.promises[name];
  fs.promises[name] = function (p, ...rest) {
    check(p);
    return original.call(this, p, ...rest);
  };
}
