#!/usr/bin/env bash
# Installs npm dependencies when node_modules is missing or older than the lockfile (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[deps] installing npm dependencies (first run compiles better-sqlite3, ~2 min)…"
  npm ci --no-audit --no-fund --loglevel=error
fi
