"""`knut sync` and bad drop files: one parametrized matrix.

Every case lands one bad file in the `people` table next to a good file of
the same table and a good file of another (CDC) table, into a graph that
already holds a first round. Then, for each case:

- the round fails (`--once` exits 1) and the `file failed` log record names
  the file, with a reason naming the line, row or column where there is one;
- `knut sync status` shows the file failed with that reason;
- both good files sync and nothing already in the graph changes;
- the next round does not retry the unchanged bad file (idle, exit 0);
- once the file is fixed, the next round syncs it.

Cases that are not errors (an extra column) and a file that vanishes
between the listing and the read (driven deterministically under gdb: a
breakpoint on the staging or hashing function removes the file, so no test
hook lives in the product) are tested beside the matrix. The embedded store
runs every case; FalkorDB runs three.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

CONFIG = """\
store: graph.duckdb
tables:
  people:
    path: people/                  # format by extension: CSV and Parquet
    vertices: [{labels: [Person], keys: [id], properties: [name, age]}]
  items:
    path: items/
    format: csv
    mode: cdc
    vertices: [{labels: [Item], keys: [id], properties: [name]}]
"""

BASE = {1: ("Ann", 31), 2: ("Bob", 42)}


def parquet(table: pa.Table) -> bytes:
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


GOOD_PQ = parquet(pa.table({"id": [10], "name": ["Pam"], "age": [50]}))
FIXED_CSV = b"id,name,age\n10,Pam,50\n"

# name: (file name, bad bytes, words the reason must hold, fixed bytes)
CASES = {
    "truncated_parquet": ("p-bad.parquet", GOOD_PQ[: len(GOOD_PQ) // 2],
                          ["p-bad.parquet", "magic bytes"], GOOD_PQ),
    "corrupt_parquet": ("p-bad.parquet", b"PAR1" + os.urandom(200) + b"PAR1",
                        ["p-bad.parquet"], GOOD_PQ),
    "csv_wrong_column_count": ("p-bad.csv", b"id,name,age\n10,Pam,50\n11,Pat,51,extra\n",
                               ["line 3 has 4 fields, the header has 3"], FIXED_CSV),
    "csv_unparsable_typed_value": ("p-bad.csv", b"id,name,age\n10,Pam,fifty\n",
                                   ["column 'age'", "BIGINT", "VARCHAR"], FIXED_CSV),
    "empty_file": ("p-bad.csv", b"", ["empty file (0 bytes)"], FIXED_CSV),
    "missing_key_column": ("p-bad.csv", b"name,age\nPam,50\n",
                           ["column 'id'", "sync.yml:5:"], FIXED_CSV),
    "drift_changed_type": ("p-bad.parquet",
                           parquet(pa.table({"id": [10], "name": ["Pam"], "age": ["50y"]})),
                           ["column 'age'", "stored as BIGINT"], GOOD_PQ),
    "non_utf8_csv": ("p-bad.csv", b"id,name,age\n10,P\xff\xfem,50\n", ["not utf-8"], FIXED_CSV),
    "nul_in_key": ("p-bad.csv", b'id,name,age\n"x",Pam,50\n"1\x000",Pat,51\n',
                   ["key column 'id'", "NUL byte in row 2"], FIXED_CSV),
}


def logs(stderr: str) -> list[dict]:
    return [json.loads(x) for x in stderr.splitlines() if x.strip().startswith("{")]


class Lake:
    """One lake folder, the sink arguments and a way to read the graph."""

    def __init__(self, run_knut, root: Path, falkordb=None):
        self.run_knut, self.root, self.f = run_knut, root, falkordb
        for d in ("people", "items"):
            (root / d).mkdir(parents=True, exist_ok=True)
        (root / "sync.yml").write_text(CONFIG)
        if falkordb:
            url = f"redis://{falkordb.host}:{falkordb.port}"
            self.args = ("--falkordb", url, "--graph", "bad", "--ledger", root / "ledger.json")
            self.status_args = ("--falkordb", url, "--ledger", root / "ledger.json")
        else:
            self.args = self.status_args = ()

    def put(self, rel: str, data: bytes) -> None:
        p = self.root / rel
        tmp = p.with_name("." + p.name)
        tmp.write_bytes(data)
        os.rename(tmp, p)

    def sync(self, *extra):
        return self.run_knut("sync", "--once", "--config", self.root / "sync.yml", *self.args,
                             *extra, env={"KNUT_LOG_FORMAT": "json"})

    def status(self) -> dict[str, dict]:
        r = self.run_knut("sync", "status", "--config", self.root / "sync.yml", "--json",
                          *self.status_args)
        doc = json.loads(r.stdout)
        assert r.returncode == (1 if doc["failed"] else 0), r.stderr  # 1: a file failed
        return {Path(x["path"]).name: x for x in doc["files"]}

    def graph(self):
        if self.f:
            def rows(c):
                return [tuple(v.decode() if isinstance(v, bytes) else v for v in r)
                        for r in self.f.query("bad", c)[1]]
            people = rows("MATCH (p:Person) RETURN p.id, p.name, p.age ORDER BY p.id")
            items = rows("MATCH (i:Item) RETURN i.id, i.name ORDER BY i.id")
        else:
            def rows(sql):
                r = self.run_knut("query", "--db", self.root / "graph.duckdb", "--format",
                                  "json", sql)
                assert r.returncode == 0, r.stderr
                return [tuple(json.loads(x).values()) for x in r.stdout.splitlines() if x]
            people = rows("SELECT id, name, age FROM v_Person ORDER BY id")
            items = rows("SELECT id, name FROM v_Item ORDER BY id")
        return people, items


def base_round(lake: Lake):
    lake.put("people/p-base.csv",
             b"id,name,age\n" + b"".join(f"{k},{n},{a}\n".encode() for k, (n, a) in BASE.items()))
    lake.put("items/i-0001.csv", b"_change_type,id,name\nINSERT,1,one\n")
    r = lake.sync()
    assert r.returncode == 0, r.stderr
    assert lake.graph() == ([(1, "Ann", 31), (2, "Bob", 42)], [(1, "one")])


def others(lake: Lake):
    """A good file of the same table and one of the other table."""
    lake.put("people/p-good.csv", b"id,name,age\n3,Cid,23\n")
    lake.put("items/i-0002.csv", b"_change_type,id,name\nINSERT,2,two\nDELETE,1,one\n")


AFTER = ([(1, "Ann", 31), (2, "Bob", 42), (3, "Cid", 23)], [(2, "two")])
FIXED = ([(1, "Ann", 31), (2, "Bob", 42), (3, "Cid", 23), (10, "Pam", 50)], [(2, "two")])


def run_case(lake: Lake, case: str):
    name, bad, words, fixed = CASES[case]
    base_round(lake)
    others(lake)
    lake.put(f"people/{name}", bad)
    r = lake.sync()
    assert r.returncode == 1, r.stderr  # a file failed
    failed = [x for x in logs(r.stderr) if x["msg"] == "file failed"]
    assert [Path(x["file"]).name for x in failed] == [name], r.stderr
    for w in words:
        assert w in failed[0]["reason"], failed[0]["reason"]
    st = lake.status()
    assert st[name]["state"] == "failed" and st[name]["reason"] == failed[0]["reason"]
    assert {k: v["state"] for k, v in st.items() if k != name} == {
        "p-base.csv": "done", "p-good.csv": "done", "i-0001.csv": "done", "i-0002.csv": "done"}
    assert lake.graph() == AFTER  # the good files synced, nothing was lost
    # unchanged: not retried
    r = lake.sync()
    assert r.returncode == 0 and '"round idle"' in r.stderr, r.stderr
    # fixed: the next round syncs it
    lake.put(f"people/{name}", fixed)
    assert lake.status()[name]["state"] == "pending"
    r = lake.sync()
    assert r.returncode == 0, r.stderr
    assert lake.status()[name]["state"] == "done"
    assert lake.graph() == FIXED


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_file_embedded(run_knut, tmp_path, case):
    run_case(Lake(run_knut, tmp_path / "lake"), case)


@pytest.mark.parametrize("case", ["corrupt_parquet", "csv_wrong_column_count", "nul_in_key"])
def test_bad_file_falkordb(run_knut, tmp_path, falkordb, case):
    run_case(Lake(run_knut, tmp_path / "lake", falkordb), case)


def test_extra_column_is_not_an_error(run_knut, tmp_path):
    """Schema drift that adds a column: the listed properties are mapped,
    the new column is not (a step without `properties:` would map it)."""
    lake = Lake(run_knut, tmp_path / "lake")
    base_round(lake)
    others(lake)
    lake.put("people/p-more.csv", b"id,name,age,shoe\n10,Pam,50,44\n")
    r = lake.sync()
    assert r.returncode == 0, r.stderr
    assert lake.status()["p-more.csv"]["state"] == "done"
    assert lake.graph() == FIXED


def test_types_disagreeing_in_one_round_do_not_widen(run_knut, tmp_path):
    """Files of one round whose column types differ are not unioned into the
    wider type (which would store every good file's ages as text): the round
    applies them one by one, and a column empty in one file takes the
    others' type."""
    lake = Lake(run_knut, tmp_path / "lake")
    lake.put("items/i-0001.csv", b"_change_type,id,name\nINSERT,1,one\n")
    lake.put("people/a.csv", b"id,name,age\n1,Ann,31\n")
    lake.put("people/b.csv", b"id,name,age\n2,Bob,\n")  # age: empty, read as VARCHAR
    lake.put("people/c.csv", b"id,name,age\n3,Cid,old\n")  # age: really VARCHAR
    r = lake.sync()
    assert r.returncode == 1, r.stderr
    st = lake.status()
    assert (st["a.csv"]["state"], st["b.csv"]["state"], st["c.csv"]["state"]) == (
        "done", "done", "failed"), st
    assert "column 'age'" in st["c.csv"]["reason"]
    types = lake.run_knut("query", "--db", lake.root / "graph.duckdb", "--format", "json",
                          "SELECT column_name, data_type FROM information_schema.columns "
                          "WHERE table_name = 'v_Person' AND column_name = 'age'")
    assert json.loads(types.stdout.splitlines()[0])["data_type"] == "BIGINT"
    assert lake.graph()[0] == [(1, "Ann", 31), (2, "Bob", None)]


def _gdb_remove(lake: Lake, knut, func: str, victim: Path) -> subprocess.CompletedProcess:
    """Runs one round under gdb: at the second call of func (the first file,
    p-base.csv, passes), victim is removed, then the run continues."""
    gdb = shutil.which("gdb")
    if not gdb:
        pytest.skip("gdb is not installed (scripts/setup.sh --test)")
    cmd = [gdb, "-q", "-batch", "-ex", f"break {func}", "-ex", "ignore 1 1", "-ex", "run",
           "-ex", f"shell rm -f '{victim}'", "-ex", "delete", "-ex", "continue",
           "--args", str(knut), "sync", "--once", "--config", str(lake.root / "sync.yml"),
           *map(str, lake.args)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, KNUT_LOG_FORMAT="json"), check=False)
    assert "Breakpoint 1," in r.stdout, r.stdout + r.stderr
    return r


