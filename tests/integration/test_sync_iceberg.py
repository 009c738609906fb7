"""`knut sync` following Iceberg tables (docs/sync.md "Iceberg tables").

Tables are written by pyiceberg (its SQL catalog on SQLite; position
deletes built by iceberg_fixtures.py). After every commit a `knut sync
--once` must leave the graph equal to the table as pyiceberg reads it:
appends, copy-on-write deletes, overwrites (updates), position deletes,
an edge table, a broken lineage (the table dropped and created again:
a full resync with a warning), `mode: full`, config mistakes, `knut sync
check`, kill -9 at random moments under a writer that keeps committing,
and the FalkorDB sink.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest
from pyiceberg.expressions import GreaterThanOrEqual, In, LessThan
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField, StringType

import iceberg_fixtures as F

SEED = int(os.environ.get("KNUT_CRASH_SEED", random.randrange(1 << 30)))

PEOPLE = Schema(
    NestedField(1, "id", LongType(), required=False),
    NestedField(2, "name", StringType(), required=False),
    NestedField(3, "score", LongType(), required=False),
)
KNOWS = Schema(
    NestedField(1, "src", LongType(), required=False),
    NestedField(2, "dst", LongType(), required=False),
    NestedField(3, "w", LongType(), required=False),
)

CONFIG = """\
store: graph.duckdb
tables:
  people:
    iceberg: {table: db.people, catalog: catalog.db}
    vertices:
      - labels: [Person]
        keys: [id]
        properties: [name, score]
"""

EDGES = """\
  knows:
    iceberg: {table: db.knows, catalog: catalog.db, catalog_name: default}
    edges:
      - type: KNOWS
        from: {label: Person, keys: {id: src}}
        to: {label: Person, keys: {id: dst}}
        properties: [w]
