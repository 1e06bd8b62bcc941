// Runs deploy/Dockerfile's stages on this machine, without Docker: each stage is a folder standing for
// its root filesystem; COPY copies (hard links) from the filtered build context or an earlier stage; RUN
// commands are rehearsed one by one (see RUN_COMMANDS) or reported as not rehearsed with the reason.
// A command the rehearsal does not know stops it: the Dockerfile and its rehearsal cannot drift apart.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { linkTree } = require('./files');

/** Splits a shell-form RUN into `&&`-joined commands of plain words; anything richer is refused. */
function commandsOf(run, where) {
  if (/[;|`<>]|\$\(|\|\|/.test(run)) throw new Error(`${where}: the rehearsal reads only "a && b" chains of plain commands: ${run}`);
  return run.split('&&').map((c) => c.trim().split(/\s+/));
}

/** Whether `key` is a folder holding kept packages deeper down (a/node_modules/b when a/node_modules/b/node_modules/c is kept). */
const isNested = (key, kept) => [...kept].some((k) => k.startsWith(key + '/node_modules/'));

/** The production closure of package-lock.json, as `npm prune --omit=dev` keeps it. */
function productionPackages(lock) {
  return Object.entries(lock.packages).filter(([key, entry]) => key !== '' && !entry.dev && !entry.link);
}

/**
 * Rehearsal of each RUN command, by its first word(s): `run(words, ctx)` does it here (and throws where the
 * image build would fail), or `notRehearsed(words)` says why this machine cannot.
 */
const RUN_COMMANDS = [
  {
    match: (w) => w[0] === 'apt-get',
    notRehearsed: (w) => `needs Debian's package manager inside the image (apt-get ${w.slice(1).join(' ')})`,
  },
  {
    match: (w) => w.find((x) => !/^[A-Z_]+=/.test(x)) === 'go',
    notRehearsed: () => 'needs the Go toolchain and the Go module proxy inside the image (go install)',
  },
  {
    // `npm install` against the registry: the rehearsal stands the shared install of the same lockfile in for it.
    match: (w) => w[0] === 'npm' && w[1] === 'install',
    run: (w, ctx) => {
      // (npm prune below checks every kept package's version against the stage's package-lock.json.)
      if (!w.includes('--ignore-scripts')) throw new Error(`${ctx.where}: npm install without --ignore-scripts is not rehearsed (install scripts would run in the image)`);
      fs.symlinkSync(ctx.sharedModules, ctx.map('node_modules'));
    },
  },
  {
    match: (w) => w[0] === 'npm' && w[1] === 'prune',
    run: (w, ctx) => {
      if (!w.includes('--omit=dev')) throw new Error(`${ctx.where}: only npm prune --omit=dev is rehearsed`);
      const modules = ctx.map('node_modules');
      if (!fs.lstatSync(modules).isSymbolicLink()) throw new Error(`${ctx.where}: npm prune before npm install`);
      const shared = fs.readlinkSync(modules);
      fs.unlinkSync(modules);
      const lock = JSON.parse(fs.readFileSync(ctx.map('package-lock.json'), 'utf8'));
      const absent = [];
      const kept = new Set();
      for (const [key, entry] of productionPackages(lock)) {
        const source = path.join(path.dirname(shared), key);
        if (!fs.existsSync(source)) {
          // Another platform's package: npm skips it in the image too. Any other optional one failed its
          // install script here, while the image's --ignore-scripts install would carry it unbuilt.
          if (entry.optional) {
            if (!entry.os && !entry.cpu) absent.push(key);
            continue;
          }
          throw new Error(`${ctx.where}: ${key} (a production dependency in package-lock.json) is missing from the shared install`);
        }
        const version = JSON.parse(fs.readFileSync(path.join(source, 'package.json'), 'utf8')).version;
        if (version !== entry.version) throw new Error(`${ctx.where}: ${key} is ${version} in the shared install, ${entry.version} in package-lock.json`);
        kept.add(key);
      }
      // Top-level packages in one cp (nested node_modules come along), then what the lockfile marks dev —
      // or does not list at all (caches) — goes, as npm prune removes it.
      const top = [...kept].filter((key) => !key.slice('node_modules/'.length).includes('/node_modules/'));
      execFileSync('cp', ['-a', '--link', '--parents', ...top, ctx.map('.')], { cwd: path.dirname(shared) });
      for (const dir of ['node_modules', ...[...kept].map((key) => `${key}/node_modules`)]) {
        const abs = path.join(ctx.map('.'), dir);
        if (!fs.existsSync(abs)) continue;
        for (const name of fs.readdirSync(abs)) {
          const names = name.startsWith('@') ? fs.readdirSync(path.join(abs, name)).map((n) => `${name}/${n}`) : [name];
          for (const n of names) if (!kept.has(`${dir}/${n}`) && !isNested(`${dir}/${n}`, kept)) fs.rmSync(path.join(abs, n), { recursive: true, force: true });
        }
      }
      const roots = productionPackages(lock)
        .flatMap(([key, entry]) => Object.keys(entry.optionalDependencies ?? {}).map((name) => [key, name]))
        .filter(([key, name]) => !absent.includes(key) && absent.includes(`node_modules/${name}`))
        .map(([key, name]) => `${name} (optional dependency of ${key.replace(/^.*node_modules\//, '')})`);
      if (absent.length) ctx.notes.push(`${absent.length} optional packages of package-lock.json are not in the shared install (their install scripts failed here): ${roots.join(', ')} and what they need; the image's --ignore-scripts install would hold them unbuilt`);
    },
  },
  {
    // Plain npm scripts and local binaries run for real, offline, in the stage's working directory.
    match: (w) => (w[0] === 'npm' && w[1] === 'run') || w[0] === 'npx',
    run: (w, ctx) => {
      execFileSync(w[0], w.slice(1), {
        cwd: ctx.map('.'),
        env: { ...process.env, ...ctx.env, npm_config_offline: 'true', npm_config_update_notifier: 'false' },
        stdio: ['ignore', 'inherit', 'inherit'],
      });
    },
  },
  {
    match: (w) => w[0] === 'rm',
    run: (w, ctx) => {
      if (w[1] !== '-rf') throw new Error(`${ctx.where}: only rm -rf is rehearsed`);
      for (const target of w.slice(2)) {
        if (target.includes('*')) {
          const dir = ctx.map(path.posix.dirname(target));
          const re = new RegExp('^' + path.posix.basename(target).replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*') + '$');
          if (fs.existsSync(dir)) for (const name of fs.readdirSync(dir)) if (re.test(name)) fs.rmSync(path.join(dir, name), { recursive: true, force: true });
        } else fs.rmSync(ctx.map(target), { recursive: true, force: true });
      }
    },
  },
  {
    match: (w) => w[0] === 'mkdir',
    run: (w, ctx) => {
      for (const dir of w.slice(1).filter((x) => x !== '-p')) fs.mkdirSync(ctx.map(dir), { recursive: true, mode: 0o755 });
    },
  },
  {
    match: (w) => w[0] === 'mv',
    run: (w, ctx) => {
      if (w.length !== 3) throw new Error(`${ctx.where}: only "mv source target" is rehearsed`);
      const [source, target] = [ctx.map(w[1]), ctx.map(w[2])];
      if (!fs.existsSync(source)) throw new Error(`${ctx.where}: mv: ${w[1]} does not exist (the build would fail here)`);
      const into = fs.existsSync(target) && fs.statSync(target).isDirectory() ? path.join(target, path.basename(source)) : target;
      fs.renameSync(source, into);
    },
  },
  {
    match: (w) => w[0] === 'ln' && w[1] === '-s' && w.length === 4,
    run: (w, ctx) => {
      fs.mkdirSync(path.dirname(ctx.map(w[3])), { recursive: true });
      fs.symlinkSync(w[2], ctx.map(w[3]));
      if (!fs.existsSync(ctx.map(w[2]))) throw new Error(`${ctx.where}: ln -s ${w[2]}: no such file in the stage`);
    },
  },
];

/**
 * Builds every stage of `parsed` (dockerfile.js) under `work`: returns the stages by name, each with its
 * root folder, final ENV, WORKDIR, USER, CMD, EXPOSE and the list of steps with their outcome.
 */
function buildStages(parsed, { repo, context, work, log }) {
  const sharedModules = fs.realpathSync(path.join(repo, 'node_modules'));
  const stages = {};
  for (const spec of parsed.stages) {
    const parent = stages[spec.from];
    const root = path.join(work, 'stages', spec.name);
    const stage = parent
      ? { ...parent, name: spec.name, root, env: { ...parent.env }, steps: [...parent.steps.map((s) => ({ ...s, inherited: true }))] }
      : { name: spec.name, root, base: spec.from, env: {}, workdir: '/', user: '0:0', cmd: undefined, expose: [], steps: [] };
    stage.base = parent ? parent.base : spec.from;
    if (parent) execFileSync('cp', ['-a', '--link', parent.root, root]);
    else fs.mkdirSync(root, { recursive: true, mode: 0o755 });
    stage.steps.push({
      line: spec.line,
      instruction: `FROM ${spec.from}`,
      ...(parent ? {} : { notRehearsed: `the base image's own files (${spec.from}): this machine's node ${process.version} and system libraries stand in` }),
    });
    const map = (p) => path.join(root, path.posix.isAbsolute(p) ? p : path.posix.join(stage.workdir, p));
    for (const ins of spec.instructions) {
      const where = `${spec.name}, line ${ins.line} (${ins.op})`;
      const step = { line: ins.line, instruction: ins.op };
      if (ins.op === 'RUN' || ins.from) log(`  ${where}${ins.command ? `: ${ins.command.slice(0, 90)}` : ` --from=${ins.from}`}`);
      if (ins.op === 'WORKDIR') {
        stage.workdir = path.posix.resolve(stage.workdir, ins.value);
        fs.mkdirSync(map('.'), { recursive: true, mode: 0o755 });
        step.instruction += ` ${ins.value}`;
      } else if (ins.op === 'ENV') {
        Object.assign(stage.env, ins.vars);
        step.instruction += ` ${Object.keys(ins.vars).join(' ')}`;
      } else if (ins.op === 'ARG') {
        stage.env[ins.name] ??= ins.value; // visible to RUN of this stage only; not kept in the image
        step.instruction += ` ${ins.name}`;
      } else if (ins.op === 'USER') {
        stage.user = ins.value;
        step.instruction += ` ${ins.value}`;
      } else if (ins.op === 'CMD') {
        stage.cmd = ins.argv;
        step.instruction += ` ${JSON.stringify(ins.argv)}`;
      } else if (ins.op === 'EXPOSE') {
        stage.expose = [...stage.expose, ...ins.ports];
        step.instruction += ` ${ins.ports.join(' ')}`;
      } else if (ins.op === 'COPY') {
        step.instruction += `${ins.from ? ` --from=${ins.from}` : ''} ${ins.sources.join(' ')} ${ins.dest}`;
        const sourceStage = ins.from ? stages[ins.from] : undefined;
        if (ins.from && !sourceStage) throw new Error(`${where}: --from=${ins.from} names no earlier stage`);
        const sourceRoot = sourceStage ? sourceStage.root : context;
        for (const source of ins.sources) {
          const from = path.join(sourceRoot, sourceStage ? source : path.posix.normalize(source));
          if (!fs.existsSync(from)) {
            const skipped = sourceStage?.steps.find((s) => s.notRehearsed && !s.instruction.startsWith('FROM'));
            if (skipped) {
              step.notRehearsed = `${source} is made by stage ${ins.from}'s "${skipped.instruction}", which was not rehearsed (${skipped.notRehearsed})`;
              continue;
            }
            throw new Error(`${where}: COPY ${source}: not in ${sourceStage ? `stage ${ins.from}` : 'the build context (.dockerignore?)'}: the image build would fail here`);
          }
          const isDir = fs.statSync(from).isDirectory();
          const destIsDir = ins.dest.endsWith('/') || (fs.existsSync(map(ins.dest)) && fs.statSync(map(ins.dest)).isDirectory());
          linkTree(from, isDir || !destIsDir ? map(ins.dest) : path.join(map(ins.dest), path.posix.basename(source)));
        }
        if (ins.chown) step.chown = ins.chown;
      } else if (ins.op === 'RUN') {
        step.instruction += ` ${ins.command}`;
        const commands = commandsOf(ins.command, where);
        const handlers = commands.map((words) => {
          const handler = RUN_COMMANDS.find((h) => h.match(words));
          if (!handler) throw new Error(`${where}: "${words.join(' ')}" is not a command the rehearsal knows; teach scripts/image-rehearsal/build.js`);
          return handler;
        });
        // A RUN with a command the machine cannot run (apt, go) is not rehearsed at all: half of it would lie.
        const reasons = commands.map((words, i) => handlers[i].notRehearsed?.(words)).filter(Boolean);
        if (reasons.length) step.notRehearsed = reasons.join('; ');
        else {
          const ctx = { where, repo, sharedModules, env: stage.env, map, notes: [] };
          for (let i = 0; i < commands.length; i++) handlers[i].run(commands[i], ctx);
          if (ctx.notes.length) step.notes = ctx.notes;
        }
      }
      stage.steps.push(step);
    }
    stages[spec.name] = stage;
  }
  return stages;
}

module.exports = { buildStages, productionPackages };
