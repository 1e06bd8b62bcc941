#!/usr/bin/env bash
# Provision, start and stop the real engines used by distributed mode and the
# integration tests: Redis, FerretDB (MongoDB wire protocol, SQLite backend),
# Apache Kafka (KRaft, single node), MinIO and Mailpit (SMTP). Everything listens on 127.0.0.1.
#
#   scripts/engines.sh provision                  install/build everything (cached)
#   scripts/engines.sh start <run_dir>            start all engines on free ports,
#                                                 write <run_dir>/engines.env and <run_dir>/pids
#   scripts/engines.sh stop <run_dir>             stop them (TERM, then KILL); idempotent
#   scripts/engines.sh start-one <engine> <run_dir>   (re)start one engine on its previous port/data
#   scripts/engines.sh stop-one <engine> <run_dir>
#   scripts/engines.sh status <run_dir>
#   scripts/engines.sh renderer                   install Chromium and DejaVu fonts (PDF rendering) only
#
# engines: redis ferretdb kafka minio mailpit
# Built artifacts live in ${XDG_CACHE_HOME:-$HOME/.cache}/invoicing-engines
# (override with ENGINES_CACHE_DIR). See docs/engines.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="${ENGINES_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/invoicing-engines}"
ENGINES=(redis ferretdb kafka minio mailpit)

MINIO_MODULE=github.com/minio/minio
# Newest MinIO server the Go module proxy serves (2026-02-12 master; RELEASE.* tags are not semver).
MINIO_VERSION=v0.0.0-20260212201848-7aac2a2c5b7c
MINIO_USER="${ENGINES_MINIO_USER:-invoicing}"
MINIO_PASSWORD="${ENGINES_MINIO_PASSWORD:-invoicing-secret}"

MAILPIT_MODULE=github.com/axllent/mailpit
MAILPIT_VERSION=v1.27.11

START_TIMEOUT="${ENGINES_START_TIMEOUT:-180}" # seconds, for all engines together
STOP_TIMEOUT="${ENGINES_STOP_TIMEOUT:-15}"    # seconds of TERM before KILL
KAFKA_HEAP="${ENGINES_KAFKA_HEAP:--Xms256m -Xmx512m}"

FERRET_SRC="$ROOT/deploy/engines/ferretdb"
KAFKA_POM="$ROOT/deploy/engines/kafka/pom.xml"

log() { printf '[engines] %s\n' "$*" >&2; }
die() { printf '[engines] ERROR: %s\n' "$*" >&2; exit 1; }
now() { date +%s; }

# ---------------------------------------------------------------------------
# toolchain

find_go() {
  if command -v go >/dev/null 2>&1; then command -v go
  elif [[ -x /usr/local/go/bin/go ]]; then echo /usr/local/go/bin/go
  else die "Go toolchain not found (need Go >= 1.24 on PATH or at /usr/local/go/bin/go)"
  fi
}

go_env() {
  # Self-contained caches: deleting $CACHE gives a true cold build.
  export GOTOOLCHAIN=local
  export GOMODCACHE="${ENGINES_GOMODCACHE:-$CACHE/gomod}"
  export GOCACHE="${ENGINES_GOCACHE:-$CACHE/gocache}"
  export GOFLAGS="-mod=mod -modcacherw -buildvcs=false"
  export CGO_ENABLED=0
}

