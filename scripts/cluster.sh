#!/usr/bin/env bash
# Cluster mode on one machine (docs/cluster.md): two gateways behind a round-robin proxy, every service
# its own process, two replicas of documents (and expenses), on the real engines.
#   bash scripts/cluster.sh test [paths]  the whole black-box suite against it, then the fault tests
#                                          (paths: only those files, e.g. test/api/contacts)
#   bash scripts/cluster.sh up                start it and keep it running (prints URLs; Ctrl-C stops)
# Uses the engines of the environment when MONGO_URL is set (e.g. `. /tmp/shared-engines/engines.env`);
# otherwise starts a private set and stops it on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
cmd="${1:-test}"
shift || true
if [[ -z "${MONGO_URL:-}" ]]; then
  RUN_DIR=$(mktemp -d "${TMPDIR:-/tmp}/invoicing-cluster-XXXXXX")
  trap 'bash scripts/engines.sh stop "$RUN_DIR" >/dev/null 2>&1 || true' EXIT
  bash scripts/engines.sh start "$RUN_DIR"
  set -a
  # shellcheck disable=SC1091
  . "$RUN_DIR/engines.env"
  set +a
fi
npm run build --silent
case "$cmd" in
  test)
    # The paths come first: --selectProjects and --reporters take every word after them as a project or
    # reporter name (a path after them would select no file: the run would be every api and system file). The progress
    # reporter prints each file and test as it finishes (the run takes tens of minutes); `test:cluster --
    # <jest args>` narrows it (e.g. `-- test/api/contacts`).
    paths=(test/api test/system/cluster-faults.test.ts test/system/cluster-engine-faults.test.ts)
    if [[ $# -gt 0 ]]; then paths=("$@"); fi
    started=$(date +%s)
    status=0
    CLUSTER_ALL=1 SKIP_BUILD=1 npx jest "${paths[@]}" --maxWorkers=1 \
      --reporters=default --reporters=./test/support/progress-reporter.js --selectProjects api-cluster system || status=$?
    echo "[test:cluster] finished in $(( $(date +%s) - started )) s"
    exit $status
    ;;
  up)
    node dist/test/support/cluster-main.js
    ;;
  *)
    echo "usage: $0 test [jest args] | up" >&2
    exit 2
    ;;
esac