"""


def people(ids, tag="a") -> pa.Table:
    ids = list(ids)
    return pa.table({"id": pa.array(ids, pa.int64()),
                     "name": pa.array([None if i % 9 == 0 else f"{tag}{i}" for i in ids],
                                      pa.string()),
                     "score": pa.array([i * 3 for i in ids], pa.int64())})


def knows(pairs, w=1) -> pa.Table:
    return pa.table({"src": pa.array([a for a, _ in pairs], pa.int64()),
                     "dst": pa.array([b for _, b in pairs], pa.int64()),
                     "w": pa.array([w] * len(pairs), pa.int64())})


@pytest.fixture
def lake(tmp_path):
    root = tmp_path / "lake"
    root.mkdir()
    (root / "tmp").mkdir()
    cat = F.catalog(root)
    return root, cat


def sync_once(run_knut, root: Path, *args, ok=True, config="sync.yml"):
    r = run_knut("sync", "--once", "--config", root / config, *args,
                 env={"KNUT_LOG_FORMAT": "json", "TMPDIR": str(root / "tmp")})
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def q(run_knut, root: Path, sql: str) -> list[dict]:
    r = run_knut("query", "--db", root / "graph.duckdb", "--format", "json", sql)
    assert r.returncode == 0, r.stderr
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def graph_people(run_knut, root: Path) -> list[dict]:
    return sorted(q(run_knut, root, "SELECT id, name, score FROM v_Person"), key=lambda r: r["id"])


def graph_knows(run_knut, root: Path) -> list[tuple]:
    rows = q(run_knut, root, "SELECT a.id AS s, b.id AS d, e.w FROM e_KNOWS e "
                             "JOIN v_Person a ON a._knut_vid = e._knut_src "
                             "JOIN v_Person b ON b._knut_vid = e._knut_dst")
    return sorted((x["s"], x["d"], x["w"]) for x in rows)


def table_people(cat, name="db.people") -> list[dict]:
    return F.rows_of(cat.load_table(name).scan().to_arrow())


def table_knows(cat) -> list[tuple]:
    return sorted((r["src"], r["dst"], r["w"])
                  for r in cat.load_table("db.knows").scan().to_arrow().to_pylist())


def ledger(run_knut, root: Path) -> dict[str, dict]:
    return {x["table"]: x for x in q(run_knut, root, 'SELECT "table", path, hash, status, '
                                                     "reason, rows FROM _knut_sync_ledger")}


def assert_synced(run_knut, root, cat, table="people", name="db.people"):
    assert graph_people(run_knut, root) == table_people(cat, name)
    snap = cat.load_table(name).metadata.current_snapshot_id
    e = ledger(run_knut, root)[table]
    assert e["path"] == f"iceberg:{name}" and e["status"] == "done"
    assert e["hash"] == format(snap, "016x")
    assert not list((root / "tmp").iterdir()), "the changelog file was left behind"


def data_files(tbl) -> list[str]:
    """The live data files, the largest first."""
    tasks = sorted(tbl.scan().plan_files(), key=lambda t: -t.file.record_count)
    return [t.file.file_path for t in tasks]


def test_vertex_table_follows_every_kind_of_commit(run_knut, lake):
    root, cat = lake
    (root / "sync.yml").write_text(CONFIG)
    tbl = cat.create_table("db.people", schema=PEOPLE)
    r = sync_once(run_knut, root)  # no snapshot yet: nothing to do
    assert '"round idle"' in r.stderr
    tbl.append(people(range(0, 40)))
    sync_once(run_knut, root)
    assert_synced(run_knut, root, cat)
    assert len(graph_people(run_knut, root)) == 40
    r = sync_once(run_knut, root)  # same snapshot: idle
    assert '"round idle"' in r.stderr
    tbl.append(people(range(40, 70)))  # append
    sync_once(run_knut, root)
    assert_synced(run_knut, root, cat)
    tbl.delete(LessThan("id", 10))  # copy-on-write delete
    sync_once(run_knut, root)
    assert_synced(run_knut, root, cat)
    # an update: the rows of some ids rewritten with new values
    tbl.overwrite(people([12, 13, 50], tag="new"), overwrite_filter=In("id", [12, 13, 50]))
    sync_once(run_knut, root)
    assert_synced(run_knut, root, cat)
    assert {x["id"]: x["name"] for x in graph_people(run_knut, root)}[50] == "new50"
    # position deletes (merge-on-read), then two commits in one round
    tbl = cat.load_table("db.people")
    tbl = F.add_position_deletes(tbl, {data_files(tbl)[0]: [0, 2, 3]})
    sync_once(run_knut, root)
    assert_synced(run_knut, root, cat)
    tbl.append(people(range(70, 75)))
    tbl.delete(GreaterThanOrEqual("id", 72))
    tbl.append(people([72], tag="back"))
    sync_once(run_knut, root)
    assert_synced(run_knut, root, cat)
    assert len(graph_people(run_knut, root)) == len(table_people(cat)) > 40
    st = run_knut("sync", "status", "--config", root / "sync.yml")
    assert st.returncode == 0, st.stderr
    assert "iceberg:db.people" in st.stdout and "done" in st.stdout


def test_edge_table(run_knut, lake):
    root, cat = lake
    (root / "sync.yml").write_text(CONFIG + EDGES)
    pt = cat.create_table("db.people", schema=PEOPLE)
    kt = cat.create_table("db.knows", schema=KNOWS)
    pt.append(people(range(0, 20)))
    kt.append(knows([(i, (i + 1) % 20) for i in range(20)]))
    sync_once(run_knut, root)
    assert graph_knows(run_knut, root) == table_knows(cat)
    assert len(graph_knows(run_knut, root)) == 20
    kt.delete(LessThan("src", 5))
    kt.overwrite(knows([(7, 8)], w=9), overwrite_filter=In("src", [7]))
    kt.append(knows([(3, 15), (4, 16)], w=2))
    sync_once(run_knut, root)
    assert graph_knows(run_knut, root) == table_knows(cat)
    assert (7, 8, 9) in graph_knows(run_knut, root)
    assert graph_people(run_knut, root) == table_people(cat)


def test_broken_lineage_full_resync(run_knut, lake):
    root, cat = lake
    (root / "sync.yml").write_text(CONFIG)
    tbl = cat.create_table("db.people", schema=PEOPLE)
    tbl.append(people(range(0, 30)))
    sync_once(run_knut, root)
    assert_synced(run_knut, root, cat)
    # the table dropped and created again: the recorded snapshot is unknown
    cat.drop_table("db.people")
    tbl = cat.create_table("db.people", schema=PEOPLE)
    tbl.append(people(range(20, 45), tag="b"))
    r = sync_once(run_knut, root)
    assert "iceberg lineage broken" in r.stderr
    warn = [json.loads(x) for x in r.stderr.splitlines() if "lineage broken" in x][0]
    assert warn["level"] == "warn" and "full resync" in warn["reason"]
    assert_synced(run_knut, root, cat)
    assert "full resync" in ledger(run_knut, root)["people"]["reason"]
    # and from there on, changes again
    tbl.delete(LessThan("id", 25))
    r = sync_once(run_knut, root)
    assert "lineage broken" not in r.stderr
    assert_synced(run_knut, root, cat)


def test_broken_lineage_shared_label_refused(run_knut, lake):
    """A full resync deletes what the snapshot lacks: a label another table
    writes makes it fail (nothing deleted, nothing recorded) instead."""
    root, cat = lake
    (root / "drops").mkdir()
    (root / "drops" / "p.csv").write_text("id,name,score\n1000,x,1\n")
    (root / "sync.yml").write_text(CONFIG + """\
  more:
    path: drops/
    vertices: [{labels: [Person], keys: [id], properties: [name, score]}]
