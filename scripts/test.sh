#!/usr/bin/env bash
# The test command (`make test`): installs what the tests need, builds knut
# with warnings as errors, runs the unit tests plain and under ASan+UBSan,
# checks `cmake --install` + pkg-config with a small consumer program,
# smoke-runs the fuzzers, then the integration tests against real peers.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
jobs=$(nproc 2>/dev/null || echo 2)
step() { printf '\n==> %s\n' "$*"; }

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

step "install + pkg-config consumer"
tests/install/check.sh build

step "fuzz smoke (libFuzzer, ${KNUT_FUZZ_SECONDS:-20}s per target)"
CC=clang cmake -S . -B build-fuzz -G Ninja -DKNUT_FUZZ=ON -DKNUT_TESTS=OFF >/dev/null
ninja -C build-fuzz -j"$jobs"
for f in build-fuzz/tests/fuzz/*_fuzzer; do
  name=$(basename "$f")
  work=$(mktemp -d)
  cp -r "tests/fuzz/corpora/$name/." "$work/" 2>/dev/null || true
  "$f" -max_total_time="${KNUT_FUZZ_SECONDS:-20}" -print_final_stats=0 "$work" 2>"$work.log" \
    || { tail -40 "$work.log"; echo "fuzzer $name failed"; exit 1; }
  echo "$name: $(grep -c '' "$work.log") log lines, no crash"
  rm -rf "$work" "$work.log"
done

step "integration tests (real peers)"
KNUT_BIN="$here/build/knut" .venv/bin/python -m pytest tests/integration -q
