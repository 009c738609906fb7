"""End-to-end tests of `knut pipeline`: the binary on real spec folders
(SQL files, CSV drops, Parquet written by pyarrow), every conformance case
of ../shared/reference/pipeline-semantics.md about the graph, batch and
streaming-table refresh, and expectations (section 7, cases 1-8 and 10-16),
as input -> exact expected output, plus the CLI, the events and bad input.
Results are read back with `knut query --db` on the pipeline's database.
"""
import json
import os
import pathlib
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
KNUT = os.environ.get("KNUT_BIN", str(REPO / "build" / "knut"))


def knut(*args, cwd=None):
    return subprocess.run([KNUT, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def project(root: pathlib.Path, files: dict, spec: str | None = None) -> pathlib.Path:
    """A spec folder: pipeline.yml (storage/, every .sql under t/) + files."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "pipeline.yml").write_text(spec or (
        "name: test\nstorage: storage\nlibraries:\n  - glob:\n      include: t/**\n"))
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def run(root, *extra, code=0):
    p = knut("pipeline", "run", root, "--json", *extra)
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    return [json.loads(line) for line in p.stdout.splitlines()]


def rows(root, sql):
    p = knut("query", "--db", root / "storage" / "pipeline.duckdb", "--format", "json", sql)
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines()]


def outcomes(events):
    """(flow, status) of every flow's final event, in run order."""
    return [(e["flow"], e["status"]) for e in events
            if e["event_type"] == "flow_progress"
            and e["status"] not in ("QUEUED", "PLANNING", "RUNNING")]


def flow_event(events, flow):
    return [e for e in events
            if e["flow"] == flow and e["status"] not in ("QUEUED", "PLANNING", "RUNNING")][-1]


def quality(events, flow):
    return flow_event(events, flow)["details"].get("data_quality")


@pytest.fixture(scope="module", autouse=True)
def binary_exists():
    if not os.access(KNUT, os.X_OK):
        pytest.fail(f"knut binary not found at {KNUT} (build it or set KNUT_BIN)")


# ---- graph and refresh (conformance 1-8, 10, 11) ----------------------------

def test_c01_reverse_definition_order(tmp_path):
    root = project(tmp_path, {"t/1.sql": "CREATE MATERIALIZED VIEW b AS SELECT x + 1 AS y FROM a;",
                              "t/2.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;"})
    events = run(root)
    assert outcomes(events) == [("a", "COMPLETED"), ("b", "COMPLETED")]
    assert rows(root, "SELECT * FROM b") == [{"y": 2}]


def test_c02_cycle_is_an_error_nothing_written(tmp_path):
    root = project(tmp_path, {"t/x.sql": "CREATE MATERIALIZED VIEW x AS SELECT * FROM y;",
                              "t/y.sql": "CREATE MATERIALIZED VIEW y AS SELECT * FROM x;"})
    p = knut("pipeline", "run", root)
    assert p.returncode == 2  # the spec is refused: a config error (docs/cli.md)
    assert p.stderr == (f"knut pipeline run: {root}/t/y.sql:1:1: flow 'y' is in a dependency "
                        "cycle: y -> x -> y\n")
    assert not (root / "storage").exists()


def test_c03_two_flows_into_a_materialized_view(tmp_path):
    root = project(tmp_path, {"t/m.sql": "CREATE MATERIALIZED VIEW m AS SELECT 1 AS x;\n"
                                         "CREATE FLOW f AS INSERT INTO m SELECT 2 AS x;"})
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1
    assert p.stderr == (f"knut pipeline validate: {root}/t/m.sql:2:1: flow 'f' writes into "
                        "materialized_view 'm'; only a streaming table takes more flows (a "
                        "materialized view has exactly one query)\n")


def test_c03_two_append_flows_into_one_streaming_table(tmp_path):
    root = project(tmp_path, {
        "a/1.csv": "v\n1\n2\n", "b/1.csv": "v\n3\n",
        "t/s.sql": "CREATE STREAMING TABLE s;\n"
                   "CREATE FLOW fa AS INSERT INTO s SELECT v FROM read_csv('a/*.csv');\n"
                   "CREATE FLOW fb AS INSERT INTO s SELECT v FROM read_csv('b/*.csv');\n"})
    run(root)
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 1}, {"v": 2}, {"v": 3}]


