#!/usr/bin/env bash
# Lints the OpenAPI document as the gateway serves it (merged, edge policies applied) with Redocly
# (recommended, warnings fail) and Spectral (spectral:oas, warnings fail). Offline: both run from
# node_modules and read no remote reference; Redocly's telemetry and update check are off.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d "${TMPDIR:-/tmp}/openapi-lint-XXXXXX")
trap 'rm -rf "$out"' EXIT
node scripts/openapi-served.js "$out/openapi.json"
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true
npx --no-install redocly lint --config redocly.yaml --format stylish "$out/openapi.json" 2>&1 | grep -v '║\|╔\|╚\|^\s*$'
npx --no-install spectral lint --ruleset .spectral.yaml --fail-severity warn --format text "$out/openapi.json"
