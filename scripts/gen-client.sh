#!/usr/bin/env bash
# `npm run gen:client`: regenerates client/generated/api.d.ts (types of every path, operation and schema)
# from the OpenAPI document as the gateway serves it, with openapi-typescript. The file is committed so
# the client reads and typechecks without a build; test/unit/client-generated.test.ts fails when it is
# stale. Never edit it by hand: change the document and run this.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d "${TMPDIR:-/tmp}/openapi-gen-XXXXXX")
trap 'rm -rf "$out"' EXIT
node scripts/openapi-served.js "$out/openapi.json"
npx --no-install openapi-typescript "$out/openapi.json" --output "${1:-client/generated/api.d.ts}" --default-non-nullable false >/dev/null