# Paths of the cached artifacts (computed, not created). Cache keys: the
# launcher's sources + Go version; the pom; the MinIO version + Go version.
FERRET_BIN="" KAFKA_LIBS="" KAFKA_CDS="" MINIO_BIN=""
init_paths() {
  [[ -z "$FERRET_BIN" ]] || return 0
  GO="$(find_go)"
  go_env
  local key
  key="$(cd "$FERRET_SRC" && { cat go.mod go.sum main.go patches/*.patch; "$GO" version; } | sha256sum | cut -c1-16)"
  FERRET_BIN="$CACHE/ferretdb/$key/ferretdb-launcher"
  KAFKA_LIBS="$CACHE/kafka/$(sha256sum <"$KAFKA_POM" | cut -c1-16)/libs"
  MINIO_BIN="$CACHE/minio/$MINIO_VERSION-$("$GO" env GOVERSION)/minio"
  MAILPIT_BIN="$CACHE/mailpit/$MAILPIT_VERSION-$("$GO" env GOVERSION)/mailpit"
  # AppCDS archive of Kafka's classes (halves JVM start time); valid for one JVM build.
  local jkey=none
  command -v java >/dev/null 2>&1 && jkey="$({ readlink -f "$(command -v java)"; java -version 2>&1; } | sha256sum | cut -c1-12)"
  KAFKA_CDS="$(dirname "$KAFKA_LIBS")/kafka-$jkey.jsa"
}
ferret_bin() { echo "$FERRET_BIN"; }
kafka_libs() { echo "$KAFKA_LIBS"; }
minio_bin() { echo "$MINIO_BIN"; }
mailpit_bin() { echo "$MAILPIT_BIN"; }

# ---------------------------------------------------------------------------
# provision

apt_install() {
  local pkgs=("$@")
  local sudo=()
  [[ $(id -u) -eq 0 ]] || sudo=(sudo -n)
  export DEBIAN_FRONTEND=noninteractive
  log "apt: installing ${pkgs[*]} (first time, ~1-3 min)…"
  if ! "${sudo[@]}" apt-get install -y -q "${pkgs[@]}" >"$CACHE/apt.log" 2>&1; then
    log "apt: install failed, running apt-get update and retrying…"
    "${sudo[@]}" apt-get update -q >>"$CACHE/apt.log" 2>&1 || true
    "${sudo[@]}" apt-get install -y -q "${pkgs[@]}" >>"$CACHE/apt.log" 2>&1 ||
      { tail -n 30 "$CACHE/apt.log" >&2; die "apt-get install ${pkgs[*]} failed (log: $CACHE/apt.log)"; }
  fi
}

DEJAVU_SANS=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf

