"""End-to-end tests of `knut iceberg info|snapshots|cat` on tables written by
pyiceberg (its SQL catalog on SQLite): every snapshot of every table is
read by knut and by pyiceberg itself, and the rows must be equal. Also:
schema evolution (renamed, added, dropped, reordered columns: matched by
field id), partitioned tables, position deletes (pyiceberg reads them
too), equality deletes (pyiceberg cannot read them: compared with the
rows expected), the folder form of TABLE, and bad input (corrupt or
unknown-version metadata, a missing manifest, a truncated Avro file, a
Parquet file without field ids) each failing cleanly with the file named.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from pyiceberg.expressions import EqualTo
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.transforms import IdentityTransform
from pyiceberg.types import LongType

import iceberg_fixtures as F


@pytest.fixture
def cat_rows(knut, tmp_path):
    """cat_rows(*args) -> pyarrow.Table of `knut iceberg cat -f arrow ARGS`."""
    import subprocess

    def run(*args):
        out = tmp_path / "rows.arrows"
        with open(out, "wb") as f:
            r = subprocess.run([str(knut), "iceberg", "cat", "-f", "arrow", *map(str, args)],
                               stdout=f, stderr=subprocess.PIPE, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return ipc.open_stream(out.read_bytes()).read_all()

    return run


def cat_args(tmp_path: Path, name: str = "db.t") -> list[str]:
    return ["-c", tmp_path / "catalog.db", name]


def assert_every_snapshot_matches(cat_rows, tmp_path, tbl, key="id"):
    """Each snapshot read by knut equals pyiceberg's read of it."""
    assert tbl.metadata.snapshots
    for snap in tbl.metadata.snapshots:
        want = tbl.scan(snapshot_id=snap.snapshot_id).to_arrow()
        got = cat_rows("-s", snap.snapshot_id, *cat_args(tmp_path))
        assert got.column_names == want.column_names, snap
        assert F.rows_of(got, key) == F.rows_of(want, key), snap


def test_appends_every_snapshot(cat_rows, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    for lo in (0, 100, 250):
        tbl.append(F.people_rows(lo, lo + 100))
    tbl = cat.load_table("db.t")
    assert len(tbl.metadata.snapshots) == 3
    assert_every_snapshot_matches(cat_rows, tmp_path, tbl)
    # The current snapshot by default; types as declared.
    got = cat_rows(*cat_args(tmp_path))
    assert got.num_rows == 300
    assert got.schema.field("id").type == pa.int64()
    assert got.schema.field("day").type == pa.date32()
    assert got.schema.field("ts").type == pa.timestamp("us")


def test_copy_on_write_delete_and_overwrite(cat_rows, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 50))
    tbl.append(F.people_rows(50, 100))
    tbl.delete(EqualTo("id", 7))                     # rewrites one file: overwrite
    tbl.delete("id >= 50")                           # drops a whole file: delete
    tbl.overwrite(F.people_rows(1000, 1010), overwrite_filter="id < 10")
    tbl = cat.load_table("db.t")
    ops = [s.summary.operation.value for s in tbl.metadata.snapshots]
    assert "delete" in ops and "overwrite" in ops, ops
    assert_every_snapshot_matches(cat_rows, tmp_path, tbl)


def test_schema_evolution_matches_by_field_id(cat_rows, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 20))
    with tbl.update_schema() as u:                   # a rename: the old files keep "name"
        u.rename_column("name", "full_name")
    with tbl.update_schema() as u:
        u.add_column("score", LongType())
    tbl = cat.load_table("db.t")
    extra = F.people_rows(20, 30).rename_columns(["id", "full_name", "amount", "day", "ts"])
    tbl.append(extra.append_column("score", pa.array(range(10), pa.int64())))
    with tbl.update_schema() as u:
        u.delete_column("amount")
    with tbl.update_schema() as u:
        u.move_first("score")
    tbl = cat.load_table("db.t")
    tbl.append(pa.table({
        "score": pa.array([99], pa.int64()), "id": pa.array([500], pa.int64()),
        "full_name": ["late"], "day": pa.array([None], pa.date32()),
        "ts": pa.array([None], pa.timestamp("us"))}))
    tbl = cat.load_table("db.t")
    got = cat_rows(*cat_args(tmp_path))
    assert got.column_names == ["score", "id", "full_name", "day", "ts"]
    old = [r for r in got.to_pylist() if r["id"] == 3][0]
    assert old["full_name"] == "p3" and old["score"] is None
    want = tbl.scan().to_arrow()
    assert F.rows_of(got) == F.rows_of(want)
    # Older snapshots read with the schema they were written under.
    assert_every_snapshot_matches(cat_rows, tmp_path, tbl)


