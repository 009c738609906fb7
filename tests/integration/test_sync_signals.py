"""What a long-running `knut sync` shows and does on signals
(docs/operations.md "Signals and reload"), from the user's side:

- a stop signal is logged at once ("finishing the round, second Ctrl-C
  stops now"), the round under way finishes and the exit is 0;
- a second one stops at once, and nothing is recorded done that did not
  land in the store;
- SIGHUP reads the config again between rounds; a config that does not
  load (or names another store) is logged and the old one kept;
- idle rounds are logged once per interval at most, with no line per table;
- on a terminal, a long round draws a progress line (rows, rows/s, files);
  `knut load` draws the same one.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from peers import REPO
from test_sync_status_live import Loop, lake, records, rounds, status, wait_for  # noqa: F401

BIG_ROWS = 300_000

BIG_TABLE = """
  big:
    path: big/
    format: csv
    vertices:
      - labels: [Big]
        keys: [id]
"""


def add_big(lake: Path, rows: int = BIG_ROWS) -> Path:
    """A table whose one file takes a while to sync (its own label)."""
    (lake / "big").mkdir()
    f = lake / "big" / "big.csv"
    with open(f, "w") as out:
        out.write("id,name\n")
        for i in range(rows):
            out.write(f"{i},name-{i}\n")
    cfg = lake / "sync.yml"
    cfg.write_text(cfg.read_text() + BIG_TABLE)
    return f


def big_count(run_knut, lake) -> int:
    r = run_knut("query", "--db", lake / "graph.duckdb", "--format", "json",
                 "SELECT count(*) AS n FROM v_Big")
    if r.returncode != 0:  # no such table: nothing landed
        return 0
    return json.loads(r.stdout.splitlines()[0])["n"]


def started(lake: Path) -> bool:
    """The sync has opened the store (it writes the snapshot at open)."""
    return (lake / "graph.duckdb.status.json").exists()


def test_sigint_once_logs_and_the_round_finishes(knut, run_knut, lake, tmp_path):
    add_big(lake)
    loop = Loop(knut, lake / "sync.yml", tmp_path / "err.log")
    try:
        assert wait_for(lambda: started(lake)), loop.err.read_text()
        loop.p.send_signal(signal.SIGINT)
        assert loop.p.wait(timeout=120) == 0, loop.err.read_text()
    finally:
        loop.kill()
    recs = records(loop.err)
    msgs = [r["msg"] for r in recs]
    stop = [r for r in recs if r["msg"].startswith("stop requested")]
    assert len(stop) == 1 and stop[0]["signal"] == "SIGINT", msgs
    assert "finishing the round, second Ctrl-C stops now" in stop[0]["msg"]
    # the round under way finished: after the notice, the round's record
    assert msgs.index(stop[0]["msg"]) < msgs.index("round done"), msgs
    assert len(rounds(loop.err)) == 1  # and no round after it
    r, doc = status(run_knut, lake / "sync.yml")
    assert r.returncode == 0 and {f["state"] for f in doc["files"]} == {"done"}, doc
    assert big_count(run_knut, lake) == BIG_ROWS


def test_second_sigint_stops_now_and_records_nothing_that_did_not_land(knut, run_knut, lake,
                                                                        tmp_path):
    add_big(lake)
    loop = Loop(knut, lake / "sync.yml", tmp_path / "err.log")
    try:
        assert wait_for(lambda: started(lake)), loop.err.read_text()
        loop.p.send_signal(signal.SIGINT)
        assert wait_for(lambda: any(r["msg"].startswith("stop requested")
                                    for r in records(loop.err)), 20)
        loop.p.send_signal(signal.SIGINT)
        rc = loop.p.wait(timeout=20)  # promptly: not after the round
    finally:
        loop.kill()
    # killed by the second signal, or (the round had just ended) exit 0
    assert rc in (-signal.SIGINT, 0), (rc, loop.err.read_text())
    r, doc = status(run_knut, lake / "sync.yml")
    assert r.returncode == 0, r.stderr
    big = [f for f in doc["files"] if f["table"] == "big"]
    assert len(big) == 1
    # done in the ledger exactly when its rows are in the store
    n = big_count(run_knut, lake)
    if big[0]["state"] == "done":
        assert n == BIG_ROWS
    else:
        assert big[0]["state"] == "pending" and n == 0, (big, n)
    # the next sync takes up what did not land
    assert run_knut("sync", "--once", "--config", lake / "sync.yml").returncode == 0
    assert big_count(run_knut, lake) == BIG_ROWS


def test_sighup_reloads_the_config_and_keeps_it_when_the_new_one_is_bad(knut, run_knut, lake,
                                                                       tmp_path):
    cfg = lake / "sync.yml"
    good = cfg.read_text()
    loop = Loop(knut, cfg, tmp_path / "err.log")
    try:
        assert wait_for(lambda: len(rounds(loop.err)) >= 1), loop.err.read_text()
        # a valid new config: one more table, synced in the round after the reload
        (lake / "extra").mkdir()
        (lake / "extra" / "e.csv").write_text("id,name\n1,x\n2,y\n")
        reloaded = good + ("\n  extra:\n    path: extra/\n    vertices:\n"
                           "      - labels: [Extra]\n        keys: [id]\n")
        cfg.write_text(reloaded)
        loop.p.send_signal(signal.SIGHUP)
        assert wait_for(lambda: any(r["msg"] == "config reloaded" for r in records(loop.err))), \
            loop.err.read_text()
        assert wait_for(lambda: any(f["table"] == "extra" and f["state"] == "done"
                                    for f in status(run_knut, cfg)[1]["files"])), \
            loop.err.read_text()

        # an invalid one: logged, and the old (reloaded) config goes on
        cfg.write_text(good + "\n  broken: [\n")
        loop.p.send_signal(signal.SIGHUP)
        assert wait_for(lambda: any(r["msg"].startswith("config reload failed")
                                    for r in records(loop.err))), loop.err.read_text()
        failed = [r for r in records(loop.err) if r["msg"].startswith("config reload failed")]
        assert failed[0]["level"] == "error" and str(cfg) in failed[0]["error"]
        assert "the old config stays in use" in failed[0]["msg"]
        # one that names another store is refused too
        cfg.write_text(good.replace("store: graph.duckdb", "store: other.duckdb"))
        loop.p.send_signal(signal.SIGHUP)
        assert wait_for(lambda: len([r for r in records(loop.err)
                                     if r["msg"].startswith("config reload failed")]) == 2)
        failed = [r for r in records(loop.err) if r["msg"].startswith("config reload failed")]
        assert "'store:' changed" in failed[1]["error"], failed[1]
        assert loop.p.poll() is None  # still running
        cfg.write_text(reloaded)  # for status (no SIGHUP: the sync never sees the bad ones)
        # the config in use still syncs both the old tables and the extra one
        (lake / "changes" / "people-changes-0002.csv").write_text(
            "_change_type,person_id,first_name,last_name,born,manager_id\n"
            "INSERT,70,Hup,Reload,2000-01-01,\n")
        (lake / "extra" / "f.csv").write_text("id,name\n3,z\n")
        assert wait_for(lambda: {f["path"].rsplit("/", 1)[-1] for f in
                                 status(run_knut, cfg)[1]["files"] if f["state"] == "done"}
                        >= {"people-changes-0002.csv", "f.csv"}), loop.err.read_text()
        assert loop.stop() == 0
    finally:
        loop.kill()
    assert not (lake / "other.duckdb").exists()


def test_idle_rounds_are_logged_once_per_interval_without_a_line_per_table(knut, run_knut, lake,
                                                                           tmp_path):
    loop = Loop(knut, lake / "sync.yml", tmp_path / "err.log", env={"KNUT_LOG": "debug"})
    try:
        assert wait_for(lambda: len(rounds(loop.err)) >= 1), loop.err.read_text()
        # rewriting a done file with the same bytes wakes a round (inotify)
        # that has nothing to do: an idle round, many times within the interval
        f = lake / "companies.csv"
        data = f.read_bytes()
        for i in range(5):
            f.write_bytes(data)
            assert wait_for(lambda: len(rounds(loop.err)) >= i + 2), loop.err.read_text()
        assert loop.stop() == 0
    finally:
        loop.kill()
    recs = records(loop.err)
    idle = [r for r in recs if r["msg"] == "round idle"]
    assert len(idle) == 5, [r["msg"] for r in recs]
    # the first idle round at info, the rest of the interval at debug
    assert [r["level"] for r in idle] == ["info", "debug", "debug", "debug", "debug"]
    # no table line at info for the idle rounds: only round 1's four
    table_info = [r for r in recs if r["msg"].startswith("table ") and r["level"] == "info"]
    assert {r["round"] for r in table_info} == {1} and len(table_info) == 4


def run_on_pty(cmd: list[str], env: dict, timeout=120) -> tuple[int, str]:
    """Runs cmd with stderr (and stdout) on a pseudo-terminal; its output."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave,
                         env=dict(os.environ, **env))
    os.close(slave)
    out = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.2)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the other side is closed
                break
            if not chunk:
                break
            out += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    return p.wait(timeout=30), out.decode(errors="replace")


