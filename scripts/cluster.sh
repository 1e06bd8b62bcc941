#!/usr/bin/env bash
# Cluster mode on one machine (docs/cluster.md): two gateways behind a round-robin proxy, every service
# its own process, two replicas of documents (and expenses), on the real engines.
#   bash scripts/cluster.sh test [jest args]  the whole black-box suite against it, then the fault tests
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
    CLUSTER_ALL=1 SKIP_BUILD=1 npx jest --maxWorkers=1 --selectProjects api-cluster system "$@" test/api test/system/cluster-faults.test.ts test/system/cluster-engine-faults.test.ts
    ;;
  up)
    node dist/test/support/cluster-main.js
    ;;
  *)
    echo "usage: $0 test [jest args] | up" >&2
    exit 2
    ;;
esac