def test_c04_c05_streaming_table_incremental_then_full_refresh(tmp_path):
    root = project(tmp_path, {"src/a.csv": "v\n1\n2\n",
                              "t/s.sql": "CREATE STREAMING TABLE s AS "
                                         "SELECT v FROM read_csv('src/*.csv');"})
    events = run(root)
    assert flow_event(events, "s")["details"]["files_read"] == 1
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 1}, {"v": 2}]
    (root / "src" / "b.csv").write_text("v\n3\n")
    run(root)
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 1}, {"v": 2}, {"v": 3}]
    events = run(root)  # nothing new: idle, nothing appended twice
    assert outcomes(events) == [("s", "IDLE")]
    assert rows(root, "SELECT count(*) AS n FROM s") == [{"n": 3}]
    (root / "src" / "a.csv").unlink()  # 1 expired; 2 is still in the source
    (root / "src" / "a2.csv").write_text("v\n2\n")
    run(root, "--full-refresh", "s")
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 2}, {"v": 3}]


def test_stream_of_a_streaming_table_reads_only_new_rows(tmp_path):
    root = project(tmp_path, {
        "src/a.csv": "v\n1\n2\n-1\n",
        "t/a.sql": "CREATE STREAMING TABLE bronze AS SELECT * FROM read_csv('src/*.csv');\n"
                   "CREATE STREAMING TABLE silver (\n"
                   "  CONSTRAINT positive EXPECT (w > 0) ON VIOLATION DROP ROW\n"
                   ") AS SELECT v * 10 AS w FROM STREAM(bronze);\n"
                   "CREATE MATERIALIZED VIEW gold AS SELECT count(*) AS n, sum(w) AS s "
                   "FROM silver;\n"})
    run(root)
    assert rows(root, "SELECT * FROM gold") == [{"n": 2, "s": 30}]
    events = run(root)
    assert outcomes(events) == [("bronze", "IDLE"), ("silver", "IDLE"), ("gold", "COMPLETED")]
    (root / "src" / "b.csv").write_text("v\n3\n")
    events = run(root)
    details = flow_event(events, "silver")["details"]
    assert (details["rows_out"], details["streams_read"]) == (1, {"bronze": 1})
    assert rows(root, "SELECT w FROM silver ORDER BY w") == [{"w": 10}, {"w": 20}, {"w": 30}]
    run(root, "--full-refresh")
    assert rows(root, "SELECT * FROM gold") == [{"n": 3, "s": 60}]
    # Only the upstream: silver keeps its rows and reads bronze's again
    # (the streaming-table semantics; refresh both to start over).
    run(root, "--full-refresh", "bronze")
    assert rows(root, "SELECT * FROM gold") == [{"n": 6, "s": 120}]


def test_full_refresh_with_no_input_left_empties_the_table(tmp_path):
    root = project(tmp_path, {"src/a.csv": "v\n1\n",
                              "t/s.sql": "CREATE STREAMING TABLE s AS "
                                         "SELECT v FROM read_csv('src/*.csv');"})
    run(root)
    (root / "src" / "a.csv").unlink()
    events = run(root, "--full-refresh")
    assert outcomes(events) == [("s", "COMPLETED")]
    assert rows(root, "SELECT count(*) AS n FROM s") == [{"n": 0}]
    (root / "src" / "b.csv").write_text("v\n2\n")
    run(root)
    assert rows(root, "SELECT v FROM s") == [{"v": 2}]


def test_c06_materialized_view_reflects_the_current_query(tmp_path):
    root = project(tmp_path, {"src/a.csv": "v\n1\n2\n",
                              "t/m.sql": "CREATE MATERIALIZED VIEW m AS "
                                         "SELECT count(*) AS n FROM read_csv('src/*.csv');"})
    run(root)
    assert rows(root, "SELECT n FROM m") == [{"n": 2}]
    (root / "src" / "b.csv").write_text("v\n3\n")
    run(root)
    assert rows(root, "SELECT n FROM m") == [{"n": 3}]


