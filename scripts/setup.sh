#!/usr/bin/env bash
# Installs everything knut needs to build and run; with --test, also the
# real peers the tests start (Valkey + FalkorDB module, Redis, Python
# clients). Idempotent: a second run only checks and returns quickly.
# Downloads go to git-ignored folders (third_party/, .venv/).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
want_test=0
[ "${1:-}" = "--test" ] && want_test=1

DUCKDB_VERSION=1.4.4
DUCKDB_LIB_PKG="@duckdb/node-bindings-linux-x64@1.4.4-r.4"
DUCKDB_SRC_PKG="duckdb@${DUCKDB_VERSION}"
FALKORDB_PKG="@falkordblite/linux-x64"

log() { printf 'setup: %s\n' "$*" >&2; }
sudo_() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

apt_updated=0
apt_install() {
  local missing=()
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ $apt_updated = 0 ]; then sudo_ apt-get update -qq; apt_updated=1; fi
  log "installing ${missing[*]}"
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# --- build dependencies (Debian) --------------------------------------------
apt_install build-essential cmake ninja-build pkg-config git \
  libjansson-dev libyaml-dev libhiredis-dev libcurl4-openssl-dev libssl-dev libcmocka-dev \
  libmicrohttpd-dev libgrpc-dev protobuf-c-compiler libprotobuf-c-dev \
  libavro-dev libsnappy-dev zlib1g-dev libsqlite3-dev

# --- DuckDB C library (one pinned release; a system copy wins) --------------
duck_dir="$here/third_party/duckdb"
if [ -f /usr/include/duckdb.h ] && ldconfig -p | grep -q 'libduckdb\.so'; then
  log "DuckDB: using the system copy"
elif [ -f "$duck_dir/include/duckdb.h" ] && [ -f "$duck_dir/lib/libduckdb.so" ] \
     && [ "$(cat "$duck_dir/VERSION" 2>/dev/null)" = "$DUCKDB_VERSION" ]; then
  :
else
  log "DuckDB $DUCKDB_VERSION: fetching from the npm registry"
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$DUCKDB_LIB_PKG" >/dev/null && npm pack --silent "$DUCKDB_SRC_PKG" >/dev/null)
  mkdir -p "$tmp/lib" "$tmp/src"
  tar -xzf "$tmp"/duckdb-node-bindings-linux-x64-*.tgz -C "$tmp/lib"
  tar -xzf "$tmp"/duckdb-"$DUCKDB_VERSION".tgz -C "$tmp/src" package/src/duckdb/src/include/duckdb.h
  rm -rf "$duck_dir"; mkdir -p "$duck_dir/include" "$duck_dir/lib"
  cp "$tmp/lib/package/libduckdb.so" "$duck_dir/lib/"
  cp "$tmp/src/package/src/duckdb/src/include/duckdb.h" "$duck_dir/include/"
  echo "$DUCKDB_VERSION" > "$duck_dir/VERSION"
fi

[ $want_test = 1 ] || { log "ready (build dependencies)"; exit 0; }

# --- test tools and peers -----------------------------------------------------
apt_install clang libclang-rt-14-dev redis-server python3-venv
# gdb removes a file between sync's listing and its read at a breakpoint
# (test_sync_bad_input.py): deterministic, and no test hook in the product.
apt_install gdb
# test_completion.py runs the zsh completion script too (zsh: a few MB).
apt_install zsh
# knut web's page runs in the system Chromium, driven by npm playwright-core
# (pinned in tests/web/package.json and its lock file; installed into the
# git-ignored tests/web/node_modules) in tests/integration/test_web.py.
apt_install chromium
if [ "$(node -p "try{require('$here/tests/web/node_modules/playwright-core/package.json').version}catch(e){''}" 2>/dev/null)" \
     != "$(node -p "require('$here/tests/web/package.json').dependencies['playwright-core']")" ]; then
  log "playwright-core: installing into tests/web/node_modules"
  (cd "$here/tests/web" && npm ci --no-audit --no-fund --silent >/dev/null)
fi
# Java 17 runs the Spark Connect server of the pyspark package (spark_peer.py).
apt_install openjdk-17-jre-headless
# Prometheus scrapes `knut sync --metrics-addr` in test_sync_metrics.py; the
# package starts a system service on :9090: tests start their own.
if ! dpkg-query -W -f='${Status}' prometheus 2>/dev/null | grep -q 'install ok installed'; then
  apt_install prometheus
  (sudo_ systemctl disable --now prometheus 2>/dev/null || sudo_ service prometheus stop 2>/dev/null || true) >/dev/null 2>&1
fi

