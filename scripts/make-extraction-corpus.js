#!/usr/bin/env node
// Generates the labelled extraction corpus (docs/extraction.md): invoices and receipts in sk, cs, en, de
// as text PDFs, PNG/JPEG images, degraded photos and image-only scanned PDFs, each with <file>.json.
//   node scripts/make-extraction-corpus.js [--corpus widened|first] [--dir DIR] [--seed N] [--documents N] [--kinds text_pdf,image,photo,scan_pdf,gif]
// Defaults: the widened corpus (tuned and held-out documents, test/support/extraction-corpus/split.ts), 48 documents
// (first: 12), seed 1, DIR = ${XDG_CACHE_HOME:-~/.cache}/invoicing-extraction-corpus/[widened-]seed-<seed>-n<documents>.
// Deterministic for a seed; files already there are kept. Needs `npm run build` (run here if dist/ is missing)
// and Chromium (CHROMIUM_PATH or /usr/bin/chromium, as installed by scripts/engines.sh renderer).
const { execSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.resolve(__dirname, '..');
const compiled = path.join(root, 'dist/test/support/extraction-corpus/render.js');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};

async function main() {
  if (!fs.existsSync(compiled)) execSync('npm run build --silent', { cwd: root, stdio: 'inherit' });
  const { makeCorpus, corpusDir } = require(compiled);
  const seed = Number(arg('seed', '1'));
  const corpus = arg('corpus', 'widened');
  const documents = Number(arg('documents', corpus === 'widened' ? '48' : '12'));
  const dir = path.resolve(arg('dir', corpusDir(seed, documents, corpus)));
  const kinds = arg('kinds', undefined)?.split(',');
  const started = Date.now();
  const entries = await makeCorpus({
    dir,
    seed,
    documents,
    corpus,
    kinds,
    onProgress: (done, total, file) => process.stderr.write(`\r[corpus] ${done}/${total} ${path.basename(file)}`.padEnd(70)),
  });
  process.stderr.write(`\n[corpus] ${entries.length} files in ${dir} (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  console.log(dir);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
