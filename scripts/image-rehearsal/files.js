// File-tree helpers of the image rehearsal: hard-link copies (the rehearsal's trees share the repository's
// inodes and never write into them), the build context as .dockerignore filters it, and tree walks.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const dockerignore = require('@balena/dockerignore');

/** Copies `src` (file, symlink or directory) to `dest` with hard links; `skip(relative)` prunes subtrees. */
function linkTree(src, dest, skip, relative = '') {
  const stat = fs.lstatSync(src);
  if (!skip && stat.isDirectory()) {
    // A whole folder (node_modules: tens of thousands of files): cp does it in one process.
    fs.mkdirSync(dest, { recursive: true, mode: 0o755 });
    execFileSync('cp', ['-a', '--link', '--remove-destination', `${src}/.`, dest]);
    return;
  }
  if (stat.isSymbolicLink()) {
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.symlinkSync(fs.readlinkSync(src), dest);
  } else if (stat.isDirectory()) {
    fs.mkdirSync(dest, { recursive: true, mode: 0o755 });
    for (const name of fs.readdirSync(src)) {
      const rel = relative ? `${relative}/${name}` : name;
      if (!skip?.(rel)) linkTree(path.join(src, name), path.join(dest, name), skip, rel);
    }
  } else {
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    fs.rmSync(dest, { force: true });
    fs.linkSync(src, dest);
  }
}

/**
 * The build context `docker build .` would send: every file of `repo` not excluded by its .dockerignore,
 * hard-linked into `dest`. Returns the relative paths sent.
 */
function buildContext(repo, dest) {
  const patterns = fs.readFileSync(path.join(repo, '.dockerignore'), 'utf8').split('\n');
  const ig = dockerignore({ ignorecase: false }).add(patterns);
  const exceptions = patterns.map((p) => p.trim()).filter((p) => p.startsWith('!')).map((p) => p.slice(1));
  const sent = [];
  const walk = (rel) => {
    const abs = path.join(repo, rel);
    const stat = fs.lstatSync(abs);
    const ignored = rel !== '' && ig.ignores(rel);
    if (stat.isDirectory() && !stat.isSymbolicLink()) {
      // An excluded folder is still entered when an exception ("!a/b") may re-include something below it.
      if (ignored && !exceptions.some((e) => e.startsWith(rel + '/'))) return;
      for (const name of fs.readdirSync(abs)) walk(rel ? `${rel}/${name}` : name);
      return;
    }
    if (ignored) return;
    sent.push(rel);
    linkTree(abs, path.join(dest, rel), () => false);
  };
  fs.mkdirSync(dest, { recursive: true });
  walk('');
  return sent;
}

/** Every path below `dir` (relative, '/'-separated), with its lstat; `skip(relative)` prunes. */
function walkTree(dir, skip = () => false) {
  const out = [];
  const walk = (rel) => {
    for (const name of fs.readdirSync(path.join(dir, rel))) {
      const r = rel ? `${rel}/${name}` : name;
      if (skip(r)) continue;
      const stat = fs.lstatSync(path.join(dir, r));
      out.push({ path: r, stat });
      if (stat.isDirectory()) walk(r);
    }
  };
  if (fs.existsSync(dir)) walk('');
  return out;
}

module.exports = { linkTree, buildContext, walkTree };
