"""`knut sync` and FalkorDB going away, and signals in FalkorDB rounds.

- FalkorDB killed under a running loop, in the middle of a round (frozen
  with SIGSTOP while the round waits on it, then SIGKILL): rounds fail
  naming host:port, the logged waits grow up to --max-backoff, and once
  FalkorDB is back on the same port with the same data dir the loop
  catches up: the graph equals the model, every file is done.
- SIGTERM at random moments in FalkorDB rounds: exit 0, the ledger file is
  whole, a retry converges to the model.
- SIGTERM while the sink waits on a frozen server: the wait is cancelled,
  nothing of the round is recorded, exit 0, the next run converges.
- A hung server with --falkordb-timeout: the round fails naming it, the
  loop backs off, and after the thaw the files commit.

The model and helpers are in syncmodel.py (seeded; KNUT_CRASH_SEED=N).
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time

from syncmodel import (SEED, Model, PersistentFalkorDB, graph_falkor, handlers_installed,
                       json_lines, make_root, settle, sync_cmd, wait_for)


def test_falkordb_outage_backoff_and_resume(knut, run_knut, tmp_path, start_peer):
    f = start_peer(PersistentFalkorDB)
    root = make_root(tmp_path)
    url = f"redis://{f.host}:{f.port}"
    ledger = root / "ledger.json"
    args = ("--falkordb", url, "--graph", "outage", "--ledger", ledger)
    model = Model(random.Random(SEED))
    for _ in range(5):
        model.land(root)
    err = root / "sync.log"
    with open(err, "w") as ef:
        p = subprocess.Popen(sync_cmd(knut, root, args, "--interval", "0.2", "--max-backoff", "1.6"),
                             stderr=ef, stdout=subprocess.DEVNULL,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json", KNUT_LOG="debug"))
        try:
            def rounds(msg):
                return [x for x in json_lines(err) if x.get("msg") == msg]

            wait_for(lambda: rounds("round done"), what="the first round")
            mark = len(json_lines(err))
            # the outage, mid-round: freeze the server, let new files start a
            # round that waits on it, then kill it (its AOF is fsync'ed)
            os.kill(f.pid, signal.SIGSTOP)
            for _ in range(3):
                model.land(root)  # files keep landing during the outage
            time.sleep(0.5)
            os.kill(f.pid, signal.SIGKILL)
            f.stop()  # reaps it

            def since():
                return json_lines(err)[mark:]

            wait_for(lambda: sum(x.get("msg") == "round failed" for x in since()) >= 5,
                     what="5 failed rounds")
            failed = [x for x in since() if x.get("msg") == "table failed"]
            assert failed and all(f"{f.host}:{f.port}" in x["error"] for x in failed), failed[:3]
            waits = [float(x["msg"].split()[3]) for x in since()
                     if x.get("msg", "").startswith("next round in")]
            # backoff: doubling from the interval, capped at --max-backoff
            assert waits[:4] == [0.4, 0.8, 1.6, 1.6], waits
            assert max(waits) == 1.6
            # nothing of the outage's files reached the ledger
            led = json.loads(ledger.read_text())
            assert len([e for e in led["entries"] if e["status"] == "done"]) < model.seq
            f.restart()
            mark = len(json_lines(err))
            model.land(root)
            wait_for(lambda: any(x.get("msg") == "round done" for x in since()),
                     what="a round after the restart")
            # the loop catches up: the interval again after progress
            wait_for(lambda: any(x.get("msg") == "round idle" for x in since()),
                     what="an idle round after the restart")
            recs = since()
            done_at = next(i for i, x in enumerate(recs) if x.get("msg") == "round done")
            nxt = next(x for x in recs[done_at:] if x.get("msg", "").startswith("next round in"))
            assert nxt["msg"] == "next round in 0.200 s", nxt  # progress: the interval again
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=30) == 0
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    got = graph_falkor(f, "outage")
    assert got == model.expected(), f"seed {SEED}: graph differs from the model"
    st = json.loads(ledger.read_text())["entries"]
    assert len(st) == model.seq and {e["status"] for e in st} == {"done"}


def test_sigterm_mid_falkordb_round(knut, run_knut, tmp_path, falkordb):
    """SIGTERM at random moments inside FalkorDB rounds (each start has 15
    new files per table to write): exit 0 every time, the ledger file is
    whole JSON, and a retry converges to the model (what was written but
    not recorded is replayed; every write is a MERGE)."""
    rng = random.Random(SEED)
    root = make_root(tmp_path)
    url = f"redis://{falkordb.host}:{falkordb.port}"
    ledger = root / "ledger.json"
    args = ("--falkordb", url, "--graph", "term", "--ledger", ledger)
    model = Model(rng)
    for attempt in range(6):
        for _ in range(15):
            model.land(root)
        p = subprocess.Popen(sync_cmd(knut, root, args, "--interval", "5"),
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json"))
        try:
            wait_for(lambda: handlers_installed(p.pid), what="the signal handlers")
            time.sleep(rng.uniform(0.0, 0.2))
            p.send_signal(signal.SIGTERM)
            _, stderr = p.communicate(timeout=60)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
        assert p.returncode == 0, f"seed {SEED}: attempt {attempt}: exit {p.returncode}\n{stderr}"
        if ledger.exists():
            json.loads(ledger.read_text())  # whole, never half-written
    settle(run_knut, root, args)
    assert graph_falkor(falkordb, "term") == model.expected(), f"seed {SEED}"
    st = json.loads(ledger.read_text())["entries"]
    assert len(st) == model.seq and {e["status"] for e in st} == {"done"}


def test_sigterm_while_waiting_for_falkordb(knut, run_knut, tmp_path, falkordb):
    """The signal lands while the sink waits for FalkorDB's reply (the
    server is frozen with SIGSTOP mid-round): the wait is cancelled, the
    table's apply fails with nothing recorded, the process exits 0, and the
    next run writes the files."""
    root = make_root(tmp_path)
    url = f"redis://{falkordb.host}:{falkordb.port}"
    ledger = root / "ledger.json"
    args = ("--falkordb", url, "--graph", "frozen", "--ledger", ledger)
    model = Model(random.Random(SEED))
    model.land(root)
    err = root / "sync.log"
    with open(err, "w") as ef:
        p = subprocess.Popen(sync_cmd(knut, root, args, "--interval", "30"), stderr=ef,
                             stdout=subprocess.DEVNULL,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json"))
        frozen = False
        try:
            wait_for(lambda: any(x.get("msg") == "round done" for x in json_lines(err)),
                     what="the first round")
            before = json.loads(ledger.read_text())["entries"]
            os.kill(falkordb.pid, signal.SIGSTOP)
            frozen = True
            model.land(root)  # inotify starts a round, which waits on the server
            time.sleep(0.5)  # inotify wakes the loop; its first query waits
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=30) == 0, err.read_text()
        finally:
            if frozen:
                os.kill(falkordb.pid, signal.SIGCONT)
            if p.poll() is None:
                p.kill()
                p.wait()
    recs = json_lines(err)
    failed = [x for x in recs if x.get("msg") == "table failed"]
    assert failed and "cancelled" in failed[0]["error"], err.read_text()
    after = json.loads(ledger.read_text())["entries"]
    assert after == before  # nothing of the cancelled round recorded
    settle(run_knut, root, args)
    assert graph_falkor(falkordb, "frozen") == model.expected(), f"seed {SEED}"


def test_hung_falkordb_times_out_and_resumes(knut, run_knut, tmp_path, falkordb):
    """A server that hangs rather than dies (frozen with SIGSTOP mid-round):
    with --falkordb-timeout the round fails naming the server and the loop
    backs off instead of waiting for ever; once the server thaws the next
    round commits the files, and the graph equals the model."""
    root = make_root(tmp_path)
    url = f"redis://{falkordb.host}:{falkordb.port}"
    ledger = root / "ledger.json"
    args = ("--falkordb", url, "--graph", "hung", "--ledger", ledger)
    model = Model(random.Random(SEED))
    model.land(root)
    err = root / "sync.log"
    with open(err, "w") as ef:
        p = subprocess.Popen(sync_cmd(knut, root, args, "--interval", "0.2", "--max-backoff", "0.8",
                                      "--falkordb-timeout", "1"),
                             stderr=ef, stdout=subprocess.DEVNULL,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json"))
        frozen = False
        try:
            wait_for(lambda: any(x.get("msg") == "round done" for x in json_lines(err)),
                     what="the first round")
            os.kill(falkordb.pid, signal.SIGSTOP)
            frozen = True
            model.land(root)
            wait_for(lambda: any(x.get("msg") == "table failed" for x in json_lines(err)),
                     what="a round failing on the hung server")
            failed = [x for x in json_lines(err) if x.get("msg") == "table failed"]
            assert f"{falkordb.host}:{falkordb.port}" in failed[0]["error"], failed[0]
            assert "no reply within 1000 ms" in failed[0]["error"], failed[0]
            os.kill(falkordb.pid, signal.SIGCONT)
            frozen = False
            n_done = len(json.loads(ledger.read_text())["entries"])
            wait_for(lambda: len(json.loads(ledger.read_text())["entries"]) > n_done,
                     what="the files of the failed round committed after the thaw")
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=30) == 0, err.read_text()
        finally:
            if frozen:
                os.kill(falkordb.pid, signal.SIGCONT)
            if p.poll() is None:
                p.kill()
                p.wait()
    settle(run_knut, root, args)
    assert graph_falkor(falkordb, "hung") == model.expected(), f"seed {SEED}"
