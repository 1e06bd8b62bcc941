// What runs inside the extraction sandbox (services/shared/sandbox/child.ts loads this module by path):
// the extractor itself — PDF.js, sharp/libvips, tesseract.js — built once per sandbox process from the
// service's extractor options. Its ExtractionFailures cross back with their reason as the error code.
import { ExtractionResult } from '../ports/extractor';
import { createExtractor, ExtractorOptions } from './index';
import type { SandboxedInput } from './sandboxed';

export function createTask(options: ExtractorOptions): (input: SandboxedInput) => Promise<ExtractionResult> {
  const extractor = createExtractor(options);
  return (input) => extractor.extract(input);
}