# Chromium (driven by playwright-core) and DejaVu Sans (Czech, Slovak, German letters, embedded in every
# PDF) for the rendering service; `npm start` runs this in the background. Idempotent.
provision_renderer() {
  mkdir -p "$CACHE"
  local need=()
  [[ -x /usr/bin/chromium ]] || need+=(chromium)
  [[ -f "$DEJAVU_SANS" ]] || need+=(fonts-dejavu-core)
  if ((${#need[@]} == 0)); then
    log "renderer: chromium and fonts-dejavu-core already installed"
    return
  fi
  apt_install "${need[@]}"
}

provision_apt() {
  local need=()
  [[ -f "$DEJAVU_SANS" ]] || need+=(fonts-dejavu-core)
  command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
  command -v redis-cli >/dev/null 2>&1 || need+=(redis-tools)
  [[ -x /usr/bin/chromium ]] || need+=(chromium)
  command -v java >/dev/null 2>&1 || need+=(openjdk-17-jre-headless)
  command -v mvn >/dev/null 2>&1 || need+=(maven)
  command -v curl >/dev/null 2>&1 || need+=(curl)
  if ((${#need[@]} == 0)); then
    log "redis/chromium: already installed ($(redis-server --version | awk '{print $3}'))"
    return
  fi
  local t0; t0=$(now)
  apt_install "${need[@]}"
  log "apt: done in $(($(now) - t0))s"
}

provision_kafka() {
  local libs; libs="$(kafka_libs)"
  if [[ -f "$libs/.complete" ]]; then
    log "kafka: cached ($libs)"
    return
  fi
  command -v mvn >/dev/null || die "mvn not found"
  local t0 work; t0=$(now)
  work="$(dirname "$libs")"
  log "kafka: fetching Kafka jars from Maven Central (first time, ~1 min)…"
  rm -rf "$work" && mkdir -p "$work"
  cp "$KAFKA_POM" "$work/pom.xml" # run Maven outside the checkout (no target/ in the repo)
  if ! (cd "$work" && mvn -q -B -Dmaven.repo.local="$CACHE/m2" \
    dependency:copy-dependencies -DoutputDirectory="$work/libs.tmp" >"$work/mvn.log" 2>&1); then
    tail -n 40 "$work/mvn.log" >&2
    die "kafka: mvn dependency:copy-dependencies failed (log: $work/mvn.log)"
  fi
  mv "$work/libs.tmp" "$libs"
  touch "$libs/.complete"
  log "kafka: $(find "$libs" -name '*.jar' | wc -l) jars in $(($(now) - t0))s"
}

# Training run: start a throw-away broker once with -XX:ArchiveClassesAtExit so
# later starts can map Kafka's classes from a CDS archive (~5s -> ~2.5s).
# Best effort: without the archive Kafka just starts slower.
provision_kafka_cds() {
  [[ -f "$KAFKA_CDS" ]] && return 0
  local t0 tmp; t0=$(now)
  tmp="$(mktemp -d "${TMPDIR:-/tmp}/engines-kafka-cds.XXXXXX")"
  log "kafka: creating class-data-sharing archive for fast starts (first time, ~20s)…"
  ensure_ports "$tmp" kafka kafka_controller
  if spawn_kafka "$tmp" "-XX:ArchiveClassesAtExit=$KAFKA_CDS.tmp" &&
    START_TIMEOUT=90 wait_ready "$tmp" $(($(now) + 90)) kafka 2>/dev/null; then
    stop_engine "$tmp" kafka 2>/dev/null
    if [[ -s "$KAFKA_CDS.tmp" ]]; then
      mv "$KAFKA_CDS.tmp" "$KAFKA_CDS"
      log "kafka: CDS archive ready in $(($(now) - t0))s"
    else
      log "kafka: WARNING: no CDS archive was written; Kafka will start slower"
    fi
  else
    stop_engine "$tmp" kafka >/dev/null 2>&1 || true
    log "kafka: WARNING: CDS training run failed (log: $tmp/kafka.log); Kafka will start slower"
    return 0
  fi
  rm -rf "$tmp" "$KAFKA_CDS.tmp"
}

# The launcher's module with FerretDB's source replaced by a patched copy (deploy/engines/ferretdb/patches,
# applied in name order): FerretDB v1.24's SQLite backend looks documents up by an expression its `_id_`
# index does not match, so every find, update and delete by _id scanned the whole collection
# (docs/engines.md "FerretDB patches").
patched_ferretdb_source() {
  local src="$1" upstream p
  rm -rf "$src" && mkdir -p "$src"
  cp "$FERRET_SRC/go.mod" "$FERRET_SRC/go.sum" "$FERRET_SRC/main.go" "$src/"
  (cd "$src" && "$GO" mod download github.com/FerretDB/FerretDB) || return 1
  upstream="$(cd "$src" && "$GO" list -m -f '{{.Dir}}' github.com/FerretDB/FerretDB)" || return 1
  cp -R "$upstream" "$src/ferretdb" && chmod -R u+w "$src/ferretdb" || return 1
  for p in "$FERRET_SRC"/patches/*.patch; do
    echo "applying $(basename "$p")"
    (cd "$src/ferretdb" && git apply -p1 "$p") || return 1
  done
  (cd "$src" && "$GO" mod edit -replace github.com/FerretDB/FerretDB=./ferretdb)
}

provision_ferretdb() {
  local bin; bin="$(ferret_bin)"
  if [[ -x "$bin" && -f "$bin.selftest-ok" ]]; then
    log "ferretdb: cached ($bin)"
    return
  fi
  local t0 dir; t0=$(now)
  dir="$(dirname "$bin")"
  mkdir -p "$dir"
  log "ferretdb: building launcher (~2 min cold, seconds with a warm Go build cache)…"
  if ! patched_ferretdb_source "$dir/src" >"$dir/build.log" 2>&1 ||
    ! (cd "$dir/src" && "$GO" build -trimpath -ldflags='-s -w' -tags ferretdb_no_postgresql \
      -o "$bin.tmp" . >>"$dir/build.log" 2>&1); then
    tail -n 40 "$dir/build.log" >&2
    die "ferretdb: go build failed (log: $dir/build.log)"
  fi
  mv "$bin.tmp" "$bin"
  log "ferretdb: built in $(($(now) - t0))s; running self-test…"
  if ! "$bin" -selftest >"$dir/selftest.log" 2>&1; then
    cat "$dir/selftest.log" >&2
    die "ferretdb: self-test failed (log: $dir/selftest.log)"
  fi
  grep -E '^  (gap|FAIL)' "$dir/selftest.log" | sed 's/^ */[engines]   ferretdb /' >&2 || true
  touch "$bin.selftest-ok"
  log "ferretdb: self-test passed (known gaps listed above; see docs/engines.md)"
}

provision_minio() {
  local bin; bin="$(minio_bin)"
  if [[ -x "$bin" ]]; then
    log "minio: cached ($bin)"
    return
  fi
  local t0 dir; t0=$(now)
  dir="$(dirname "$bin")"
  mkdir -p "$dir"
  log "building minio $MINIO_VERSION (first time, ~10 min on 2 cores)…"
  # GOBIN into a temp dir, then rename: an interrupted build never leaves a half binary.
  rm -rf "$dir/bin.tmp"
  if ! GOBIN="$dir/bin.tmp" "$GO" install -trimpath -ldflags='-s -w' "$MINIO_MODULE@$MINIO_VERSION" \
    >"$dir/build.log" 2>&1; then
    tail -n 40 "$dir/build.log" >&2
    die "minio: go install failed (log: $dir/build.log)"
  fi
  mv "$dir/bin.tmp/minio" "$bin"
  rmdir "$dir/bin.tmp" 2>/dev/null || true
  log "minio: built in $(($(now) - t0))s"
}

provision_mailpit() {
  local bin; bin="$(mailpit_bin)"
  if [[ -x "$bin" ]]; then
    log "mailpit: cached ($bin)"
    return
  fi
  local t0 dir; t0=$(now)
  dir="$(dirname "$bin")"
  mkdir -p "$dir"
  log "building mailpit $MAILPIT_VERSION (first time, a few minutes on 2 cores)…"
  # `go install mailpit@version` would also ask the proxy for the module's version list (to report
  # deprecations), which the proxy here refuses; so: download exactly that version, build inside it.
  local src
  if ! src="$("$GO" mod download -json "$MAILPIT_MODULE@$MAILPIT_VERSION" 2>"$dir/build.log" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')" || [[ -z "$src" ]]; then
    tail -n 40 "$dir/build.log" >&2
    die "mailpit: go mod download failed (log: $dir/build.log)"
  fi
  # Build to a temp name, then rename: an interrupted build never leaves a half binary.
  if ! (cd "$src" && "$GO" build -trimpath -ldflags='-s -w' -o "$bin.tmp" .) >>"$dir/build.log" 2>&1; then
    tail -n 40 "$dir/build.log" >&2
    die "mailpit: go build failed (log: $dir/build.log)"
  fi
  mv "$bin.tmp" "$bin"
  log "mailpit: built in $(($(now) - t0))s"
}

provision() {
  mkdir -p "$CACHE"
  init_paths
  # One provisioner at a time (parallel test workers may all call start).
  exec 9>"$CACHE/.provision.lock"
  if ! flock -n 9; then
    log "waiting for another provision run to finish…"
    flock 9
  fi
  local t0; t0=$(now)
  log "cache: $CACHE"
  provision_apt
  FERRET_BIN="" && init_paths # java may have just been installed (CDS archive key)
  provision_kafka
  provision_kafka_cds
  provision_ferretdb
  provision_minio
  provision_mailpit
  exec 9>&-
  log "provision complete in $(($(now) - t0))s"
}

# quick check used by start: everything present, no lock, no output
provisioned() {
  init_paths
  command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 &&
    command -v java >/dev/null 2>&1 && command -v curl >/dev/null 2>&1 &&
    [[ -x /usr/bin/chromium ]] && [[ -f "$DEJAVU_SANS" ]] &&
    [[ -f "$(kafka_libs)/.complete" ]] &&
    [[ -f "$(ferret_bin).selftest-ok" ]] &&
    [[ -x "$(minio_bin)" ]] &&
    [[ -x "$(mailpit_bin)" ]]
}

# ---------------------------------------------------------------------------
# ports, pids

# free_ports N: print N distinct free TCP ports on 127.0.0.1
free_ports() {
  if command -v python3 >/dev/null 2>&1; then
    python3 -c '
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
for s in socks: s.close()' "$1"
  else
    node -e '
const net = require("net"); const n = +process.argv[1]; const ports = []; const srvs = [];
(function next() {
  if (ports.length === n) { console.log(ports.join(" ")); srvs.forEach(s => s.close()); return; }
  const s = net.createServer(); srvs.push(s);
  s.listen(0, "127.0.0.1", () => { ports.push(s.address().port); next(); });
})();' "$1"
  fi
}

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# ports file: "name port" lines; names redis ferretdb kafka kafka_controller minio minio_console mailpit mailpit_http
get_port() { [[ -f "$1/ports" ]] || return 0; awk -v k="$2" '$1 == k { v = $2 } END { print v }' "$1/ports"; }

ensure_ports() { # run_dir names...
  local run="$1"; shift
  local missing=() name
  for name in "$@"; do
    local p; p="$(get_port "$run" "$name")"
    [[ -n "$p" ]] || missing+=("$name")
  done
  ((${#missing[@]})) || return 0
  local ports; read -r -a ports <<<"$(free_ports "${#missing[@]}")"
  local i
  for i in "${!missing[@]}"; do echo "${missing[$i]} ${ports[$i]}" >>"$run/ports"; done
}

engine_ports() {
  case "$1" in
    redis) echo redis ;; ferretdb) echo ferretdb ;; minio) echo minio minio_console ;;
    kafka) echo kafka kafka_controller ;; mailpit) echo mailpit mailpit_http ;; *) die "unknown engine: $1 (one of: ${ENGINES[*]})" ;;
  esac
}

# how to recognise an engine's process in /proc/<pid>/cmdline (guards against PID reuse)
engine_pattern() {
  case "$1" in
    redis) echo redis-server ;; ferretdb) echo ferretdb-launcher ;;
    kafka) echo kafka.Kafka ;; minio) echo minio ;; mailpit) echo mailpit ;;
  esac
}

