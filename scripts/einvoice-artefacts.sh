#!/usr/bin/env bash
# Provisions what the e-invoice tests validate with (docs/e-invoicing.md "Validation"), cached like the
# engines (docs/engines.md) and never committed: Saxon-HE and the official artefacts from Maven Central
# (scripts/einvoice-validator/pom.xml) — the CEN/TC 434 EN 16931 schematron as compiled XSLT, the UBL 2.1
# (with the CCTS, XML-DSig and XAdES schemas it imports) and the CII D16B XSDs — unpacked into one directory, plus the small Java runner that validates many
# documents in one JVM (scripts/einvoice-validator/EInvoiceValidator.java), compiled with the JDK that
# scripts/engines.sh installs for Kafka. Idempotent, under a lock; works on a fresh machine (CI=true).
# Prints `EINVOICE_VALIDATOR_DIR=<dir>` on stdout: <dir>/libs (jars), <dir>/classes, <dir>/artefacts.
set -euo pipefail
cd "$(dirname "$0")/.."
CACHE="${ENGINES_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/invoicing-engines}"
SRC=scripts/einvoice-validator
# The EN 16931 schematron release run by the tests (phive-rules-en16931 packages every release).
EN16931_VERSION=1.3.16
log() { printf '[einvoice-artefacts] %s\n' "$*" >&2; }
die() { printf '[einvoice-artefacts] ERROR: %s\n' "$*" >&2; exit 1; }

mkdir -p "$CACHE"
exec 8>"$CACHE/.einvoice-artefacts.lock"
flock 8

# scripts/engines.sh installs Java and Maven for Kafka; a machine with only the JRE gets the JDK of the same
# release (javac compiles the runner), as engines.sh installs its packages.
need=()
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
command -v unzip >/dev/null 2>&1 || need+=(unzip)
if ((${#need[@]})); then
  sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
  log "apt: installing ${need[*]}…"
  export DEBIAN_FRONTEND=noninteractive
  { "${sudo[@]}" apt-get install -y -q "${need[@]}" || { "${sudo[@]}" apt-get update -q && "${sudo[@]}" apt-get install -y -q "${need[@]}"; }; } \
    >"$CACHE/einvoice-apt.log" 2>&1 || { tail -n 20 "$CACHE/einvoice-apt.log" >&2; die "apt-get install ${need[*]} failed (log: $CACHE/einvoice-apt.log)"; }
fi

# Cache key: the pom, the runner's source, the schematron release and the JDK.
key="$({ cat "$SRC/pom.xml" "$SRC/EInvoiceValidator.java"; echo "$EN16931_VERSION"; javac -version 2>&1; } | sha256sum | cut -c1-16)"
dir="$CACHE/einvoice/$key"
if [[ -f "$dir/.complete" ]]; then
  echo "EINVOICE_VALIDATOR_DIR=$dir"
  exit 0
fi
t0=$(date +%s)
rm -rf "$dir" && mkdir -p "$dir"
log "fetching Saxon-HE and the EN 16931 / UBL / CII artefacts from Maven Central (first time, ~1 min)…"
cp "$SRC/pom.xml" "$dir/pom.xml" # run Maven outside the checkout (no target/ in the repo)
if ! (cd "$dir" && mvn -q -B -Dmaven.repo.local="$CACHE/m2" dependency:copy-dependencies -DoutputDirectory="$dir/libs" >"$dir/mvn.log" 2>&1); then
  tail -n 40 "$dir/mvn.log" >&2
  die "mvn dependency:copy-dependencies failed (log: $dir/mvn.log)"
fi
log "unpacking the schematron $EN16931_VERSION and the XSDs…"
art="$dir/artefacts"
mkdir -p "$art/unzip"
unzip -q -o "$dir"/libs/phive-rules-en16931-*.jar "external/schematron/$EN16931_VERSION/*" -d "$art/unzip"
unzip -q -o "$dir"/libs/ph-ubl21-*.jar 'external/schemas/ubl21/*' -d "$art/unzip"
unzip -q -o "$dir"/libs/ph-cii-d16b-*.jar 'external/schemas/d16b/*' -d "$art/unzip"
mv "$art/unzip/external/schematron/$EN16931_VERSION" "$art/schematron"
mv "$art/unzip/external/schemas" "$art/schemas"
mkdir -p "$art/schemas/imports"
for jar in "$dir"/libs/ph-xsds-*.jar; do unzip -q -o -j "$jar" 'schemas/*.xsd' -d "$art/schemas/imports"; done
rm -rf "$art/unzip"
for f in schematron/ubl/EN16931-UBL-validation.xslt schematron/cii/EN16931-CII-validation.xslt \
  schemas/ubl21/maindoc/UBL-Invoice-2.1.xsd schemas/ubl21/maindoc/UBL-CreditNote-2.1.xsd schemas/d16b/data/standard/CrossIndustryInvoice_100pD16B.xsd \
  schemas/imports/CCTS_CCT_SchemaModule.xsd schemas/imports/xmldsig-core-schema.xsd; do
  [[ -f "$art/$f" ]] || die "missing after unpacking: $f"
done
# Only Saxon and its resolver go on the runner's class path (the ph-* jars are read for their files).
mkdir -p "$dir/classpath"
cp "$dir"/libs/Saxon-HE-*.jar "$dir"/libs/xmlresolver-*.jar "$dir/classpath/"
log "compiling the validator…"
javac -nowarn -d "$dir/classes" -cp "$dir/classpath/*" "$SRC/EInvoiceValidator.java" >"$dir/javac.log" 2>&1 || { cat "$dir/javac.log" >&2; die "javac failed"; }
touch "$dir/.complete"
log "ready in $(($(date +%s) - t0)) s ($dir)"
echo "EINVOICE_VALIDATOR_DIR=$dir"