def test_partitioned_table(cat_rows, tmp_path):
    cat = F.catalog(tmp_path)
    spec = PartitionSpec(
        PartitionField(source_id=2, field_id=1000, transform=IdentityTransform(), name="name"),
        PartitionField(source_id=4, field_id=1001, transform=IdentityTransform(), name="day"))
    tbl = cat.create_table("db.t", schema=F.people_schema(), partition_spec=spec)
    rows = F.people_rows(0, 40)
    tbl.append(rows.set_column(1, "name", pa.array(["a" if i % 3 else "b" for i in range(40)])))
    tbl.append(F.people_rows(40, 60).set_column(1, "name", pa.array(["c"] * 20)))
    tbl = cat.load_table("db.t")
    assert len(list(tbl.scan().plan_files())) > 2
    assert_every_snapshot_matches(cat_rows, tmp_path, tbl)


def test_partition_evolution(cat_rows, tmp_path):
    """Files written under older specs (unpartitioned, then by name, then
    by name and day) all read, at every snapshot."""
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 10))
    with tbl.update_spec() as u:
        u.add_identity("name")
    tbl = cat.load_table("db.t")
    tbl.append(F.people_rows(10, 20))
    with tbl.update_spec() as u:
        u.add_identity("day")
    tbl = cat.load_table("db.t")
    tbl.append(F.people_rows(20, 30))
    tbl = cat.load_table("db.t")
    assert len(tbl.metadata.partition_specs) == 3
    assert_every_snapshot_matches(cat_rows, tmp_path, tbl)


def test_position_deletes_match_pyiceberg(cat_rows, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 30))
    tbl.append(F.people_rows(30, 60))
    tbl = cat.load_table("db.t")
    files = sorted(t.file.file_path for t in tbl.scan().plan_files())
    tbl = F.add_position_deletes(tbl, {files[0]: [0, 5, 29], files[1]: [3]})
    want = tbl.scan().to_arrow()
    assert want.num_rows == 56
    assert_every_snapshot_matches(cat_rows, tmp_path, tbl)
    # A later append is not touched by the earlier deletes (sequence numbers).
    tbl.append(F.people_rows(60, 70))
    tbl = cat.load_table("db.t")
    assert cat_rows(*cat_args(tmp_path)).num_rows == 66
    assert_every_snapshot_matches(cat_rows, tmp_path, tbl)


def test_equality_deletes_apply_to_older_rows_only(cat_rows, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 20))
    tbl = F.add_equality_deletes(tbl, [1], pa.table({"id": pa.array([2, 4, 99], pa.int64())}))
    # Re-inserted after the delete: a higher sequence number, so it stays.
    tbl.append(F.people_rows(4, 5))
    tbl = cat.load_table("db.t")
    got = cat_rows(*cat_args(tmp_path))
    ids = sorted(r["id"] for r in got.to_pylist())
    assert ids == sorted([i for i in range(20) if i not in (2, 4)] + [4])
    # Two key columns, NULL equal to NULL (id 7's name is NULL).
    tbl = F.add_equality_deletes(tbl, [1, 2], pa.table({
        "id": pa.array([7, 8], pa.int64()), "name": pa.array([None, "nope"], pa.string())}))
    ids = sorted(r["id"] for r in cat_rows(*cat_args(tmp_path)).to_pylist())
    assert 7 not in ids and 8 in ids


