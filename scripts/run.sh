#!/usr/bin/env bash
# The quick start (`make run`): installs the build dependencies, builds knut,
# and runs it on the embedded engine with no server. It writes a small
# Parquet table into demo/ and queries it back.
#
# The main job, `knut sync` (tables -> property graph), is not built yet;
# until it is, this runs the part that exists: `knut query` over files.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh
cmake -S . -B build -G Ninja >/dev/null
ninja -C build knut >/dev/null
knut=build/knut
mkdir -p demo
$knut --version
$knut query "COPY (SELECT i AS id, 'person ' || i AS name, DATE '2020-01-01' + i::INTEGER AS joined
              FROM range(1, 1001) t(i)) TO 'demo/people.parquet' (FORMAT parquet)"
$knut query "SELECT count(*) AS people, min(joined) AS first, max(joined) AS last
             FROM 'demo/people.parquet'"
$knut query --format json "SELECT * FROM 'demo/people.parquet' ORDER BY id LIMIT 3"
