// What each rehearsed image holds, and what it must not: checked on the assembled trees, so a COPY, a
// .dockerignore line or a prune step that lets test code, docs, devDependencies, better-sqlite3, OCR data
// or a browser into the wrong image fails here.
'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { walkTree } = require('./files');

const OCR_LANGUAGES = ['eng', 'deu', 'ces', 'slk'];

/**
 * Production packages whose install scripts the image skips (`--ignore-scripts`) while the shared install
 * ran them: the rehearsal copies their files as installed here, so each one is reviewed. A new one fails
 * the rehearsal until it is looked at and listed with the reason the image does without its script.
 */
const REVIEWED_INSTALL_SCRIPTS = {
  'node_modules/better-sqlite3': 'removed from the image (embedded mode only)',
  'node_modules/protobufjs': 'postinstall only checks the versions of its CLI dependencies',
  'node_modules/sharp': 'install only checks that the prebuilt @img/sharp-* binary is there (it is a regular dependency)',
  'node_modules/tesseract.js': 'postinstall only prints an Open Collective message',
  'node_modules/@floating-ui/vue/node_modules/vue-demi': 'browser code of the API reference page, served prebuilt by @scalar/api-reference',
  'node_modules/radix-vue/node_modules/@vueuse/core/node_modules/vue-demi': 'browser code of the API reference page (as above)',
  'node_modules/radix-vue/node_modules/@vueuse/shared/node_modules/vue-demi': 'browser code of the API reference page (as above)',
};

/** Outside node_modules: paths no image may hold. */
const FORBIDDEN = [
  [/^(test|docs|helm|scripts|client|coverage|\.git|\.data|\.ci)(\/|$)/, 'not in the image (tests, docs, chart, scripts, local data)'],
  [/^dist\/(test|client|scripts)(\/|$)/, 'compiled test or client code'],
  [/\.test\.(ts|js)$|\.contract\.(ts|js)$/, 'test code'],
  [/\.ts$/, 'TypeScript sources (the image runs dist/)'],
];

/** Package folders below `rel` (node_modules), nested ones included; `.bin` and hidden files skipped. */
function packagesIn(app, rel) {
  const abs = path.join(app, rel);
  if (!fs.existsSync(abs)) return [];
  return fs.readdirSync(abs).filter((n) => !n.startsWith('.')).flatMap((name) => {
    const names = name.startsWith('@') ? fs.readdirSync(path.join(abs, name)).map((n) => `${name}/${n}`) : [name];
    return names.flatMap((n) => [`${rel}/${n}`, ...packagesIn(app, `${rel}/${n}/node_modules`)]);
  });
}

/** Bytes of the files below `dir`, every hard link counted (as each image layer holds its own copy). */
const treeBytes = (dir) => (fs.existsSync(dir) ? Number(execFileSync('du', ['-sbl', dir], { encoding: 'utf8' }).split('\t')[0]) : 0);

/**
 * Checks the target `stage` (build.js); returns `{ facts, problems }`. `lock` is package-lock.json.
 */
