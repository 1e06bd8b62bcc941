#!/usr/bin/env node
// Image rehearsal: what `docker build -f deploy/Dockerfile --target …` would put in each image, and that the
// images boot, proven without Docker (none on the development machine or in CI). docs/operations.md "Images".
//   node scripts/image-rehearsal.js [--no-boot] [--keep] [--report FILE] [--reuse DIR]
// 1. parses deploy/Dockerfile (scripts/image-rehearsal/dockerfile.js) and builds every stage in a folder of
//    its own (build.js): the build context filtered by .dockerignore, the COPY steps, the real `npm run gen`
//    and `tsc`, the production closure of package-lock.json from the shared install (no network);
//    apt and go steps are reported as not rehearsed;
// 2. checks what each target (a stage with a CMD) holds and must not hold (contents.js);
// 3. boots the targets as deploy/compose.yaml runs them, as uid 1000, from their own /app only, against the
//    real engines (engines.env), and drives a request chain through them (boot.js).
// Exit code 0 only when everything rehearsed passed; the JSON report says what was and was not rehearsed.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseDockerfile } = require('./image-rehearsal/dockerfile');
const { buildContext } = require('./image-rehearsal/files');
const { buildStages } = require('./image-rehearsal/build');
const { checkTarget } = require('./image-rehearsal/contents');

const repo = path.resolve(__dirname, '..');
const args = process.argv.slice(2);
const option = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const started = Date.now();
const log = (line) => process.stdout.write(`[image-rehearsal +${((Date.now() - started) / 1000).toFixed(0)}s] ${line}\n`);

const report = {};
let reportFile;

async function main() {
  // Outside the repository, and nowhere below a node_modules: nothing can resolve from the checkout.
  // --reuse DIR: boot the stages a --keep run left in DIR (for working on the boot; the build is not redone).
  const reuse = option('--reuse');
  const work = reuse ?? fs.mkdtempSync(path.join(os.tmpdir(), 'image-rehearsal-'));
  fs.chmodSync(work, 0o755);
  for (let dir = path.dirname(work); ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'node_modules'))) throw new Error(`${dir}/node_modules exists: the rehearsed images would resolve modules from it`);
    if (dir === path.dirname(dir)) break;
  }
  Object.assign(report, { work, dockerfile: 'deploy/Dockerfile', node: process.version, targets: {}, notRehearsed: [], problems: [] });
  reportFile = option('--report') ?? path.join(work, 'report.json');
  try {
    const parsed = parseDockerfile(fs.readFileSync(path.join(repo, 'deploy/Dockerfile'), 'utf8'));
    log(`deploy/Dockerfile: stages ${parsed.stages.map((s) => s.name).join(', ')}`);
    const context = path.join(work, 'context');
    if (!reuse) report.contextFiles = buildContext(repo, context).length;
    if (!reuse) log(`build context (.dockerignore applied): ${report.contextFiles} files`);
    const stages = reuse ? JSON.parse(fs.readFileSync(path.join(work, 'stages.json'), 'utf8')) : buildStages(parsed, { repo, context, work, log });
    fs.writeFileSync(path.join(work, 'stages.json'), JSON.stringify(stages));
    const targets = Object.values(stages).filter((s) => s.cmd).map((s) => s.name);
    for (const stage of Object.values(stages)) {
      for (const step of stage.steps.filter((s) => s.notRehearsed && !s.inherited)) report.notRehearsed.push({ stage: stage.name, line: step.line, instruction: step.instruction, reason: step.notRehearsed });
      for (const step of stage.steps.filter((s) => s.notes && !s.inherited)) report.notRehearsed.push(...step.notes.map((reason) => ({ stage: stage.name, line: step.line, instruction: step.instruction, reason })));
    }
    const lock = JSON.parse(fs.readFileSync(path.join(repo, 'package-lock.json'), 'utf8'));
    for (const name of targets) {
      const { facts, problems } = checkTarget(stages[name], lock, targets);
      report.targets[name] = { ...facts, problems };
      report.problems.push(...problems.map((p) => `${name}: ${p}`));
      log(`target ${name}: ${facts.files} files of its own, node_modules ${facts.nodeModulesMB} MB (${facts.packages} packages), ${problems.length} problem(s)`);
      for (const p of problems) log(`  PROBLEM ${p}`);
    }
    if (!args.includes('--no-boot')) {
      const { bootAndSmoke } = require('./image-rehearsal/boot');
      report.boot = await bootAndSmoke({ repo, work, stages, log });
      report.problems.push(...report.boot.problems);
      report.notRehearsed.push(...report.boot.notRehearsed.map((reason) => ({ stage: 'boot', reason })));
    }
  } catch (error) {
    report.problems.push(`rehearsal failed: ${error.stack ?? error}`);
  } finally {
    report.seconds = Math.round((Date.now() - started) / 1000);
    fs.writeFileSync(reportFile, JSON.stringify(report, null, 2));
    for (const n of report.notRehearsed) log(`not rehearsed: ${n.stage}${n.line ? ` line ${n.line}` : ''}: ${n.reason}`);
    log(`report: ${reportFile}`);
    // The trees go (hundreds of MB of hard links; rm is much faster at that than fs.rmSync); logs and audit stay.
    if (!args.includes('--keep')) execFileSync('rm', ['-rf', ...['stages', 'context', 'tmp', 'home'].map((dir) => path.join(work, dir))]);
  }
  for (const p of report.problems) log(`PROBLEM ${p}`);
  log(report.problems.length ? `FAILED: ${report.problems.length} problem(s)` : 'passed');
  return report.problems.length ? 1 : 0;
}

// Bounded: a hung boot or build never outlives REHEARSAL_TIMEOUT_MS (children are stopped by boot.js's exit hook).
const timeout = Number(process.env.REHEARSAL_TIMEOUT_MS ?? 600_000);
const watchdog = setTimeout(() => {
  log(`FAILED: still running after ${timeout} ms`);
  if (reportFile) fs.writeFileSync(reportFile, JSON.stringify({ ...report, problems: [...(report.problems ?? []), `timed out after ${timeout} ms`] }, null, 2));
  process.exit(2);
}, timeout);
main().then(
  (code) => {
    clearTimeout(watchdog);
    process.exitCode = code;
  },
  (error) => {
    log(`FAILED: ${error.stack ?? error}`);
    process.exit(1);
  },
);
