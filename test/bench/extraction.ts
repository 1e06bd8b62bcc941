// `npm run bench:extraction`: field-level precision, recall and F1 of the extractor on the generated,
// labelled corpus (scripts/make-extraction-corpus.js), per tier and per file kind; seconds per document
// and per OCR'd page; peak resident memory (the OCR workers are threads of this process, so RSS covers
// them). Targets (issue #10) printed PASS/FAIL: F1 ≥ 0.95 on text PDFs, ≥ 0.85 on images, photos and
// scans, the escalated tier never below the standard one; text PDF ≤ 0.5 s, image ≤ 4 s per page
// (standard tier, p95 of CPU seconds; wall clock beside it). Report: .bench/extraction-report.md and .json.
// Issue #21: the widened corpus (split.ts) is split into tuned and held-out documents; every figure is
// reported for both side by side, per file kind, language, document kind, layout family, wording,
// scenario and field. Wrong fields are printed (VERBOSE) for tuned documents only: development never
// looks at a held-out document's mistakes (BENCH_EXTRACTION_SHOW_HELD_OUT=1 overrides, for the record).
// Settings: BENCH_EXTRACTION_CORPUS (widened | first), BENCH_EXTRACTION_DOCS (widened 48: 24 tuned + 24 held out;
// first 12: sk, cs, en, de × classic, receipt, letterhead), BENCH_EXTRACTION_SEED (1),
// BENCH_EXTRACTION_TIERS (standard,escalated), BENCH_EXTRACTION_KINDS (text_pdf,image,photo,scan_pdf,gif),
// BENCH_EXTRACTION_VERBOSE=1 (print every wrong field), EXTRACTION_CORPUS_DIR, CHROMIUM_PATH, EXTRACTION_OCR_WORKERS (1).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { createExtractor, extractorOptionsFromEnv } from '../../services/expenses/extraction';
import type { ExtractedFields, ExtractionTier } from '../../services/expenses/ports/extractor';
import { CorpusDocument, isReceipt, Split } from '../support/extraction-corpus/model';
import { CorpusName, corpusDir, FileKind, FILE_KINDS, makeCorpus } from '../support/extraction-corpus/render';
import { add, prf, Score, scoreFields } from './extraction-score';

