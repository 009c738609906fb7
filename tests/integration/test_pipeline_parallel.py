"""`knut pipeline run --parallel N` (docs/pipelines.md "Parallel flows"):
flows whose inputs are complete run at the same time, each on its own
DuckDB connection to the pipeline database.

- A DAG with independent branches (streaming tables over CSV drops, a
  streaming table with two flows, expectations with a quarantine, a
  temporary view read by a later flow, AUTO CDC, materialized views) run
  with --parallel 2 and 4 gives exactly the tables and checkpoints of
  --parallel 1, over two runs (the second incremental).
- A failing branch (a FAIL UPDATE expectation, a SQL error) does not stop
  an independent one running at the same time, which commits; its own
  downstream flows are SKIPPED; its target is what the last good run left.
- Events are whole JSON lines (stdout, events.jsonl, _knut.event_log, one
  seq order) and each flow has exactly one outcome event.
- Concurrency is real: two slow independent flows overlap in the event
  order (both RUNNING before either ends), which they never do with
  --parallel 1; flows into one table never overlap.
Ordering is asserted on the events' seq, never on wall-clock durations.
"""
import json
import os
import pty
import re
import subprocess

import duckdb
import pytest

from test_pipeline import KNUT, flow_event, knut, outcomes, project

TERMINAL = ("COMPLETED", "FAILED", "SKIPPED", "IDLE")

# A query DuckDB needs a while for (about a second here): long enough that
# a flow beside it starts and ends while it runs. Only the order of events
# is asserted, so a slower or faster machine changes nothing but the time.
SLOW = "SELECT count(*) AS n FROM range(100000000) t(i) WHERE hash(i) % 7 = 0"


def run(root, *extra, code=0):
    p = knut("pipeline", "run", root, "--json", *extra)
    assert p.returncode == code, (p.returncode, p.stdout, p.stderr)
    return [json.loads(line) for line in p.stdout.splitlines()]


def db(root):
    return duckdb.connect(str(root / "storage" / "pipeline.duckdb"), read_only=True)


def snapshot(root):
    """Every table of the pipeline schema (rows sorted) and the checkpoints
    (without run ids and timestamps)."""
    con = db(root)
    try:
        out = {}
        names = [r[0] for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' "
            "ORDER BY 1").fetchall()]
        for name in names:
            cols = [r[0] for r in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' "
                "AND table_name = ? ORDER BY column_index", [name]).fetchall()]
            out[name] = (cols, con.execute(f'SELECT * FROM "{name}" ORDER BY ALL').fetchall())
        for sql in ("SELECT flow, file FROM _knut.files ORDER BY ALL",
                    "SELECT * FROM _knut.offsets ORDER BY ALL",
                    "SELECT * FROM _knut.flows ORDER BY ALL"):
            out[sql] = con.execute(sql).fetchall()
        return out
    finally:
        con.close()


def seqs(events, flow):
    """seq of the flow's RUNNING event and of its outcome event."""
    running = [e["seq"] for e in events if e["flow"] == flow and e["status"] == "RUNNING"]
    ended = [e["seq"] for e in events if e["flow"] == flow and e["status"] in TERMINAL]
    assert len(running) == 1 and len(ended) == 1, (flow, running, ended)
    return running[0], ended[0]


def overlap(events, a, b):
    """1 if flows a and b were both running at one point of the event order."""
    (ra, ea), (rb, eb) = seqs(events, a), seqs(events, b)
    return max(ra, rb) < min(ea, eb)


# ---- the same tables, whatever N --------------------------------------------

DAG = {
    "t/dag.sql": """
CREATE STREAMING TABLE bronze_a AS SELECT * FROM read_csv('a/*.csv');
CREATE STREAMING TABLE bronze_b AS SELECT * FROM read_csv('b/*.csv');
CREATE STREAMING TABLE silver_a (
  CONSTRAINT positive EXPECT (v > 0) ON VIOLATION DROP ROW,
  CONSTRAINT small EXPECT (v < 100) ON VIOLATION QUARANTINE
) AS SELECT id, v FROM STREAM(bronze_a);
CREATE STREAMING TABLE both_sides;
CREATE FLOW from_a AS INSERT INTO both_sides SELECT id, v, 'a' AS side FROM STREAM(bronze_a);
CREATE FLOW from_b AS INSERT INTO both_sides SELECT id, v, 'b' AS side FROM STREAM(bronze_b);
CREATE TEMPORARY VIEW b_doubled AS SELECT id, v * 2 AS w FROM bronze_b;
CREATE MATERIALIZED VIEW silver_b AS SELECT id, w FROM b_doubled WHERE w > 0;
CREATE STREAMING TABLE changes AS SELECT * FROM read_csv('c/*.csv');
CREATE STREAMING TABLE users;
CREATE FLOW apply_users AS AUTO CDC INTO users FROM STREAM(changes) KEYS (id)
  APPLY AS DELETE WHEN op = 'D' SEQUENCE BY seq COLUMNS * EXCEPT (op, seq)
  STORED AS SCD TYPE 2;
CREATE MATERIALIZED VIEW gold AS
  SELECT a.id, a.v, b.w, u.name FROM silver_a a JOIN silver_b b USING (id)
  LEFT JOIN (SELECT * FROM users WHERE __END_AT IS NULL) u USING (id);
CREATE MATERIALIZED VIEW totals AS
  SELECT side, count(*) AS n, sum(v) AS s FROM both_sides GROUP BY side;
CREATE MATERIALIZED VIEW numbers AS SELECT i, i * i AS sq FROM range(1000) t(i);
""",
    "a/1.csv": "id,v\n1,5\n2,-1\n3,500\n4,7\n",
    "b/1.csv": "id,v\n1,10\n4,20\n5,30\n",
    "c/1.csv": "id,name,op,seq\n1,ann,U,1\n4,dan,U,1\n5,eve,U,1\n",
}

