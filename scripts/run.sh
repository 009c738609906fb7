#!/usr/bin/env bash
# The quick start (`make run`): installs the build dependencies, builds knut,
# and runs the main job with no server: `knut sync --once` maps the sample
# lakehouse in examples/lakehouse/ (people, companies, employment and a CDC
# changelog, mapped by examples/lakehouse/sync.yml) into the embedded graph
# store demo/graph.duckdb, then prints what it did.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
scripts/setup.sh
cmake -S . -B ${KNUT_BUILD_DIR:-build} -G Ninja >/dev/null
ninja -C ${KNUT_BUILD_DIR:-build} knut >/dev/null
knut=${KNUT_BUILD_DIR:-build}/knut
mkdir -p demo
rm -f demo/graph.duckdb demo/graph.duckdb.wal  # a fresh store, so every file is new
$knut --version
KNUT_LOG_FORMAT=json $knut sync --once --config examples/lakehouse/sync.yml --store demo/graph.duckdb
$knut sync status --config examples/lakehouse/sync.yml --store demo/graph.duckdb
$knut query --db demo/graph.duckdb "SELECT 'vertex' AS kind, 'Person' AS name, count(*) AS n FROM v_Person
    UNION ALL SELECT 'vertex', 'Company', count(*) FROM v_Company
    UNION ALL SELECT 'edge', 'WORKS_AT', count(*) FROM e_WORKS_AT
    UNION ALL SELECT 'edge', 'REPORTS_TO', count(*) FROM e_REPORTS_TO"
$knut query --db demo/graph.duckdb "SELECT p.id, p.full_name, c.name AS company, w.title
    FROM v_Person p JOIN e_WORKS_AT w ON w._knut_src = p._knut_vid
    JOIN v_Company c ON c._knut_vid = w._knut_dst ORDER BY p.id LIMIT 5"
