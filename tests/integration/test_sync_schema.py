"""Declared schemas and the type rule of `knut sync` (docs/sync.md "Column
types"), on both sinks (the embedded store and FalkorDB on Valkey):

- `columns:` types are what the files are read as: a CSV column of
  whole numbers declared DOUBLE is a double, a Parquet INT32 declared
  BIGINT a BIGINT, text declared DATE a date;
- a declared table's CSV files are read strictly: a ragged row and an
  unterminated quote fail the file (naming the line), a value that does not
  convert fails it naming the data row and the column (Parquet too, where a
  cast that would lose something, 14.5 as a BIGINT, does not convert), and a
  declared column missing from a file fails it; the table's other files and
  the later tables still sync;
- without a declaration the first good file sets a key's type and a later
  file with another key type fails (the file, not the table); the embedded
  store widens a property column where lossless (INTEGER -> BIGINT, BIGINT
  -> DOUBLE when every stored value is exact) instead of failing the file;
- a type DuckDB does not know, or one the sink cannot store, is a config
  error (exit 2) naming file:line:col.

Each case failed on the code before `columns:` (an unknown key then; for
the undeclared rules: the widening failed the file, FalkorDB stored a
string key beside the integer ones as a second vertex), except the
FalkorDB runs of the two widening tests: FalkorDB has no column types, so
they only show that each value is stored as it reads, before as now.
"""

from __future__ import annotations

import json

import pyarrow as pa
import pytest
from test_sync_bad_input import logs, parquet
from test_sync_poison import Lake

DECLARED = """\
store: graph.duckdb
tables:
  people:
    path: people/
    columns: {id: BIGINT, name: VARCHAR, born: DATE, score: DOUBLE}
    vertices: [{labels: [Person], keys: [id]}]
  after:
    path: after.csv
    vertices: [{labels: [After], keys: [id]}]
"""

UNDECLARED = """\
store: graph.duckdb
tables:
  things:
    path: things/
    vertices: [{labels: [Thing], keys: [id]}]
  after:
    path: after.csv
    vertices: [{labels: [After], keys: [id]}]
"""


@pytest.fixture(params=["embedded", "falkordb"])
def lake_for(request, run_knut, tmp_path):
    """lake_for(config) -> a Lake on this run's sink."""
    f = request.getfixturevalue("falkordb") if request.param == "falkordb" else None
    return lambda config: Lake(run_knut, tmp_path / "lake", config, f, graph="schema")


def people(lake: Lake) -> list[tuple]:
    """(id, name, born, score, the types of born and score) per person."""
    if lake.f:  # the client reads a double as its text
        return [r[:3] + (float(r[3]),) + r[4:] for r in lake.cypher(
            "MATCH (p:Person) RETURN p.id, p.name, toString(p.born), p.score, "
            "typeOf(p.born), typeOf(p.score) ORDER BY p.id")]
    return [tuple(r.values()) for r in lake.sql(
        "SELECT id, name, CAST(born AS VARCHAR), score, typeof(born), typeof(score) "
        "FROM v_Person ORDER BY id")]


def typed(lake: Lake, date: str, double: str) -> tuple[str, str]:
    return ("Date", "Float") if lake.f else (date, double)


def after_synced(lake: Lake) -> None:
    n = (lake.cypher("MATCH (a:After) RETURN count(a)")[0][0] if lake.f else
         lake.sql("SELECT count(*) AS n FROM v_After")[0]["n"])
    assert n == 1


