"""Iceberg tables written by someone else: pyiceberg's SQL catalog on
SQLite. Each helper builds a table in a temporary folder and returns it
with the catalog, so a test can compare what `knut iceberg cat` prints with
what pyiceberg itself reads (`scan(snapshot_id=...).to_arrow()`).

Delete files pyiceberg cannot write (it is copy-on-write only) are built
by hand here: the delete Parquet file by pyarrow with the reserved field
ids, the delete manifest and manifest list by pyiceberg's own Avro
writers, and the snapshot committed through pyiceberg's table updates.
"""

from __future__ import annotations

import datetime as dt
import uuid
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.manifest import ManifestContent, ManifestWriterV2
from pyiceberg.schema import Schema
from pyiceberg.types import (DateType, DoubleType, LongType, NestedField, StringType,
                             TimestampType)

CATALOG_NAME = "default"


def catalog(tmp: Path) -> SqlCatalog:
    wh = tmp / "wh"
    wh.mkdir(parents=True, exist_ok=True)
    cat = SqlCatalog(CATALOG_NAME, uri=f"sqlite:///{tmp}/catalog.db", warehouse=f"file://{wh}")
    cat.create_namespace("db")
    return cat


def people_schema() -> Schema:
    return Schema(
        NestedField(1, "id", LongType(), required=False),
        NestedField(2, "name", StringType(), required=False),
        NestedField(3, "amount", DoubleType(), required=False),
        NestedField(4, "day", DateType(), required=False),
        NestedField(5, "ts", TimestampType(), required=False),
    )


def people_rows(lo: int, hi: int) -> pa.Table:
    ids = list(range(lo, hi))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": pa.array([None if i % 7 == 0 else f"p{i}" for i in ids], pa.string()),
        "amount": pa.array([i * 1.5 for i in ids], pa.float64()),
        "day": pa.array([dt.date(2026, 1, 1) + dt.timedelta(days=i % 30) for i in ids],
                        pa.date32()),
        "ts": pa.array([dt.datetime(2026, 1, 1, 12, 0, 0) + dt.timedelta(seconds=i)
                        for i in ids], pa.timestamp("us")),
    })


def rows_of(table: pa.Table, key: str = "id") -> list[dict]:
    """Rows as dicts sorted by key: the order-free comparison form."""
    return sorted(table.to_pylist(), key=lambda r: (r[key] is None, r[key]))


def add_position_deletes(tbl, deletes: dict[str, list[int]]):
    """Commits a `delete` snapshot with one position delete file removing
    rows (data file path -> positions); returns the reloaded table."""
    from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestEntry,
                                    ManifestEntryStatus, write_manifest)
    from pyiceberg.table.snapshots import Operation, Summary
    pairs = sorted((p, pos) for p, poss in deletes.items() for pos in poss)
    schema = pa.schema([
        pa.field("file_path", pa.string(), nullable=False,
                 metadata={b"PARQUET:field_id": b"2147483546"}),
        pa.field("pos", pa.int64(), nullable=False,
                 metadata={b"PARQUET:field_id": b"2147483545"}),
    ])
    data = pa.table({"file_path": [p for p, _ in pairs], "pos": [x for _, x in pairs]},
                    schema=schema)
    loc = tbl.metadata.location.removeprefix("file://")
    path = f"{loc}/data/{uuid.uuid4()}-deletes.parquet"
    pq.write_table(data, path)
    df = DataFile.from_args(
        content=DataFileContent.POSITION_DELETES, file_path=f"file://{path}",
        file_format=FileFormat.PARQUET, partition={}, record_count=len(pairs),
        file_size_in_bytes=Path(path).stat().st_size)
    df.spec_id = 0
    return _commit_deletes(tbl, [df], Operation.DELETE, ManifestEntry, ManifestEntryStatus,
                           write_manifest, Summary)


def add_equality_deletes(tbl, field_ids: list[int], rows: pa.Table):
    """Commits a `delete` snapshot with one equality delete file (its columns
    carry the table's field ids); returns the reloaded table."""
    from pyiceberg.manifest import (DataFile, DataFileContent, FileFormat, ManifestEntry,
                                    ManifestEntryStatus, write_manifest)
    from pyiceberg.table.snapshots import Operation, Summary
    fields = []
    for fid, col in zip(field_ids, rows.schema):
        fields.append(col.with_metadata({b"PARQUET:field_id": str(fid).encode()}))
    data = rows.cast(pa.schema(fields))
    loc = tbl.metadata.location.removeprefix("file://")
    path = f"{loc}/data/{uuid.uuid4()}-eq-deletes.parquet"
    pq.write_table(data, path)
    df = DataFile.from_args(
        content=DataFileContent.EQUALITY_DELETES, file_path=f"file://{path}",
        file_format=FileFormat.PARQUET, partition={}, record_count=len(rows),
        file_size_in_bytes=Path(path).stat().st_size, equality_ids=field_ids)
    df.spec_id = 0
    return _commit_deletes(tbl, [df], Operation.DELETE, ManifestEntry, ManifestEntryStatus,
                           write_manifest, Summary)


class _DeleteManifestWriter(ManifestWriterV2):
    """pyiceberg's v2 manifest writer, for a delete manifest (content 1)."""

    def content(self) -> ManifestContent:
        return ManifestContent.DELETES

    @property
    def _meta(self) -> dict[str, str]:
        return {**super()._meta, "content": "deletes"}


def _commit_deletes(tbl, files, op, ManifestEntry, ManifestEntryStatus, write_manifest,
                    Summary):
    from pyiceberg.manifest import write_manifest_list
    from pyiceberg.table.refs import SnapshotRefType
    from pyiceberg.table.snapshots import Snapshot
    from pyiceberg.table.update import (AddSnapshotUpdate, AssertRefSnapshotId,
                                        SetSnapshotRefUpdate)
    meta = tbl.metadata
    parent = meta.current_snapshot()
    seq = meta.last_sequence_number + 1
    snap_id = uuid.uuid4().int & ((1 << 63) - 1)
    loc = meta.location.removeprefix("file://")
    io = tbl.io
    man_path = f"{loc}/metadata/{uuid.uuid4()}-m0.avro"
    with _DeleteManifestWriter(meta.spec(), meta.schema(), io.new_output(man_path), snap_id,
                               "deflate") as w:
        for f in files:
            w.add(ManifestEntry.from_args(status=ManifestEntryStatus.ADDED,
                                          snapshot_id=snap_id, data_file=f))
    manifest = w.to_manifest_file()
    list_path = f"{loc}/metadata/snap-{snap_id}-0-{uuid.uuid4()}.avro"
    with write_manifest_list(format_version=meta.format_version,
                             output_file=io.new_output(list_path), snapshot_id=snap_id,
                             parent_snapshot_id=parent.snapshot_id, sequence_number=seq,
                             avro_compression="deflate") as lw:
        lw.add_manifests([manifest] + parent.manifests(io))
    snap = Snapshot(snapshot_id=snap_id, parent_snapshot_id=parent.snapshot_id,
                    sequence_number=seq, timestamp_ms=int(dt.datetime.now().timestamp() * 1000),
                    manifest_list=f"file://{list_path}", summary=Summary(operation=op),
                    schema_id=meta.current_schema_id)
    tbl.catalog.commit_table(tbl, requirements=(
        AssertRefSnapshotId(ref="main", snapshot_id=parent.snapshot_id),), updates=(
        AddSnapshotUpdate(snapshot=snap),
        SetSnapshotRefUpdate(ref_name="main", type=SnapshotRefType.BRANCH,
                             snapshot_id=snap_id)))
    return tbl.catalog.load_table(tbl.name())