def test_info_and_snapshots(run_knut, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema(), properties={"owner": "team-a"})
    tbl.append(F.people_rows(0, 10))
    tbl.append(F.people_rows(10, 15))
    tbl = cat.load_table("db.t")
    r = run_knut("iceberg", "info", "-f", "json", *cat_args(tmp_path))
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["format_version"] == 2
    assert info["uuid"] == str(tbl.metadata.table_uuid)
    assert info["current_snapshot_id"] == tbl.metadata.current_snapshot_id
    assert [(f["id"], f["name"], f["type"]) for f in info["fields"]] == [
        (1, "id", "long"), (2, "name", "string"), (3, "amount", "double"), (4, "day", "date"),
        (5, "ts", "timestamp")]
    assert info["properties"]["owner"] == "team-a"
    r = run_knut("iceberg", "snapshots", "-f", "json", *cat_args(tmp_path))
    assert r.returncode == 0, r.stderr
    snaps = [json.loads(line) for line in r.stdout.splitlines()]
    want = sorted(tbl.metadata.snapshots, key=lambda s: s.sequence_number)
    assert [s["snapshot_id"] for s in snaps] == [s.snapshot_id for s in want]
    assert [s["parent_id"] for s in snaps] == [s.parent_snapshot_id for s in want]
    assert snaps[-1]["current"] and snaps[-1]["summary"]["added-records"] == "5"
    r = run_knut("iceberg", "snapshots", *cat_args(tmp_path))
    assert r.returncode == 0 and str(want[-1].snapshot_id) in r.stdout
    r = run_knut("iceberg", "info", *cat_args(tmp_path))
    assert r.returncode == 0 and "timestamp" in r.stdout and "team-a" in r.stdout


def test_v1_metadata_without_uuid(run_knut, cat_rows, tmp_path):
    """table-uuid is optional in format v1: info prints none / null."""
    tbl = _table(tmp_path)
    doc = json.loads(Path(tbl.metadata_location.removeprefix("file://")).read_text())
    doc["format-version"] = 1
    del doc["table-uuid"]
    meta = tmp_path / "v1.metadata.json"
    meta.write_text(json.dumps(doc))
    r = run_knut("iceberg", "info", "-f", "json", meta)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["format_version"] == 1 and info["uuid"] is None
    r = run_knut("iceberg", "info", meta)
    assert r.returncode == 0 and "uuid none" in r.stdout, r.stderr
    assert cat_rows(meta).num_rows == 10


def test_table_folder_and_metadata_file(cat_rows, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 10))
    tbl.append(F.people_rows(10, 12))
    tbl = cat.load_table("db.t")
    folder = tbl.metadata.location.removeprefix("file://")
    assert cat_rows(folder).num_rows == 12              # pyiceberg's NNNNN-uuid names
    assert cat_rows(tbl.metadata_location.removeprefix("file://")).num_rows == 12
    # The filesystem (Hadoop) layout: v<N>.metadata.json and version-hint.text.
    meta = Path(folder) / "metadata"
    shutil.copy(tbl.metadata_location.removeprefix("file://"), meta / "v7.metadata.json")
    (meta / "version-hint.text").write_text("7\n")
    assert cat_rows(folder).num_rows == 12


def test_empty_table(cat_rows, run_knut, tmp_path):
    cat = F.catalog(tmp_path)
    cat.create_table("db.t", schema=F.people_schema())
    got = cat_rows(*cat_args(tmp_path))
    assert got.num_rows == 0 and got.column_names == ["id", "name", "amount", "day", "ts"]
    r = run_knut("iceberg", "snapshots", *cat_args(tmp_path))
    assert r.returncode == 0


def _table(tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 10))
    return cat.load_table("db.t")


def _fails(run_knut, tmp_path, *names):
    r = run_knut("iceberg", "cat", *cat_args(tmp_path))
    assert r.returncode == 1, r
    assert "Traceback" not in r.stderr and "Sanitizer" not in r.stderr
    for n in names:
        assert str(n) in r.stderr, r.stderr
    return r.stderr