def test_declared_types_are_applied(lake_for):
    lake = lake_for(DECLARED)
    # inferred, score would be BIGINT (CSV) and id INT32 (Parquet)
    lake.put("people/a.csv", b"id,name,born,score\n1,Ann,1990-01-02,7\n")
    lake.put("people/b.parquet", parquet(pa.table({
        "id": pa.array([2], pa.int32()), "name": ["Bob"], "born": ["1991-02-03"],
        "score": ["2.5"], "extra": [True]})))
    lake.put("after.csv", b"id\n1\n")
    r = lake.sync()
    assert r.returncode == 0, r.stderr
    d, f = typed(lake, "DATE", "DOUBLE")
    born = ("1990-01-02", "1991-02-03")
    if lake.f:  # FalkorDB prints a date as its ISO text too
        assert [p[:2] + p[3:] for p in people(lake)] == [
            (1, "Ann", 7.0, d, f), (2, "Bob", 2.5, d, f)]
        assert [p[2][:10] for p in people(lake)] == list(born)
    else:
        assert people(lake) == [(1, "Ann", born[0], 7.0, d, f), (2, "Bob", born[1], 2.5, d, f)]
        assert lake.sql("SELECT typeof(id) AS t FROM v_Person LIMIT 1") == [{"t": "BIGINT"}]
    after_synced(lake)


BAD_CSV = {
    # name: (bytes, words of the reason)
    "b-ragged.csv": (b"id,name,born,score\n3,Cid,1990-01-02,1\n4,Dan,1991-02-03,2,x\n",
                     ["line 3", "Expected Number of Columns: 4 Found: 5", "strictly"]),
    "c-short.csv": (b"id,name,born,score\n5,Eve,1990-01-02\n",
                    ["line 2", "Expected Number of Columns: 4 Found: 3"]),
    "d-quote.csv": (b'id,name,born,score\n6,"Fay,1990-01-02,1\n7,Gus,1990-01-02,1\n',
                    ["line 2", "unterminated quote"]),
    "e-value.csv": (b"id,name,born,score\n8,Hal,1990-01-02,1\n9,Ida,fifty,1\n",
                    ["row 2, column 'born': 'fifty' does not convert to DATE",
                     "declared at", "sync.yml:5:"]),
    "f-missing.csv": (b"id,name,score\n10,Jo,1\n",
                      ["declared column 'born'", "is missing from the file"]),
}


def test_bad_declared_files_fail_alone(lake_for):
    lake = lake_for(DECLARED)
    lake.put("people/a-good.csv", b"id,name,born,score\n1,Ann,1990-01-02,7\n")
    for name, (data, _) in BAD_CSV.items():
        lake.put(f"people/{name}", data)
    lake.put("people/g-value.parquet", parquet(pa.table({
        "id": pa.array([11, 12], pa.int64()), "name": ["Kim", "Lu"],
        "born": ["1990-01-02", "1990-01-03"], "score": ["1.5", "x5"]})))
    lake.put("people/g-lossy.parquet", parquet(pa.table({  # 14.5 would round as a BIGINT
        "id": pa.array([13.0, 14.5]), "name": ["Ned", "Oz"],
        "born": ["1990-01-02", "1990-01-03"], "score": pa.array([1.0, 2.0])})))
    lake.put("people/h-good.csv", b"id,name,born,score\n20,Max,1980-05-06,1.25\n")
    lake.put("after.csv", b"id\n1\n")
    r = lake.sync()
    assert r.returncode == 1, r.stderr  # files failed, the round went on
    st = lake.status()
    assert st["a-good.csv"]["state"] == "done" and st["h-good.csv"]["state"] == "done", st
    for name, (_, words) in BAD_CSV.items():
        assert st[name]["state"] == "failed", (name, st[name])
        for w in words:
            assert w in st[name]["reason"], (name, w, st[name]["reason"])
    assert st["g-value.parquet"]["state"] == "failed"
    assert "row 2, column 'score': 'x5' does not convert to DOUBLE" in \
        st["g-value.parquet"]["reason"], st["g-value.parquet"]
    assert "row 2, column 'id': '14.5' does not convert to BIGINT without loss" in \
        st["g-lossy.parquet"]["reason"], st["g-lossy.parquet"]
    failed = {x["file"].rsplit("/", 1)[1] for x in logs(r.stderr) if x["msg"] == "file failed"}
    assert failed == set(BAD_CSV) | {"g-value.parquet", "g-lossy.parquet"}
    assert [p[:2] for p in people(lake)] == [(1, "Ann"), (20, "Max")]  # nothing of the bad
    after_synced(lake)
    # a fixed file syncs in the next round
    lake.put("people/e-value.csv", b"id,name,born,score\n8,Hal,1990-01-02,1\n9,Ida,1990-01-03,1\n")
    r = lake.sync()
    assert r.returncode == 0, r.stderr
    assert lake.status()["e-value.csv"]["state"] == "done"
    assert [p[0] for p in people(lake)] == [1, 8, 9, 20]


