"""`knut sync` from tables behind a real Spark Connect server (spark_peer.py).

Spark holds the tables (parquet datasource tables in the server's
warehouse, changed with Spark SQL: INSERT INTO, INSERT OVERWRITE, ALTER
TABLE); knut reads them through Spark Connect and keeps the embedded
store in step. After every round the graph equals the table, the ledger
entry names the table's fingerprint and the state folder holds exactly the
state that entry names. An unchanged table is idle; an update, a delete and
an insert in one round land as one; vertices and edges from two tables;
mode full; a deleted state folder and a changed schema each resync the
whole table (and delete what it lacks); Spark down fails the round naming
the server and records nothing; kill -9 at random points never loses or
repeats a change; config mistakes are file:line:col errors.
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from spark_peer import spark_connect  # noqa: F401  (the session fixture)

SEED = int(os.environ.get("KNUT_CRASH_SEED", random.randrange(1 << 30)))


class Lake:
    """A Spark database of this test's own and a sync folder beside it."""

    def __init__(self, knut: Path, peer, root: Path):
        self.knut, self.peer, self.root = knut, peer, root
        self.db = "s" + uuid.uuid4().hex[:10]
        self.spark(f"CREATE DATABASE {self.db}")

    def conn(self) -> list[str]:
        return ["--connect", self.peer.url, "--token-file", str(self.peer.token_file),
                "--allow-insecure-token"]

    def spark(self, sql: str) -> list[dict]:
        r = subprocess.run([str(self.knut), "spark", "sql", *self.conn(), "-f", "json", sql],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, (sql, r.stderr)
        return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]

    def spark_map(self, table: str, **more) -> str:
        keys = {"table": f"{self.db}.{table}", "connect": self.peer.url,
                "token_file": str(self.peer.token_file), "allow_insecure_token": True, **more}
        return json.dumps(keys)

    def config(self, text: str, name: str = "sync.yml") -> Path:
        p = self.root / name
        p.write_text(text)
        return p

    def sync(self, *args, ok=True, config="sync.yml", env=None):
        r = subprocess.run([str(self.knut), "sync", "--once", "--config", str(self.root / config),
                            *args], capture_output=True, text=True, timeout=600,
                           env={**os.environ, "KNUT_LOG_FORMAT": "json",
                                "TMPDIR": str(self.root / "tmp"), **(env or {})})
        if ok:
            assert r.returncode == 0, r.stderr
        return r

    def q(self, sql: str) -> list[dict]:
        r = subprocess.run([str(self.knut), "query", "--db", str(self.root / "graph.duckdb"),
                            "--format", "json", sql], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stderr
        return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]

    def people(self) -> list[tuple]:
        return sorted((r["id"], r["name"]) for r in self.q("SELECT id, name FROM v_Person"))

    def table(self, name="people") -> list[tuple]:
        return sorted((r["id"], r["name"]) for r in self.spark(f"SELECT id, name FROM {self.db}.{name}"))

    def ledger(self) -> dict[str, dict]:
        return {x["table"]: x for x in self.q('SELECT "table", path, hash, status, reason, rows '
                                              "FROM _knut_sync_ledger")}

    def states(self) -> list[str]:
        d = self.root / ".knut-spark"
        return sorted(p.name for p in d.iterdir()) if d.exists() else []

    def assert_synced(self, table="people"):
        assert self.people() == self.table(table)
        e = self.ledger()[table]
        assert e["path"] == f"spark:{self.db}.{table}" and e["status"] == "done"
        assert len(e["hash"]) == 48
        # the one state file is the one the entry names
        assert [s.split("-", 1)[1] for s in self.states()] == [e["hash"] + ".parquet"]
        assert not list((self.root / "tmp").iterdir()), "the changes file was left behind"


def people_config(lake: Lake, mode: str = "") -> str:
    return (f"store: graph.duckdb\ntables:\n  people:\n    spark: {lake.spark_map('people')}\n"
            + (f"    mode: {mode}\n" if mode else "")
            + "    vertices:\n      - labels: [Person]\n        keys: [id]\n"
              "        properties: [name]\n")


def messages(r) -> list[dict]:
    return [json.loads(x) for x in r.stderr.splitlines() if x.startswith("{")]


@pytest.fixture
def lake(knut, spark_connect, tmp_path):
    root = tmp_path / "lake"
    (root / "tmp").mkdir(parents=True)
    return Lake(knut, spark_connect, root)


