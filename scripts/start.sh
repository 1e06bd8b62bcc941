#!/usr/bin/env bash
# `npm start`: the whole system in one process (embedded mode) — installs and builds what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
# Chromium and fonts for PDFs, the way the engines script provides them — in the background, and never
# fatal: until they are there (or without root), PDF requests answer 503 renderer_unavailable and
# the renderer retries. A Chromium elsewhere is used with CHROMIUM_PATH.
if [[ -z "${CHROMIUM_PATH:-}" && ! -x /usr/bin/chromium ]] || [[ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]]; then
  mkdir -p "${DATA_DIR:-.data}"
  echo "[start] installing Chromium and DejaVu fonts for PDFs in the background (log: ${DATA_DIR:-.data}/renderer-install.log)…"
  (bash scripts/engines.sh renderer >"${DATA_DIR:-.data}/renderer-install.log" 2>&1 || true) &
fi
echo "[start] building…"
npm run build --silent
# The V8 heap bounds of the embedded process (deploy/embedded/node-flags.ts; EMBEDDED_HEAP_MB).
flags="$(node dist/deploy/embedded/node-flags.js)"
exec node $flags dist/deploy/embedded/main.js
