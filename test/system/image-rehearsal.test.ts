// deploy/Dockerfile rehearsed without Docker (none on the development machine or in CI):
// scripts/image-rehearsal.js builds each stage from the Dockerfile itself, checks what each image holds and
// boots the images as deploy/compose.yaml runs them, against the real engines. One run (≈1–3 min), its
// progress printed, bounded by REHEARSAL_TIMEOUT_MS; the assertions read its JSON report. docs/operations.md "Images".
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { realEngineEnv } from '../support/real-engines';

interface Report {
  work: string;
  targets: Record<string, { user: string; cmd: string[]; env: Record<string, string>; problems: string[]; ocrLanguages: string[]; installsChromium: boolean; packages: number }>;
  notRehearsed: { stage: string; line: number; instruction: string; reason: string }[];
  problems: string[];
  boot?: { processes: Record<string, { target: string; argv: string[]; user: string }>; smoke: { step: string }[]; notRehearsed: string[]; problems: string[] };
}

const root = path.resolve(__dirname, '../..');
let report: Report;
let exitCode: number | null;
let reportFile: string;

beforeAll(async () => {
  const env = { ...process.env, ...realEngineEnv(), REHEARSAL_TIMEOUT_MS: '600000' };
  reportFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'image-rehearsal-report-')), 'report.json');
  exitCode = await new Promise<number | null>((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts/image-rehearsal.js'), '--report', reportFile], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (chunk: Buffer) => process.stdout.write(chunk));
    child.stderr.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.once('exit', resolve);
  });
  try {
    report = JSON.parse(readFileSync(reportFile, 'utf8'));
  } catch {
    throw new Error(`scripts/image-rehearsal.js exited with ${exitCode} and wrote no report (its output is above)`);
  }
}, 660_000);

// Logs and audit stay for a failed run (the report names the folder); a passed one leaves nothing behind.
afterAll(() => {
  if (exitCode === 0) for (const dir of [report.work, path.dirname(reportFile)]) rmSync(dir, { recursive: true, force: true });
});

describe('deploy/Dockerfile rehearsed without Docker', () => {
  it('every stage builds from the Dockerfile; only the apt and go steps and the base images are not rehearsed', () => {
    const skipped = report.notRehearsed.map((n) => `${n.stage}: ${n.reason}`);
    for (const reason of skipped) expect(reason).toMatch(/apt-get|go install|the base image.s own files|grpc_health_probe|optional packages of package-lock\.json|^boot: the processes run as this user/);
    expect(skipped.filter((r) => /apt-get install .*chromium/.test(r))).toEqual([expect.stringMatching(/^rendering: /)]);
    // The probe stage's go install, and the copy of its binary into the service image.
    const goSteps = report.notRehearsed.filter((n) => /go install/.test(n.reason)).map((n) => `${n.stage} ${n.instruction.split(' ')[0]}`);
    expect(goSteps).toEqual(['probe RUN', 'service COPY']);
  });

  it('the service, rendering and expenses images hold no test code, docs, TypeScript sources, devDependencies or better-sqlite3, and run as uid 1000', () => {
    expect(Object.keys(report.targets).sort()).toEqual(['expenses', 'rendering', 'service']);
    for (const [name, target] of Object.entries(report.targets)) {
      expect({ name, problems: target.problems }).toEqual({ name, problems: [] });
      expect({ name, user: target.user, cmd: target.cmd }).toEqual({ name, user: '1000:1000', cmd: ['node', 'dist/deploy/distributed/main.js'] });
      expect(target.packages).toBeGreaterThan(100);
    }
  });

  it('OCR data only in the expenses image, Chromium (and CHROMIUM_PATH) only in the rendering image', () => {
    expect(report.targets.expenses.ocrLanguages.sort()).toEqual(['ces', 'deu', 'eng', 'slk']);
    expect([report.targets.service.ocrLanguages, report.targets.rendering.ocrLanguages]).toEqual([[], []]);
    expect(Object.entries(report.targets).filter(([, t]) => t.installsChromium).map(([n]) => n)).toEqual(['rendering']);
    expect(Object.entries(report.targets).filter(([, t]) => t.env.CHROMIUM_PATH).map(([n]) => n)).toEqual(['rendering']);
  });

  it("boots as deploy/compose.yaml runs it (init, every service, the gateway) from the images' own trees and serves the request chain", () => {
    expect(report.boot?.problems).toEqual([]);
    expect(Object.keys(report.boot!.processes)).toEqual(['init', 'identity', 'contacts', 'documents', 'rendering', 'expenses', 'gateway']);
    expect(report.boot!.processes.rendering.target).toBe('rendering');
    expect(report.boot!.processes.expenses.target).toBe('expenses');
    const steps = report.boot!.smoke.map((s) => s.step);
    expect(steps).toEqual(
      expect.arrayContaining([
        'the image USER cannot write to /app',
        'admin CLI: user, workspace, legal identity, token',
        'contact, invoice, issue (gateway → contacts, documents)',
        expect.stringMatching(/^PDF through the rendering image/),
        'expense upload, OCR in the expenses image',
        'expense upload, PDF text layer in the expenses image',
        'OpenAPI document and /docs assets (files the image copies)',
        '/metrics of every process',
      ]),
    );
  });

  it('nothing outside the images was loaded or read, and the rehearsal passed as a whole', () => {
    expect(report.problems).toEqual([]);
    expect(exitCode).toBe(0);
  });
});