""")
    tbl = cat.create_table("db.people", schema=PEOPLE)
    tbl.append(people(range(0, 5)))
    sync_once(run_knut, root)
    cat.drop_table("db.people")
    cat.create_table("db.people", schema=PEOPLE).append(people(range(3, 6)))
    r = sync_once(run_knut, root, ok=False)
    assert r.returncode == 1
    assert "a full resync is needed" in r.stderr and "belongs to full table" in r.stderr
    assert {x["id"] for x in graph_people(run_knut, root)} == {0, 1, 2, 3, 4, 1000}


def test_mode_full_and_folder_form(run_knut, lake):
    root, cat = lake
    tbl = cat.create_table("db.people", schema=PEOPLE)
    loc = tbl.metadata.location.removeprefix("file://")
    (root / "sync.yml").write_text(f"""\
store: graph.duckdb
tables:
  people:
    iceberg: {{path: {os.path.relpath(loc, root)}}}
    mode: full
    vertices: [{{labels: [Person], keys: [id], properties: [name, score]}}]
""")
    tbl.append(people(range(0, 25)))
    sync_once(run_knut, root)
    assert graph_people(run_knut, root) == table_people(cat)
    tbl.delete(LessThan("id", 10))
    tbl.append(people([100]))
    sync_once(run_knut, root)
    assert graph_people(run_knut, root) == table_people(cat)
    e = ledger(run_knut, root)["people"]
    assert e["path"] == f"iceberg:{loc}" and e["rows"] == 16


@pytest.mark.parametrize("table,msg", [
    ("    path: x/\n    iceberg: {table: db.people, catalog: catalog.db}\n",
     "'path' describes dropped files"),
    ("    iceberg: {table: db.people, catalog: catalog.db, tabel: x}\n", "did you mean"),
    ("    iceberg: {table: db.people}\n", "needs 'table'"),
    ("    iceberg: {table: people, catalog: catalog.db}\n", "namespace.name"),
    ("    iceberg: {path: wh, catalog: catalog.db}\n", "goes with none"),
    ("    iceberg: {table: db.people, catalog: catalog.db}\n    mode: incremental\n",
     "not incremental"),
    ("    iceberg: {table: db.people, catalog: catalog.db}\n    format: csv\n",
     "'format' describes"),
    ("    iceberg: db.people\n", "must be a map"),
])
def test_config_mistakes(run_knut, tmp_path, table, msg):
    (tmp_path / "sync.yml").write_text(
        "store: graph.duckdb\ntables:\n  people:\n" + table +
        "    vertices: [{labels: [Person], keys: [id]}]\n")
    r = run_knut("sync", "--once", "--config", tmp_path / "sync.yml")
    assert r.returncode == 2, r.stderr
    assert msg in r.stderr and "sync.yml:" in r.stderr and "table 'people'" in r.stderr


def test_sync_check(run_knut, lake):
    root, cat = lake
    (root / "sync.yml").write_text(CONFIG)
    cat.create_table("db.people", schema=PEOPLE)
    r = run_knut("sync", "check", "--config", root / "sync.yml")
    assert r.returncode == 0, r.stdout + r.stderr
    (root / "bad.yml").write_text(CONFIG.replace("[name, score]", "[name, age]"))
    r = run_knut("sync", "check", "--config", root / "bad.yml")
    assert r.returncode == 1 and "column 'age'" in r.stdout + r.stderr
    (root / "gone.yml").write_text(CONFIG.replace("db.people", "db.nobody"))
    r = run_knut("sync", "check", "--config", root / "gone.yml")
    assert r.returncode == 1 and "db.nobody" in r.stdout + r.stderr


def writer(cat, stop: threading.Event, rng: random.Random, log: list):
    """Commits appends, copy-on-write deletes, updates and position
    deletes to db.people until stop is set."""
    nxt = 100
    while not stop.is_set():
        tbl = cat.load_table("db.people")
        op = rng.choice(["append", "append", "delete", "update", "posdel"])
        try:
            if op == "append":
                tbl.append(people(range(nxt, nxt + rng.randint(1, 8))))
                nxt += 8
            elif op == "delete":
                lo = rng.randrange(0, nxt)
                tbl.delete(In("id", list(range(lo, lo + 3))))
            elif op == "update":
                ids = rng.sample(range(0, nxt), 3)  # distinct: one row per id
                tbl.overwrite(people(ids, tag=f"u{nxt}"), overwrite_filter=In("id", ids))
            else:
                files = data_files(tbl)
                if files:
                    tbl = F.add_position_deletes(tbl, {rng.choice(files): [0]})
            log.append(op)
        except Exception as e:  # a commit conflict: pyiceberg's, not ours
            log.append(f"{op}: {e}")
        time.sleep(rng.uniform(0.0, 0.15))


def wait_round(log: Path, i: int, p, timeout: float = 60.0):
    """Waits until run i's log has a round that ended, or the run ended."""
    marker = f"--- start {i}\n"
    end = time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None:
        text = log.read_text()
        run = text[text.rfind(marker):]
        if '"round done"' in run or '"round failed"' in run:
            return
        time.sleep(0.02)


