// The extractor the service uses: the same extractor (index.ts), run in a sandbox it can kill
// (services/shared/sandbox) instead of on the event loop that serves requests. A PDF whose text layer
// keeps PDF.js busy for minutes, an image that makes libvips or tesseract grow without end, a parser
// that crashes: each ends its sandbox, not the service, and the job fails with a reason
// (docs/extraction.md "Sandbox").
import path from 'node:path';
import { ProcessSandbox } from '../../shared/sandbox/process-sandbox';
import { Sandbox, SandboxKilled, SandboxTaskError } from '../../shared/sandbox/port';
import { ExtractionFailure, ExtractionInput, ExtractionResult, Extractor } from '../ports/extractor';
import { DEFAULT_TIMEOUT_MS, ExtractorOptions } from './index';

/** The input crossing into the sandbox (the signal stays outside: aborting kills the sandbox). */
export type SandboxedInput = Omit<ExtractionInput, 'signal'>;

export interface SandboxSettings {
  /** Resident memory of one sandbox process (EXTRACTION_SANDBOX_MEMORY_MB). */
  memoryMb: number;
  /** Sandbox processes (= jobs extracted at once; EXTRACTION_CONCURRENCY). */
  size: number;
  /** Time past the tier's limit before the sandbox is killed: the extractor's own timer, when its loop is
   * free (OCR in progress), answers `timeout` and keeps the warm process. Default 1 s. */
  graceMs?: number;
}

/** Failure reasons an ExtractionFailure may carry back across the sandbox. */
const REASONS = new Set<ExtractionFailure['reason']>(['unreadable', 'too_many_pages', 'too_large', 'timeout', 'memory_limit', 'crashed', 'provider_error']);

/** The extraction sandbox: child processes running sandbox-task.ts with the extractor options. */
export function extractionSandbox(options: ExtractorOptions, settings: SandboxSettings): Sandbox<SandboxedInput, ExtractionResult> {
  const { now: _clock, ...init } = options; // functions do not cross a process boundary
  return new ProcessSandbox<SandboxedInput, ExtractionResult>({
    taskModule: path.join(__dirname, 'sandbox-task'),
    init,
    limits: { wallMs: wallMs(options, 'standard', settings), memoryMb: settings.memoryMb },
    size: settings.size,
  });
}

function wallMs(options: ExtractorOptions, tier: SandboxedInput['tier'], settings: SandboxSettings): number {
  return (options.timeoutMs ?? DEFAULT_TIMEOUT_MS)[tier] + (settings.graceMs ?? 1000);
}

export function sandboxedExtractor(sandbox: Sandbox<SandboxedInput, ExtractionResult>, options: ExtractorOptions, settings: SandboxSettings): Extractor {
  return {
    async extract({ signal, ...input }) {
      try {
        return await sandbox.run(input, { signal, limits: { wallMs: wallMs(options, input.tier, settings) } });
      } catch (error) {
        throw asFailure(error);
      }
    },
    close: () => sandbox.close(),
  };
}

/** The sandbox's answer as the port's failure: a kill by our time limit or by the caller's (the job's
 * time limit) is `timeout`; the memory limit `memory_limit`; a sandbox that died `crashed`. */
export function asFailure(error: unknown): ExtractionFailure {
  if (error instanceof ExtractionFailure) return error;
  if (error instanceof SandboxKilled) {
    if (error.kill === 'memory_limit') return new ExtractionFailure('memory_limit', `extraction was stopped at its memory limit: ${error.message}`);
    if (error.kill === 'crashed') return new ExtractionFailure('crashed', `extraction crashed its sandbox: ${error.message}`);
    return new ExtractionFailure('timeout', 'extraction was stopped at its time limit');
  }
  if (error instanceof SandboxTaskError && error.errorName === 'ExtractionFailure' && REASONS.has(error.code as ExtractionFailure['reason'])) {
    return new ExtractionFailure(error.code as ExtractionFailure['reason'], error.message);
  }
  return new ExtractionFailure('unreadable', `the file cannot be read: ${(error as Error)?.message ?? String(error)}`);
}