def test_key_type_conflict_fails_the_later_file(lake_for):
    """The first good file sets the key's type; a later file whose key is
    text fails (the table and the other files go on)."""
    lake = lake_for(UNDECLARED)
    lake.put("things/a.parquet", parquet(pa.table({"id": pa.array([1, 2], pa.int64())})))
    r = lake.sync()
    assert r.returncode == 0, r.stderr
    lake.put("things/b.parquet", parquet(pa.table({"id": ["3"]})))
    lake.put("things/c.parquet", parquet(pa.table({"id": pa.array([4], pa.int64())})))
    lake.put("after.csv", b"id\n1\n")
    r = lake.sync()
    assert r.returncode == 1, r.stderr
    st = lake.status()
    assert st["b.parquet"]["state"] == "failed", st
    reason = st["b.parquet"]["reason"]
    assert "key column 'id'" in reason and "columns:" in reason, reason
    assert st["c.parquet"]["state"] == "done" and st["after.csv"]["state"] == "done", st
    if lake.f:
        assert "holds Integer keys in the graph, the set has String" in reason
        assert lake.cypher("MATCH (t:Thing) RETURN t.id ORDER BY t.id") == [(1,), (2,), (4,)]
    else:
        assert "stored as BIGINT, the set has VARCHAR" in reason
        assert [r["id"] for r in lake.sql("SELECT id FROM v_Thing ORDER BY id")] == [1, 2, 4]
    # a key type never widens either: INTEGER stored, BIGINT later
    lake.put("things/d.parquet", parquet(pa.table({"id": pa.array([5], pa.int32())})))
    assert lake.sync().returncode == 0
    assert lake.status()["d.parquet"]["state"] == "done"


def test_lossless_widening_is_applied(lake_for):
    """INTEGER -> BIGINT and BIGINT -> DOUBLE (exact values) widen the
    stored column; a BIGINT beyond 2^53 does not become a DOUBLE."""
    lake = lake_for(UNDECLARED)
    lake.put("things/a.parquet", parquet(pa.table({
        "id": pa.array([1], pa.int64()), "n": pa.array([7], pa.int32()),
        "x": pa.array([3], pa.int64()), "y": pa.array([2**60], pa.int64())})))
    assert lake.sync().returncode == 0
    lake.put("things/b.parquet", parquet(pa.table({
        "id": pa.array([2], pa.int64()), "n": pa.array([2**40], pa.int64()),
        "x": pa.array([0.5])})))
    lake.put("things/c.parquet", parquet(pa.table({
        "id": pa.array([3], pa.int64()), "y": pa.array([0.5])})))
    r = lake.sync()
    st = lake.status()
    assert st["b.parquet"]["state"] == "done", st
    if lake.f:  # no column types: each value as it is
        assert r.returncode == 0, r.stderr
        assert lake.cypher("MATCH (t:Thing) RETURN t.id, t.n, t.x ORDER BY t.id") == [
            (1, 7, 3), (2, 2**40, "0.5"), (3, None, None)]  # a double read as text
        return
    assert r.returncode == 1, r.stderr
    widened = {(x["column"], x["from"], x["to"]) for x in logs(r.stderr)
               if x["msg"] == "column widened"}
    assert widened == {("n", "INTEGER", "BIGINT"), ("x", "BIGINT", "DOUBLE")}, r.stderr
    assert lake.sql("SELECT id, n, x, typeof(n) AS tn, typeof(x) AS tx, typeof(y) AS ty "
                    "FROM v_Thing ORDER BY id") == [
        {"id": 1, "n": 7, "x": 3.0, "tn": "BIGINT", "tx": "DOUBLE", "ty": "BIGINT"},
        {"id": 2, "n": 2**40, "x": 0.5, "tn": "BIGINT", "tx": "DOUBLE", "ty": "BIGINT"}]
    assert st["c.parquet"]["state"] == "failed"
    assert "stored as BIGINT, the set has DOUBLE" in st["c.parquet"]["reason"]
    assert "columns:" in st["c.parquet"]["reason"]