MORE = {
    "a/2.csv": "id,v\n5,9\n6,0\n",
    "b/2.csv": "id,v\n6,40\n",
    "c/2.csv": "id,name,op,seq\n1,anna,U,2\n5,,D,2\n6,fay,U,1\n",
}


def test_parallel_runs_give_the_tables_of_a_serial_run(tmp_path):
    roots = {n: project(tmp_path / f"p{n}", DAG) for n in (1, 2, 4)}
    first = {n: run(root, "--parallel", n) for n, root in roots.items()}
    before = {n: snapshot(root) for n, root in roots.items()}
    for n, root in roots.items():
        for name, text in MORE.items():
            (root / name).write_text(text)
    second = {n: run(root, "--parallel", n) for n, root in roots.items()}
    after = {n: snapshot(root) for n, root in roots.items()}
    for n in (2, 4):
        assert before[n] == before[1], n
        assert after[n] == after[1], n
        for events, serial in ((first[n], first[1]), (second[n], second[1])):
            assert sorted(outcomes(events)) == sorted(outcomes(serial)), n
    # what the serial run computes is right, so the others are too
    assert after[1]["gold"][1] == [(1, 5, 20, "anna"), (4, 7, 40, "dan"), (5, 9, 60, None)]
    assert after[1]["silver_a__quarantine"][1] == [(3, 500, ["small"])]
    assert after[1]["totals"][1] == [("a", 6, 520), ("b", 4, 100)]
    assert len(after[1]["users"][1]) == 5  # ann closed, anna, dan, eve closed, fay
    assert sorted(set(outcomes(second[1]))) == sorted(
        (f, "COMPLETED") for f in ("bronze_a", "bronze_b", "silver_a", "from_a", "from_b",
                                   "b_doubled", "silver_b", "changes", "apply_users", "gold",
                                   "totals", "numbers"))


def test_flows_into_one_table_never_overlap_and_keep_their_order(tmp_path):
    root = project(tmp_path, {
        "a/1.csv": "v\n1\n", "b/1.csv": "v\n2\n",
        "t/s.sql": "CREATE STREAMING TABLE s;\n"
                   f"CREATE FLOW fa AS INSERT INTO s SELECT v FROM read_csv('a/*.csv'), ({SLOW});\n"
                   f"CREATE FLOW fb AS INSERT INTO s SELECT v FROM read_csv('b/*.csv'), ({SLOW});\n"
                   f"CREATE MATERIALIZED VIEW other AS {SLOW};\n"})
    events = run(root, "--parallel", "3")
    assert not overlap(events, "fa", "fb")
    assert seqs(events, "fa")[1] < seqs(events, "fb")[0]  # definition order
    # the free worker took the independent flow meanwhile
    assert overlap(events, "fa", "other")


def test_a_reader_of_a_quarantine_table_keeps_its_serial_order(tmp_path):
    """main.t__quarantine is no dataset, so reading it is no dependency; the
    reader still runs after t's flow (defined before it), never beside it,
    and reads what a serial run reads."""
    files = {"src/a.csv": "v\n1\n500\n",
             "t/q.sql": f"""
CREATE MATERIALIZED VIEW t (
  CONSTRAINT small EXPECT (v < 100) ON VIOLATION QUARANTINE
) AS SELECT v FROM read_csv('src/*.csv'), ({SLOW});
CREATE MATERIALIZED VIEW bad AS SELECT count(*) AS n FROM main.t__quarantine;
"""}
    results = {}
    for n in (1, 2):
        root = project(tmp_path / f"p{n}", files)
        run(root, "--parallel", n)
        (root / "src" / "b.csv").write_text("v\n700\n")
        events = run(root, "--parallel", n)
        assert seqs(events, "t")[1] < seqs(events, "bad")[0]
        results[n] = snapshot(root)
    assert results[2] == results[1]
    assert results[1]["bad"][1] == [(2,)]


