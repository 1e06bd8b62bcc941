// A jest reporter for long runs (`npm run test:cluster`: a whole suite file by file, minutes each on a
// small machine): one line when a file starts, one per finished test, one when the file ends, each with
// the file's position in the run and the time elapsed — so a run shows where it is while it runs.
// Plain CommonJS: jest loads reporters untransformed.
const path = require('node:path');

class ProgressReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.started = Date.now();
    this.total = 0;
    this.done = 0;
    this.failed = 0;
  }

  elapsed() {
    const s = Math.round((Date.now() - this.started) / 1000);
    return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  }

  name(test) {
    return path.relative(this.rootDir, test.path);
  }

  line(text) {
    process.stderr.write(`[progress ${this.elapsed()}] ${text}\n`);
  }

  onRunStart(results) {
    this.total = results.numTotalTestSuites;
    this.line(`${this.total} files to run`);
  }

  onTestFileStart(test) {
    this.line(`(${this.done + 1}/${this.total}) ${test.context.config.displayName?.name ?? ''} ${this.name(test)} …`);
  }

  onTestCaseResult(test, result) {
    const mark = result.status === 'passed' ? 'ok  ' : result.status === 'failed' ? 'FAIL' : result.status;
    this.line(`  ${mark} ${result.fullName} (${result.duration ?? 0} ms)`);
  }

  onTestFileResult(test, result) {
    this.done++;
    const failed = result.numFailingTests > 0 || result.testExecError;
    if (failed) this.failed++;
    const seconds = ((result.perfStats.end - result.perfStats.start) / 1000).toFixed(0);
    this.line(`(${this.done}/${this.total}) ${failed ? 'FAIL' : 'PASS'} ${this.name(test)}: ${result.numPassingTests} passed, ${result.numFailingTests} failed, ${seconds} s`);
  }

  onRunComplete() {
    this.line(`${this.done} files run, ${this.failed} with failures`);
  }
}

module.exports = ProgressReporter;