@pytest.mark.parametrize("columns,words", [
    ("{id: BIGINT, born: DATUM}", "column 'born': 'DATUM' is not a DuckDB type"),
    ("{id: BIGINT, born: 'DATE; SELECT 1'}", "column 'born': 'DATE; SELECT 1' is not a DuckDB"),
    ("{id: BIGINT, ID: INTEGER}", "column 'ID' is declared twice"),
    ("[id, born]", "'columns' must be a map"),
    ("{id: 'INTEGER[]'}", "column 'id' is declared INTEGER[], which the {sink} sink cannot "
                          "store: a key of type list"),
    ("{id: BIGINT, data: BLOB}", "FalkorDB"),
])
def test_bad_columns_are_config_errors(lake_for, columns, words):
    lake = lake_for(DECLARED.replace(
        "{id: BIGINT, name: VARCHAR, born: DATE, score: DOUBLE}", columns))
    lake.put("after.csv", b"id\n1\n")
    r = lake.sync()
    if words == "FalkorDB" and not lake.f:  # the embedded store keeps BLOB
        assert r.returncode == 0, r.stderr
        return
    if words == "FalkorDB":
        words = "column 'data' is declared BLOB, which the FalkorDB sink cannot store"
    words = words.replace("{sink}", "FalkorDB" if lake.f else "embedded")
    assert r.returncode == 2, r.stderr
    assert words in r.stderr and "sync.yml:5:" in r.stderr, r.stderr
    assert not (lake.root / "ledger.json").exists() or not json.loads(
        (lake.root / "ledger.json").read_text() or "[]")


def test_declared_text_widens_a_stored_column(lake_for):
    """Anything -> VARCHAR only when declared: undeclared, a text file
    against a stored BIGINT fails; declared VARCHAR, the stored column
    becomes text (its values' text form) and the file syncs."""
    lake = lake_for(UNDECLARED)
    lake.put("things/a.csv", b"id,code\n1,7\n")
    assert lake.sync().returncode == 0
    lake.put("things/b.csv", b"id,code\n2,A7\n")
    r = lake.sync()
    st = lake.status()
    if lake.f:  # no column types: the text is stored as it is
        assert r.returncode == 0 and st["b.csv"]["state"] == "done", r.stderr
        assert lake.cypher("MATCH (t:Thing) RETURN t.id, t.code ORDER BY t.id") == [
            (1, 7), (2, "A7")]
        return
    assert r.returncode == 1 and st["b.csv"]["state"] == "failed", st
    assert "stored as BIGINT, the set has VARCHAR" in st["b.csv"]["reason"]
    (lake.root / "sync.yml").write_text(UNDECLARED.replace(
        "    path: things/\n", "    path: things/\n    columns: {id: BIGINT, code: VARCHAR}\n"))
    r = lake.sync()  # the table's config changed: the failed file is read again
    assert r.returncode == 0, r.stderr
    assert lake.status()["b.csv"]["state"] == "done"
    assert [(x["from"], x["to"]) for x in logs(r.stderr) if x["msg"] == "column widened"] == [
        ("BIGINT", "VARCHAR")]
    assert lake.sql("SELECT id, code, typeof(code) AS t FROM v_Thing ORDER BY id") == [
        {"id": 1, "code": "7", "t": "VARCHAR"}, {"id": 2, "code": "A7", "t": "VARCHAR"}]
