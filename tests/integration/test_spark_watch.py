"""`knut watch` against a real Spark Connect server (spark_peer.py).

The server is the peer for every check: the stage events of a multi-stage
query (a join and a group by) end with every stage complete, in JSON mode;
a run on a terminal (a pty) draws the bars in place and prints the rows at
the end; Ctrl-C interrupts the operation, which the server's UI then shows
as no longer running; a bad query gives Spark's error class and exit 1.
"""
from __future__ import annotations

import json
import os
import pty
import select
import signal
import subprocess
import time

from spark_peer import spark_connect  # noqa: F401  (the session fixture)

MULTI_STAGE = (
    "SELECT a.k, count(*) AS c FROM (SELECT id % 7 AS k FROM range(0, 3000000, 1, 4)) a "
    "JOIN (SELECT id AS k, id * 10 AS v FROM range(0, 7, 1, 2)) b ON a.k = b.k "
    "GROUP BY a.k ORDER BY a.k")
EXPECTED = [(k, len(range(k, 3000000, 7))) for k in range(7)]


def watch_cmd(knut, peer, *args):
    return [str(knut), "watch", peer.url, "--token-file", str(peer.token_file),
            "--allow-insecure-token", *args]


def events(text: str) -> list[dict]:
    return [json.loads(x) for x in text.splitlines() if x.startswith("{")]


def test_json_stage_events_end_complete(knut, spark_connect):
    # stdout is a pipe: JSON events without --json
    p = subprocess.run(watch_cmd(knut, spark_connect, "--sql", MULTI_STAGE, "--rows", "3"),
                       capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    ev = events(p.stdout)
    assert len(ev) == len(p.stdout.splitlines())  # every line is one object
    assert ev[0]["event"] == "start" and ev[0]["server"] == spark_connect.url.rstrip("/")
    op = ev[0]["operation_id"]
    assert all(e["operation_id"] == op for e in ev)
    end = ev[-1]
    assert end["event"] == "end" and end["status"] == "ok" and end["rows"] == 7
    stages: dict[int, dict] = {}
    for e in ev:
        if e["event"] == "stage":
            assert 0 <= e["tasks_done"] <= e["tasks_total"], e
            stages[e["stage_id"]] = e  # the last event of each stage
    assert end["stages"] == len(stages)
    # every stage ends: run to completion, or "ended" (a stage Spark
    # skipped, reusing a shuffle's output, or one whose last tasks finished
    # after the server's last progress message: some may have been reported)
    ran = [s for s in stages.values() if s["state"] == "done"]
    for s in stages.values():
        if s["state"] == "done":
            assert s["done"] is True and s["tasks_done"] == s["tasks_total"] > 0, s
        else:
            assert s["state"] == "ended" and not s["done"], s
    # the scans of both sides ran to completion long before the result
    assert any(s["tasks_total"] == 4 for s in ran), stages  # the 4-partition range
    assert any(s["tasks_total"] == 2 for s in ran), stages  # the 2-partition one
    rows = [e for e in ev if e["event"] == "rows"]
    assert rows and rows[-1]["rows"] == 7
    # the first 3 rows of the result, as values
    got = [(e["row"]["k"], e["row"]["c"]) for e in ev if e["event"] == "row"]
    assert got == EXPECTED[:3]


def run_in_pty(cmd, timeout=600):
    """Runs cmd with stdout and stderr on a pseudo-terminal; its exit code and output."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            r, _, _ = select.select([master], [], [], 1.0)
            if r:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not data:
                    break
                out += data
            elif proc.poll() is not None:
                break
        return proc.wait(timeout=60), out.decode("utf-8", "replace")
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()


def test_terminal_shows_bars_and_the_rows(knut, spark_connect):
    rc, out = run_in_pty(watch_cmd(knut, spark_connect, "--sql", MULTI_STAGE))
    assert rc == 0, out
    assert not out.lstrip().startswith("{")  # a terminal gets no JSON
    # a bar per stage, redrawn in place (cursor up, clear line)
    assert "stage " in out and "tasks" in out
    assert "[" + "#" * 30 + "]" in out  # a complete stage's full bar
    assert "\x1b[K" in out and "\x1b[" in out and "A" in out
    assert "done" in out
    # the rows at the end, as a table
    table = out.rsplit("\x1b[J", 1)[-1]
    for k, c in EXPECTED:
        assert any(str(k) in line and str(c) in line for line in table.splitlines()), (k, table)
    assert "7 rows in" in table


def test_ctrl_c_interrupts_on_the_server(knut, spark_connect):
    sql = "SELECT count(*) FROM range(0, 100000000000, 1, 2) WHERE id % 1000003 = 7"
    proc = subprocess.Popen(watch_cmd(knut, spark_connect, "--json", "--sql", sql),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # wait until a stage of the job runs on the server
        seen = []
        for line in proc.stdout:
            e = json.loads(line)
            seen.append(e)
            if e["event"] == "stage" and not e["done"]:
                break
        assert seen and seen[-1]["event"] == "stage", seen
        proc.send_signal(signal.SIGINT)
        rest = proc.stdout.read()
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 130, err
    finally:
        if proc.poll() is None:
            proc.kill()
    assert "interrupted" in err and seen[0]["operation_id"] in err
    end = events(rest)[-1]
    assert end["event"] == "end" and end["status"] == "interrupted"
    # the query's job ends on the server (not left running)
    deadline = time.monotonic() + 180
    running = None
    while time.monotonic() < deadline:
        try:
            jobs = spark_connect.jobs()
        except OSError:  # the UI answers slowly on a busy machine: ask again
            time.sleep(1)
            continue
        running = [j for j in jobs if j["status"] == "RUNNING"]
        if not running:
            break
        time.sleep(0.5)
    assert running == [], running


def test_bad_sql_gives_the_error_class(knut, spark_connect):
    p = subprocess.run(watch_cmd(knut, spark_connect, "--sql", "SELECT * FROM no_such_table"),
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 1
    assert "Spark error TABLE_OR_VIEW_NOT_FOUND (SQLSTATE 42P01)" in p.stderr, p.stderr
    end = events(p.stdout)[-1]
    assert end["event"] == "end" and end["status"] == "error"
    assert end["error_class"] == "TABLE_OR_VIEW_NOT_FOUND" and end["sql_state"] == "42P01"
    assert "no_such_table" in end["message"]


def test_usage_errors(run_knut):
    p = run_knut("watch", "sc://127.0.0.1:1/")
    assert p.returncode == 2 and "missing --sql SQL" in p.stderr
    p = run_knut("watch", "sc://127.0.0.1:1/", "--connect", "sc://127.0.0.1:1/", "--sql", "x")
    assert p.returncode == 2 and "URL or --connect" in p.stderr
    p = run_knut("watch", "--sql", "SELECT 1", env={"SPARK_REMOTE": ""})
    assert p.returncode == 2 and "missing --connect URL" in p.stderr