const root = path.resolve(__dirname, '../../..');
const env = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
const CORPUS = (process.env.BENCH_EXTRACTION_CORPUS ?? 'widened') as CorpusName;
const DOCS = env('BENCH_EXTRACTION_DOCS', CORPUS === 'widened' ? 48 : 12);
const SEED = env('BENCH_EXTRACTION_SEED', 1);
const TIERS = (process.env.BENCH_EXTRACTION_TIERS ?? 'standard,escalated').split(',') as ExtractionTier[];
const KINDS = (process.env.BENCH_EXTRACTION_KINDS ?? FILE_KINDS.join(',')).split(',') as FileKind[];
const VERBOSE = process.env.BENCH_EXTRACTION_VERBOSE === '1';
const SHOW_HELD_OUT = process.env.BENCH_EXTRACTION_SHOW_HELD_OUT === '1';
/** Only one split (development runs: BENCH_EXTRACTION_SPLIT=tuned). */
const ONLY_SPLIT = process.env.BENCH_EXTRACTION_SPLIT as Split | undefined;
const SPLITS: Split[] = ['tuned', 'held_out'];
const began = Date.now();
const log = (line: string) => process.stderr.write(`[bench-extraction ${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

interface Run {
  tier: ExtractionTier;
  kind: FileKind;
  document: CorpusDocument;
  file: string;
  seconds: number;
  /** CPU seconds of this process (OCR workers are its threads): the time on an idle core. */
  cpuSeconds: number;
  pages: number;
  method: string;
  failed: string | null;
  scores: Record<string, Score>;
}

function loadAverage(): string {
  return os.loadavg().map((l) => l.toFixed(2)).join(' ');
}

async function main() {
  const dir = corpusDir(SEED, DOCS, CORPUS);
  log(`corpus: ${CORPUS}, ${DOCS} documents, seed ${SEED}, kinds ${KINDS.join(', ')} → ${dir}`);
  const entries = (await makeCorpus({ dir, seed: SEED, documents: DOCS, corpus: CORPUS, kinds: KINDS, onProgress: (done, total) => done % 8 === 0 && log(`corpus ${done}/${total}`) })).filter((e) => !ONLY_SPLIT || e.document.split === ONLY_SPLIT);
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 25);
  // The service's settings (EXTRACTION_TIMEOUT_MS …) apply, so a run on a loaded machine can lift the wall-clock
  // limit that would otherwise stop OCR which has used only seconds of CPU (the figures report CPU beside wall).
  const extractor = createExtractor({ ...extractorOptionsFromEnv(), ocrWorkers: env('EXTRACTION_OCR_WORKERS', 1) });
  const runs: Run[] = [];
  const load: string[] = [loadAverage()];
  try {
    // Warm-up (PDF.js module, OCR worker and language models), not measured.
    const warm = entries.find((e) => e.kind !== 'text_pdf') ?? entries[0];
    await extractor.extract({ bytes: readFileSync(warm.file), contentType: warm.contentType, tier: 'standard' });
    const pdf = entries.find((e) => e.kind === 'text_pdf');
    if (pdf) await extractor.extract({ bytes: readFileSync(pdf.file), contentType: pdf.contentType, tier: 'standard' });
    const total = TIERS.length * entries.length;
    for (const tier of TIERS) {
      for (const entry of entries) {
        const bytes = readFileSync(entry.file);
        const t0 = performance.now();
        const cpu0 = process.cpuUsage();
        let fields: ExtractedFields | null = null;
        let failed: string | null = null;
        let pages = 1;
        let method = '-';
        try {
          const result = await extractor.extract({ bytes, contentType: entry.contentType, tier });
          fields = result.fields;
          pages = result.pages;
          method = result.method;
        } catch (error) {
          failed = (error as Error).message;
        }
        const seconds = (performance.now() - t0) / 1000;
        const cpu = process.cpuUsage(cpu0);
        const cpuSeconds = (cpu.user + cpu.system) / 1e6;
        const scores = scoreFields(entry.document.fields, fields);
        runs.push({ tier, kind: entry.kind, document: entry.document, file: entry.file, seconds, cpuSeconds, pages, method, failed, scores });
        const s = Object.values(scores).reduce((acc, x) => add(acc, x), { tp: 0, fp: 0, fn: 0 });
        log(`${tier.padEnd(9)} ${String(runs.length).padStart(3)}/${total} ${entry.document.split.padEnd(8)} ${path.basename(entry.file).padEnd(58)} ${seconds.toFixed(2).padStart(6)} s (cpu ${cpuSeconds.toFixed(2)} s)  F1 ${prf(s).f1.toFixed(3)}${failed ? `  FAILED ${failed}` : ''}`);
        if (VERBOSE && (entry.document.split === 'tuned' || SHOW_HELD_OUT)) {
          for (const [field, sc] of Object.entries(scores)) {
            if (sc.fp || sc.fn) log(`      ${field}: expected ${JSON.stringify(expectedOf(entry.document.fields, field))} got ${JSON.stringify(fields ? expectedOf(fields, field) : null)}`);
          }
        }
        if (runs.length % 10 === 0) load.push(loadAverage());
      }
    }
  } finally {
    clearInterval(sampler);
    await extractor.close?.();
  }
  report(runs, peakRss, load);
}

function expectedOf(fields: ExtractedFields, field: string): unknown {
  return field.split('.').reduce<unknown>((o, k) => (o == null ? null : (o as Record<string, unknown>)[k]), fields);
}

/** Field-level precision, recall and F1 pooled over every field of the runs. */
function pooled(runs: Run[]): ReturnType<typeof prf> {
  return prf(runs.reduce((acc, r) => Object.values(r.scores).reduce((a, s) => add(a, s), acc), { tp: 0, fp: 0, fn: 0 }));
}

const cell = (sel: Run[]) => (sel.length ? `${pooled(sel).f1.toFixed(3)} (${pooled(sel).precision.toFixed(2)} / ${pooled(sel).recall.toFixed(2)}, ${sel.length})` : '–');

/** Tuned beside held-out, per tier, by file kind, language, document kind, layout family, wording, scenario and field. */
function sideBySide(runs: Run[]): string[] {
  const lines: string[] = ['## Tuned vs held out (F1 (precision / recall, files))', ''];
  const dims: [string, (r: Run) => string][] = [
    ['file kind', (r) => r.kind],
    ['language', (r) => r.document.lang],
    ['document kind', (r) => (isReceipt(r.document.layout) ? 'receipt' : 'invoice')],
    ['layout family', (r) => r.document.layout],
    ['wording', (r) => r.document.wording],
    ['scenario', (r) => r.document.scenario],
  ];
  for (const tier of TIERS) {
    const mine = runs.filter((r) => r.tier === tier);
    if (!mine.length) continue;
    lines.push(`### ${tier} tier`, '', '| by | value | tuned | held out |', '|---|---|---|---|');
    lines.push(`| all | all | ${cell(mine.filter((r) => r.document.split === 'tuned'))} | ${cell(mine.filter((r) => r.document.split === 'held_out'))} |`);
    for (const [name, key] of dims) {
      for (const value of [...new Set(mine.map(key))].sort()) {
        const sel = mine.filter((r) => key(r) === value);
        lines.push(`| ${name} | ${value} | ${cell(sel.filter((r) => r.document.split === 'tuned'))} | ${cell(sel.filter((r) => r.document.split === 'held_out'))} |`);
      }
    }
    lines.push('', `| field (${tier}) | tuned F1 (tp/fp/fn) | held-out F1 (tp/fp/fn) |`, '|---|---|---|');
    for (const field of Object.keys(mine[0].scores)) {
      const [t, h] = SPLITS.map((split) => mine.filter((r) => r.document.split === split).reduce((a, r) => add(a, r.scores[field]), { tp: 0, fp: 0, fn: 0 }));
      const show = (sc: Score) => (sc.tp + sc.fp + sc.fn ? `${prf(sc).f1.toFixed(3)} (${sc.tp}/${sc.fp}/${sc.fn})` : '–');
      lines.push(`| ${field} | ${show(t)} | ${show(h)} |`);
    }
    lines.push('');
  }
  return lines;
}

