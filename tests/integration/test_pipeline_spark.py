"""`knut pipeline run --backend spark`: pipelines lowered to Spark
Declarative Pipelines and run on a real Spark Connect server (spark_peer.py,
pyspark 4.3.0), and the lowering report of --dry-run (no server).

Every test that uses the server works in its own database (the spec's
`schema:`), so the tests share the session's server under xdist.
"""
from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from spark_peer import spark_connect  # noqa: F401  (the session fixture)

EVERY_KNOB_SPEC = """name: every_knob
storage: storage
configuration:
  threads: "2"
  spark.sql.shuffle.partitions: "2"
libraries:
  - glob:
      include: t/**
sinks:
  people_graph:
    store: graph.duckdb
    vertices:
      - labels: [Person]
        keys: [id]
        properties: [name]
"""

EVERY_KNOB_SQL = """CREATE STREAMING TABLE raw (CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION DROP ROW)
  AS SELECT * FROM read_csv('in/*.csv');
CREATE MATERIALIZED VIEW after_raw AS SELECT count(*) AS n FROM raw;
CREATE STREAMING TABLE once_t;
CREATE FLOW backfill AS INSERT INTO ONCE once_t SELECT 1 AS x;
CREATE STREAMING TABLE changes AS SELECT * FROM read_csv('changes/*.csv', union_by_name = true);
CREATE STREAMING TABLE users1;
CREATE FLOW u1 AS AUTO CDC INTO users1 FROM STREAM(changes) KEYS (id)
  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq COLUMNS * EXCEPT (op, seq) STORED AS SCD TYPE 1;
CREATE STREAMING TABLE users2;
CREATE FLOW u2 AS AUTO CDC INTO users2 FROM STREAM(changes) KEYS (id)
  SEQUENCE BY seq STORED AS SCD TYPE 2 TRACK HISTORY ON * EXCEPT (city);
CREATE STREAMING TABLE users3;
CREATE FLOW u3 AS AUTO CDC INTO users3 FROM STREAM(changes) KEYS (id) IGNORE NULL UPDATES
  APPLY AS TRUNCATE WHEN op = 'TRUNCATE' SEQUENCE BY seq;
CREATE STREAMING TABLE sessions WINDOW SESSION (INTERVAL 5 MINUTES) KEYS (word)
  AS SELECT window_start, window_end, word, count(*) AS n
  FROM read_csv('ev/*.csv') WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY ALL;
CREATE FLOW to_graph AS INSERT INTO people_graph SELECT id, name FROM STREAM(changes);
"""

NO_CDC = ("t/a.sql:{line}:1: AUTO CDC needs Spark 4.2 or newer (the server is 4.1.1, whose "
          "pipelines.proto has no AutoCDC flow)")
TRUNCATE = ("t/a.sql:14:1: APPLY AS TRUNCATE WHEN: Spark accepts apply_as_truncates but does "
            "not apply it (SPARK-57092)")
IGNORE_NULLS = ("t/a.sql:14:1: IGNORE NULL UPDATES: Spark accepts the ignore-null-updates "
                "column lists but does not apply them (SPARK-57093)")
ALWAYS = {
    "raw": ["t/a.sql:1:29: expectation 'positive' (drop): Apache Spark Declarative Pipelines "
            "has no expectations (no pipelines.proto field through 4.3)"],
    "after_raw": ["t/a.sql:3:65: reads 'raw', which cannot run on Spark"],
    "backfill": ["t/a.sql:5:1: INSERT INTO ONCE: Spark refuses once flows "
                 "(DEFINE_FLOW_ONCE_OPTION_NOT_SUPPORTED)"],
    "changes": [],
    "sessions": ["t/a.sql:18:29: WATERMARK ts: knut's event-time clauses are not lowered "
                 "(Spark SQL has no WATERMARK clause for a pipeline flow)",
                 "t/a.sql:16:33: WINDOW SESSION: session windows are not lowered (Spark would "
                 "need session_window() in the query and a watermark)"],
    "to_graph": ["./pipeline.yml:11:5: graph sink 'people_graph': Spark has no sink that "
                 "writes FalkorDB or knut's graph store"],
}
BY_VERSION = {
    "4.1.1": {"u1": [NO_CDC.format(line=8)], "u2": [NO_CDC.format(line=11)],
              "u3": [NO_CDC.format(line=14), TRUNCATE, IGNORE_NULLS]},
    "4.2.0": {"u1": [],
              "u2": ["t/a.sql:11:1: STORED AS SCD TYPE 2 needs Spark 4.3 or newer (Spark 4.2.0 "
                     "has SCD type 1 only)"],
              "u3": [TRUNCATE, IGNORE_NULLS]},
    "4.3.0": {"u1": [], "u2": [], "u3": [TRUNCATE, IGNORE_NULLS]},
}