def falkor_people(fdb, graph: str) -> list[dict]:
    rows = fdb.query(graph, "MATCH (p:Person) RETURN p.id, p.name, p.score")[1]
    return sorted(({"id": r[0], "name": r[1].decode() if isinstance(r[1], bytes) else r[1],
                    "score": r[2]} for r in rows), key=lambda r: r["id"])


@pytest.mark.parametrize("sink", ["store", "falkordb"])
def test_kill9_under_a_writer(knut, run_knut, lake, request, sink):
    """kill -9 at random moments while a writer commits; the embedded store
    commits graph and ledger together, FalkorDB (ledger file) replays a
    step whose ledger write a kill cut off: both end equal to the table."""
    root, cat = lake
    sink_args: tuple = ()
    if sink == "falkordb":
        fdb = request.getfixturevalue("falkordb")
        sink_args = ("--falkordb", f"redis://{fdb.host}:{fdb.port}", "--graph", "ice",
                     "--ledger", str(root / "ledger.json"))
        (root / "sync.yml").write_text(CONFIG.replace("store: graph.duckdb\n", ""))
    else:
        (root / "sync.yml").write_text(CONFIG)
    tbl = cat.create_table("db.people", schema=PEOPLE)
    tbl.append(people(range(0, 100)))
    rng = random.Random(SEED)
    stop, ops = threading.Event(), []
    th = threading.Thread(target=writer, args=(cat, stop, random.Random(SEED + 1), ops))
    th.start()
    log = root / "runs.log"
    kills = 0
    env = dict(os.environ, KNUT_LOG_FORMAT="json", TMPDIR=str(root / "tmp"))
    try:
        for i in range(32):
            with open(log, "a") as lf:
                lf.write(f"--- start {i}\n")
                lf.flush()
                p = subprocess.Popen([str(knut), "sync", "--config", str(root / "sync.yml"),
                                      "--interval", "0.05", *sink_args], stderr=lf,
                                     stdout=subprocess.DEVNULL, env=env)
                if i % 4 == 0:
                    # every few runs the kill waits for a whole round, so
                    # rounds commit however slow the box is; the others die
                    # at random moments, often inside a step's apply
                    wait_round(log, i, p)
                time.sleep(rng.uniform(0.05, 0.9))
                p.send_signal(signal.SIGKILL)
                rc = p.wait(timeout=30)
            assert rc == -signal.SIGKILL, f"seed {SEED}: run {i} exited {rc}:\n" + \
                log.read_text()[-3000:]
            kills += 1
    finally:
        stop.set()
        th.join()
    text = log.read_text()
    assert '"table failed"' not in text, text[text.find('"table failed"') - 200:][:3000]
    done = text.count('"round done"')
    print(f"seed {SEED}: {done} rounds committed over {kills} kills; writer: {len(ops)} ops")
    assert kills >= 30 and done >= 3, f"seed {SEED}: {done} rounds committed"
    for f in (root / "tmp").iterdir():  # a killed round's changelog file
        f.unlink()
    for _ in range(3):
        r = sync_once(run_knut, root, *sink_args)
        if '"round idle"' in r.stderr:
            break
    want = table_people(cat)
    assert len({r["id"] for r in want}) == len(want), f"seed {SEED}: the writer made twins"
    if sink == "falkordb":
        assert falkor_people(fdb, "ice") == want, f"seed {SEED}"
        entries = json.loads((root / "ledger.json").read_text())["entries"]
        assert [e["hash"] for e in entries] == [
            format(cat.load_table("db.people").metadata.current_snapshot_id, "016x")]
    else:
        assert graph_people(run_knut, root) == want, f"seed {SEED}"
        assert_synced(run_knut, root, cat)
    assert sum(not o.count(":") for o in ops) > 10, ops