def test_temporary_view_is_seen_by_a_reader_on_another_worker(tmp_path):
    """A temporary view lives on one DuckDB connection: the worker that made
    it is busy with slow_b when the reader becomes ready, so the reader runs
    on the other worker, which must have the view too."""
    root = project(tmp_path, {"t/v.sql": f"""
CREATE MATERIALIZED VIEW slow_a AS {SLOW};
CREATE TEMPORARY VIEW tv AS SELECT 41 AS x;
CREATE MATERIALIZED VIEW slow_b AS {SLOW};
CREATE MATERIALIZED VIEW reader AS SELECT x + 1 AS y, n FROM tv, slow_a;
"""})
    events = run(root, "--parallel", "2")
    assert dict(outcomes(events)) == {f: "COMPLETED" for f in ("slow_a", "tv", "slow_b", "reader")}
    assert overlap(events, "slow_a", "slow_b")
    con = db(root)
    try:
        assert con.execute("SELECT y FROM reader").fetchall() == [(42,)]
    finally:
        con.close()


# ---- failures -------------------------------------------------------------

FAILING = {
    "t/f.sql": f"""
CREATE MATERIALIZED VIEW a_src AS SELECT * FROM read_csv('src/*.csv');
CREATE MATERIALIZED VIEW slow_b AS {SLOW};
CREATE MATERIALIZED VIEW a_checked (
  CONSTRAINT valid_age EXPECT (age BETWEEN 0 AND 120) ON VIOLATION FAIL UPDATE
) AS SELECT * FROM a_src;
CREATE MATERIALIZED VIEW a_down AS SELECT count(*) AS n FROM a_checked;
CREATE MATERIALIZED VIEW a_down2 AS SELECT n + 1 AS m FROM a_down;
CREATE MATERIALIZED VIEW b_down AS SELECT n FROM slow_b;
""",
    "src/people.csv": "name,age\nann,10\ncid,50\n",
}


def test_fail_update_stops_only_its_branch(tmp_path):
    """A FAIL UPDATE expectation fails its flow while an independent slow
    flow runs: that one is not stopped and commits, the failed flow's
    target is unchanged, its downstream is SKIPPED, the run ends FAILED."""
    root = project(tmp_path, FAILING)
    run(root, "--parallel", "2")
    (root / "src" / "people.csv").write_text("name,age\nann,10\nbob,200\ncid,50\n")
    events = run(root, "--parallel", "2", code=1)
    got = dict(outcomes(events))
    assert got == {"a_src": "COMPLETED", "slow_b": "COMPLETED", "a_checked": "FAILED",
                   "a_down": "SKIPPED", "a_down2": "SKIPPED", "b_down": "COMPLETED"}
    failed = flow_event(events, "a_checked")
    running, ended = seqs(events, "slow_b")
    assert running < failed["seq"] < ended  # it was running when the update failed
    assert "expectation 'valid_age' (ON VIOLATION FAIL UPDATE) failed for 1 of 3 rows" in \
        failed["message"]
    assert flow_event(events, "a_down")["message"] == \
        "Flow 'a_down' SKIPPED due to upstream failure(s)."
    assert events[-1]["status"] == "FAILED"
    assert events[-1]["message"] == \
        "Update is FAILED: 3 completed, 0 idle, 1 failed, 2 skipped."
    con = db(root)
    try:
        # the failed flow's target is what the first run left; the rest moved on
        assert con.execute("SELECT name FROM a_checked ORDER BY 1").fetchall() == \
            [("ann",), ("cid",)]
        assert con.execute("SELECT count(*) FROM a_src").fetchall() == [(3,)]
        assert con.execute("SELECT n FROM a_down").fetchall() == [(2,)]
        assert con.execute("SELECT n FROM b_down").fetchall() == \
            con.execute(SLOW).fetchall()
    finally:
        con.close()


def test_sql_error_in_one_branch_independent_branch_completes(tmp_path):
    files = dict(FAILING)
    files["t/f.sql"] = files["t/f.sql"].replace("SELECT * FROM a_src;",
                                                "SELECT nope FROM a_src;")
    root = project(tmp_path, files)
    p = knut("pipeline", "run", root, "--json", "--parallel", "4")
    assert p.returncode == 1
    events = [json.loads(line) for line in p.stdout.splitlines()]
    assert dict(outcomes(events)) == {
        "a_src": "COMPLETED", "slow_b": "COMPLETED", "a_checked": "FAILED",
        "a_down": "SKIPPED", "a_down2": "SKIPPED", "b_down": "COMPLETED"}
    failed = flow_event(events, "a_checked")
    assert "flow 'a_checked' failed" in failed["message"] and "nope" in failed["message"]
    assert failed["details"]["line"] > 0 and "conflict" not in failed["details"]
    assert p.stderr == f"knut pipeline run: {failed['message']}\n"


