#!/usr/bin/env bash
# `npm start`: the whole system in one process (embedded mode) — installs and builds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
echo "[start] building…"
npm run build --silent
exec node dist/deploy/embedded/main.js