def test_corrupt_metadata(run_knut, tmp_path):
    tbl = _table(tmp_path)
    meta = Path(tbl.metadata_location.removeprefix("file://"))
    text = meta.read_text()
    meta.write_text(text[: len(text) // 2])
    _fails(run_knut, tmp_path, meta.name)


def test_unknown_format_version(run_knut, tmp_path):
    tbl = _table(tmp_path)
    meta = Path(tbl.metadata_location.removeprefix("file://"))
    doc = json.loads(meta.read_text())
    doc["format-version"] = 3
    meta.write_text(json.dumps(doc))
    err = _fails(run_knut, tmp_path, meta.name)
    assert "3" in err


def test_missing_manifest(run_knut, tmp_path):
    tbl = _table(tmp_path)
    manifests = tbl.current_snapshot().manifests(tbl.io)
    path = Path(manifests[0].manifest_path.removeprefix("file://"))
    path.unlink()
    _fails(run_knut, tmp_path, path.name)


def test_truncated_manifest_list(run_knut, tmp_path):
    tbl = _table(tmp_path)
    path = Path(tbl.current_snapshot().manifest_list.removeprefix("file://"))
    data = path.read_bytes()
    for cut in (3, 40, len(data) // 2, len(data) - 1):
        path.write_bytes(data[:cut])
        _fails(run_knut, tmp_path, path.name)


def test_parquet_without_field_ids_is_refused(run_knut, tmp_path):
    """add_files registers a file without field ids (pyiceberg maps it by a
    name mapping); knut does not apply name mappings yet and must say so,
    not print NULLs."""
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    plain = tmp_path / "plain.parquet"
    pq.write_table(F.people_rows(0, 5), plain)
    tbl.add_files([str(plain)])
    err = _fails(run_knut, tmp_path, "plain.parquet")
    assert "field id" in err


def test_usage(run_knut, tmp_path):
    r = run_knut("iceberg", "cat", "--help")
    assert r.returncode == 0 and "--snapshot" in r.stdout
    r = run_knut("iceberg", "nope")
    assert r.returncode == 2
    r = run_knut("iceberg", "cat", str(tmp_path / "absent"))
    assert r.returncode == 1 and "absent" in r.stderr
    F.catalog(tmp_path)
    r = run_knut("iceberg", "cat", "-c", tmp_path / "catalog.db", "db.missing")
    assert r.returncode == 1 and "db.missing" in r.stderr


# ---- changelogs ---------------------------------------------------------------


@pytest.fixture
def changes(knut, tmp_path):
    """changes(*args) -> rows of `knut iceberg changes -f arrow ARGS`."""
    import subprocess

    def run(*args):
        out = tmp_path / "changes.arrows"
        with open(out, "wb") as f:
            r = subprocess.run([str(knut), "iceberg", "changes", "-f", "arrow",
                                *map(str, args)],
                               stdout=f, stderr=subprocess.PIPE, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        return ipc.open_stream(out.read_bytes()).read_all()

    return run


def _multiset_diff(a: list[dict], b: list[dict]) -> list[tuple]:
    from collections import Counter
    key = lambda r: tuple(sorted(r.items()))  # noqa: E731
    d = Counter(map(key, a)) - Counter(map(key, b))
    return sorted(d.elements())


def test_changes_between_consecutive_snapshots_match_pyiceberg_reads(changes, tmp_path):
    """For every pair (parent, child): DELETEs are the rows of the parent
    that are gone in the child, INSERTs the new ones, with duplicates —
    both sides read by pyiceberg. The commits cover appends, copy-on-write
    deletes and overwrites (pyiceberg's) and position deletes."""
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 40))
    tbl.append(F.people_rows(30, 50))                     # duplicates of 30..39
    tbl.delete(EqualTo("id", 5))
    tbl.overwrite(F.people_rows(100, 103), overwrite_filter="id < 3")
    tbl = cat.load_table("db.t")
    files = sorted(t.file.file_path for t in tbl.scan().plan_files())
    tbl = F.add_position_deletes(tbl, {files[0]: [1, 2]})
    snaps = sorted(tbl.metadata.snapshots, key=lambda s: s.sequence_number)
    assert len(snaps) >= 6
    cols = [f.name for f in tbl.schema().fields]
    for parent, child in zip(snaps, snaps[1:]):
        before = tbl.scan(snapshot_id=parent.snapshot_id).to_arrow().to_pylist()
        after = tbl.scan(snapshot_id=child.snapshot_id).to_arrow().to_pylist()
        got = changes("--from", parent.snapshot_id, "--to", child.snapshot_id,
                      *cat_args(tmp_path)).to_pylist()
        assert {r["_commit_snapshot_id"] for r in got} <= {child.snapshot_id}
        dels = [{c: r[c] for c in cols} for r in got if r["_change_type"] == "DELETE"]
        ins = [{c: r[c] for c in cols} for r in got if r["_change_type"] == "INSERT"]
        assert _multiset_diff(dels, []) == _multiset_diff(before, after), child.summary
        assert _multiset_diff(ins, []) == _multiset_diff(after, before), child.summary


def test_changes_over_a_window_and_from_the_start(changes, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 10))
    tbl.append(F.people_rows(10, 15))
    tbl.delete(EqualTo("id", 12))
    tbl = cat.load_table("db.t")
    snaps = sorted(tbl.metadata.snapshots, key=lambda s: s.sequence_number)
    got = changes("--from", snaps[0].snapshot_id, *cat_args(tmp_path)).to_pylist()
    kinds = [(r["_change_ordinal"], r["_change_type"]) for r in got]
    assert kinds == sorted(kinds)                       # commit order, DELETE first
    assert sorted(r["id"] for r in got if r["_change_type"] == "INSERT") == list(range(10, 15))
    assert [r["id"] for r in got if r["_change_type"] == "DELETE"] == [12]
    # Without --from: the whole table as INSERTs, one commit.
    got = changes(*cat_args(tmp_path)).to_pylist()
    assert sorted(r["id"] for r in got) == [i for i in range(15) if i != 12]
    assert {(r["_change_type"], r["_change_ordinal"]) for r in got} == {("INSERT", 0)}
    # Nothing after the current snapshot.
    assert changes("--from", snaps[-1].snapshot_id, *cat_args(tmp_path)).num_rows == 0


def test_changes_from_a_snapshot_off_the_lineage_asks_for_a_resync(run_knut, tmp_path):
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 10))
    tbl.append(F.people_rows(10, 20))
    tbl = cat.load_table("db.t")
    snaps = sorted(tbl.metadata.snapshots, key=lambda s: s.sequence_number)
    # From the newer to the older: not an ancestor.
    r = run_knut("iceberg", "changes", "--from", snaps[1].snapshot_id, "--to",
                 snaps[0].snapshot_id, *cat_args(tmp_path))
    assert r.returncode == 1 and "full resync" in r.stderr, r.stderr
    r = run_knut("iceberg", "changes", "--from", "12345", *cat_args(tmp_path))
    assert r.returncode == 1 and "full resync" in r.stderr, r.stderr