@pytest.mark.parametrize("func", ["knut_sync__file_hash", "knut_sync__stage_file"])
def test_file_vanishing_between_listing_and_reading(knut, run_knut, tmp_path, func):
    """A file removed after the listing (before its hash, or before DuckDB
    reads it) is neither failed nor done: it counts as pending, the other
    files sync, and when it comes back it syncs."""
    lake = Lake(run_knut, tmp_path / "lake")
    lake.put("people/p-base.csv", b"id,name,age\n1,Ann,31\n2,Bob,42\n")
    lake.put("people/p-gone.csv", b"id,name,age\n10,Pam,50\n")
    lake.put("people/p-good.csv", b"id,name,age\n3,Cid,23\n")
    lake.put("items/i-0001.csv", b"_change_type,id,name\nINSERT,1,one\n")
    r = _gdb_remove(lake, knut, func, lake.root / "people" / "p-gone.csv")
    recs = [x for x in logs(r.stderr) if x.get("table") == "people"]
    assert recs and recs[0]["pending_files"] == 1 and recs[0]["failed_files"] == 0, r.stderr
    assert recs[0]["files"] == 2
    st = lake.status()
    assert "p-gone.csv" not in st and st["p-good.csv"]["state"] == "done"
    assert lake.graph()[0] == [(1, "Ann", 31), (2, "Bob", 42), (3, "Cid", 23)]
    lake.put("people/p-gone.csv", b"id,name,age\n10,Pam,50\n")
    r = lake.sync()
    assert r.returncode == 0, r.stderr
    assert lake.graph()[0] == [(1, "Ann", 31), (2, "Bob", 42), (3, "Cid", 23), (10, "Pam", 50)]


def test_header_only_csv_is_a_file_of_no_rows(run_knut, tmp_path):
    """Every column of a header-only CSV reads as VARCHAR; with no rows that
    fits the store's BIGINT key and age: done, 0 rows, nothing changed."""
    lake = Lake(run_knut, tmp_path / "lake")
    base_round(lake)
    lake.put("people/p-none.csv", b"id,name,age\n")
    r = lake.sync()
    assert r.returncode == 0, r.stderr
    st = lake.status()["p-none.csv"]
    assert (st["state"], st["rows"]) == ("done", 0)
    assert lake.graph() == ([(1, "Ann", 31), (2, "Bob", 42)], [(1, "one")])
