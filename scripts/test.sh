#!/usr/bin/env bash
# The test command (`make test`): installs what the tests need, builds knut
# with warnings as errors, runs the unit tests plain, under ASan+UBSan and
# under TSan (with the threaded sync and pipeline integration tests),
# checks `cmake --install` + pkg-config with a small consumer program,
# smoke-runs the fuzzers, builds the .deb, then the integration tests
# against real peers (the package's among them),
# and the sync, serve and pipeline CDC ones once more against the ASan
# build of knut.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
jobs=$(nproc 2>/dev/null || echo 2)
step() { printf '\n==> %s\n' "$*"; }
# san_run DIR CMD...: runs CMD with the sanitizers' reports going to files
# in DIR (knut processes started by pytest report there, not to a pipe a
# test may not read), then fails if CMD failed or any report was written.
san_run() {
  local dir=$1 rc=0
  shift
  "$@" || rc=$?
  # LeakSanitizer cannot run under ptrace: a knut that a test drives with
  # gdb leaves that note, which is no finding
  # (no report at all is the usual case: grep then fails, which is fine)
  { grep -l "LeakSanitizer does not work under ptrace" "$dir"/* 2>/dev/null \
    | xargs -r grep -L "ERROR: AddressSanitizer\|runtime error" | xargs -r rm -f; } || true
  if compgen -G "$dir/*" >/dev/null; then
    cat "$dir"/*
    echo "sanitizer reports above (in $dir)"
    rc=1
  fi
  [ "$rc" = 0 ] && rm -rf "$dir"
  return "$rc"
}
# ThreadSanitizer's settings: the longest history (else the stacks of DuckDB's
# worker threads are lost and their suppressions cannot match); tests/tsan.supp
# says why each entry is there.
tsan_opts() { echo "halt_on_error=0:history_size=7:second_deadlock_stack=1:suppressions=$here/tests/tsan.supp${1:+:log_path=$1/tsan}"; }

step "setup"
scripts/setup.sh --test

step "build (warnings as errors)"
cmake -S . -B build -G Ninja -DKNUT_WERROR=ON >/dev/null
ninja -C build -j"$jobs"

step "unit tests"
ctest --test-dir build --output-on-failure -j"$jobs"

step "unit tests under ASan + UBSan"
cmake -S . -B build-asan -G Ninja -DKNUT_WERROR=ON -DKNUT_SANITIZE=ON >/dev/null
ninja -C build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"

step "unit tests under ThreadSanitizer"
cmake -S . -B build-tsan -G Ninja -DKNUT_WERROR=ON -DKNUT_TSAN=ON >/dev/null
ninja -C build-tsan -j"$jobs"
# test_graph_store skips its crash test under TSan (KNUT_TSAN_BUILD; the
# reason is at the test and in docs/testing.md); nothing else is left out.
TSAN_OPTIONS=$(tsan_opts) ctest --test-dir build-tsan --output-on-failure -j"$jobs"

step "threaded sync and pipeline integration tests under ThreadSanitizer"
# the lease renewer (shared ledger), the asset sender (a fake Airflow: the
# real ones run in the main integration step), the metrics server, the
# pipeline's flow workers (--parallel N)
tsan_logs=$(mktemp -d)
TSAN_OPTIONS=$(tsan_opts "$tsan_logs") KNUT_BIN="$here/build-tsan/knut" \
  san_run "$tsan_logs" .venv/bin/python -m pytest -q -n "$jobs" \
    tests/integration/test_sync_shared.py tests/integration/test_sync_metrics.py \
    tests/integration/test_sync_secrets.py tests/integration/test_pipeline_parallel.py \
    tests/integration/test_sync_airflow.py -k "not airflow or fault or airflow_down"

step "install + pkg-config consumer"
tests/install/check.sh build

step "fuzz smoke (libFuzzer, ${KNUT_FUZZ_SECONDS:-20}s per target)"
CC=clang cmake -S . -B build-fuzz -G Ninja -DKNUT_FUZZ=ON -DKNUT_TESTS=OFF >/dev/null
ninja -C build-fuzz -j"$jobs"
# each fuzzer is one thread: run one per core at a time
fuzz_one() {
  local f=$1 name work
  name=$(basename "$f")
  work=$(mktemp -d)
  cp -r "tests/fuzz/corpora/$name/." "$work/" 2>/dev/null || true
  "$f" -max_total_time="${KNUT_FUZZ_SECONDS:-20}" -print_final_stats=0 "$work" 2>"$work.log" \
    || { tail -40 "$work.log"; echo "fuzzer $name failed"; return 1; }
  echo "$name: $(grep -c '' "$work.log") log lines, no crash"
  rm -rf "$work" "$work.log"
}
export -f fuzz_one
printf '%s\n' build-fuzz/tests/fuzz/*_fuzzer | xargs -P "$jobs" -I{} bash -c 'fuzz_one "$1"' _ {}

step "Debian package (scripts/package-deb.sh into build-deb/)"
# test_package.py inspects, unpacks and (as root) installs this one
deb=$(KNUT_JOBS="$jobs" scripts/package-deb.sh build-deb | tail -1)

step "integration tests (real peers)"
# -n: pytest-xdist, one worker per core; every test starts its own peers
# on free ports in its own folder, so tests share nothing, except the Spark
# Connect server: tests that use it form one group (conftest.py), so one
# worker starts one
KNUT_BIN="$here/build/knut" KNUT_DEB="$deb" \
  .venv/bin/python -m pytest tests/integration -q -n "$jobs" --dist loadgroup

step "sync, serve, pipeline CDC and Iceberg integration tests against the ASan + UBSan build of knut"
asan_logs=$(mktemp -d)
ASAN_OPTIONS="detect_leaks=1:log_path=$asan_logs/asan" \
  UBSAN_OPTIONS="print_stacktrace=1:log_path=$asan_logs/ubsan" \
  KNUT_BIN="$here/build-asan/knut" \
  san_run "$asan_logs" .venv/bin/python -m pytest -q -n "$jobs" \
    tests/integration/test_sync_crash.py tests/integration/test_sync_bad_input.py \
    tests/integration/test_sync_outage.py tests/integration/test_sync_shared.py \
    tests/integration/test_sync_secrets.py tests/integration/test_sync_chunked.py \
    tests/integration/test_serve.py tests/integration/test_serve_graphar.py \
    tests/integration/test_serve_secrets.py tests/integration/test_pipeline_cdc.py \
    tests/integration/test_pipeline_cdc_snapshot.py tests/integration/test_iceberg.py \
    tests/integration/test_iceberg_write.py