get_pid() { [[ -f "$1/pids" ]] || return 0; awk -v k="$2" '$1 == k { v = $2 } END { print v }' "$1/pids"; }

pid_alive() { # pid engine
  [[ -n "$1" && -r "/proc/$1/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -- "$(engine_pattern "$2")"
}

set_pid() { # run engine pid
  local f="$1/pids"
  { [[ -f "$f" ]] && awk -v k="$2" '$1 != k' "$f"; echo "$2 $3"; } >"$f.tmp" || true
  mv "$f.tmp" "$f"
}

del_pid() {
  local f="$1/pids"
  [[ -f "$f" ]] || return 0
  awk -v k="$2" '$1 != k' "$f" >"$f.tmp" || true
  mv "$f.tmp" "$f"
}

# ---------------------------------------------------------------------------
# launching

launch() { # run engine cmd...
  local run="$1" engine="$2"; shift 2
  # setsid: own session, so a Ctrl-C in the test runner's terminal doesn't kill it;
  # it runs until `stop`. setsid execs in place, so $! is the engine's PID.
  echo "---- $(date -u +%FT%TZ) starting $engine: $*" >>"$run/$engine.log"
  setsid "$@" >>"$run/$engine.log" 2>&1 </dev/null &
  set_pid "$run" "$engine" "$!"
}

kafka_cluster_id() {
  python3 -c '
import base64, uuid
while True:
    s = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    if not s.startswith("-"): print(s); break' 2>/dev/null ||
    node -e 'let s;do{s=require("crypto").randomBytes(16).toString("base64url")}while(s[0]==="-");console.log(s)'
}

java_cp() { echo "$(kafka_libs)/*"; }

spawn_redis() {
  local run="$1" port; port="$(get_port "$run" redis)"
  mkdir -p "$run/redis"
  launch "$run" redis redis-server --bind 127.0.0.1 --port "$port" --dir "$run/redis" \
    --save "" --appendonly no --protected-mode yes --daemonize no --logfile ""
}

spawn_ferretdb() {
  local run="$1" port; port="$(get_port "$run" ferretdb)"
  mkdir -p "$run/ferretdb"
  launch "$run" ferretdb "$(ferret_bin)" -listen-addr "127.0.0.1:$port" -data-dir "$run/ferretdb"
}

# kafka_jvm HEAP [extra opts...]: sets the global array JVM to the java command line
kafka_jvm() {
  local heap
  read -r -a heap <<<"$1"
  shift
  JVM=(java "${heap[@]}" -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xshare:auto)
  [[ -f "$KAFKA_CDS" ]] && JVM+=("-XX:SharedArchiveFile=$KAFKA_CDS")
  JVM+=("$@" -Djava.awt.headless=true -cp "$(java_cp)")
}

spawn_kafka() { # run [extra JVM opts]
  local run="$1" port cport dir; shift
  port="$(get_port "$run" kafka)"
  cport="$(get_port "$run" kafka_controller)"
  dir="$run/kafka"
  mkdir -p "$dir/data"
  cat >"$dir/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$cport
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$cport
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT
log.dirs=$dir/data
num.partitions=3
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=true
offsets.topic.replication.factor=1
offsets.topic.num.partitions=5
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=5
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
num.recovery.threads.per.data.dir=1
log.retention.hours=24
EOF
  cat >"$dir/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaConfig=WARN
log4j.logger.org.apache.kafka.clients=WARN
log4j.logger.org.apache.kafka.common.config.AbstractConfig=WARN
log4j.logger.kafka.log.LogManager=WARN
log4j.logger.state.change.logger=WARN
EOF
  if [[ ! -f "$dir/data/meta.properties" ]]; then
    local id; id="$(kafka_cluster_id)"
    kafka_jvm "$KAFKA_HEAP" "-Dlog4j.configuration=file:$dir/log4j.properties"
    "${JVM[@]}" kafka.tools.StorageTool format --ignore-formatted -t "$id" -c "$dir/server.properties" \
      >>"$run/kafka.log" 2>&1 || { tail -n 30 "$run/kafka.log" >&2; die "kafka: storage format failed"; }
  fi
  kafka_jvm "$KAFKA_HEAP" "$@" "-Dlog4j.configuration=file:$dir/log4j.properties"
  launch "$run" kafka "${JVM[@]}" kafka.Kafka "$dir/server.properties"
}

spawn_minio() {
  local run="$1" port cport
  port="$(get_port "$run" minio)"
  cport="$(get_port "$run" minio_console)"
  mkdir -p "$run/minio"
  launch "$run" minio env MINIO_ROOT_USER="$MINIO_USER" MINIO_ROOT_PASSWORD="$MINIO_PASSWORD" \
    MINIO_UPDATE=off MINIO_CI_CD=on MINIO_BROWSER=on \
    "$(minio_bin)" server "$run/minio" --quiet \
    --address "127.0.0.1:$port" --console-address "127.0.0.1:$cport"
}

# Mailpit: SMTP on `mailpit`, HTTP API on `mailpit_http`. Messages persist in its database under the run
# dir, so a stop-one/start-one keeps what was delivered (the fault test counts deliveries across an outage).
spawn_mailpit() {
  local run="$1" port hport
  port="$(get_port "$run" mailpit)"
  hport="$(get_port "$run" mailpit_http)"
  mkdir -p "$run/mailpit"
  launch "$run" mailpit "$(mailpit_bin)" --smtp "127.0.0.1:$port" --listen "127.0.0.1:$hport" \
    --database "$run/mailpit/mailpit.db" --smtp-auth-accept-any --smtp-auth-allow-insecure \
    --max 0 --disable-version-check
}

# one readiness probe; returns 0 when ready
probe() { # run engine
  local run="$1" port; port="$(get_port "$run" "$(engine_ports "$2" | cut -d' ' -f1)")"
  case "$2" in
    redis) [[ "$(redis-cli -h 127.0.0.1 -p "$port" ping 2>/dev/null)" == PONG ]] ;;
    ferretdb) "$(ferret_bin)" -ping "mongodb://127.0.0.1:$port/" 2>/dev/null ;;
    kafka)
      # the log is appended to across restarts: only look after the last "---- … starting" marker
      awk '/^---- .* starting kafka/ { started = 0 } /Kafka Server started/ { started = 1 } END { exit !started }' \
        "$run/kafka.log" 2>/dev/null || return 1
      kafka_jvm -Xmx128m "-Dlog4j.configuration=file:$run/kafka/log4j.properties"
      timeout 30 "${JVM[@]}" org.apache.kafka.tools.TopicCommand --bootstrap-server "127.0.0.1:$port" --list \
        >/dev/null 2>&1 ;;
    minio) curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$port/minio/health/live" 2>/dev/null ;;
    mailpit)
      curl -fsS -o /dev/null --max-time 2 "http://127.0.0.1:$(get_port "$run" mailpit_http)/readyz" 2>/dev/null &&
        (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null ;;
  esac
}