def test_changes_of_equality_deletes(changes, tmp_path):
    """An equality delete commit's changelog is the rows it removed (only
    older ones: the re-insert after it stays), once each."""
    cat = F.catalog(tmp_path)
    tbl = cat.create_table("db.t", schema=F.people_schema())
    tbl.append(F.people_rows(0, 20))
    tbl.append(F.people_rows(3, 4))                     # id 3 twice
    tbl = cat.load_table("db.t")
    before = tbl.metadata.current_snapshot_id
    big = [t.file.file_path for t in tbl.scan().plan_files() if t.file.record_count == 20]
    tbl = F.add_position_deletes(tbl, {big[0]: [0]})    # id 0
    mid = tbl.metadata.current_snapshot_id
    tbl = F.add_equality_deletes(tbl, [1], pa.table({"id": pa.array([3, 5, 99], pa.int64())}))
    got = changes("--from", mid, *cat_args(tmp_path)).to_pylist()
    assert sorted(r["id"] for r in got) == [3, 3, 5]
    assert {r["_change_type"] for r in got} == {"DELETE"}
    got = changes("--from", before, *cat_args(tmp_path)).to_pylist()
    assert [r["_change_ordinal"] for r in got] == sorted(r["_change_ordinal"] for r in got)
    assert [r["id"] for r in got if r["_change_ordinal"] == 0] == [0]