def test_c07_once_flow(tmp_path):
    root = project(tmp_path, {
        "src/a.csv": "v\n1\n",
        "t/s.sql": "CREATE STREAMING TABLE s AS SELECT v FROM read_csv('src/*.csv');\n"
                   "CREATE FLOW backfill AS INSERT INTO ONCE s SELECT 9 AS v;\n"})
    run(root)
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 1}, {"v": 9}]
    (root / "src" / "b.csv").write_text("v\n2\n")
    events = run(root)
    assert ("backfill", "IDLE") in outcomes(events)
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 1}, {"v": 2}, {"v": 9}]
    run(root, "--full-refresh")
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 1}, {"v": 2}, {"v": 9}]


def test_c08_upstream_failure_skips_downstream(tmp_path):
    root = project(tmp_path, {
        "t/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT 'x'::INTEGER AS v;",
        "t/b.sql": "CREATE MATERIALIZED VIEW b AS SELECT v FROM a;",
        "t/c.sql": "CREATE MATERIALIZED VIEW c AS SELECT 1 AS v;"})
    events = run(root, code=1)
    assert outcomes(events) == [("a", "FAILED"), ("b", "SKIPPED"), ("c", "COMPLETED")]
    skipped = flow_event(events, "b")
    assert (skipped["level"], skipped["message"]) == (
        "WARN", "Flow 'b' SKIPPED due to upstream failure(s).")
    final = events[-1]
    assert (final["event_type"], final["status"]) == ("update_progress", "FAILED")
    assert rows(root, "SELECT state FROM _knut.runs") == [{"state": "FAILED"}]


def test_c09_reset_not_allowed_keeps_data(tmp_path):
    root = project(tmp_path, {
        "src/a.csv": "v\n1\n",
        "t/s.sql": "CREATE STREAMING TABLE keep\n"
                   "  TBLPROPERTIES ('pipelines.reset.allowed' = 'false')\n"
                   "  AS SELECT v FROM read_csv('src/*.csv');\n"
                   "CREATE STREAMING TABLE other TBLPROPERTIES (pipelines.reset.allowed = true) AS "
                   "SELECT v FROM read_csv('src/*.csv');\n"})
    run(root)
    (root / "src" / "a.csv").unlink()  # expired at the source
    (root / "src" / "b.csv").write_text("v\n2\n")
    run(root, "--full-refresh")
    assert rows(root, "SELECT v FROM keep ORDER BY v") == [{"v": 1}, {"v": 2}]
    assert rows(root, "SELECT v FROM other ORDER BY v") == [{"v": 2}]


def test_c10_spec_errors(tmp_path):
    cases = [
        ("name: a\nstorage: s\nfoo: 1\nlibraries: []\n",
         "pipeline.yml:3:6: unexpected field 'foo' (the spec takes name, storage, catalog, "
         "schema, database, configuration, libraries, reads, sinks, airflow, lineage)"),
        ("name: a\nlibraries: []\n", "pipeline.yml:1:1: the spec needs 'storage:'"),
        ("name: a\nstorage: s\nlibraries:\n  - glob:\n      include: t/**/*.sql\n",
         "pipeline.yml:5:16: invalid glob 't/**/*.sql': an include is a file path or a folder "
         "ending in '/**'"),
    ]
    for i, (spec, want) in enumerate(cases):
        root = project(tmp_path / str(i), {}, spec)
        p = knut("pipeline", "validate", root)
        assert p.returncode == 1
        assert p.stderr == f"knut pipeline validate: {root}/{want}\n"


def test_c11_streaming_read_of_a_batch_view(tmp_path):
    root = project(tmp_path, {
        "t/v.sql": "CREATE TEMPORARY VIEW v AS SELECT 1 AS x;\n"
                   "CREATE STREAMING TABLE s AS\n  SELECT * FROM STREAM(v), read_csv('a.csv');"})
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1
    assert p.stderr == (f"knut pipeline validate: {root}/t/v.sql:3:24: flow 's' reads "
                        "temporary_view 'v' as a stream; only a streaming table can be read "
                        "with STREAM()\n")


# ---- expectations (conformance 12-16) ---------------------------------------

AGES = {"src/people.csv": "name,age\nann,10\nbob,200\ncid,50\n"}


