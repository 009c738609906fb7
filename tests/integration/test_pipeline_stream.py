"""End-to-end tests of event-time streaming in `knut pipeline`
(docs/pipelines.md, "Streaming"): watermarks, late rows, tumbling /
hopping / session windows, the output modes and triggers, over folders of
CSV / Parquet drops and STREAM() reads of streaming tables. Every
event-time conformance case of ../shared/reference/pipeline-semantics.md
(section 7, cases 32-41) is input -> exact expected output, read back with
`knut query`; a kill -9 test restarts a run killed at random moments and
compares the result with an uninterrupted run.
"""
import json
import os
import random
import signal
import subprocess
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from test_pipeline import KNUT, flow_event, knut, outcomes, project, rows, run

SPEC1 = ("name: test\nstorage: storage\nconfiguration:\n  knut.max_files_per_update: '1'\n"
         "libraries:\n  - glob:\n      include: t/**\n")


@pytest.fixture(scope="module", autouse=True)
def binary_exists():
    if not os.access(KNUT, os.X_OK):
        pytest.fail(f"knut binary not found at {KNUT} (build it or set KNUT_BIN)")


def csv(events, header="ts,word"):
    return header + "\n" + "".join(f"2026-01-01 {t},{w}\n" for t, w in events)


def windows(root, table="counts", cols="word, n"):
    return [tuple(r.values()) for r in rows(
        root, f"SELECT strftime(window_start, '%H:%M') AS s, strftime(window_end, '%H:%M') AS e, "
              f"{cols} FROM {table} ORDER BY ALL")]


def batches(events, flow="counts"):
    return [e["details"] for e in events if e["flow"] == flow and e["status"] == "COMPLETED"]


TUMBLING = """
CREATE STREAMING TABLE counts
  WINDOW TUMBLING (INTERVAL 10 MINUTES)
  OUTPUT MODE APPEND
AS SELECT window_start, window_end, word, count(*) AS n
FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL 10 MINUTES
GROUP BY ALL;
"""


# ---- conformance 32: the worked example of section 4.6 ----------------------

def test_c32_tumbling_append_emits_once_when_the_watermark_passes(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": TUMBLING,
        "in/0.csv": csv([("12:02:00", "dog"), ("12:07:00", "cat")]),
        "in/1.csv": csv([("12:14:00", "dog"), ("12:09:00", "cat")]),
        "in/2.csv": csv([("12:21:00", "owl")]),
    }, SPEC1)
    events = run(root)
    b = batches(events)
    # three data batches (one file each) and the no-data batch that the
    # watermark's move to 12:11 calls for, which emits [12:00,12:10).
    assert [x["batch_kind"] for x in b] == ["data", "data", "data", "no-data"]
    assert [x["rows_out"] for x in b] == [0, 0, 0, 2]
    wm = [x["watermark_us"] for x in b]
    assert wm == sorted(wm)
    assert windows(root) == [("12:00", "12:10", "cat", 2), ("12:00", "12:10", "dog", 1)]
    # batch 4: donkey@12:04 is late (its window ended at 12:10 <= 12:11).
    (root / "in/3.csv").write_text(csv([("12:04:00", "donkey"), ("12:13:00", "cat")]))
    events = run(root)
    b = batches(events)
    assert b[0]["late_rows"] == 1 and b[0]["rows_out"] == 0
    assert windows(root) == [("12:00", "12:10", "cat", 2), ("12:00", "12:10", "dog", 1)]
    # The late count is in the event log table too.
    late = rows(root, "SELECT sum((details::JSON->>'late_rows')::BIGINT) AS n "
                      "FROM _knut.event_log WHERE flow = 'counts' AND status = 'COMPLETED'")
    assert late == [{"n": 1}]
    # Nothing new: IDLE, no output, nothing emitted twice.
    assert outcomes(run(root)) == [("counts", "IDLE")]
    assert windows(root) == [("12:00", "12:10", "cat", 2), ("12:00", "12:10", "dog", 1)]


def complete_windows(tmp_path, window, times):
    root = project(tmp_path, {
        "t/s.sql": f"""
CREATE STREAMING TABLE counts WINDOW {window} OUTPUT MODE COMPLETE
AS SELECT window_start, window_end, count(*) AS n
FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY ALL;""",
        "in/0.csv": csv([(t, "x") for t in times]),
    })
    run(root)
    return windows(root, cols="n")