def test_vertex_table_follows_inserts_updates_deletes(lake):
    lake.spark(f"CREATE TABLE {lake.db}.people (id BIGINT, name STRING) USING parquet")
    lake.config(people_config(lake))
    lake.sync()  # an empty table: synced, nothing in the graph
    assert lake.people() == [] and lake.ledger()["people"]["rows"] == 0
    lake.spark(f"INSERT INTO {lake.db}.people VALUES (1, 'a'), (2, 'b'), (3, NULL)")
    lake.sync()
    lake.assert_synced()
    # an update, a delete and an insert in one commit; a null moved between columns
    lake.spark(f"INSERT OVERWRITE {lake.db}.people VALUES (1, 'A'), (3, 'c'), (4, NULL)")
    r = lake.sync()
    lake.assert_synced()
    synced = [m for m in messages(r) if m["msg"] == "table synced"][0]
    assert synced["deletes"] == 1 and synced["vertices"] == 3, synced  # 2 gone; 1, 3, 4 written
    # unchanged: idle, nothing read
    before = lake.ledger()["people"]
    r = lake.sync()
    assert any(m["msg"] == "round idle" for m in messages(r)), r.stderr
    assert lake.ledger()["people"] == before
    # duplicate rows: a multiset, the graph keeps the key once
    lake.spark(f"INSERT INTO {lake.db}.people VALUES (4, NULL), (5, 'e')")
    lake.sync()
    assert lake.people() == sorted(set(lake.table()))