def ages_mv(action):
    clause = f" ON VIOLATION {action}" if action else ""
    return {**AGES, "t/p.sql": "CREATE MATERIALIZED VIEW p (\n"
                               f"  CONSTRAINT valid_age EXPECT (age BETWEEN 0 AND 120){clause}\n"
                               ") AS SELECT * FROM read_csv('src/people.csv');"}


def test_c12_warn_keeps_and_counts(tmp_path):
    root = project(tmp_path, ages_mv(None))
    events = run(root)
    assert rows(root, "SELECT age FROM p ORDER BY age") == [{"age": 10}, {"age": 50}, {"age": 200}]
    assert quality(events, "p") == {
        "dropped_records": 0, "quarantined_records": 0,
        "expectations": [{"name": "valid_age", "dataset": "p", "action": "warn",
                          "passed_records": 2, "failed_records": 1}]}


def test_c13_drop_filters_and_counts(tmp_path):
    root = project(tmp_path, ages_mv("DROP ROW"))
    events = run(root)
    assert rows(root, "SELECT age FROM p ORDER BY age") == [{"age": 10}, {"age": 50}]
    assert quality(events, "p") == {
        "dropped_records": 1, "quarantined_records": 0,
        "expectations": [{"name": "valid_age", "dataset": "p", "action": "drop",
                          "passed_records": 2, "failed_records": 1}]}
    assert flow_event(events, "p")["details"]["rows_out"] == 2


def test_c14_fail_aborts_the_update_target_unchanged(tmp_path):
    files = ages_mv("FAIL UPDATE")
    files["src/people.csv"] = "name,age\nann,10\ncid,50\n"
    files["t/other.sql"] = "CREATE MATERIALIZED VIEW other AS SELECT 42 AS answer;"
    root = project(tmp_path, files)
    run(root)
    (root / "src" / "people.csv").write_text(AGES["src/people.csv"])
    p = knut("pipeline", "run", root, "--json")
    assert p.returncode == 1
    events = [json.loads(line) for line in p.stdout.splitlines()]
    assert outcomes(events) == [("other", "COMPLETED"), ("p", "FAILED")]  # file order
    failed = flow_event(events, "p")
    assert "data_quality" not in failed["details"]  # no metrics for fail
    assert failed["message"] == (f"{root}/t/p.sql:2:3: flow 'p': expectation 'valid_age' "
                                 "(ON VIOLATION FAIL UPDATE) failed for 1 of 3 rows; the update "
                                 "is rolled back")
    assert p.stderr == f"knut pipeline run: {failed['message']}\n"
    assert rows(root, "SELECT age FROM p ORDER BY age") == [{"age": 10}, {"age": 50}]


def test_c15_two_drop_expectations(tmp_path):
    root = project(tmp_path, {
        "src/xy.csv": "x,y\n1,1\n-1,-1\n1,-1\n",
        "t/p.sql": "CREATE MATERIALIZED VIEW p (\n"
                   "  CONSTRAINT e1 EXPECT (x > 0) ON VIOLATION DROP ROW,\n"
                   "  CONSTRAINT e2 EXPECT (y > 0) ON VIOLATION DROP ROW\n"
                   ") AS SELECT * FROM read_csv('src/xy.csv');"})
    events = run(root)
    assert rows(root, "SELECT * FROM p") == [{"x": 1, "y": 1}]
    assert quality(events, "p") == {
        "dropped_records": 2, "quarantined_records": 0,
        "expectations": [
            {"name": "e1", "dataset": "p", "action": "drop", "passed_records": 2,
             "failed_records": 1},
            {"name": "e2", "dataset": "p", "action": "drop", "passed_records": 1,
             "failed_records": 2}]}


def test_c16_null_constraint_result_passes(tmp_path):
    """knut's documented policy: a NULL constraint result passes (a row fails
    only on FALSE), so a NULL age is kept even under DROP ROW."""
    root = project(tmp_path, {
        "src/a.csv": "name,age\nann,\nbob,5\n",
        "t/p.sql": "CREATE MATERIALIZED VIEW p (\n"
                   "  CONSTRAINT positive EXPECT (age > 0) ON VIOLATION DROP ROW\n"
                   ") AS SELECT * FROM read_csv('src/a.csv');"})
    events = run(root)
    assert rows(root, "SELECT name, age FROM p ORDER BY name") == [
        {"name": "ann", "age": None}, {"name": "bob", "age": 5}]
    assert quality(events, "p")["expectations"][0]["failed_records"] == 0


