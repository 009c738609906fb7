"""Iceberg tables written by Apache Spark, read by knut (spark_peer.py's
SparkIceberg: Spark 4.1 with Iceberg's Spark runtime 1.12 and a Hadoop
catalog on disk).

Spark writes every kind of commit it makes: appends, copy-on-write updates
and deletes, merge-on-read updates and deletes (position delete files), a
partitioned table, added and renamed columns. For every snapshot, `knut
iceberg cat --snapshot` gives exactly Spark's `VERSION AS OF` rows; for
every pair of consecutive copy-on-write snapshots `knut iceberg changes`
gives exactly Spark's own changelog view (`create_changelog_view`; Spark
refuses it across delete files, so merge-on-read commits are checked
against the difference of Spark's reads of the two snapshots); a format
v3 table (deletion vectors) is refused with a clear error; and `knut sync`
follows a Spark-written Iceberg table by its folder.
"""
from __future__ import annotations

import json
import subprocess
import uuid
from collections import Counter
from pathlib import Path

import pytest

from spark_peer import spark_iceberg  # noqa: F401  (the session fixture)


class Spark:
    """knut spark sql in one Spark session (a temp view lives in it)."""

    def __init__(self, knut: Path, peer):
        self.knut, self.peer = knut, peer
        self.url = f"{peer.url};session_id={uuid.uuid4()}"

    def sql(self, q: str) -> list[dict]:
        r = subprocess.run([str(self.knut), "spark", "sql", "--connect", self.url, "--token-file",
                            str(self.peer.token_file), "--allow-insecure-token", "-f", "json", q],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, (q, r.stderr)
        return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def knut_json(knut: Path, *args) -> list[dict]:
    r = subprocess.run([str(knut), "iceberg", *map(str, args), "-f", "json"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, (args, r.stderr)
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def bag(rows, drop=()) -> Counter:
    return Counter(tuple(sorted((k, v) for k, v in r.items() if k not in drop)) for r in rows)


def snapshots(spark: Spark, table: str) -> list[tuple[int, str]]:
    return [(r["snapshot_id"], r["operation"]) for r in
            spark.sql(f"SELECT snapshot_id, operation FROM {table}.snapshots ORDER BY committed_at")]


@pytest.fixture
def spark(knut, spark_iceberg):
    return Spark(knut, spark_iceberg)


def made(spark: Spark, spark_iceberg, cols: str, props: str = "", part: str = ""):
    ns = "n" + uuid.uuid4().hex[:10]
    spark.sql(f"CREATE NAMESPACE ice.{ns}")
    spark.sql(f"CREATE TABLE ice.{ns}.t ({cols}) USING iceberg {part} "
              f"TBLPROPERTIES ('format-version'='2'{props})")
    return f"ice.{ns}.t", spark_iceberg.warehouse / ns / "t"


def check_every_snapshot(knut, spark: Spark, table: str, folder: Path):
    snaps = snapshots(spark, table)
    for sid, op in snaps:
        want = spark.sql(f"SELECT * FROM {table} VERSION AS OF {sid}")
        got = knut_json(knut, "cat", folder, "--snapshot", sid)
        assert bag(got) == bag(want), (sid, op)
    return snaps


def test_every_kind_of_spark_commit_reads_exactly(knut, spark, spark_iceberg):
    table, folder = made(spark, spark_iceberg, "id BIGINT, name STRING, score DOUBLE")
    rows = ", ".join(f"({i}, {'NULL' if i % 7 == 0 else repr('n%d' % i)}, {i * 1.5})"
                     for i in range(200))
    spark.sql(f"INSERT INTO {table} VALUES {rows}")
    spark.sql(f"INSERT INTO {table} VALUES (500, 'x', 0.5), (501, 'y', NULL)")
    spark.sql(f"UPDATE {table} SET name = 'upd' WHERE id % 10 = 3")  # copy-on-write
    spark.sql(f"DELETE FROM {table} WHERE id BETWEEN 20 AND 29")
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
              "'write.update.mode'='merge-on-read', 'write.merge.mode'='merge-on-read')")
    spark.sql(f"DELETE FROM {table} WHERE id % 10 = 5")  # position delete files
    spark.sql(f"UPDATE {table} SET score = -1 WHERE id < 15")
    spark.sql(f"MERGE INTO {table} t USING (SELECT 7 AS id, 'm' AS name, 7.0 AS score UNION ALL "
              "SELECT 900, 'new', 9.0) s ON t.id = s.id WHEN MATCHED THEN UPDATE SET * "
              "WHEN NOT MATCHED THEN INSERT *")
    snaps = check_every_snapshot(knut, spark, table, folder)
    assert [op for _, op in snaps] == ["append", "append", "overwrite", "overwrite", "delete",
                                       "overwrite", "overwrite"], snaps
    deletes = list(folder.rglob("*-deletes.parquet")) + [
        p for p in (folder / "data").rglob("*.parquet") if "delete" in p.name]
    assert deletes, "Spark wrote no delete file: merge-on-read was not exercised"


def test_schema_evolution_and_partitions(knut, spark, spark_iceberg):
    table, folder = made(spark, spark_iceberg, "id BIGINT, name STRING, region STRING",
                         part="PARTITIONED BY (region)")
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a', 'eu'), (2, 'b', 'us'), (3, 'c', 'eu')")
    spark.sql(f"ALTER TABLE {table} ADD COLUMN score BIGINT")
    spark.sql(f"INSERT INTO {table} VALUES (4, 'd', 'us', 40)")
    spark.sql(f"ALTER TABLE {table} RENAME COLUMN name TO nick")
    spark.sql(f"INSERT INTO {table} VALUES (5, 'e', 'ap', 50)")
    spark.sql(f"ALTER TABLE {table} DROP COLUMN score")
    spark.sql(f"INSERT INTO {table} VALUES (6, 'f', 'eu')")
    spark.sql(f"DELETE FROM {table} WHERE region = 'us'")  # a whole partition
    want = spark.sql(f"SELECT * FROM {table}")
    got = knut_json(knut, "cat", folder)
    assert bag(got) == bag(want)
    assert set(got[0]) == {"id", "nick", "region"}  # the current schema's names
    check_every_snapshot(knut, spark, table, folder)


def test_changelog_matches_sparks_changelog_view(knut, spark, spark_iceberg):
    """Copy-on-write commits: knut's changelog between each pair of
    consecutive snapshots is Spark's create_changelog_view, row for row;
    across merge-on-read commits (Spark refuses its view there) it is the
    difference of the two snapshots as Spark reads them."""
    table, folder = made(spark, spark_iceberg, "id BIGINT, name STRING")
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    spark.sql(f"INSERT INTO {table} VALUES (5, 'e')")
    spark.sql(f"UPDATE {table} SET name = 'B' WHERE id = 2")
    spark.sql(f"DELETE FROM {table} WHERE id IN (3, 5)")
    spark.sql(f"INSERT OVERWRITE {table} SELECT id, upper(name) FROM {table} WHERE id < 4")
    cow = snapshots(spark, table)
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read', "
              "'write.update.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO {table} VALUES (8, 'h'), (9, 'i')")
    spark.sql(f"DELETE FROM {table} WHERE id = 8")
    spark.sql(f"UPDATE {table} SET name = 'Z' WHERE id = 1")
    snaps = snapshots(spark, table)
    meta = ("_change_ordinal", "_commit_snapshot_id")
    for (a, _), (b, op) in zip(snaps, snaps[1:]):
        got = knut_json(knut, "changes", folder, "--from", a, "--to", b)
        if (b, op) in cow:
            view = f"cl_{b}"
            spark.sql(f"CALL ice.system.create_changelog_view(table => '{table[4:]}', "
                      f"changelog_view => '{view}', options => map('start-snapshot-id', '{a}', "
                      f"'end-snapshot-id', '{b}'))")
            want = spark.sql(f"SELECT * FROM {view}")
        else:
            old = bag(spark.sql(f"SELECT * FROM {table} VERSION AS OF {a}"))
            new = bag(spark.sql(f"SELECT * FROM {table} VERSION AS OF {b}"))
            want = [dict(r, _change_type="DELETE") for r in (old - new).elements()] + \
                   [dict(r, _change_type="INSERT") for r in (new - old).elements()]
        assert bag(got, meta) == bag(want, meta), (a, b, op)
        assert {r["_commit_snapshot_id"] for r in got} <= {b}


def test_format_v3_deletion_vectors_refused_clearly(knut, spark, spark_iceberg):
    ns = "n" + uuid.uuid4().hex[:10]
    spark.sql(f"CREATE NAMESPACE ice.{ns}")
    spark.sql(f"CREATE TABLE ice.{ns}.t (id BIGINT) USING iceberg TBLPROPERTIES "
              "('format-version'='3', 'write.delete.mode'='merge-on-read')")
    spark.sql(f"INSERT INTO ice.{ns}.t VALUES (1), (2), (3)")
    spark.sql(f"DELETE FROM ice.{ns}.t WHERE id = 2")  # a deletion vector (Puffin)
    folder = spark_iceberg.warehouse / ns / "t"
    r = subprocess.run([str(knut), "iceberg", "cat", str(folder)], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0 and "format version 3" in r.stderr and "metadata" in r.stderr, \
        r.stderr


class SyncLake:
    """A sync folder whose one table `people` follows `table` (source: the
    YAML of its `iceberg:` or `spark:` key), into the embedded store."""

    def __init__(self, knut: Path, spark: Spark, table: str, root: Path):
        self.knut, self.spark, self.table, self.root = knut, spark, table, root
        (root / "tmp").mkdir(parents=True)

    def config(self, source: str):
        (self.root / "sync.yml").write_text(
            f"store: graph.duckdb\ntables:\n  people:\n    {source}\n"
            "    vertices:\n      - labels: [Person]\n        keys: [id]\n"
            "        properties: [name]\n")

    def spark_source(self, peer, **more) -> str:
        return "spark: " + json.dumps({"table": self.table, "connect": peer.url,
                                        "token_file": str(peer.token_file),
                                        "allow_insecure_token": True, **more})

    def q(self, sql: str) -> list[dict]:
        r = subprocess.run([str(self.knut), "query", "--db", str(self.root / "graph.duckdb"),
                            "-f", "json", sql], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return [json.loads(x) for x in r.stdout.splitlines()]

    def sync(self, ok=True):
        r = subprocess.run([str(self.knut), "sync", "--once", "--config",
                            str(self.root / "sync.yml")], capture_output=True, text=True,
                           timeout=300, env={"TMPDIR": str(self.root / "tmp"),
                                             "PATH": "/usr/bin:/bin", "KNUT_LOG_FORMAT": "json"})
        assert (r.returncode == 0) == ok, r.stderr
        return r

    def compare(self):
        """The graph equals the table; the ledger entry (returned) is the table's."""
        got = sorted((x["id"], x["name"]) for x in self.q("SELECT id, name FROM v_Person"))
        want = self.spark.sql(f"SELECT id, name FROM {self.table}")
        assert got == sorted((x["id"], x["name"]) for x in want)
        assert not list((self.root / "tmp").iterdir()), "the changes file was left behind"
        return self.q("SELECT path, hash, reason FROM _knut_sync_ledger")[0]

    def current(self) -> int:
        return self.spark.sql(f"SELECT snapshot_id FROM {self.table}.refs "
                              "WHERE name = 'main'")[0]["snapshot_id"]


def test_sync_follows_a_spark_written_table(knut, spark, spark_iceberg, tmp_path):
    table, folder = made(spark, spark_iceberg, "id BIGINT, name STRING")
    lake = SyncLake(knut, spark, table, tmp_path / "lake")
    lake.config(f"iceberg: {{path: {folder}}}")
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    lake.sync()
    lake.compare()
    spark.sql(f"UPDATE {table} SET name = 'B' WHERE id = 2")
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    spark.sql(f"DELETE FROM {table} WHERE id = 3")
    spark.sql(f"INSERT INTO {table} VALUES (4, 'd')")
    lake.sync()
    assert lake.compare()["hash"] == format(lake.current(), "016x")


def test_sync_spark_source_reads_an_iceberg_table_through_spark(knut, spark, spark_iceberg,
                                                                 tmp_path):
    """`spark: {table: ice.ns.t}`: the sync's Spark source over an Iceberg
    table in Spark's catalog (compared with its last synced state)."""
    table, _ = made(spark, spark_iceberg, "id BIGINT, name STRING")
    lake = SyncLake(knut, spark, table, tmp_path / "lake")
    lake.config(lake.spark_source(spark_iceberg))
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    lake.sync()
    lake.compare()
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    spark.sql(f"UPDATE {table} SET name = 'B' WHERE id = 2")
    spark.sql(f"DELETE FROM {table} WHERE id = 3")
    lake.sync()
    assert len(lake.compare()["hash"]) == 48  # a fingerprint


def test_spark_reads_what_knut_writes(knut, spark, spark_iceberg):
    """`knut export --iceberg` into a folder of Spark's Hadoop catalog:
    a table knut creates, then Spark appends, then knut appends again;
    Spark reads every snapshot row for row."""
    ns = "n" + uuid.uuid4().hex[:10]
    spark.sql(f"CREATE NAMESPACE ice.{ns}")
    folder = spark_iceberg.warehouse / ns / "t"

    def export(sql):
        r = subprocess.run([str(knut), "export", "--iceberg", str(folder), sql],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr

    export("SELECT i::BIGINT AS id, 'k' || i AS name, i * 0.5 AS score, "
           "DATE '2026-01-01' + i::INT AS day FROM range(1000) t(i)")
    table = f"ice.{ns}.t"
    assert spark.sql(f"SELECT count(*) AS n, sum(id) AS s FROM {table}") == \
        [{"n": 1000, "s": sum(range(1000))}]
    spark.sql(f"INSERT INTO {table} VALUES (5000, 'spark', 1.5, DATE '2026-12-04')")
    export("SELECT 6000::BIGINT AS id, 'knut' AS name, 2.5 AS score, DATE '2026-12-05' AS day")
    rows = spark.sql(f"SELECT id, name, score, CAST(day AS STRING) AS day FROM {table} "
                     "WHERE id >= 5000 ORDER BY id")
    assert rows == [{"id": 5000, "name": "spark", "score": 1.5, "day": "2026-12-04"},
                    {"id": 6000, "name": "knut", "score": 2.5, "day": "2026-12-05"}]
    assert [op for _, op in snapshots(spark, table)] == ["append"] * 3
    check_every_snapshot(knut, spark, table, folder)


def test_sync_spark_changelog_mode(knut, spark, spark_iceberg, tmp_path):
    """`spark: {changes: changelog}`: Iceberg's changelog view through Spark,
    the ledger naming the snapshot; a rollback breaks the lineage: a full
    resync; a merge-on-read commit (delete files, which Spark's changelog
    scan refuses) fails the table with a hint, and `changes: compare` then
    takes over with a full resync."""
    table, _ = made(spark, spark_iceberg, "id BIGINT, name STRING")
    lake = SyncLake(knut, spark, table, tmp_path / "lake")
    lake.config(lake.spark_source(spark_iceberg, changes="changelog"))
    snap_hash = lambda: format(lake.current(), "016x")  # noqa: E731
    spark.sql(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b'), (3, 'c'), (4, 'd')")
    lake.sync()
    assert lake.compare()["hash"] == snap_hash()
    keep = lake.current()
    spark.sql(f"UPDATE {table} SET name = 'B' WHERE id = 2")  # copy-on-write
    spark.sql(f"DELETE FROM {table} WHERE id = 3")
    spark.sql(f"INSERT INTO {table} VALUES (5, 'e')")
    r = lake.sync()
    assert lake.compare()["hash"] == snap_hash() and "resynced whole" not in r.stderr
    # roll back past the synced snapshot: the lineage breaks
    spark.sql(f"CALL ice.system.rollback_to_snapshot('{table[4:]}', {keep})")
    spark.sql(f"INSERT INTO {table} VALUES (9, 'i')")
    r = lake.sync()
    e = lake.compare()
    assert e["hash"] == snap_hash()
    assert "resynced whole" in r.stderr and "not an ancestor" in e["reason"], r.stderr
    # merge-on-read: Spark's changelog scan refuses delete files
    spark.sql(f"ALTER TABLE {table} SET TBLPROPERTIES ('write.delete.mode'='merge-on-read')")
    spark.sql(f"DELETE FROM {table} WHERE id = 1")
    before = lake.q("SELECT hash FROM _knut_sync_ledger")
    r = lake.sync(ok=False)
    assert "changes: compare" in r.stderr and "Delete files" in r.stderr, r.stderr
    assert lake.q("SELECT hash FROM _knut_sync_ledger") == before
    lake.config(lake.spark_source(spark_iceberg, changes="compare"))
    r = lake.sync()
    e = lake.compare()
    assert "resynced whole" in r.stderr and "changes: changelog" in e["reason"], r.stderr