def project(root: Path, spec: str, sql: str) -> Path:
    (root / "t").mkdir(parents=True, exist_ok=True)
    (root / "pipeline.yml").write_text(spec)
    (root / "t" / "a.sql").write_text(sql)
    return root


@pytest.mark.parametrize("version", sorted(BY_VERSION))
def test_dry_run_refuses_every_unsupported_knob_with_its_reason(knut, tmp_path, version):
    root = project(tmp_path, EVERY_KNOB_SPEC, EVERY_KNOB_SQL)
    p = subprocess.run([str(knut), "pipeline", "run", ".", "--backend", "spark",
                        "--dry-run", "--spark-version", version, "--json"],
                       capture_output=True, text=True, cwd=root, timeout=120)
    assert p.returncode == 1, p.stderr  # refused: the answer of a dry run
    plan = json.loads(p.stdout)
    assert plan["spark_version"] == version and plan["layout"] == version[:3]
    assert plan["runnable"] is False
    flows = {f["name"]: f for f in plan["flows"]}
    want = dict(ALWAYS, **BY_VERSION[version])
    got = {name: flows[name]["refused"] for name in want}
    assert got == want
    # the views knut adds for file sources are never refused
    assert all(not f["refused"] for n, f in flows.items() if n.startswith("__knut_src_"))
    assert plan["refused_flows"] == sum(1 for r in want.values() if r)
    # the report: per flow, each knob dropped or changed
    report = {(n["knob"], n["change"]) for n in flows["changes"]["report"]}
    assert ("read_csv('changes/*.csv')", "dropped") in report  # union_by_name = true
    assert ("read_csv('changes/*.csv')", "changed") in report
    dropped = [n["detail"] for n in flows["changes"]["report"] if n["change"] == "dropped"]
    assert dropped == ["DuckDB arguments 'union_by_name = true' are not passed to Spark"]
    cdc = flows["u2"]
    assert cdc["auto_cdc"] == {"source": "changes", "keys": ["id"], "sequence_by": "seq",
                               "apply_as_deletes": None, "columns": None,
                               "stored_as_scd_type": 2,
                               "track_history": {"names": ["city"], "except": True}}
    assert {n["knob"] for n in cdc["report"]} == {"AUTO CDC target", "change log"}
    pipe = {n["knob"]: n["change"] for n in plan["report"]}
    assert pipe["configuration threads"] == "dropped"
    assert pipe["storage"] == "changed"
    assert plan["graph"]["sql_conf"] == {"spark.sql.shuffle.partitions": "2"}
    assert plan["graph"]["storage"] == f"file://{root.resolve()}/storage/spark"
    # the text form says the same
    t = subprocess.run([str(knut), "pipeline", "run", ".", "--backend", "spark",
                        "--dry-run", "--spark-version", version],
                       capture_output=True, text=True, cwd=root, timeout=120)
    assert t.returncode == 1
    assert t.stdout.startswith(f"pipeline every_knob on Spark {version} "
                               f"(the {version[:3]} messages): REFUSED")
    for reasons in want.values():
        for r in reasons:
            assert f"    REFUSED: {r}\n" in t.stdout


