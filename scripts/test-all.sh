#!/usr/bin/env bash
# `npm test`: everything, on a fresh or a reused machine. Installs dependencies, provisions the real
# engines and the e-invoice validation artefacts (cached under ~/.cache/invoicing-engines), builds, lints, starts the engines once, runs every
# jest project (unit, contract × adapters, black-box API × embedded/distributed) and stops the engines.
set -euo pipefail
cd "$(dirname "$0")/.."
started=$(date +%s)
bash scripts/ensure-deps.sh
bash scripts/engines.sh provision
bash scripts/chart-tools.sh >/dev/null # helm + kube-check for the chart validation (test/unit/helm-chart.test.ts)
bash scripts/einvoice-artefacts.sh >/dev/null # Saxon-HE + EN 16931 schematron + UBL/CII XSDs (test/api/einvoice.test.ts)
echo "[test] building…"
npm run build --silent
echo "[test] linting (types, proto, import rules, OpenAPI)…"
npm run lint --silent
RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/invoicing-engines-XXXXXX")
trap 'bash scripts/engines.sh stop "$RUN_DIR" >/dev/null 2>&1 || true' EXIT
bash scripts/engines.sh start "$RUN_DIR"
set -a
# shellcheck disable=SC1091
. "$RUN_DIR/engines.env"
set +a
export ENGINES_RUN_DIR="$RUN_DIR"
echo "[test] running jest (all projects)…"
status=0
SKIP_BUILD=1 npx jest --ci --maxWorkers=2 --json --outputFile=.test-results.json "$@" || status=$?
node -e '
  const r = require("./.test-results.json");
  console.log(`jest: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' || true
echo "[test] finished in $(( $(date +%s) - started )) s"
exit $status