def test_quarantine_and_unique(tmp_path):
    root = project(tmp_path, {
        "src/a.csv": "id,amount\n1,5\n2,-3\n3,7\n3,8\n",
        "t/p.sql": "CREATE MATERIALIZED VIEW p (\n"
                   "  CONSTRAINT positive EXPECT (amount > 0) ON VIOLATION QUARANTINE,\n"
                   "  CONSTRAINT one_per_id EXPECT UNIQUE (id) ON VIOLATION QUARANTINE\n"
                   ") AS SELECT * FROM read_csv('src/a.csv');"})
    events = run(root)
    assert rows(root, "SELECT * FROM p ORDER BY id") == [{"id": 1, "amount": 5}]
    assert rows(root, "SELECT * FROM p__quarantine ORDER BY id, amount") == [
        {"id": 2, "amount": -3, "_failed_expectations": ["positive"]},
        {"id": 3, "amount": 7, "_failed_expectations": ["one_per_id"]},
        {"id": 3, "amount": 8, "_failed_expectations": ["one_per_id"]}]
    dq = quality(events, "p")
    assert (dq["dropped_records"], dq["quarantined_records"]) == (3, 3)


def test_unique_on_a_streaming_table_sees_earlier_rows(tmp_path):
    root = project(tmp_path, {
        "src/1.csv": "id\n1\n2\n",
        "t/s.sql": "CREATE STREAMING TABLE s (\n"
                   "  CONSTRAINT pk EXPECT UNIQUE (id) ON VIOLATION DROP ROW\n"
                   ") AS SELECT * FROM read_csv('src/*.csv');"})
    run(root)
    (root / "src" / "2.csv").write_text("id\n2\n3\n")
    events = run(root)
    assert rows(root, "SELECT id FROM s ORDER BY id") == [{"id": 1}, {"id": 2}, {"id": 3}]
    assert quality(events, "s")["expectations"][0]["failed_records"] == 1


# ---- bad input ----------------------------------------------------------------

def test_flow_sql_failure_names_the_flow_and_duckdb(tmp_path):
    root = project(tmp_path, {"t/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;\n"
                                         "CREATE MATERIALIZED VIEW b AS\n  SELECT nope FROM a;"})
    p = knut("pipeline", "run", root)
    assert p.returncode == 1
    assert p.stderr == (f"knut pipeline run: {root}/t/a.sql:2:1: flow 'b' failed: executing "
                        "SQL: Binder Error: Referenced column \"nope\" not found in FROM clause!"
                        "; Candidate bindings: \"x\"\n")


def test_corrupt_source_file_fails_the_flow_target_unchanged(tmp_path):
    root = project(tmp_path, {"t/s.sql": "CREATE STREAMING TABLE s AS "
                                         "SELECT * FROM read_parquet('in/*.parquet');"})
    (root / "in").mkdir()
    pq.write_table(pa.table({"v": [1, 2]}), root / "in" / "a.parquet")
    run(root)
    (root / "in" / "b.parquet").write_bytes(b"PAR1 this is not parquet")
    events = run(root, code=1)
    failed = flow_event(events, "s")
    assert failed["status"] == "FAILED"
    assert "b.parquet" in failed["message"]
    assert failed["message"].startswith(f"{root}/t/s.sql:1:1: flow 's' failed: ")
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 1}, {"v": 2}]
    (root / "in" / "b.parquet").unlink()  # the checkpoint did not move past it
    pq.write_table(pa.table({"v": [3]}), root / "in" / "c.parquet")
    run(root)
    assert rows(root, "SELECT v FROM s ORDER BY v") == [{"v": 1}, {"v": 2}, {"v": 3}]