# ---- events ---------------------------------------------------------------

def test_events_are_whole_lines_one_outcome_per_flow(tmp_path):
    files = {"t/e.sql": "".join(f"CREATE MATERIALIZED VIEW m{i} AS SELECT {i} AS x, "
                                f"'{'q' * 200}' AS pad;\n" for i in range(24)),
             "t/f.sql": "".join(f"CREATE MATERIALIZED VIEW n{i} AS SELECT x + 1 AS y "
                                f"FROM m{i};\n" for i in range(24))}
    root = project(tmp_path, files)
    p = knut("pipeline", "run", root, "--json", "--parallel", "4")
    assert p.returncode == 0, p.stderr
    events = [json.loads(line) for line in p.stdout.splitlines()]  # each line whole
    logged = [json.loads(line) for line in
              (root / "storage" / "events.jsonl").read_text().splitlines()]
    assert logged == events
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)
    flows = [f"m{i}" for i in range(24)] + [f"n{i}" for i in range(24)]
    for f in flows:
        mine = [e["status"] for e in events if e["flow"] == f]
        assert mine == ["QUEUED", "PLANNING", "RUNNING", "COMPLETED"], (f, mine)
        # a reader starts after what it reads ended
        if f.startswith("n"):
            assert seqs(events, f"m{f[1:]}")[1] < seqs(events, f)[0]
    con = db(root)
    try:
        assert con.execute("SELECT seq, status, flow FROM _knut.event_log ORDER BY seq").fetchall() \
            == [(e["seq"], e["status"], e["flow"]) for e in events]
        assert con.execute("SELECT n0.y + n23.y FROM n0, n23").fetchall() == [(25,)]
    finally:
        con.close()


def test_two_slow_flows_overlap_only_in_parallel(tmp_path):
    root = project(tmp_path, {"t/s.sql": f"CREATE MATERIALIZED VIEW s1 AS {SLOW};\n"
                                         f"CREATE MATERIALIZED VIEW s2 AS {SLOW};\n"})
    serial = run(root, "--parallel", "1")
    assert not overlap(serial, "s1", "s2")
    assert seqs(serial, "s1")[1] < seqs(serial, "s2")[0]
    parallel = run(root, "--parallel", "2")
    assert overlap(parallel, "s1", "s2")


def test_live_view_with_parallel_flows(tmp_path):
    """The terminal view redraws one line per flow while two run at once."""
    root = project(tmp_path, {"t/s.sql": f"CREATE MATERIALIZED VIEW s1 AS {SLOW};\n"
                                         f"CREATE MATERIALIZED VIEW s2 AS {SLOW};\n"
                                         "CREATE MATERIALIZED VIEW s3 AS "
                                         "SELECT * FROM s1, s2;\n"})
    master, slave = pty.openpty()
    proc = subprocess.Popen([KNUT, "pipeline", "run", str(root), "--parallel", "2"],
                            stdout=slave, stderr=subprocess.PIPE, close_fds=True)
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
    assert proc.wait(timeout=120) == 0
    text = out.decode()
    screens = text.split("\x1b[3A")[1:]
    clean = [[re.sub(r"\x1b\[2K|\r", "", line).split()[:2]
              for line in s.split("\n") if line.strip()][:3] for s in screens]
    # some screen showed both slow flows running at once
    assert [["s1", "RUNNING.."], ["s2", "RUNNING.."], ["s3", "QUEUED"]] in clean
    final = clean[-1]
    assert final == [["s1", "COMPLETED"], ["s2", "COMPLETED"], ["s3", "COMPLETED"]]
    assert text.rstrip().endswith("Update is COMPLETED: 3 completed, 0 idle, 0 failed, 0 skipped.")


def test_parallel_option_bounds_and_help(tmp_path):
    root = project(tmp_path, {"t/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;\n"
                                         "CREATE MATERIALIZED VIEW b AS SELECT x FROM a;"})
    for bad in ("0", "-1", "257", "two"):
        p = knut("pipeline", "run", root, "--parallel", bad)
        assert p.returncode == 2 and "--parallel" in p.stderr, (bad, p.stderr)
    help_text = knut("pipeline", "run", "--help").stdout
    assert "--parallel N" in help_text and "default: 1" in help_text
    events = run(root, "-j", "8")  # more workers than flows: fine
    assert outcomes(events) == [("a", "COMPLETED"), ("b", "COMPLETED")]
    dry = run(root, "--dry-run", "--parallel", "2")
    assert outcomes(dry) == [("a", "PLANNED"), ("b", "PLANNED")]
