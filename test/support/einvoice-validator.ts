// The official EN 16931 validation in tests (docs/e-invoicing.md "Validation"): one JVM per test file
// (scripts/einvoice-validator/EInvoiceValidator.java) runs the syntax's XSD and the CEN schematron on every
// document it is sent, answering one JSON line each. The artefacts come from scripts/einvoice-artefacts.sh
// (cached; provisioned here when absent, as scripts/test-all.sh does first).
import { ChildProcessWithoutNullStreams, execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';

export type Syntax = 'ubl' | 'cii';

export interface FailedAssert {
  id: string;
  /** "fatal" (an error) or "warning". */
  flag: string;
  location: string;
  text: string;
}

export interface Validation {
  /** XSD errors. */
  schema: string[];
  /** Every failed schematron assertion. */
  failed: FailedAssert[];
}

export const errorsOf = (v: Validation) => [...v.schema, ...v.failed.filter((f) => f.flag !== 'warning').map((f) => `${f.id}: ${f.text} (${f.location})`)];
export const warningsOf = (v: Validation) => v.failed.filter((f) => f.flag === 'warning').map((f) => f.id);

function validatorDir(): string {
  const root = path.resolve(__dirname, '../..');
  const out = execFileSync('bash', [path.join(root, 'scripts/einvoice-artefacts.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const dir = /^EINVOICE_VALIDATOR_DIR=(.+)$/m.exec(out)?.[1];
  if (!dir) throw new Error(`scripts/einvoice-artefacts.sh printed no EINVOICE_VALIDATOR_DIR: ${out}`);
  return dir;
}

export class EInvoiceValidator {
  private readonly proc: ChildProcessWithoutNullStreams;
  private readonly waiting: Array<(line: string) => void> = [];
  private stderr = '';
  readonly ready: Promise<void>;

  constructor() {
    const dir = validatorDir();
    // C1 only: the JVM answers a few hundred documents, not a long run (starts in a fraction of the time).
    this.proc = spawn('java', ['-XX:TieredStopAtLevel=1', '-Xss8m', '-cp', `${dir}/classpath/*:${dir}/classes`, 'EInvoiceValidator', `${dir}/artefacts`]);
    this.proc.stderr.on('data', (chunk: Buffer) => (this.stderr = (this.stderr + chunk.toString()).slice(-4000)));
    const lines = createInterface({ input: this.proc.stdout });
    lines.on('line', (line) => this.waiting.shift()?.(line));
    const exited = new Promise<never>((_, reject) =>
      this.proc.on('exit', (code) => {
        const err = new Error(`the e-invoice validator exited (${code}): ${this.stderr}`);
        for (const w of this.waiting.splice(0)) w(JSON.stringify({ exit: err.message }));
        reject(err);
      }),
    );
    exited.catch(() => undefined);
    this.ready = Promise.race([new Promise<void>((resolve) => this.waiting.push(() => resolve())), exited]);
  }

  /** Validates one document; answers are in request order (one JVM, one pipe). */
  async validate(syntax: Syntax, xml: string | Buffer): Promise<Validation> {
    await this.ready;
    const bytes = Buffer.isBuffer(xml) ? xml : Buffer.from(xml, 'utf8');
    const answer = new Promise<string>((resolve) => this.waiting.push(resolve));
    this.proc.stdin.write(`${syntax} ${bytes.length}\n`);
    this.proc.stdin.write(bytes);
    const parsed = JSON.parse(await answer);
    if (parsed.exit) throw new Error(parsed.exit);
    return parsed as Validation;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null) return;
    const exited = new Promise((resolve) => this.proc.once('exit', resolve));
    this.proc.stdin.end();
    await exited;
  }
}