def test_c33_window_boundary_is_start_inclusive(tmp_path):
    assert complete_windows(tmp_path, "TUMBLING (INTERVAL 10 MINUTES)", ["12:10:00"]) == [
        ("12:10", "12:20", 1)]


def test_c34_hopping_window_assigns_every_overlapping_window(tmp_path):
    assert complete_windows(tmp_path, "HOPPING (INTERVAL 10 MINUTES, INTERVAL 5 MINUTES)",
                            ["12:07:00"]) == [("12:00", "12:10", 1), ("12:05", "12:15", 1)]


def test_c35_start_offset(tmp_path):
    assert complete_windows(tmp_path, "TUMBLING (INTERVAL 1 HOUR, START INTERVAL 15 MINUTES)",
                            ["13:20:00"]) == [("13:15", "14:15", 1)]


def test_c36_window_final_when_watermark_equals_its_end(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": """
CREATE STREAMING TABLE counts WINDOW TUMBLING (INTERVAL 5 MINUTES)
AS SELECT window_start, window_end, count(*) AS n
FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY ALL;""",
        "in/0.csv": csv([("12:10:00", "x"), ("12:16:00", "x")]),  # watermark 12:15
    })
    run(root)
    assert windows(root, cols="n") == [("12:10", "12:15", 1)]


SESSION = """
CREATE STREAMING TABLE sessions WINDOW SESSION (INTERVAL 5 MINUTES) KEYS (word)
AS SELECT window_start, window_end, word, count(*) AS n
FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY ALL;
"""


@pytest.mark.parametrize("times,expected", [
    (["12:00:00", "12:03:00", "12:08:00"], [("12:00", "12:13", "u", 3)]),
    (["12:00:00", "12:03:00", "12:09:00"], [("12:00", "12:08", "u", 2),
                                            ("12:09", "12:14", "u", 1)]),
])
def test_c37_session_windows_merge_inclusively(tmp_path, times, expected):
    # a later event of another key moves the watermark past the sessions.
    root = project(tmp_path, {"t/s.sql": SESSION,
                              "in/0.csv": csv([(t, "u") for t in times] + [("13:00:00", "z")])})
    run(root)
    assert windows(root, "sessions") == expected


@pytest.mark.parametrize("sql,message,line,col", [
    ("CREATE STREAMING TABLE s WINDOW SESSION (INTERVAL 5 MINUTES) KEYS (k)\n"
     "  OUTPUT MODE UPDATE\nAS SELECT window_start, k, count(*) AS n FROM read_csv('in/*.csv') "
     "WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY ALL;",
     "session windows do not support OUTPUT MODE UPDATE", 2, 3),
    ("CREATE STREAMING TABLE s\n  WINDOW TUMBLING (INTERVAL 5 MINUTES)\n"
     "AS SELECT window_start, count(*) AS n FROM read_csv('in/*.csv') GROUP BY ALL;",
     "an aggregation without a watermark cannot run in append mode", 2, 3),
])
def test_c38_refused_combinations(tmp_path, sql, message, line, col):
    root = project(tmp_path, {"t/s.sql": sql})
    p = knut("pipeline", "validate", root, "--json")
    assert p.returncode == 1, (p.stdout, p.stderr)
    err = json.loads(p.stdout)["error"]
    assert message in err["message"] and (err["line"], err["col"]) == (line, col), err
    assert f"t/s.sql:{line}:{col}:" in err["message"]


def test_c39_watermark_never_moves_backwards(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": TUMBLING,
        "in/0.csv": csv([("12:30:00", "a")]),
        "in/1.csv": csv([("12:20:00", "b")]),
    }, SPEC1)
    b = [x for x in batches(run(root)) if x["batch_kind"] == "data"]
    ts = rows(root, "SELECT strftime(make_timestamp(watermark_us), '%H:%M') AS w "
                    "FROM _knut.stream_state")
    assert len(b) == 2 and b[0]["watermark_us"] == b[1]["watermark_us"]
    assert ts == [{"w": "12:20"}]


def test_c40_available_now_batches_then_stop(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": TUMBLING,
        "in/0.csv": csv([("12:02:00", "a")]),
        "in/1.csv": csv([("12:12:00", "a")]),
        "in/2.csv": csv([("12:22:00", "a")]),
    }, SPEC1)
    b = batches(run(root))
    assert [x["batch_kind"] for x in b] == ["data", "data", "data", "no-data"]
    assert [x["files_read"] for x in b] == [1, 1, 1, 0]
    assert windows(root) == [("12:00", "12:10", "a", 1)]
    assert outcomes(run(root)) == [("counts", "IDLE")]
    assert windows(root) == [("12:00", "12:10", "a", 1)]


# ---- conformance 41 and kill -9: exactly once across crashes ----------------

KILL_SQL = """
CREATE STREAMING TABLE raw AS SELECT * FROM read_parquet('in/*.parquet');
CREATE STREAMING TABLE counts WINDOW TUMBLING (INTERVAL 1 MINUTE)
AS SELECT window_start, window_end, word, count(*) AS n, sum(v) AS total
FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 2 MINUTES GROUP BY ALL;
CREATE STREAMING TABLE sessions WINDOW SESSION (INTERVAL 5 SECONDS) KEYS (usr)
AS SELECT window_start, window_end, usr, count(*) AS n
FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY ALL;
"""


def drops(root, nfiles, seed):
    rnd = random.Random(seed)
    (root / "in").mkdir(parents=True, exist_ok=True)
    base = 1767268800_000000  # 2026-01-01 12:00 UTC, microseconds
    for i in range(nfiles):
        # event time moves on ~20 s a file, jittered back up to 3 minutes:
        # some rows are late by then, most are not.
        ts = [base + (i * 20 + rnd.randint(-180, 20)) * 1_000_000 for _ in range(50)]
        pq.write_table(pa.table({
            "ts": pa.array(ts, pa.timestamp("us")),
            "word": [rnd.choice("abc") for _ in ts],
            "usr": [rnd.choice("abcdefghijklmnopqrst") for _ in ts],
            "v": [rnd.randint(1, 9) for _ in ts]}), root / "in" / f"{i:04d}.parquet")


def result(root):
    return (rows(root, "SELECT * FROM counts ORDER BY ALL"),
            rows(root, "SELECT * FROM sessions ORDER BY ALL"),
            rows(root, "SELECT count(*) AS n FROM raw"))


def test_c41_kill_9_at_random_moments_resumes_exactly(tmp_path):
    spec = SPEC1
    ref = project(tmp_path / "ref", {"t/s.sql": KILL_SQL}, spec)
    drops(ref, 24, 7)
    run(ref)
    expected = result(ref)
    assert expected[0] and expected[1]  # windows were emitted
    root = project(tmp_path / "crash", {"t/s.sql": KILL_SQL}, spec)
    drops(root, 24, 7)
    rnd = random.Random(41)
    killed = 0
    for _ in range(30):
        p = subprocess.Popen([KNUT, "pipeline", "run", str(root), "--json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rnd.uniform(0.0, 0.4))
        if p.poll() is None:
            p.send_signal(signal.SIGKILL)
            killed += 1
        p.wait()
    assert killed >= 10  # most rounds died mid-run
    run(root)  # to the end
    assert result(root) == expected
    late = rows(root, "SELECT count(*) AS n FROM _knut.stream_state WHERE batches > 0")
    assert late == [{"n": 2}]


# ---- options ------------------------------------------------------------------

def test_update_mode_rewrites_changed_windows(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": """
CREATE STREAMING TABLE counts WINDOW TUMBLING (INTERVAL 10 MINUTES) OUTPUT MODE UPDATE
AS SELECT window_start, window_end, word, count(*) AS n
FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL 10 MINUTES GROUP BY ALL;""",
        "in/0.csv": csv([("12:02:00", "dog"), ("12:07:00", "cat")]),
    })
    b = batches(run(root))
    assert b[0]["rows_out"] == 2
    assert windows(root) == [("12:00", "12:10", "cat", 1), ("12:00", "12:10", "dog", 1)]
    (root / "in/1.csv").write_text(csv([("12:14:00", "dog"), ("12:09:00", "cat")]))
    b = batches(run(root))
    assert b[0]["rows_out"] == 3  # both words of [12:00,12:10) and dog of [12:10,12:20)
    assert windows(root) == [("12:00", "12:10", "cat", 2), ("12:00", "12:10", "dog", 1),
                             ("12:10", "12:20", "dog", 1)]
    # 12:30 moves the watermark to 12:20: [12:00,12:10) leaves the state,
    # so a later 12:05 row is late and the window keeps its value.
    (root / "in/2.csv").write_text(csv([("12:30:00", "owl")]))
    run(root)
    (root / "in/3.csv").write_text(csv([("12:05:00", "cat")]))
    b = batches(run(root))
    assert b[0]["late_rows"] == 1
    assert ("12:00", "12:10", "cat", 2) in windows(root)


def test_complete_mode_rewrites_everything_and_keeps_state(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": """
CREATE STREAMING TABLE counts WINDOW TUMBLING (INTERVAL 10 MINUTES) OUTPUT MODE COMPLETE
AS SELECT window_start, window_end, word, count(*) AS n
FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL 1 MINUTE GROUP BY ALL;""",
        "in/0.csv": csv([("12:02:00", "dog"), ("12:30:00", "cat")]),
    })
    run(root)
    (root / "in/1.csv").write_text(csv([("12:03:00", "dog")]))  # behind the watermark
    b = batches(run(root))
    assert b[0]["late_rows"] == 0 and b[0]["rows_out"] == 2
    assert windows(root) == [("12:00", "12:10", "dog", 2), ("12:30", "12:40", "cat", 1)]


def test_trigger_once_reads_one_batch_per_run(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": TUMBLING.replace("OUTPUT MODE APPEND", "TRIGGER ONCE"),
        "in/0.csv": csv([("12:02:00", "a")]),
        "in/1.csv": csv([("12:25:00", "a")]),
    }, SPEC1)
    assert [x["files_read"] for x in batches(run(root))] == [1]
    assert [x["files_read"] for x in batches(run(root))] == [1]
    # the second batch ran with the watermark of the first (11:52): nothing
    # is final yet, and ONCE runs no no-data batch after it.
    assert windows(root) == []
    # no new file, but the watermark (12:15) moved past the last emission:
    # this run's one batch is a no-data batch, which emits [12:00,12:10).
    assert [x["batch_kind"] for x in batches(run(root))] == ["no-data"]
    assert windows(root) == [("12:00", "12:10", "a", 1)]
    assert outcomes(run(root)) == [("counts", "IDLE")]


def test_watermark_without_window_drops_late_rows(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": """
CREATE STREAMING TABLE clean AS SELECT ts, word
FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL '5 minutes';""",
        "in/0.csv": csv([("12:10:00", "a"), ("12:20:00", "b")]),
        "in/1.csv": csv([("12:15:00", "late"), ("12:15:01", "kept")]) + ",nul\n",
    }, SPEC1)
    b = batches(run(root), "clean")
    assert [(x["late_rows"], x["null_event_time_rows"]) for x in b] == [(0, 0), (1, 1)]
    got = rows(root, "SELECT word FROM clean ORDER BY ts")
    assert [r["word"] for r in got] == ["a", "kept", "b"]


def test_stream_of_an_upstream_table_and_full_refresh(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": """
CREATE STREAMING TABLE raw AS SELECT * FROM read_csv('in/*.csv');
CREATE STREAMING TABLE counts;
CREATE FLOW counting WINDOW TUMBLING (INTERVAL 10 MINUTES)
AS INSERT INTO counts BY NAME SELECT window_start, window_end, word, count(*) AS n
FROM STREAM(raw) WATERMARK ts DELAY OF INTERVAL 10 MINUTES GROUP BY ALL;""",
        "in/0.csv": csv([("12:02:00", "a"), ("12:31:00", "b")]),
    })
    run(root)
    assert windows(root) == [("12:00", "12:10", "a", 1)]
    (root / "in/1.csv").write_text(csv([("12:55:00", "c")]))  # watermark 12:45
    run(root)
    assert windows(root) == [("12:00", "12:10", "a", 1), ("12:30", "12:40", "b", 1)]
    run(root, "--full-refresh", "counts", "raw")
    assert windows(root) == [("12:00", "12:10", "a", 1), ("12:30", "12:40", "b", 1)]
    assert rows(root, "SELECT count(*) AS n FROM _knut.stream_state") == [{"n": 1}]


@pytest.mark.parametrize("clause,message,col", [
    ("WATERMARK ts DELAY OF INTERVAL 5 MONTHS", "unknown interval unit 'MONTHS'", 58),
    ("WATERMARK ts DELAY OF INTERVAL 0 SECONDS", "the interval must be positive", 58),
    ("WATERMARK ts DELAY OF INTERVAL 31 DAYS", "less than 30 days", 36),
    ("WATERMARK ts DELAY 5", "expected of, found '5'", 55),
    ("WATERMARK ts DELAY OF INTERVAL x MINUTES", "a number after INTERVAL", 67),
])
def test_bad_watermark_names_file_line_col(tmp_path, clause, message, col):
    root = project(tmp_path, {"t/s.sql": "CREATE STREAMING TABLE s AS\nSELECT * FROM "
                                         f"read_csv('in/*.csv') {clause};"})
    p = knut("pipeline", "validate", root, "--json")
    assert p.returncode == 1, (p.stdout, p.stderr)
    err = json.loads(p.stdout)["error"]
    assert message in err["message"], err
    assert (err["line"], err["col"]) == (2, col), err


@pytest.mark.parametrize("sql,message", [
    ("CREATE MATERIALIZED VIEW m AS SELECT * FROM read_csv('in/*.csv') "
     "WATERMARK ts DELAY OF INTERVAL 1 MINUTE;", "belong to streaming flows"),
    ("CREATE STREAMING TABLE s OUTPUT MODE COMPLETE AS SELECT * FROM read_csv('in/*.csv') "
     "WATERMARK ts DELAY OF INTERVAL 1 MINUTE;", "OUTPUT MODE COMPLETE needs a WINDOW"),
    ("CREATE STREAMING TABLE s WINDOW HOPPING (INTERVAL 1 MINUTE, INTERVAL 2 MINUTES) "
     "AS SELECT 1 FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL 1 MINUTE;",
     "must not exceed its size"),
    ("CREATE STREAMING TABLE s WINDOW SESSION (INTERVAL 1 MINUTE) AS SELECT 1 "
     "FROM read_csv('in/*.csv') WATERMARK ts DELAY OF INTERVAL 1 MINUTE;", "KEYS"),
])
def test_bad_streaming_clauses(tmp_path, sql, message):
    root = project(tmp_path, {"t/s.sql": sql})
    p = knut("pipeline", "validate", root, "--json")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert message in json.loads(p.stdout)["error"]["message"]


def test_docs_stream_example(tmp_path):
    """The streaming example of docs/pipelines.md runs and gives the table shown."""
    import re
    from test_pipeline import REPO
    page = (REPO / "docs" / "pipelines.md").read_text()
    blocks = re.findall(r"<!-- stream-(file|output): ([^>]+?) -->\n```[a-z]*\n(.*?)```", page,
                        re.S)
    files = {name: text for kind, name, text in blocks if kind == "file"}
    outputs = [(name, text) for kind, name, text in blocks if kind == "output"]
    assert len(files) == 2 and len(outputs) == 1
    root = project(tmp_path, files)
    run(root)
    sql, want = outputs[0]
    p = knut("query", "--db", root / "storage" / "pipeline.duckdb", "--format", "csv", sql)
    assert p.returncode == 0, p.stderr
    assert p.stdout.replace("\r\n", "\n") == want


def test_processing_time_trigger_runs_as_available_now_within_a_run(tmp_path):
    root = project(tmp_path, {
        "t/s.sql": TUMBLING.replace("OUTPUT MODE APPEND",
                                    "TRIGGER PROCESSING TIME INTERVAL '30 seconds'"),
        "in/0.csv": csv([("12:02:00", "a")]),
        "in/1.csv": csv([("12:25:00", "a")]),
    }, SPEC1)
    b = batches(run(root))
    assert [x["batch_kind"] for x in b] == ["data", "data", "no-data"]
    assert windows(root) == [("12:00", "12:10", "a", 1)]
    p = knut("pipeline", "validate", project(tmp_path / "bad", {
        "t/s.sql": TUMBLING.replace("OUTPUT MODE APPEND", "TRIGGER PROCESSING TIME 5")}), "--json")
    assert p.returncode == 1 and "expected interval" in json.loads(p.stdout)["error"]["message"]