def test_vertices_and_edges_from_two_tables(lake):
    lake.spark(f"CREATE TABLE {lake.db}.people (id BIGINT, name STRING) USING parquet")
    lake.spark(f"CREATE TABLE {lake.db}.knows (src BIGINT, dst BIGINT, w BIGINT) USING parquet")
    lake.spark(f"INSERT INTO {lake.db}.people VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    lake.spark(f"INSERT INTO {lake.db}.knows VALUES (1, 2, 5), (2, 3, 6)")
    lake.config(people_config(lake) + f"  knows:\n    spark: {lake.spark_map('knows')}\n"
                "    edges:\n      - type: KNOWS\n        from: {label: Person, keys: {id: src}}\n"
                "        to: {label: Person, keys: {id: dst}}\n        properties: [w]\n")

    def edges():
        rows = lake.q("SELECT a.id AS s, b.id AS d, e.w FROM e_KNOWS e "
                      "JOIN v_Person a ON a._knut_vid = e._knut_src "
                      "JOIN v_Person b ON b._knut_vid = e._knut_dst")
        return sorted((x["s"], x["d"], x["w"]) for x in rows)

    lake.sync()
    assert edges() == [(1, 2, 5), (2, 3, 6)]
    lake.spark(f"INSERT OVERWRITE {lake.db}.knows VALUES (1, 2, 7), (3, 1, 1)")
    lake.sync()
    assert edges() == [(1, 2, 7), (3, 1, 1)]
    assert {e["path"] for e in lake.ledger().values()} == \
        {f"spark:{lake.db}.people", f"spark:{lake.db}.knows"}
    assert len(lake.states()) == 2


def test_mode_full_applies_the_whole_table(lake):
    lake.spark(f"CREATE TABLE {lake.db}.people (id BIGINT, name STRING) USING parquet")
    lake.spark(f"INSERT INTO {lake.db}.people VALUES (1, 'a'), (2, 'b')")
    lake.config(people_config(lake, "full"))
    lake.sync()
    lake.assert_synced()
    lake.spark(f"INSERT OVERWRITE {lake.db}.people VALUES (2, 'B'), (7, 'g')")
    lake.sync()
    lake.assert_synced()
    assert lake.ledger()["people"]["rows"] == 2  # the whole table, not its changes


@pytest.mark.parametrize("how,why", [("state gone", "is gone"),
                                     ("columns changed", "columns changed")])
def test_full_resync(lake, how, why):
    lake.spark(f"CREATE TABLE {lake.db}.people (id BIGINT, name STRING) USING parquet")
    lake.spark(f"INSERT INTO {lake.db}.people VALUES (1, 'a'), (2, 'b'), (3, 'c')")
    lake.config(people_config(lake))
    lake.sync()
    lake.spark(f"INSERT OVERWRITE {lake.db}.people VALUES (1, 'a'), (3, 'C')")
    if how == "state gone":
        for p in (lake.root / ".knut-spark").iterdir():
            p.unlink()
    else:
        lake.spark(f"ALTER TABLE {lake.db}.people ADD COLUMNS (age BIGINT)")
        lake.spark(f"INSERT INTO {lake.db}.people VALUES (8, 'h', 40)")
    r = lake.sync()
    warn = [m for m in messages(r) if m["msg"].startswith("spark table resynced whole")]
    assert warn and why in warn[0]["reason"], r.stderr
    lake.assert_synced()  # 2 is gone: the resync deleted what the table lacks
    assert "full resync" in lake.ledger()["people"]["reason"]


def test_spark_down_fails_the_round_and_records_nothing(lake):
    lake.spark(f"CREATE TABLE {lake.db}.people (id BIGINT, name STRING) USING parquet")
    lake.spark(f"INSERT INTO {lake.db}.people VALUES (1, 'a')")
    lake.config(people_config(lake))
    lake.sync()
    lake.spark(f"INSERT INTO {lake.db}.people VALUES (2, 'b')")
    before = lake.ledger()
    down = people_config(lake).replace(lake.peer.url, "sc://127.0.0.1:1/")
    lake.config(down, "down.yml")
    r = lake.sync(config="down.yml", ok=False)
    assert r.returncode == 1, r.stderr
    assert "sc://127.0.0.1:1" in r.stderr and "people" in r.stderr
    assert lake.peer.token not in r.stderr + r.stdout  # the token is never shown
    assert lake.ledger() == before and lake.people() == [(1, "a")]
    lake.sync()  # the server back: the change lands
    lake.assert_synced()


def test_kill_9_never_loses_or_repeats_a_change(lake):
    """kill -9 at random points of rounds while the table changes; after a
    clean round the graph equals the table and one state file is left."""
    rnd = random.Random(SEED)
    lake.spark(f"CREATE TABLE {lake.db}.people (id BIGINT, name STRING) USING parquet")
    lake.config(people_config(lake))
    rows = {i: f"n{i}" for i in range(20)}

    def write():
        vals = ", ".join(f"({k}, '{v}')" for k, v in sorted(rows.items()))
        lake.spark(f"INSERT OVERWRITE {lake.db}.people VALUES {vals}")

    write()
    for cycle in range(12):
        for _ in range(rnd.randrange(1, 4)):  # a few changes per cycle
            k = rnd.randrange(40)
            if k in rows and rnd.random() < 0.4:
                del rows[k]
            else:
                rows[k] = f"n{k}c{cycle}"
        write()
        proc = subprocess.Popen([str(lake.knut), "sync", "--once", "--config",
                                 str(lake.root / "sync.yml")], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL,
                                env={**os.environ, "TMPDIR": str(lake.root / "tmp")})
        time.sleep(rnd.uniform(0.2, 3.0))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
        proc.wait()
    lake.sync()
    assert lake.people() == sorted(rows.items()), f"seed {SEED}"
    e = lake.ledger()["people"]
    assert [s.split("-", 1)[1] for s in lake.states()] == [e["hash"] + ".parquet"]


def test_sync_check_reads_the_columns_from_spark(lake):
    lake.spark(f"CREATE TABLE {lake.db}.people (id BIGINT, name STRING) USING parquet")
    lake.config(people_config(lake))
    r = subprocess.run([str(lake.knut), "sync", "check", "--config", str(lake.root / "sync.yml")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lake.config(people_config(lake).replace("properties: [name]", "properties: [nick]"),
                "bad.yml")
    r = subprocess.run([str(lake.knut), "sync", "check", "--config", str(lake.root / "bad.yml")],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode != 0 and "nick" in r.stdout + r.stderr, (r.stdout, r.stderr)


@pytest.mark.parametrize("spark,extra,why", [
    ("{connect: 'sc://x:1/'}", "", "needs 'table'"),
    ("{table: 'a..b'}", "", "'table' must be name, db.name or catalog.db.name"),
    ("{table: t, connect: 'http://x'}", "", "'connect' must be an sc:// URL"),
    ("{table: t, nope: 1}", "", "nope"),
    ("{table: t}", "    mode: incremental\n", "not incremental"),
    ("{table: t}", "    path: x\n", "'path' describes dropped files"),
    ("{table: t}", "    iceberg: {path: x}\n", "not both"),
    ("[t]", "", "must be a map"),
])
def test_config_errors(knut, tmp_path, spark, extra, why):
    cfg = tmp_path / "sync.yml"
    cfg.write_text(f"store: graph.duckdb\ntables:\n  people:\n    spark: {spark}\n{extra}"
                   "    vertices: [{labels: [Person], keys: [id]}]\n")
    r = subprocess.run([str(knut), "sync", "check", "--config", str(cfg)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and why in r.stderr and "sync.yml:" in r.stderr, r.stderr


def test_token_file_errors_name_the_file(lake, tmp_path):
    lake.spark(f"CREATE TABLE {lake.db}.people (id BIGINT, name STRING) USING parquet")
    missing = tmp_path / "no-token"
    lake.config(people_config(lake).replace(str(lake.peer.token_file), str(missing)))
    r = lake.sync(ok=False)
    assert r.returncode == 1 and str(missing) in r.stderr, r.stderr