function quantile(values: number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
}

function report(runs: Run[], peakRss: number, load: string[]) {
  const rows: { tier: string; kind: string; n: number; precision: number; recall: number; f1: number; meanS: number; p95S: number; p95PerPage: number; cpuMeanS: number; cpuP95PerPage: number; failed: number }[] = [];
  for (const tier of TIERS) {
    for (const kind of KINDS) {
      const sel = runs.filter((r) => r.tier === tier && r.kind === kind);
      if (sel.length === 0) continue;
      const total = sel.reduce((acc, r) => Object.values(r.scores).reduce((a, s) => add(a, s), acc), { tp: 0, fp: 0, fn: 0 });
      const { precision, recall, f1 } = prf(total);
      const secs = sel.map((r) => r.seconds);
      rows.push({
        tier, kind, n: sel.length, precision, recall, f1,
        meanS: secs.reduce((a, b) => a + b, 0) / secs.length,
        p95S: quantile(secs, 0.95),
        p95PerPage: quantile(sel.map((r) => r.seconds / Math.max(1, Math.min(r.pages, 3))), 0.95),
        cpuMeanS: sel.reduce((a, r) => a + r.cpuSeconds, 0) / sel.length,
        cpuP95PerPage: quantile(sel.map((r) => r.cpuSeconds / Math.max(1, Math.min(r.pages, 3))), 0.95),
        failed: sel.filter((r) => r.failed).length,
      });
    }
  }
  // Per-field F1 over everything (where the extractor is weak).
  const perField = new Map<string, Score>();
  for (const r of runs) for (const [f, s] of Object.entries(r.scores)) perField.set(`${r.tier} ${f}`, add(perField.get(`${r.tier} ${f}`) ?? { tp: 0, fp: 0, fn: 0 }, s));

  const targets: { name: string; ok: boolean; value: string }[] = [];
  const row = (tier: string, kind: string) => rows.find((r) => r.tier === tier && r.kind === kind);
  if (CORPUS === 'widened') {
    // Issue #21's targets, judged on held-out documents of the standard tier (what an upload gets).
    const held = runs.filter((r) => r.tier === 'standard' && r.document.split === 'held_out');
    const min: Partial<Record<FileKind, number>> = { text_pdf: 0.97, image: 0.92, gif: 0.92, scan_pdf: 0.88, photo: 0.85 };
    for (const kind of KINDS) {
      const sel = held.filter((r) => r.kind === kind);
      if (sel.length) targets.push({ name: `held-out F1 ${kind} ≥ ${min[kind]}`, ok: pooled(sel).f1 >= min[kind]!, value: pooled(sel).f1.toFixed(3) });
    }
    if (held.length) targets.push({ name: 'held-out F1 all kinds ≥ 0.92', ok: pooled(held).f1 >= 0.92, value: pooled(held).f1.toFixed(3) });
    const heldPdf = held.filter((r) => r.kind === 'text_pdf');
    if (heldPdf.length) {
      const weak: string[] = [];
      for (const field of Object.keys(heldPdf[0].scores)) {
        const sc = heldPdf.reduce((a, r) => add(a, r.scores[field]), { tp: 0, fp: 0, fn: 0 });
        if (sc.tp + sc.fn + sc.fp > 0 && prf(sc).f1 < 0.85) weak.push(`${field} ${prf(sc).f1.toFixed(3)}`);
      }
      targets.push({ name: 'held-out text PDF: every field ≥ 0.85', ok: weak.length === 0, value: weak.length ? `below: ${weak.join(', ')}` : 'all fields' });
    }
  }
  for (const tier of CORPUS === 'widened' ? [] : TIERS) {
    for (const kind of KINDS) {
      const r = row(tier, kind);
      if (!r) continue;
      const min = kind === 'text_pdf' ? 0.95 : 0.85;
      targets.push({ name: `F1 ${tier} ${kind} ≥ ${min}`, ok: r.f1 >= min, value: r.f1.toFixed(3) });
    }
  }
  if (TIERS.includes('standard') && TIERS.includes('escalated')) {
    for (const kind of KINDS) {
      const s = row('standard', kind);
      const e = row('escalated', kind);
      if (s && e) targets.push({ name: `F1 escalated ≥ standard (${kind})`, ok: e.f1 >= s.f1 - 1e-9, value: `${e.f1.toFixed(3)} vs ${s.f1.toFixed(3)}` });
    }
  }
  // Time targets are judged on CPU seconds (what a document costs on an idle core: extraction is
  // single-threaded), wall clock shown beside them — on a shared machine wall time measures the neighbours.
  const textPdf = row('standard', 'text_pdf');
  if (textPdf) {
    const cpuP95 = quantile(runs.filter((r) => r.tier === 'standard' && r.kind === 'text_pdf').map((r) => r.cpuSeconds), 0.95);
    targets.push({ name: 'text PDF ≤ 0.5 s (standard, p95, CPU)', ok: cpuP95 <= 0.5, value: `${cpuP95.toFixed(3)} s CPU (wall p95 ${textPdf.p95S.toFixed(3)} s)` });
  }
  const imagePages = runs.filter((r) => r.tier === 'standard' && r.kind !== 'text_pdf');
  if (imagePages.length) {
    const cpuP95 = quantile(imagePages.map((r) => r.cpuSeconds / Math.max(1, Math.min(r.pages, 3))), 0.95);
    const wallP95 = quantile(imagePages.map((r) => r.seconds / Math.max(1, Math.min(r.pages, 3))), 0.95);
    targets.push({ name: 'image ≤ 4 s per page (standard, p95, CPU)', ok: cpuP95 <= 4, value: `${cpuP95.toFixed(2)} s CPU (wall p95 ${wallP95.toFixed(2)} s)` });
  }

  const lines: string[] = [];
  lines.push(`# Extraction bench (${new Date().toISOString()})`, '');
  lines.push(`Corpus: ${CORPUS}, ${DOCS} documents (seed ${SEED}) × ${KINDS.join(', ')}; ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load average during the run: ${load.join(' | ')}.`, '');
  lines.push('| tier | kind | files | precision | recall | F1 | wall s/doc mean | wall s/doc p95 | wall s/page p95 | CPU s/doc mean | CPU s/page p95 | failed |', '|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) lines.push(`| ${r.tier} | ${r.kind} | ${r.n} | ${r.precision.toFixed(3)} | ${r.recall.toFixed(3)} | ${r.f1.toFixed(3)} | ${r.meanS.toFixed(2)} | ${r.p95S.toFixed(2)} | ${r.p95PerPage.toFixed(2)} | ${r.cpuMeanS.toFixed(2)} | ${r.cpuP95PerPage.toFixed(2)} | ${r.failed} |`);
  lines.push('', `Peak resident memory: ${(peakRss / 1024 / 1024).toFixed(0)} MB`, '', '## Targets', '');
  for (const t of targets) lines.push(`- ${t.ok ? 'PASS' : 'FAIL'} ${t.name}: ${t.value}`);
  if (CORPUS === 'widened') lines.push('', ...sideBySide(runs));
  lines.push('', '## Per field (F1, all kinds, both splits)', '', '| tier field | F1 | tp | fp | fn |', '|---|---|---|---|---|');
  for (const [k, s] of [...perField.entries()].sort()) lines.push(`| ${k} | ${prf(s).f1.toFixed(3)} | ${s.tp} | ${s.fp} | ${s.fn} |`);
  const text = lines.join('\n');
  mkdirSync(path.join(root, '.bench'), { recursive: true });
  writeFileSync(path.join(root, '.bench/extraction-report.md'), `${text}\n`);
  writeFileSync(path.join(root, '.bench/extraction-report.json'), JSON.stringify({ rows, targets, peakRss, load, runs: runs.map(({ scores: _s, document, ...r }) => ({ ...r, split: document.split, lang: document.lang, layout: document.layout, wording: document.wording, scenario: document.scenario })) }, null, 2));
  process.stdout.write(`${text}\n`);
  process.exitCode = targets.every((t) => t.ok) ? 0 : 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