# Valkey 8 (FalkorDB needs Redis >= 7.2) comes from bookworm-backports, read
# from the machine's own Debian mirror configuration.
if ! [ -x /usr/bin/valkey-server ]; then
  src=/etc/apt/sources.list.d/debian.sources
  uri=$(awk '/^URIs:/ {print $2; exit}' "$src" 2>/dev/null || true)
  [ -n "$uri" ] || uri=$(awk '/^deb / {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  if [ -n "$uri" ] && ! grep -rqs bookworm-backports /etc/apt/sources.list.d/; then
    printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
      "$uri" | sudo_ tee /etc/apt/sources.list.d/knut-backports.sources >/dev/null
  fi
  sudo_ apt-get update -qq
  log "installing valkey-server from bookworm-backports"
  sudo_ env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports valkey-server >/dev/null
  # The package starts a system service on 6379; tests start their own.
  (sudo_ systemctl disable --now valkey-server 2>/dev/null || sudo_ service valkey-server stop 2>/dev/null || true) >/dev/null 2>&1
fi
(sudo_ service redis-server stop || true) >/dev/null 2>&1

# The FalkorDB module (falkordb.so) from the npm package; its bundled
# redis-server needs a newer glibc, so only the module is used.
fk_dir="$here/third_party/falkordb"
if ! [ -f "$fk_dir/falkordb.so" ]; then
  log "FalkorDB module: fetching from the npm registry"
  tmp2=$(mktemp -d)
  (cd "$tmp2" && npm pack --silent "$FALKORDB_PKG" >/dev/null && tar -xzf ./*.tgz)
  mkdir -p "$fk_dir"; cp "$tmp2/package/bin/falkordb.so" "$fk_dir/"; rm -rf "$tmp2"
fi

# The Flight SQL JDBC driver (what DBeaver and Tableau load) as a peer of
# `knut serve`: one pinned jar from Maven Central through Maven, its sha256
# checked. tests/jdbc/JdbcCheck.java runs as a single-file source program,
# which needs the JDK's compiler module, so the headless JDK (the JRE alone
# cannot run `java File.java`).
apt_install openjdk-17-jdk-headless maven
# One pinned jar from Maven Central through Maven into third_party/DIR/,
# its sha256 checked; fetched again only when missing or different.
maven_jar() { # GROUP ARTIFACT VERSION SHA256 DIR
  local jar="$here/third_party/$5/$2-$3.jar" tmp got
  if [ -f "$jar" ] && [ "$(sha256sum "$jar" | cut -d' ' -f1)" = "$4" ]; then return; fi
  log "$2 $3: fetching with Maven"
  tmp=$(mktemp -d)
  mvn -q dependency:copy -Dartifact="$1:$2:$3" -DoutputDirectory="$tmp" >/dev/null
  got=$(sha256sum "$tmp/$2-$3.jar" | cut -d' ' -f1)
  if [ "$got" != "$4" ]; then
    log "$2: sha256 $got, expected $4"; rm -rf "$tmp"; exit 1
  fi
  mkdir -p "$(dirname "$jar")"; mv "$tmp/$2-$3.jar" "$jar"
  rm -rf "$tmp"
}
maven_jar org.apache.arrow flight-sql-jdbc-driver 18.3.0 \
  3f418b46c880e263558c5de669bdbede2c5d4375527ced116fb29f795b03704c jdbc

# Iceberg's Spark runtime (Spark-written Iceberg fixtures, Spark's changelog
# view to compare with: test_iceberg_spark.py); it runs in a Spark 4.1
# server (.venv-spark41, below): it does not load into Spark 4.3.
maven_jar org.apache.iceberg iceberg-spark-runtime-4.1_2.13 1.12.0 \
  3123c3798af642dd537230923548e013ef41cc28b6626e5225808cf5670a0f82 iceberg

# A venv installed from a fully pinned requirements file, redone only when
# the file changes (its sha256 is stamped into the venv).
pinned_venv() { # DIR REQUIREMENTS PROGRAM LABEL
  local dir="$here/$1" req="$here/$2" sum
  sum=$(sha256sum "$req" | cut -d' ' -f1)
  if ! [ -x "$dir/bin/$3" ] || [ "$(cat "$dir/.requirements.sha" 2>/dev/null)" != "$sum" ]; then
    log "$4: installing into $1"
    [ -x "$dir/bin/python" ] || python3 -m venv "$dir"
    "$dir/bin/pip" install -q --disable-pip-version-check -r "$req"
    echo "$sum" > "$dir/.requirements.sha"
  fi
}

# Python test peers; then Apache Airflow 3 and 2 (the asset-event tests'
# peers), each in a venv of its own: their pins coexist with nothing else.
pinned_venv .venv tests/requirements.txt python "Python test peers"
pinned_venv .venv-airflow tests/airflow-requirements.txt airflow "Apache Airflow 3"
pinned_venv .venv-airflow2 tests/airflow2-requirements.txt airflow "Apache Airflow 2"
pinned_venv .venv-spark41 tests/spark41-requirements.txt spark-submit "Apache Spark 4.1"
log "ready (build + test dependencies)"