def test_validate_json(tmp_path):
    spec = 'name: "say \\"hi\\""\nstorage: s\nlibraries:\n  - glob:\n      include: t/**\n'
    root = project(tmp_path, {"t/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;"}, spec)
    p = knut("pipeline", "validate", root, "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"ok": True, "pipeline": 'say "hi"', "datasets": 1, "flows": 1}


def test_sql_syntax_error_names_file_line_col(tmp_path):
    root = project(tmp_path, {"t/a.sql": "CREATE MATERIALIZED VIEW a AS\n  SELECT 'x FROM t;"})
    p = knut("pipeline", "validate", root, "--json")
    assert p.returncode == 1
    assert json.loads(p.stdout) == {"ok": False, "error": {
        "message": f"{root}/t/a.sql:2:10: unterminated string", "line": 2, "col": 10}}


# ---- CLI: init, show, dry-run, events, exit codes --------------------------------

def test_init_example_runs(tmp_path):
    root = tmp_path / "demo"
    p = knut("pipeline", "init", root)
    assert p.returncode == 0, p.stderr
    p = knut("pipeline", "run", root)
    assert p.returncode == 0, p.stderr
    assert p.stdout == (
        "raw_orders               COMPLETED rows_out=4 files_read=1\n"
        "orders                   COMPLETED rows_out=3 positive_amount(quarantine):passed=3,"
        "failed=1 known_customer(warn):passed=3,failed=1 one_row_per_order(fail):passed=4,"
        "failed=0\n"
        "daily_revenue            COMPLETED rows_out=2\n"
        "Update is COMPLETED: 3 completed, 0 idle, 0 failed, 0 skipped.\n")
    assert rows(root, "SELECT customer, revenue FROM daily_revenue ORDER BY customer") == [
        {"customer": "ada", "revenue": 12.5}, {"customer": "bob", "revenue": 7.25}]
    assert rows(root, "SELECT order_id FROM orders__quarantine") == [{"order_id": 3}]
    assert knut("pipeline", "init", root).returncode == 1  # not empty: nothing overwritten


def test_show_text_json_dot(tmp_path):
    root = tmp_path / "demo"
    assert knut("pipeline", "init", root).returncode == 0
    p = knut("pipeline", "show", root)
    assert p.returncode == 0
    assert p.stdout == (
        "pipeline orders: 3 datasets, 3 flows (storage storage, catalog pipeline, schema main)\n"
        "1. raw_orders (streaming) -> streaming_table raw_orders  reads "
        "read_csv('data/orders/*.csv')\n"
        "2. orders (batch) -> materialized_view orders  reads raw_orders  expects "
        "positive_amount:quarantine, known_customer:warn, one_row_per_order:fail\n"
        "3. daily_revenue (batch) -> materialized_view daily_revenue  reads orders\n")
    doc = json.loads(knut("pipeline", "show", root, "--format", "json").stdout)
    assert [f["name"] for f in doc["flows"]] == ["raw_orders", "orders", "daily_revenue"]
    assert doc["flows"][2]["reads"] == [{"name": "orders", "internal": True, "streaming": False}]
    orders = [d for d in doc["datasets"] if d["name"] == "orders"][0]
    assert orders["expectations"][2] == {
        "name": "one_row_per_order", "action": "fail", "unique": ["order_id"]}
    assert doc["flows"][1]["line"] == 2 and doc["flows"][1]["file"].endswith("silver.sql")
    dot = knut("pipeline", "show", root, "--format", "dot").stdout
    assert dot.startswith('digraph "orders" {\n  rankdir=LR;\n')
    assert '  "raw_orders" -> "orders" [label="orders"];\n' in dot
    assert '  "data/orders/*.csv" -> "raw_orders" [label="raw_orders", style=dashed];\n' in dot


def test_dry_run_writes_nothing(tmp_path):
    root = tmp_path / "demo"
    assert knut("pipeline", "init", root).returncode == 0
    events = run(root, "--dry-run")
    assert outcomes(events) == [("raw_orders", "PLANNED"), ("orders", "PLANNED"),
                                ("daily_revenue", "PLANNED")]
    assert flow_event(events, "raw_orders")["details"]["files"] == 1
    assert not (root / "storage").exists()


def test_events_and_event_log_table(tmp_path):
    root = project(tmp_path, ages_mv("DROP ROW"))
    events = run(root)
    assert [(e["seq"], e["event_type"], e["flow"], e["status"], e["level"]) for e in events] == [
        (1, "update_progress", None, "RUNNING", "INFO"),
        (2, "flow_progress", "p", "QUEUED", "INFO"),
        (3, "flow_progress", "p", "PLANNING", "INFO"),
        (4, "flow_progress", "p", "RUNNING", "INFO"),
        (5, "flow_progress", "p", "COMPLETED", "INFO"),
        (6, "update_progress", None, "COMPLETED", "INFO")]
    assert all(e["run_id"] == 1 and e["pipeline"] == "test" for e in events)
    assert set(events[4]["details"]) == {"rows_in", "rows_out", "data_quality", "duration_ms"}
    assert (events[4]["details"]["rows_in"], events[4]["details"]["rows_out"]) == (3, 2)
    assert [e["message"] for e in events[1:4]] == [
        "Flow 'p' is QUEUED.", "Flow 'p' is PLANNING.", "Flow 'p' is RUNNING."]
    log = [json.loads(line) for line in (root / "storage" / "events.jsonl").read_text().splitlines()]
    assert log == events
    assert rows(root, "SELECT e->>'name' AS name, (e->>'failed_records')::INT AS failed "
                      "FROM (SELECT unnest(from_json(details::JSON->'data_quality'->"
                      "'expectations', '[\"JSON\"]')) AS e FROM _knut.event_log "
                      "WHERE flow = 'p' AND status = 'COMPLETED')") == [
        {"name": "valid_age", "failed": 1}]
    assert rows(root, "SELECT run_id, flow, dataset, expectation, action, passed_records, "
                      "failed_records FROM _knut.expectation_log") == [
        {"run_id": 1, "flow": "p", "dataset": "p", "expectation": "valid_age", "action": "drop",
         "passed_records": 2, "failed_records": 1}]


def test_help_and_exit_codes(tmp_path):
    for sub in ("init", "validate", "show", "run"):
        p = knut("pipeline", sub, "--help")
        assert p.returncode == 0 and p.stdout.startswith(f"usage: knut pipeline {sub}")
    assert knut("pipeline", "--help").returncode == 0
    assert knut("pipeline").returncode == 2
    assert knut("pipeline", "run").returncode == 2
    assert knut("pipeline", "run", tmp_path, "--bogus").returncode == 2
    root = tmp_path / "demo"
    assert knut("pipeline", "init", root).returncode == 0
    p = knut("pipeline", "run", root, "--full-refresh", "nope")
    assert p.returncode == 2
    assert "no dataset named 'nope'" in p.stderr
    # a spec that cannot be read is a config error, as for every command
    assert knut("pipeline", "validate", tmp_path / "missing.yml").returncode == 2


def test_docs_example_is_init(tmp_path):
    """docs/pipelines.md shows the files `knut pipeline init` writes and the
    output of running them, verbatim."""
    import re
    page = (REPO / "docs" / "pipelines.md").read_text()
    blocks = re.findall(r"<!-- (file|output): ([^>]+?) -->\n```[a-z]*\n(.*?)```", page, re.S)
    files = {name: text for kind, name, text in blocks if kind == "file"}
    outputs = [text for kind, _, text in blocks if kind == "output"]
    root = tmp_path / "demo"
    assert knut("pipeline", "init", root).returncode == 0
    written = {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}
    assert written == files
    p = knut("pipeline", "run", "demo", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert outputs == [p.stdout]


def test_live_view_on_a_terminal(tmp_path):
    """On a TTY, run shows one line per flow, redrawn in place as flows
    change state; the final screen holds every flow's outcome."""
    import pty
    import re
    root = tmp_path / "demo"
    assert knut("pipeline", "init", root).returncode == 0
    master, slave = pty.openpty()
    proc = subprocess.Popen([KNUT, "pipeline", "run", str(root)], stdout=slave,
                            stderr=subprocess.PIPE, close_fds=True)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert proc.wait(timeout=60) == 0
    text = out.decode()
    assert "\x1b[3A" in text  # redrawn in place
    final = text.rsplit("\x1b[3A", 1)[1]
    lines = [re.sub(r"\x1b\[2K|\r", "", line) for line in final.split("\n") if line.strip()]
    assert [line.split()[:2] for line in lines[:3]] == [
        ["raw_orders", "COMPLETED"], ["orders", "COMPLETED"], ["daily_revenue", "COMPLETED"]]
    assert lines[3] == "Update is COMPLETED: 3 completed, 0 idle, 0 failed, 0 skipped."


def test_catalog_schema_configuration_and_quoted_names(tmp_path):
    spec = ("name: lake\nstorage: store\ncatalog: lakehouse\nschema: silver\n"
            "configuration:\n  threads: '1'\n"
            "libraries:\n  - glob:\n      include: t/**\nreads:\n  \"my gold\": [\"raw drops\"]\n")
    root = project(tmp_path, {
        "src/a.csv": "v\n1\n",
        "t/a.sql": "CREATE STREAMING TABLE \"raw drops\" AS SELECT v FROM read_csv('src/*.csv');\n"
                   "CREATE STREAMING TABLE copy AS SELECT v FROM STREAM(\"raw drops\");\n"
                   "CREATE MATERIALIZED VIEW \"my gold\" AS SELECT sum(v) AS s FROM \"raw drops\";"},
        spec)
    p = knut("pipeline", "run", root)
    assert p.returncode == 0, p.stderr
    db = root / "store" / "lakehouse.duckdb"
    q = knut("query", "--db", db, "--format", "json",
             "SELECT (SELECT s FROM silver.\"my gold\") AS s, (SELECT count(*) FROM silver.copy) AS n")
    assert q.stdout == '{"s":1,"n":1}\n'


def test_bad_configuration_names_its_line(tmp_path):
    spec = ("name: a\nstorage: s\nconfiguration:\n  threads: lots\n"
            "libraries:\n  - glob:\n      include: t/**\n")
    root = project(tmp_path, {"t/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;"}, spec)
    # a config error (docs/cli.md): exit 2, found before the storage is made
    p = knut("pipeline", "run", root)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"knut pipeline run: {root}/pipeline.yml:4:12: configuration "
                               "threads: ")
    assert not (root / "s").exists()
    v = knut("pipeline", "validate", root)  # validate's answer: invalid
    assert v.returncode == 1
    assert f"{root}/pipeline.yml:4:12: configuration threads: " in v.stderr
    assert knut("pipeline", "show", root).returncode == 2


def test_full_refresh_names_before_spec(tmp_path):
    root = project(tmp_path, {"src/a.csv": "v\n1\n",
                              "t/s.sql": "CREATE STREAMING TABLE s AS "
                                         "SELECT v FROM read_csv('src/*.csv');"})
    run(root)
    p = knut("pipeline", "run", "--full-refresh", "s", root)
    assert p.returncode == 0, p.stderr
    assert rows(root, "SELECT v FROM s") == [{"v": 1}]
    events = run(root, "--full-refresh")
    assert flow_event(events, "s")["details"]["files_read"] == 1


def test_files_per_update_cap_splits_into_updates(tmp_path):
    spec = ("name: t\nstorage: storage\nconfiguration:\n  knut.max_files_per_update: '2'\n"
            "libraries:\n  - glob:\n      include: t/**\n")
    files = {f"src/{i}.csv": f"v\n{i}\n" for i in range(5)}
    files["t/s.sql"] = "CREATE STREAMING TABLE s AS SELECT v FROM read_csv('src/*.csv');"
    root = project(tmp_path, files, spec)
    events = run(root)
    done = [e["details"]["files_read"] for e in events
            if e["flow"] == "s" and e["status"] == "COMPLETED"]
    assert done == [2, 2, 1]
    assert events[-1]["message"] == ("Update is COMPLETED: 1 completed, 0 idle, 0 failed, "
                                     "0 skipped.")
    assert rows(root, "SELECT list(v ORDER BY v) AS v FROM s") == [{"v": [0, 1, 2, 3, 4]}]
    assert outcomes(run(root)) == [("s", "IDLE")]
    bad = project(tmp_path / "bad", {"t/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;"},
                  spec.replace("knut.max_files_per_update: '2'", "knut.nope: '2'"))
    p = knut("pipeline", "run", bad)
    assert p.returncode == 2
    assert "pipeline.yml:4:14: configuration knut.nope: unknown" in p.stderr