def test_progress_line_on_a_terminal(knut, lake, tmp_path):
    add_big(lake, 50_000)
    # drawn from the round's start (by default after 2 s), human logs
    env = {"KNUT_SYNC_PROGRESS_AFTER_MS": "0", "KNUT_LOG_FORMAT": "human"}
    rc, out = run_on_pty([str(knut), "sync", "--once", "--config", str(lake / "sync.yml")], env)
    assert rc == 0, out
    assert "\r\x1b[K" in out and "round 1: " in out and "files read" in out, out
    assert "rows/s" in out and "table big" in out, out
    # the line is cleared before each log record, which stays whole
    assert "\r\x1b[K" + "round 1: " in out and "round done" in out, out
    # not a terminal: no progress line, only the log
    r = subprocess.run([str(knut), "sync", "--once", "--config", str(lake / "sync.yml")],
                       capture_output=True, text=True,
                       env=dict(os.environ, KNUT_SYNC_PROGRESS_AFTER_MS="0"))
    assert r.returncode == 0 and "rows/s" not in r.stderr, r.stderr


def test_load_draws_the_same_progress_line(knut, lake, tmp_path):
    rc, out = run_on_pty([str(knut), "load", "--mapping", str(lake / "sync.yml"), "--db",
                          str(tmp_path / "load.duckdb")], {})
    assert rc == 0, out
    assert "\r\x1b[K[" in out and "files" in out and "rows/s" in out, out
