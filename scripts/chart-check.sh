#!/usr/bin/env bash
# Validates helm/invoicing offline: `helm lint --strict` and `helm template` with every value set in
# helm/invoicing/ci/*-values.yaml, each rendering checked object by object against Kubernetes' own types
# (scripts/kube-check, strict: unknown fields fail). Provisions the tools first (scripts/chart-tools.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(bash scripts/chart-tools.sh)"
chart=helm/invoicing
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
status=0
shopt -s nullglob
sets=("$chart"/ci/*-values.yaml)
(( ${#sets[@]} )) || { echo "[chart] no value sets in $chart/ci" >&2; exit 1; }
for values in "${sets[@]}"; do
  name="$(basename "$values" -values.yaml)"
  if ! "$HELM" lint --strict "$chart" -f "$values" >"$out/$name.lint" 2>&1; then
    echo "[chart] $name: helm lint --strict failed" >&2; cat "$out/$name.lint" >&2; status=1; continue
  fi
  if ! "$HELM" template "inv-$name" "$chart" --namespace "ns-$name" -f "$values" >"$out/$name.yaml" 2>"$out/$name.err"; then
    echo "[chart] $name: helm template failed" >&2; cat "$out/$name.err" >&2; status=1; continue
  fi
  if "$KUBE_CHECK" "$out/$name.yaml" >"$out/$name.check" 2>&1; then
    echo "[chart] $name: lint ok; $(cat "$out/$name.check")"
  else
    echo "[chart] $name: invalid manifests" >&2; cat "$out/$name.check" >&2; status=1
  fi
  [[ -z "${CHART_RENDER_DIR:-}" ]] || cp "$out/$name.yaml" "$CHART_RENDER_DIR/$name.yaml"
done
exit $status
