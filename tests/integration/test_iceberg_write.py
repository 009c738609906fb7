"""End-to-end tests of the Iceberg append writer, `knut export --iceberg`:
what knut writes is read by pyiceberg 0.12 (row for row, schema and field
ids, snapshot summaries, sequence numbers, its inspect tables) and by knut's
own reader, for a table knut creates and for appends onto a table pyiceberg
created and keeps appending to; on the SQL catalog (SQLite) and on the
filesystem catalog (v<N>.metadata.json + version-hint.text). Concurrent
exports to one table never lose a commit and leave a linear snapshot chain
(the conflict path, reload and retry, is taken); bad input is
a clear error that changes nothing; a Cypher query's rows go in as well.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import StaticTable

import iceberg_fixtures as F
from peers import FalkorDB

TYPES_SQL = (
    "SELECT range AS id, 'n' || range AS name, range / 2 AS half, "
    "(range % 3)::INTEGER AS small, range % 2 = 0 AS even, "
    "DATE '2026-01-01' + range::INTEGER AS day, "
    "TIMESTAMP '2026-01-01 00:00:00' + INTERVAL (range) SECOND AS ts, "
    "TIMESTAMPTZ '2026-01-01 00:00:00+00' AS tz, "
    "(range / 4)::DECIMAL(9,2) AS price, ('b' || range)::BLOB AS raw, "
    "CASE WHEN range % 5 = 0 THEN NULL ELSE range END AS maybe "
    "FROM range(50)"
)
TYPES = {"id": "long", "name": "string", "half": "double", "small": "int", "even": "boolean",
         "day": "date", "ts": "timestamp", "tz": "timestamptz", "price": "decimal(9, 2)",
         "raw": "binary", "maybe": "long"}


def types_rows(n=50) -> list[dict]:
    utc = dt.timezone.utc
    return [{"id": i, "name": f"n{i}", "half": i * 0.5, "small": i % 3, "even": i % 2 == 0,
             "day": dt.date(2026, 1, 1) + dt.timedelta(days=i),
             "ts": dt.datetime(2026, 1, 1) + dt.timedelta(seconds=i),
             "tz": dt.datetime(2026, 1, 1, tzinfo=utc),
             "price": decimal.Decimal(i / 4).quantize(decimal.Decimal("0.01")),
             "raw": f"b{i}".encode(), "maybe": None if i % 5 == 0 else i} for i in range(n)]


def export(knut, table, sql, *args, env=None):
    tail = [] if sql is None else [sql]
    return subprocess.run([str(knut), "export", "--iceberg", str(table), *map(str, args), *tail],
                          capture_output=True, text=True, timeout=300, env=env)


def ok(p):
    assert p.returncode == 0, p.stderr
    return p


def cat_rows(knut, *args) -> pa.Table:
    import pyarrow.ipc as ipc
    p = subprocess.run([str(knut), "iceberg", "cat", "-f", "arrow", *map(str, args)],
                       capture_output=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return ipc.open_stream(p.stdout).read_all()


def catalog_row(tmp_path, name="t"):
    with sqlite3.connect(tmp_path / "catalog.db") as db:
        return db.execute("SELECT metadata_location, previous_metadata_location FROM "
                          "iceberg_tables WHERE table_name = ?", (name,)).fetchone()


def assert_linear(tbl, n):
    """n snapshots, each the child of the one before, sequence numbers 1..n,
    the current one last; every one an append."""
    snaps = sorted(tbl.metadata.snapshots, key=lambda s: s.sequence_number)
    assert [s.sequence_number for s in snaps] == list(range(1, n + 1))
    assert snaps[0].parent_snapshot_id is None
    for a, b in zip(snaps, snaps[1:]):
        assert b.parent_snapshot_id == a.snapshot_id
    assert tbl.metadata.current_snapshot_id == snaps[-1].snapshot_id
    assert tbl.metadata.last_sequence_number == n
    assert all(s.summary.operation.value == "append" for s in snaps)
    assert [e.snapshot_id for e in tbl.metadata.snapshot_log] == [s.snapshot_id for s in snaps]


def test_create_then_pyiceberg_reads(knut, tmp_path):
    cat = F.catalog(tmp_path)
    p = ok(export(knut, "db.t", TYPES_SQL, "-c", tmp_path / "catalog.db"))
    assert p.stdout.startswith("created db.t: 50 rows, snapshot ")
    tbl = cat.load_table("db.t")
    # schema: the query's column order, ids 1..n, all optional
    fields = tbl.schema().fields
    assert [(f.field_id, f.name, str(f.field_type), f.required) for f in fields] == \
        [(i + 1, n, t, False) for i, (n, t) in enumerate(TYPES.items())]
    assert tbl.metadata.format_version == 2 and tbl.metadata.last_column_id == len(TYPES)
    assert tbl.location() == f"file://{tmp_path}/db.db/t"
    got = tbl.scan().to_arrow()
    assert F.rows_of(got) == types_rows()
    # the Parquet file carries Iceberg's field ids, not DuckDB's 0-based ones
    files = tbl.inspect.files().to_pylist()
    assert len(files) == 1 and files[0]["record_count"] == 50
    path = files[0]["file_path"].removeprefix("file://")
    assert files[0]["file_size_in_bytes"] == os.path.getsize(path)
    # column metrics from the Parquet footer: counts with nulls, null counts
    assert dict(files[0]["value_counts"]) == {i: 50 for i in range(1, len(TYPES) + 1)}
    assert dict(files[0]["null_value_counts"]) == {i: 10 if i == 11 else 0
                                                   for i in range(1, len(TYPES) + 1)}
    assert all(v > 0 for _, v in files[0]["column_sizes"])
    from pyiceberg.expressions import IsNull
    assert tbl.scan(row_filter=IsNull("maybe")).to_arrow().num_rows == 10
    ids = [int(f.metadata[b"PARQUET:field_id"]) for f in pq.read_schema(path)]
    assert ids == list(range(1, len(TYPES) + 1))
    snap = tbl.current_snapshot()
    assert snap.sequence_number == 1 and snap.parent_snapshot_id is None
    assert str(snap.snapshot_id) in p.stdout
    s = snap.summary
    assert s.operation.value == "append"
    assert (s["added-data-files"], s["added-records"], s["total-records"],
            s["total-data-files"]) == ("1", "50", "50", "1")
    assert s["added-files-size"] == str(os.path.getsize(path))
    entries = tbl.inspect.entries().to_pylist()
    assert [(e["status"], e["snapshot_id"], e["sequence_number"]) for e in entries] == \
        [(1, snap.snapshot_id, 1)]
    # knut's own reader
    mine = cat_rows(knut, "-c", tmp_path / "catalog.db", "db.t")
    assert F.rows_of(mine) == types_rows()
    # the catalog row: one metadata file, no previous
    loc, prev = catalog_row(tmp_path)
    assert loc.endswith(".metadata.json") and "/00000-" in loc and prev is None


def test_appends_onto_a_pyiceberg_table(knut, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 10))
    db = tmp_path / "catalog.db"
    before = catalog_row(tmp_path)[0]
    # columns by name, in another order, a subset (amount stays NULL), cast
    # to the table's types (INTEGER -> long, VARCHAR -> date)
    p = ok(export(knut, "db.t", "SELECT '2026-02-01' AS day, range::INTEGER AS id, "
                  "'k' || range AS name, TIMESTAMP '2026-02-01 10:00:00' AS ts "
                  "FROM range(10, 15)", "-c", db))
    assert p.stdout.startswith("appended to db.t: 5 rows")
    loc, prev = catalog_row(tmp_path)
    assert prev == before and loc != before
    tbl = cat.load_table("db.t")
    tbl.append(F.people_rows(15, 20))           # pyiceberg appends on top of knut's commit
    ok(export(knut, "db.t", "SELECT 20 AS id", "-c", db))
    tbl = cat.load_table("db.t")
    assert_linear(tbl, 4)
    want = (F.people_rows(0, 10).to_pylist() +
            [{"id": i, "name": f"k{i}", "amount": None, "day": dt.date(2026, 2, 1),
              "ts": dt.datetime(2026, 2, 1, 10)} for i in range(10, 15)] +
            F.people_rows(15, 20).to_pylist() +
            [{"id": 20, "name": None, "amount": None, "day": None, "ts": None}])
    want.sort(key=lambda r: r["id"])
    assert F.rows_of(tbl.scan().to_arrow()) == want
    assert F.rows_of(cat_rows(knut, "-c", db, "db.t")) == want
    # every snapshot reads the same in both
    for snap in tbl.metadata.snapshots:
        mine = cat_rows(knut, "-s", snap.snapshot_id, "-c", db, "db.t")
        assert F.rows_of(mine) == F.rows_of(tbl.scan(snapshot_id=snap.snapshot_id).to_arrow())
    # totals carried on from pyiceberg's summaries, manifests carried over
    last = tbl.current_snapshot().summary
    assert (last["total-records"], last["total-data-files"]) == ("21", "4")
    manifests = tbl.inspect.manifests().to_pylist()
    assert len(manifests) == 4 and sum(m["added_data_files_count"] for m in manifests) == 4
    log = [e.metadata_file for e in tbl.metadata.metadata_log]
    assert before in log and len(log) == 4


def test_filesystem_catalog(knut, tmp_path):
    t = tmp_path / "wh" / "events"
    ok(export(knut, t, "SELECT range AS id, 'e' || range AS kind FROM range(3)"))
    ok(export(knut, t, "SELECT 3 AS id, 'x' AS kind UNION ALL SELECT 4, NULL"))
    md = t / "metadata"
    assert (md / "version-hint.text").read_text() == "2"
    assert sorted(p.name for p in md.glob("v*.metadata.json")) == \
        ["v1.metadata.json", "v2.metadata.json"]
    assert not list(md.glob(".*"))            # no temp files left
    tbl = StaticTable.from_metadata(str(t))
    assert_linear(tbl, 2)
    want = [{"id": i, "kind": f"e{i}"} for i in range(3)] + \
        [{"id": 3, "kind": "x"}, {"id": 4, "kind": None}]
    assert F.rows_of(tbl.scan().to_arrow()) == want
    assert F.rows_of(cat_rows(knut, t)) == want
    meta = json.loads((md / "v2.metadata.json").read_text())
    assert meta["refs"] == {"main": {"snapshot-id": meta["current-snapshot-id"],
                                     "type": "branch"}}
    assert meta["metadata-log"][0]["metadata-file"] == f"file://{md}/v1.metadata.json"


@pytest.mark.parametrize("kind", ["sql", "path"])
def test_concurrent_appends_lose_nothing(knut, tmp_path, kind):
    """Two exports started together, several rounds, the first creating
    the table: every commit lands (all rows present), the snapshot chain is
    linear, and the loser of each race took the conflict path (reload,
    rebuild on the winner's commit, commit again; in the first round onto
    the table the winner created)."""
    if kind == "sql":
        cat = F.catalog(tmp_path)
        table, extra = "db.t", ["-c", tmp_path / "catalog.db"]
    else:
        table, extra = tmp_path / "wh" / "t", []
    n = 200_000  # enough rows that both load the base before either commits
    attempts, created, r = 0, 0, 0
    # five rounds, more (up to 15) until a race was lost at least once: on a
    # loaded machine one process may finish before the other starts
    while r < 5 or (attempts == 2 * r and r < 15):
        procs = [subprocess.Popen(
            [str(knut), "export", "--iceberg", str(table), *map(str, extra), "--threads", "1",
             f"SELECT range + {w * n} AS id, {r} AS round FROM range({n})"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in range(2)]
        for p in procs:
            out, errs = p.communicate(timeout=300)
            assert p.returncode == 0, errs
            attempts += int(out.split("(")[-1].split()[0])
            created += out.startswith("created ")
        r += 1
    commits = 2 * r
    assert attempts > commits, "no commit conflict was ever met"
    assert created == 1
    tbl = cat.load_table("db.t") if kind == "sql" else StaticTable.from_metadata(str(table))
    assert_linear(tbl, commits)
    got = tbl.scan().to_arrow()
    assert got.num_rows == commits * n
    counts = pa.TableGroupBy(got, ["id", "round"]).aggregate([]).num_rows
    assert counts == got.num_rows                 # no row twice
    assert tbl.current_snapshot().summary["total-records"] == str(got.num_rows)
    assert cat_rows(knut, *extra, table).num_rows == got.num_rows
    if kind == "path":
        assert len(list((table / "metadata").glob("v*.metadata.json"))) == commits
    # a lost race leaves no metadata file or manifest list behind
    md = (Path(str(tbl.location()).removeprefix("file://")) / "metadata")
    assert len(list(md.glob("snap-*.avro"))) == commits
    assert len(list(md.glob("*.metadata.json"))) == commits
    assert len(list(md.glob("*-m0.avro"))) == commits
    assert len(list(md.parent.glob("data/*.parquet"))) == commits


def test_bad_input_changes_nothing(knut, tmp_path):
    cat = F.catalog(tmp_path)
    db = tmp_path / "catalog.db"
    ok(export(knut, "db.t", "SELECT 1 AS id, 'a' AS s", "-c", db))
    before = catalog_row(tmp_path)
    wh = tmp_path / "db.db" / "t"
    files = sorted(str(p) for p in wh.rglob("*"))
    cases = [
        (["db.u", "-c", db], "SELECT 1::UBIGINT AS big", "column 'big' is an unsigned 64-bit"),
        (["db.u", "-c", db], "SELECT [1, 2] AS l", "column 'l' is a nested type"),
        (["db.u", "-c", db], "SELECT INTERVAL 1 DAY AS i", "column 'i' is an INTERVAL"),
        (["db.u", "-c", db], "SELECT now()::TIMESTAMP_NS AS t", "not in microseconds"),
        (["db.t", "-c", db], "SELECT 2 AS nope", "the table has no column 'nope'"),
        (["db.t", "-c", db], "SELECT 'x' AS id", "Could not convert string 'x'"),
        (["db.u", "-c", db], "SELECT CASE WHEN range = 2 THEN error('late') ELSE range END "
                             "AS x FROM range(3)", "Invalid Input Error: late"),
        ([tmp_path / "new" / "t"], "SELECT CASE WHEN range = 2 THEN error('late') ELSE "
                                   "range END AS x FROM range(3)", "Invalid Input Error: late"),
        (["db.t", "-c", db], "SELEC 1", "the query: preparing statement: Parser Error"),
        (["t", "-c", db], "SELECT 1 AS id", "identifier 't': expected namespace.table"),
        (["db.t", "-c", tmp_path / "none.db"], "SELECT 1 AS id", "no such SQLite catalog file"),
        ([wh], "SELECT 1 AS id", "append through that catalog"),
        ([wh / "metadata"], "SELECT 1 AS id", "name the table folder above it"),
        ([wh / "metadata" / "x.metadata.json"], "SELECT 1 AS id", "not a table folder"),
        ([next((wh / "metadata").glob("*.metadata.json"))], "SELECT 1 AS id",
         "not a table folder"),
    ]
    for args, sql, msg in cases:
        p = export(knut, args[0], sql, *args[1:])
        assert p.returncode == 1, (args, sql, p.stdout)
        assert msg in p.stderr, (msg, p.stderr)
        assert "LINE 1" not in p.stderr
    assert catalog_row(tmp_path) == before
    assert sorted(str(p) for p in wh.rglob("*")) == files
    assert not (tmp_path / "db.db" / "u").exists()
    assert not (tmp_path / "new").exists()        # the folders a failed create made
    assert not (tmp_path / "none.db").exists()
    assert cat.load_table("db.t").scan().to_arrow().num_rows == 1
    # usage errors: exit 2
    for args in (["--iceberg", "x", "-f", "parquet", "SELECT 1"],
                 ["--iceberg", "x", "-o", "y", "SELECT 1"],
                 ["-f", "parquet", "-o", "y", "-c", db, "SELECT 1"]):
        p = subprocess.run([str(knut), "export", *map(str, args)], capture_output=True,
                           text=True)
        assert p.returncode == 2, p.stderr


def test_v1_table_refused(knut, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema(),
                           properties={"format-version": "1"})
    tbl.append(F.people_rows(0, 3))
    before = catalog_row(tmp_path)
    p = export(knut, "db.t", "SELECT 5 AS id", "-c", tmp_path / "catalog.db")
    assert p.returncode == 1 and "format version 1: knut appends to v2 tables only" in p.stderr
    assert catalog_row(tmp_path) == before


def test_cypher_rows(knut, start_peer, tmp_path):
    peer = start_peer(FalkorDB)
    peer.query("g", "UNWIND range(1, 100) AS i CREATE (:P {id: i, name: 'p' + toString(i)})")
    t = tmp_path / "wh" / "people"
    ok(export(knut, t, None, "--falkordb", f"redis://{peer.host}:{peer.port}", "--graph", "g",
              "--cypher", "MATCH (p:P) RETURN p.id AS id, p.name AS name"))
    tbl = StaticTable.from_metadata(str(t))
    assert F.rows_of(tbl.scan().to_arrow()) == [{"id": i, "name": f"p{i}"}
                                                for i in range(1, 101)]
