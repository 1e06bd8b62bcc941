#!/usr/bin/env bash
# Installs npm dependencies when node_modules is missing or older than the lockfile (idempotent).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "[deps] installing npm dependencies (first run compiles better-sqlite3, ~2 min)…"
  # `npm install`, not `npm ci`: npm 11.19 writes lockfiles without other platforms' optional packages
  # (@bufbuild/buf-*, @swc/core-*) and then its own `npm ci` refuses them. install still follows the lockfile.
  npm install --no-audit --no-fund --loglevel=error
fi