def test_dry_run_refuses_a_server_without_pipelines(knut, tmp_path):
    root = project(tmp_path, "name: x\nstorage: s\nlibraries:\n  - glob:\n      include: t/**\n",
                   "CREATE MATERIALIZED VIEW m AS SELECT 1 AS one;\n")
    p = subprocess.run([str(knut), "pipeline", "run", root, "--backend", "spark", "--dry-run",
                        "--spark-version", "4.0.1", "--json"], capture_output=True, text=True)
    assert p.returncode == 1
    plan = json.loads(p.stdout)
    assert plan["refused"] == ["Spark 4.0.1 has no Declarative Pipelines (pipelines.proto "
                               "arrived with 4.1.0)"]
    ok = subprocess.run([str(knut), "pipeline", "run", root, "--backend", "spark",
                         "--dry-run"], capture_output=True, text=True)
    assert ok.returncode == 0 and "can run" in ok.stdout.splitlines()[0]
    bad = subprocess.run([str(knut), "pipeline", "run", root, "--connect", "sc://x:1/"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "go with --backend spark" in bad.stderr


# ---- on the server -----------------------------------------------------------------------

def spark_opts(peer):
    return ["--connect", peer.url, "--token-file", str(peer.token_file), "--allow-insecure-token"]


def spark_rows(knut_bin, peer, sql):
    p = subprocess.run([str(knut_bin), "spark", "sql", *spark_opts(peer), "-f", "json", sql],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    return [json.loads(x) for x in p.stdout.splitlines() if x]


def new_database(knut_bin, peer) -> str:
    db = "k" + uuid.uuid4().hex[:12]
    spark_rows(knut_bin, peer, f"CREATE DATABASE {db}")
    return db


def spark_run(knut_bin, peer, root, code=0):
    p = subprocess.run([str(knut_bin), "pipeline", "run", root, "--backend", "spark", "--json",
                        *spark_opts(peer)], capture_output=True, text=True, timeout=600)
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    return [json.loads(x) for x in p.stdout.splitlines()], p.stderr


def write_orders(root: Path, name: str, ids, cats):
    (root / "data").mkdir(exist_ok=True)
    pq.write_table(pa.table({"id": pa.array(ids, pa.int64()),
                             "amount": pa.array([i * 1.25 for i in ids], pa.float64()),
                             "cat": pa.array(cats, pa.string())}), root / "data" / name)


BATCH_SQL = """CREATE TEMPORARY VIEW orders AS
  SELECT id, amount * 2 AS doubled, cat FROM read_parquet('data/*.parquet');
CREATE MATERIALIZED VIEW totals COMMENT 'per category' AS
  SELECT cat, sum(doubled) AS total, count(*) AS n FROM orders GROUP BY cat;
CREATE MATERIALIZED VIEW top AS SELECT cat, total FROM totals WHERE n > 1;
"""


def spec_for(db):
    return (f"name: shop\nstorage: storage\nschema: {db}\n"
            "libraries:\n  - glob:\n      include: t/**\n")


def test_batch_pipeline_defined_and_run_on_spark_with_its_events(knut, tmp_path, spark_connect):
    db = new_database(knut, spark_connect)
    root = project(tmp_path, spec_for(db), BATCH_SQL)
    write_orders(root, "1.parquet", [1, 2, 3, 4, 5], ["a", "b", "a", "c", "b"])
    events, _ = spark_run(knut, spark_connect, root)
    assert events[0]["event_type"] == "update_progress" and events[0]["status"] == "RUNNING"
    assert events[-1]["event_type"] == "update_progress"
    assert events[-1]["status"] == "COMPLETED" and events[-1]["message"] == "Run is COMPLETED."
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    for flow in ("totals", "top"):
        statuses = [e["status"] for e in events if e["flow"] == flow]
        assert statuses[0] == "QUEUED" and statuses[-1] == "COMPLETED", (flow, statuses)
        assert "RUNNING" in statuses
        done = [e for e in events if e["flow"] == flow and e["status"] == "COMPLETED"][0]
        assert done["dataset"] == flow and done["pipeline"] == "shop"
        assert done["details"]["spark_message"] == f"Flow spark_catalog.{db}.{flow} has COMPLETED."
    # neither the temporary views nor the ones knut adds show as flows
    assert {e["flow"] for e in events if e["flow"]} == {"totals", "top"}
    rows = spark_rows(knut, spark_connect, f"SELECT * FROM {db}.totals ORDER BY cat")
    assert rows == [{"cat": "a", "total": 10.0, "n": 2}, {"cat": "b", "total": 17.5, "n": 2},
                    {"cat": "c", "total": 10.0, "n": 1}]
    assert spark_rows(knut, spark_connect, f"SELECT * FROM {db}.top ORDER BY cat") == \
        [{"cat": "a", "total": 10.0}, {"cat": "b", "total": 17.5}]
    comment = spark_rows(knut, spark_connect, f"DESCRIBE TABLE EXTENDED {db}.totals")
    assert {"col_name": "Comment", "data_type": "per category", "comment": ""} in comment


MIXED_SQL = BATCH_SQL + """CREATE STREAMING TABLE raw AS SELECT * FROM read_parquet('data/*.parquet');
CREATE STREAMING TABLE big AS SELECT id, cat, amount FROM STREAM(raw) WHERE amount > 4;
CREATE STREAMING TABLE by_flow;
CREATE FLOW a_rows AS INSERT INTO by_flow BY NAME SELECT id, cat AS src FROM STREAM(raw) WHERE cat <> 'c';
CREATE MATERIALIZED VIEW counts AS SELECT src, count(*) AS n FROM by_flow GROUP BY src;
"""
TABLES = {"totals": "cat", "top": "cat", "raw": "id", "big": "id", "by_flow": "id, src",
          "counts": "src"}


def native_rows(root: Path, db: str, table: str, order: str):
    con = duckdb.connect(str(root / "storage" / "pipeline.duckdb"), read_only=True)
    try:
        cur = con.execute(f'SELECT * FROM "{db}"."{table}" ORDER BY {order}')
        names = [d[0] for d in cur.description]
        return [dict(zip(names, r)) for r in cur.fetchall()]
    finally:
        con.close()


def test_the_same_pipeline_gives_the_same_tables_natively_and_on_spark(knut, tmp_path,
                                                                      spark_connect):
    db = new_database(knut, spark_connect)
    native = project(tmp_path / "native", spec_for(db), MIXED_SQL)
    on_spark = project(tmp_path / "spark", spec_for(db), MIXED_SQL)
    drops = [("1.parquet", [1, 2, 3, 4], ["a", "b", "a", "c"]),
             ("2.parquet", [5, 6, 7], ["b", "a", "b"])]
    for i, (name, ids, cats) in enumerate(drops):
        for root in (native, on_spark):
            write_orders(root, name, ids, cats)
        p = subprocess.run([str(knut), "pipeline", "run", native, "--json"],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr
        events, _ = spark_run(knut, spark_connect, on_spark)
        assert events[-1]["status"] == "COMPLETED"
        # every table, row for row, after each incremental run
        for table, order in TABLES.items():
            want = native_rows(native, db, table, order)
            got = spark_rows(knut, spark_connect, f"SELECT * FROM {db}.{table} ORDER BY {order}")
            assert got == want, (i, table)
    assert len(native_rows(native, db, "raw", "id")) == 7  # each file read once


def test_a_refused_pipeline_sends_nothing(knut, tmp_path, spark_connect):
    db = "k" + uuid.uuid4().hex[:12]  # never created: nothing may reach the server
    root = project(tmp_path, spec_for(db),
                   "CREATE MATERIALIZED VIEW m (CONSTRAINT c EXPECT (one > 0)) AS SELECT 1 AS one;\n")
    events, err = spark_run(knut, spark_connect, root, code=1)
    assert events == []
    assert "pipeline shop cannot run on Spark 4.3.0" in err
    assert "knut pipeline run: REFUSED: " in err
    assert ("t/a.sql:1:29: expectation 'c' (warn): Apache Spark Declarative Pipelines "
            "has no expectations") in err


def test_a_flow_spark_cannot_analyse_fails_the_run(knut, tmp_path, spark_connect):
    db = new_database(knut, spark_connect)
    root = project(tmp_path, spec_for(db),
                   "CREATE MATERIALIZED VIEW ok AS SELECT 1 AS one;\n"
                   "CREATE MATERIALIZED VIEW bad AS SELECT nope FROM ok;\n")
    events, err = spark_run(knut, spark_connect, root, code=1)
    final = events[-1]
    assert final["event_type"] == "update_progress" and final["status"] == "FAILED"
    assert "Failed to resolve flows in the pipeline" in final["message"], final
    bad = [e for e in events if e["flow"] == "bad" and e["status"] == "FAILED"]
    assert len(bad) == 1 and bad[0]["level"] == "ERROR", events
    assert "UNRESOLVED_COLUMN" in bad[0]["message"] and "`nope`" in bad[0]["message"]
    assert err.startswith("knut pipeline run: StartRun: "), err


def test_auto_cdc_is_lowered_to_spark_autocdc(knut, tmp_path, spark_connect):
    """The AutoCDC messages are accepted (DefineFlow passes); the run then
    needs a MERGE-capable target, which a plain pyspark server has not (so
    the SCD1/SCD2 comparison with the native engine needs Iceberg/Delta for
    Spark 4.3: not done)."""
    db = new_database(knut, spark_connect)
    root = project(tmp_path, spec_for(db),
                   "CREATE STREAMING TABLE changes AS SELECT * FROM read_parquet('data/*.parquet');\n"
                   "CREATE STREAMING TABLE users;\n"
                   "CREATE FLOW users_cdc AS AUTO CDC INTO users FROM STREAM(changes) KEYS (id)\n"
                   "  APPLY AS DELETE WHEN op = 'DELETE' SEQUENCE BY seq\n"
                   "  COLUMNS * EXCEPT (op, seq) STORED AS SCD TYPE 2;\n")
    (root / "data").mkdir()
    pq.write_table(pa.table({"id": pa.array([1, 2, 1], pa.int64()), "name": ["a", "b", "c"],
                             "op": ["INSERT", "INSERT", "UPDATE"],
                             "seq": pa.array([1, 1, 2], pa.int64())}),
                   root / "data" / "1.parquet")
    events, err = spark_run(knut, spark_connect, root, code=1)
    assert events[-1]["status"] == "FAILED"
    assert "AUTOCDC_TARGET_DOES_NOT_SUPPORT_MERGE" in events[-1]["message"], events[-1]
    assert f"`{db}`.`users` (format: parquet)" in err