@pytest.mark.parametrize("ledger_kind", ["file", "falkordb"])
def test_falkordb_sink(run_knut, lake, falkordb, ledger_kind):
    """FalkorDB with the ledger in a file, and in the server (`ledger:
    falkordb`: the entry in the mutation's last MULTI/EXEC)."""
    root, cat = lake
    head = "name: ice\nledger: falkordb\n" if ledger_kind == "falkordb" else ""
    (root / "sync.yml").write_text(head + CONFIG.replace("store: graph.duckdb\n", "") + EDGES)
    url = f"redis://{falkordb.host}:{falkordb.port}"
    args = ("--falkordb", url, "--graph", "ice")
    if ledger_kind == "file":
        args += ("--ledger", root / "ledger.json")

    def text(v):
        return v.decode() if isinstance(v, bytes) else v

    def check():
        got = sorted((r[0], text(r[1]), r[2]) for r in falkordb.query(
            "ice", "MATCH (p:Person) RETURN p.id, p.name, p.score")[1])
        want = sorted((r["id"], r["name"], r["score"]) for r in table_people(cat))
        assert got == want
        got = sorted(tuple(r) for r in falkordb.query(
            "ice", "MATCH (a:Person)-[k:KNOWS]->(b:Person) RETURN a.id, b.id, k.w")[1])
        assert got == table_knows(cat)

    pt = cat.create_table("db.people", schema=PEOPLE)
    kt = cat.create_table("db.knows", schema=KNOWS)
    pt.append(people(range(0, 30)))
    kt.append(knows([(i, (i + 3) % 30) for i in range(30)]))
    sync_once(run_knut, root, *args)
    check()
    pt.delete(LessThan("id", 4))  # their edges go with them
    kt.delete(LessThan("src", 8))
    kt.delete(In("dst", [0, 1, 2, 3]))  # what the vertex deletes took
    pt.overwrite(people([10, 11], tag="z"), overwrite_filter=In("id", [10, 11]))
    before = {r["id"] for r in table_people(cat)}
    F.add_position_deletes(cat.load_table("db.people"),
                           {data_files(cat.load_table("db.people"))[0]: [5]})
    gone = sorted(before - {r["id"] for r in table_people(cat)})
    assert len(gone) == 1
    kt.delete(In("src", gone))  # the edges the vertex delete takes along
    kt.delete(In("dst", gone))
    sync_once(run_knut, root, *args)
    check()
    st = run_knut("sync", "status", "--json", "--config", root / "sync.yml", *args)
    assert st.returncode == 0, st.stderr
    paths = {f["path"] for f in json.loads(st.stdout)["files"]}
    assert paths == {"iceberg:db.people", "iceberg:db.knows"}, st.stdout
    if ledger_kind == "file":
        led = json.loads((root / "ledger.json").read_text())
        entries = {e["table"]: e for e in led["entries"]}
        assert entries["people"]["hash"] == format(
            cat.load_table("db.people").metadata.current_snapshot_id, "016x")
    r = sync_once(run_knut, root, *args)  # nothing new: idle
    assert '"round idle"' in r.stderr
