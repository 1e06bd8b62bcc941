// Peak memory of the expenses service with OCR running (docs/operations.md "Sizing"): the image corpus
// (clean images, phone photos, scanned PDFs) extracted through the sandboxed extractor, as the service
// runs it, in both tiers, one job at a time. Samples /proc every 50 ms: the service-side process (this
// one: it holds the job's bytes and the answer), the sandbox process (PDF.js, sharp/libvips, tesseract's
// WASM workers) and their sum. `node -r ./scripts/ts-register.js test/bench/extraction-sandbox-rss.ts`
// (BENCH_EXTRACTION_DOCS documents, default 6; EXTRACTION_SANDBOX_MEMORY_MB as the service reads it).
import { readFileSync } from 'node:fs';
import { extractorOptionsFromEnv } from '../../services/expenses/extraction';
import { extractionSandbox, sandboxedExtractor } from '../../services/expenses/extraction/sandboxed';
import { readExtractionConfig } from '../../services/expenses/module';
import { corpusDir, makeCorpus } from '../support/extraction-corpus/render';
import { processTree } from './proc-stats';

const DOCS = Number(process.env.BENCH_EXTRACTION_DOCS ?? 6);
const rssMb = (pid: number) => {
  try {
    return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
};

async function main(): Promise<void> {
  const entries = await makeCorpus({ dir: corpusDir(1, DOCS), seed: 1, documents: DOCS, kinds: ['image', 'photo', 'scan_pdf'] });
  const options = extractorOptionsFromEnv();
  const config = readExtractionConfig();
  const settings = { memoryMb: config.sandboxMemoryMb, size: 1 };
  const extractor = sandboxedExtractor(extractionSandbox(options, settings), options, settings);
  const peak = { service: 0, sandbox: 0, total: 0 };
  const sample = () => {
    const service = rssMb(process.pid);
    const sandbox = processTree(process.pid).slice(1).reduce((sum, pid) => sum + rssMb(pid), 0);
    peak.service = Math.max(peak.service, service);
    peak.sandbox = Math.max(peak.sandbox, sandbox);
    peak.total = Math.max(peak.total, service + sandbox);
  };
  const sampler = setInterval(sample, 50);
  const failures: string[] = [];
  for (const tier of ['standard', 'escalated'] as const) {
    for (const entry of entries) {
      const contentType = entry.file.endsWith('.pdf') ? 'application/pdf' : entry.file.endsWith('.png') ? 'image/png' : 'image/jpeg';
      await extractor.extract({ bytes: readFileSync(entry.file), contentType, tier }).catch((e) => failures.push(`${tier} ${entry.file}: ${e.reason}`));
      process.stdout.write(`${tier} ${entry.kind} done; peak sandbox ${Math.round(peak.sandbox)} MB\n`);
    }
  }
  clearInterval(sampler);
  await extractor.close?.();
  console.log(JSON.stringify({ files: entries.length, tiers: 2, memoryLimitMb: settings.memoryMb, peakMb: { service: Math.round(peak.service), sandbox: Math.round(peak.sandbox), total: Math.round(peak.total) }, failures }, null, 2));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