function checkTarget(stage, lock, targets) {
  const app = path.join(stage.root, stage.workdir);
  const problems = [];
  // The image's own files walked here; node_modules (tens of thousands of files) is searched with find.
  const own = walkTree(app, (rel) => rel === 'node_modules');
  const find = (...expr) => execFileSync('find', ['.', ...expr], { cwd: app, encoding: 'utf8' }).split('\n').filter(Boolean).map((p) => p.slice(2));
  for (const { path: rel } of own) {
    for (const [re, why] of FORBIDDEN) if (re.test(rel)) problems.push(`${rel}: ${why}`);
  }
  const has = (rel) => fs.existsSync(path.join(app, rel));
  // What the image's command, the compose file's init command and the admin CLI run.
  const entry = stage.cmd?.[1];
  for (const rel of [entry, 'dist/deploy/init/main.js', 'dist/deploy/cli/main.js', 'package.json', 'gateway/openapi/openapi.yaml']) {
    if (!rel || !has(rel)) problems.push(`${rel ?? 'CMD'}: missing (the image could not run it)`);
  }
  // The admin CLI on PATH: a link whose target is a path inside the image.
  const cli = path.join(stage.root, 'usr/local/bin/invoicing');
  const cliTarget = fs.existsSync(path.dirname(cli)) && fs.readdirSync(path.dirname(cli)).includes('invoicing') ? fs.readlinkSync(cli) : undefined;
  if (!cliTarget || !fs.existsSync(path.join(stage.root, cliTarget))) problems.push(`/usr/local/bin/invoicing: ${cliTarget ? `dangling (${cliTarget})` : 'missing'}`);

  // Dependencies: the lockfile's production closure, nothing of the dev tree, no better-sqlite3.
  for (const [key, entry] of Object.entries(lock.packages)) {
    if (key === '') continue;
    const present = has(key);
    if (present && entry.dev) problems.push(`${key}: a devDependency in the image`);
    if (present && entry.hasInstallScript && !REVIEWED_INSTALL_SCRIPTS[key]) problems.push(`${key}: its install script does not run in the image (--ignore-scripts); review it and list it in contents.js`);
  }
  if (has('node_modules/better-sqlite3')) problems.push('node_modules/better-sqlite3: the embedded store in a distributed image');
  for (const rel of packagesIn(app, 'node_modules')) if (!lock.packages[rel]) problems.push(`${rel}: not in package-lock.json`);

  // OCR data only where the Dockerfile puts it; Chromium only where it is installed.
  const ocr = OCR_LANGUAGES.filter((lang) => has(`node_modules/@tesseract.js-data/${lang}/4.0.0_best_int/${lang}.traineddata.gz`));
  const installsChromium = stage.steps.some((s) => /apt-get install .*\bchromium\b/.test(s.instruction));
  for (const b of find('-type', 'f', '(', '-name', 'chrome', '-o', '-name', 'chromium', '-o', '-name', 'headless_shell', ')')) problems.push(`${b}: a browser binary inside /app`);
  if (!installsChromium && stage.env.CHROMIUM_PATH) problems.push('CHROMIUM_PATH set in an image without Chromium');

  // Owned by root and not writable by the runtime user: the process cannot rewrite its own code.
  const owner = process.getuid?.() === 0 ? ['-o', '!', '-user', '0'] : [];
  for (const w of find('!', '-type', 'l', '(', '-perm', '-o+w', ...owner, ')').slice(0, 5)) problems.push(`${w}: writable by others or not owned by root`);
  // No link out of the image (a link into the repository would let code resolve outside it).
  for (const link of find('-type', 'l')) {
    const target = fs.readlinkSync(path.join(app, link));
    const resolved = path.posix.isAbsolute(target) ? path.join(stage.root, target) : path.resolve(path.dirname(path.join(app, link)), target);
    if (!resolved.startsWith(stage.root + path.sep)) problems.push(`${link}: a link out of the image (${target})`);
  }

  const facts = {
    target: stage.name,
    user: stage.user,
    cmd: stage.cmd,
    env: stage.env,
    files: own.filter((e) => e.stat.isFile()).length,
    appMB: +(treeBytes(app) / 1e6).toFixed(1),
    nodeModulesMB: +(treeBytes(path.join(app, 'node_modules')) / 1e6).toFixed(1),
    packages: Object.keys(lock.packages).filter((k) => k && has(k)).length,
    ocrLanguages: ocr,
    installsChromium,
    renderingTemplates: has('services/rendering/templates'),
    embeddedOnlyCode: own.filter((e) => /^dist\/(deploy\/embedded|services\/shared\/store\/sqlite|gateway\/edge\/adapters\/sqlite)/.test(e.path) && e.path.endsWith('.js')).map((e) => e.path),
  };
  // The per-target rules of the Dockerfile's header: OCR data in expenses only, Chromium in rendering only.
  const expectOcr = stage.name === 'expenses';
  if (expectOcr && ocr.length !== OCR_LANGUAGES.length) problems.push(`OCR data: ${ocr.join(', ') || 'none'} of ${OCR_LANGUAGES.join(', ')}`);
  if (!expectOcr && (ocr.length || has('node_modules/@tesseract.js-data'))) problems.push('@tesseract.js-data outside the expenses image');
  if (installsChromium !== (stage.name === 'rendering')) problems.push(`Chromium ${installsChromium ? 'installed in' : 'missing from'} the ${stage.name} image`);
  if (targets.includes('rendering') && (stage.name === 'rendering') !== facts.renderingTemplates) problems.push('services/rendering/templates belongs to the rendering image alone');
  return { facts, problems };
}

module.exports = { checkTarget, REVIEWED_INSTALL_SCRIPTS, OCR_LANGUAGES };