fail_engine() { # run engine reason
  local run="$1" engine="$2"
  log "$engine: $3; last lines of $run/$engine.log:"
  tail -n 40 "$run/$engine.log" 2>/dev/null | sed 's/^/    /' >&2 || true
}

# wait_ready run deadline engines...
wait_ready() {
  local run="$1" deadline="$2"; shift 2
  local pending=("$@") e t0; t0=$(now)
  while ((${#pending[@]})); do
    local still=()
    for e in "${pending[@]}"; do
      if ! pid_alive "$(get_pid "$run" "$e")" "$e"; then
        fail_engine "$run" "$e" "process exited during startup"
        return 1
      fi
      if probe "$run" "$e"; then
        log "$e: ready on 127.0.0.1:$(get_port "$run" "$(engine_ports "$e" | cut -d' ' -f1)") ($(($(now) - t0))s)"
      else
        still+=("$e")
      fi
    done
    pending=("${still[@]+"${still[@]}"}")
    ((${#pending[@]})) || break
    if (($(now) >= deadline)); then
      for e in "${pending[@]}"; do fail_engine "$run" "$e" "not ready after ${START_TIMEOUT}s"; done
      return 1
    fi
    sleep 0.5
  done
}

write_env() {
  local run="$1"
  cat >"$run/engines.env.tmp" <<EOF
export MONGO_URL=mongodb://127.0.0.1:$(get_port "$run" ferretdb)/invoicing
export REDIS_URL=redis://127.0.0.1:$(get_port "$run" redis)
export KAFKA_BROKERS=127.0.0.1:$(get_port "$run" kafka)
export MINIO_ENDPOINT=127.0.0.1
export MINIO_PORT=$(get_port "$run" minio)
export MINIO_ACCESS_KEY=$MINIO_USER
export MINIO_SECRET_KEY=$MINIO_PASSWORD
export MINIO_USE_SSL=false
export SMTP_URL=smtp://127.0.0.1:$(get_port "$run" mailpit)
export MAILPIT_API=http://127.0.0.1:$(get_port "$run" mailpit_http)
EOF
  mv "$run/engines.env.tmp" "$run/engines.env"
}

abs_dir() { mkdir -p "$1" && (cd "$1" && pwd); }

start_engines() { # run engines...
  local run="$1"; shift
  local deadline=$(($(now) + START_TIMEOUT)) started=() e
  for e in "$@"; do
    if pid_alive "$(get_pid "$run" "$e")" "$e"; then
      log "$e: already running (pid $(get_pid "$run" "$e"))"
      continue
    fi
    # shellcheck disable=SC2046
    ensure_ports "$run" $(engine_ports "$e")
    local p
    for p in $(engine_ports "$e"); do
      port_free "$(get_port "$run" "$p")" || die "$e: port $(get_port "$run" "$p") ($p) is in use by another process"
    done
    "spawn_$e" "$run"
    started+=("$e")
  done
  ((${#started[@]})) || return 0
  if ! wait_ready "$run" "$deadline" "${started[@]}"; then
    for e in "${started[@]}"; do stop_engine "$run" "$e" >/dev/null 2>&1 || true; done
    die "engine startup failed (run dir: $run)"
  fi
}

stop_engine() { # run engine
  local run="$1" engine="$2" pid
  pid="$(get_pid "$run" "$engine")"
  if ! pid_alive "$pid" "$engine"; then
    del_pid "$run" "$engine"
    return 0
  fi
  kill -TERM "$pid" 2>/dev/null || true
  local i
  for ((i = 0; i < STOP_TIMEOUT * 10; i++)); do
    pid_alive "$pid" "$engine" || break
    sleep 0.1
  done
  if pid_alive "$pid" "$engine"; then
    log "$engine: still running after ${STOP_TIMEOUT}s, sending KILL"
    kill -KILL "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do pid_alive "$pid" "$engine" || break; sleep 0.1; done
  fi
  del_pid "$run" "$engine"
  log "$engine: stopped"
}

ensure_provisioned() {
  if provisioned; then return; fi
  log "engines not provisioned yet; provisioning first"
  provision
}

# ---------------------------------------------------------------------------

usage() {
  sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

main() {
  local cmd="${1:-}" run t0 e pid
  case "$cmd" in
    provision)
      provision
      ;;
    renderer)
      provision_renderer
      ;;
    start)
      [[ $# -eq 2 ]] || usage
      ensure_provisioned
      run="$(abs_dir "$2")"
      t0=$(now)
      start_engines "$run" "${ENGINES[@]}"
      write_env "$run"
      log "all engines ready in $(($(now) - t0))s; env: $run/engines.env"
      ;;
    stop)
      [[ $# -eq 2 ]] || usage
      [[ -d "$2" ]] || exit 0
      run="$(cd "$2" && pwd)"
      for e in mailpit minio kafka ferretdb redis; do stop_engine "$run" "$e"; done
      ;;
    start-one)
      [[ $# -eq 3 ]] || usage
      engine_ports "$2" >/dev/null
      ensure_provisioned
      run="$(abs_dir "$3")"
      t0=$(now)
      start_engines "$run" "$2"
      log "$2: up in $(($(now) - t0))s"
      ;;
    stop-one)
      [[ $# -eq 3 ]] || usage
      engine_ports "$2" >/dev/null
      [[ -d "$3" ]] || exit 0
      stop_engine "$(cd "$3" && pwd)" "$2"
      ;;
    status)
      [[ $# -eq 2 ]] || usage
      for e in "${ENGINES[@]}"; do
        pid="$(get_pid "$2" "$e")"
        if pid_alive "$pid" "$e"; then echo "$e running pid=$pid port=$(get_port "$2" "$(engine_ports "$e" | cut -d' ' -f1)")"
        else echo "$e stopped"; fi
      done
      ;;
    *) usage ;;
  esac
}

# Everything above is only definitions; bash has parsed all of main() before it runs,
# so editing this file while a long provision runs cannot break the running copy.
main "$@"
exit $?
