"""`knut sync`: the sample lakehouse into the embedded store and FalkorDB.

Each test copies examples/lakehouse/ into a temporary folder, runs the
binary, and reads the graph back (`knut query --db` on the store, redis-py
on FalkorDB): counts and values, the ledger (re-runs do nothing, a new or
changed file is the only one processed), cdc (upserts before deletes, also
across files of one round), bad files recorded failed with the reason while
the others go on, temporary names skipped, `knut sync status`, inotify
wake-ups, and SIGTERM finishing the round with exit 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from peers import REPO
from synclake import lake, records, wait_for  # noqa: F401 (lake: a fixture)



def logs(proc) -> list[dict]:
    out = []
    for line in proc.stderr.splitlines():
        line = line.strip()
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def table_log(proc, table):
    recs = [r for r in logs(proc) if r.get("table") == table and r["msg"].startswith("table")]
    assert len(recs) == 1, proc.stderr
    return recs[0]


def sync(run_knut, lake, *args, env=None):
    e = {"KNUT_LOG_FORMAT": "json"}
    e.update(env or {})
    return run_knut("sync", "--config", lake / "sync.yml", *args, env=e)


def q(run_knut, lake, sql):
    r = run_knut("query", "--db", lake / "graph.duckdb", "--format", "json", sql)
    assert r.returncode == 0, r.stderr
    return [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def status(run_knut, lake, *args):
    r = run_knut("sync", "status", "--config", lake / "sync.yml", "--json", *args)
    assert r.returncode in (0, 1), r.stderr  # 1: a file failed
    doc = json.loads(r.stdout)
    assert r.returncode == (1 if doc["failed"] else 0)
    return doc["files"]


def person(run_knut, lake, pid):
    rows = q(run_knut, lake, f"SELECT * FROM v_Person WHERE id = {int(pid)}")
    return rows[0] if rows else None


def test_example_into_embedded_store(run_knut, lake):
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0, r.stderr
    assert table_log(r, "companies")["vertices"] == 4
    ppl = table_log(r, "people")
    assert (ppl["rows"], ppl["vertices"], ppl["edges"], ppl["files"]) == (10, 10, 9, 1)
    # employment's edges wait for every table writing Person (docs/sync.md, the
    # ordering contract): it runs after people_changes, whose deleted Ken has
    # no WORKS_AT edge written (and then removed) any more: 9, not 10
    assert table_log(r, "employment")["edges"] == 9
    ch = table_log(r, "people_changes")
    # Ken deleted; Leslie's last event is her DELETE: never written, nothing to delete
    assert ch["rows"] == 6 and ch["deletes"] == 1 and ch["errors"] == 0
    rnd = [x for x in logs(r) if x["msg"].startswith("round")]
    assert rnd[-1]["msg"] == "round done" and rnd[-1]["round"] == 1
    counts = q(run_knut, lake, """
        SELECT (SELECT count(*) FROM v_Person) p, (SELECT count(*) FROM v_Company) c,
               (SELECT count(*) FROM e_WORKS_AT) w, (SELECT count(*) FROM e_REPORTS_TO) r""")[0]
    # 10 people - Ken (deleted) + Margaret (inserted); Leslie inserted and deleted
    assert counts == {"p": 10, "c": 4, "w": 9, "r": 9}
    grace = person(run_knut, lake, 3)
    assert grace["last_name"] == "Brewster Hopper"  # UPDATE_AFTER, not UPDATE_BEFORE
    assert grace["full_name"] == "Grace Brewster Hopper"  # the sql step
    assert str(grace["birthday"]).startswith("1988-12-09")  # {name, column}
    assert "_change_type" not in grace and "person_id" not in grace  # tag dropped; rename
    assert person(run_knut, lake, 10) is None and person(run_knut, lake, 12) is None
    labels = q(run_knut, lake, "SELECT label FROM _knut_vertex_labels_of l JOIN v_Person p "
               "ON p._knut_vid = l.vid WHERE p.id = 1 ORDER BY label")
    assert [x["label"] for x in labels] == ["Employee", "Person"]
    works = q(run_knut, lake, "SELECT w.title, w.started, c.name FROM e_WORKS_AT w "
              "JOIN v_Person p ON p._knut_vid = w._knut_src JOIN v_Company c "
              "ON c._knut_vid = w._knut_dst WHERE p.id = 1")
    assert works[0]["title"] == "CTO" and works[0]["name"] == "Acme Analytics"
    assert str(works[0]["started"]).startswith("2015-03-01")
    led = q(run_knut, lake, 'SELECT "table", status, rows, round FROM _knut_sync_ledger '
            'ORDER BY "table"')
    assert [(x["table"], x["status"], x["rows"], x["round"]) for x in led] == [
        ("companies", "done", 4, 1), ("employment", "done", 10, 1),
        ("people", "done", 10, 1), ("people_changes", "done", 6, 1)]


def test_rerun_is_idle_and_new_file_only(run_knut, lake):
    assert sync(run_knut, lake, "--once").returncode == 0
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0, r.stderr
    assert all(table_log(r, t)["files"] == 0 for t in ("companies", "people", "employment"))
    assert [x for x in logs(r) if x["msg"].startswith("round")][-1]["msg"] == "round idle"
    # a new drop: only it is processed
    (lake / "changes" / "people-changes-0002.csv").write_text(
        "_change_type,person_id,first_name,last_name,born,manager_id\n"
        "UPDATE_AFTER,2,Alan,Turing-Updated,1990-06-23,1\n")
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0, r.stderr
    assert table_log(r, "people_changes")["files"] == 1
    assert table_log(r, "people_changes")["rows"] == 1
    assert table_log(r, "people")["files"] == 0
    assert person(run_knut, lake, 2)["last_name"] == "Turing-Updated"
    assert person(run_knut, lake, 10) is None  # the old DELETE was not replayed... or harmless


def test_changed_file_per_mode(run_knut, lake):
    assert sync(run_knut, lake, "--once").returncode == 0
    # incremental: the rewritten file's rows are upserted
    (lake / "companies.csv").write_text(
        "company_id,name,city,founded\n1,Acme Renamed,Berlin,2009\n5,Newco,Rome,2024\n")
    # cdc: a rewritten changelog is replayed as a whole (here: one more DELETE)
    ch = lake / "changes" / "people-changes-0001.csv"
    ch.write_text(ch.read_text() + "DELETE,9,Radia,Perlman,1994-12-18,6\n")
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0, r.stderr
    assert table_log(r, "companies")["files"] == 1
    assert table_log(r, "people")["files"] == 0
    rows = q(run_knut, lake, "SELECT id, name FROM v_Company ORDER BY id")
    assert [(x["id"], x["name"]) for x in rows] == [
        (1, "Acme Renamed"), (2, "Globex Graphs"), (3, "Initech Data"),
        (4, "Umbrella Lakes"), (5, "Newco")]
    assert person(run_knut, lake, 9) is None
    # touched but identical bytes: not reprocessed
    os.utime(lake / "people.csv", (time.time() + 5, time.time() + 5))
    r = sync(run_knut, lake, "--once")
    assert table_log(r, "people")["files"] == 0


def test_cdc_last_event_of_a_key_wins_in_one_round(run_knut, lake):
    """30: DELETE (a.csv) then INSERT (b.csv): present; 31: in, then out."""
    hdr = "_change_type,person_id,first_name,last_name,born,manager_id\n"
    (lake / "changes" / "a.csv").write_text(hdr + "DELETE,30,X,Y,2000-01-01,\n"
                                            "INSERT,31,A,B,2000-01-01,\n")
    (lake / "changes" / "b.csv").write_text(hdr + "INSERT,30,X,Y,2000-01-01,\n"
                                            "UPDATE_AFTER,31,A,C,2000-01-01,\n"
                                            "DELETE,31,A,C,2000-01-01,\n")
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0, r.stderr
    assert table_log(r, "people_changes")["files"] == 3
    assert person(run_knut, lake, 30)["first_name"] == "X"
    assert person(run_knut, lake, 31) is None


def test_bad_files_recorded_failed_others_continue(run_knut, lake):
    """Each bad changelog file is recorded failed with its reason; being a
    changelog, the table's later files wait behind it (docs/sync.md, the
    ordering contract), the other tables go on."""
    cfg = lake / "sync.yml"  # format by extension, so a .parquet drop is read too
    cfg.write_text(cfg.read_text().replace("    format: csv\n    mode: cdc", "    mode: cdc"))
    ch_dir = lake / "changes"
    (ch_dir / "people-changes-0000.parquet").write_bytes(b"PAR1 this is not parquet")
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 1, r.stderr  # the round had failures
    ch = table_log(r, "people_changes")
    assert ch["files"] == 0 and ch["failed_files"] == 1 and ch["pending_files"] == 1
    assert table_log(r, "companies")["files"] == 1  # the other tables went on
    st = {Path(x["path"]).name: x for x in status(run_knut, lake)}
    assert st["people-changes-0001.csv"]["state"] == "pending"  # held back
    assert "parquet" in st["people-changes-0000.parquet"]["reason"].lower()
    assert person(run_knut, lake, 11) is None
    (ch_dir / "people-changes-0000.parquet").unlink()  # gone: the changelog goes on
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0 and table_log(r, "people_changes")["files"] == 1
    assert person(run_knut, lake, 11)["first_name"] == "Margaret"
    hdr = "_change_type,person_id,first_name,last_name,born,manager_id\n"
    bad_files = [
        ("people-changes-0003.csv", "person_id,first_name,last_name\n1,a,b\n",
         "column '_change_type'"),  # no _change_type
        ("people-changes-0004.csv", hdr + "INSERT,,N,N,2000-01-01,\n",
         "'person_id' is null in 1 rows"),
        ("people-changes-0005.csv", hdr + "UPSERT,40,N,N,2000-01-01,\n",
         "_change_type other than"),
        ("people-changes-0006.csv", "who,what\n1,2\n", "sql step:"),
    ]
    for name, text, why in bad_files:
        (ch_dir / name).write_text(text)
        r = sync(run_knut, lake, "--once")
        assert r.returncode == 1
        st = {Path(x["path"]).name: x for x in status(run_knut, lake)}
        assert st[name]["state"] == "failed" and why in st[name]["reason"], st[name]
        if name != "people-changes-0006.csv":
            (ch_dir / name).unlink()
    assert "sync.yml:" in st["people-changes-0003.csv"]["reason"]
    # unchanged bad files are not retried; the round is idle and succeeds
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0 and table_log(r, "people_changes")["failed_files"] == 0
    # a fixed file is retried
    (ch_dir / "people-changes-0006.csv").unlink()
    (ch_dir / "people-changes-0003.csv").write_text(hdr + "INSERT,41,Fran,Gold,2000-01-01,\n")
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0 and table_log(r, "people_changes")["files"] == 1
    assert person(run_knut, lake, 41)["first_name"] == "Fran"


def test_apply_time_data_error_is_pinned_on_its_file(run_knut, lake):
    assert sync(run_knut, lake, "--once").returncode == 0
    hdr = "_change_type,person_id,first_name,last_name,born,manager_id\n"
    # born is a DATE in the store; in p-0003 CSV inference makes it VARCHAR,
    # so the round's batch (and that file alone) cannot be applied
    (lake / "changes" / "p-0002.csv").write_text(hdr + "INSERT,70,Tom,Ok,2000-01-01,\n")
    (lake / "changes" / "p-0003.csv").write_text(hdr + "INSERT,71,Ann,Bad,someday,\n")
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 1, r.stderr
    ch = table_log(r, "people_changes")
    assert ch["files"] == 1 and ch["failed_files"] == 1, r.stderr
    assert person(run_knut, lake, 70)["first_name"] == "Tom"
    assert person(run_knut, lake, 71) is None
    st = {Path(x["path"]).name: x for x in status(run_knut, lake)}
    assert st["p-0002.csv"]["state"] == "done"
    assert st["p-0003.csv"]["state"] == "failed"
    assert "birthday" in st["p-0003.csv"]["reason"], st["p-0003.csv"]["reason"]
    # fixed: retried and synced
    (lake / "changes" / "p-0003.csv").write_text(hdr + "INSERT,71,Ann,Good,2001-02-03,\n")
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0, r.stderr
    assert person(run_knut, lake, 71)["last_name"] == "Good"


def test_temporary_names_and_pending_status(run_knut, lake):
    hdr = "_change_type,person_id,first_name,last_name,born,manager_id\n"
    for name in (".hidden.csv", "_staging.csv", "part.csv.tmp", "x.csv.part"):
        (lake / "changes" / name).write_text(hdr + "INSERT,50,T,T,2000-01-01,\n")
    st = status(run_knut, lake)
    assert {x["state"] for x in st} == {"pending"} and len(st) == 4
    assert not (lake / "graph.duckdb").exists()  # status never creates the store
    r = sync(run_knut, lake, "--once")
    assert r.returncode == 0 and table_log(r, "people_changes")["files"] == 1
    assert person(run_knut, lake, 50) is None
    (lake / "changes" / "later.csv").write_text(hdr + "INSERT,51,T,T,2000-01-01,\n")
    st = status(run_knut, lake)
    assert [Path(x["path"]).name for x in st if x["state"] == "pending"] == ["later.csv"]
    assert sum(1 for x in st if x["state"] == "done") == 4
    txt = run_knut("sync", "status", "--config", lake / "sync.yml")
    assert "pending" in txt.stdout and "done" in txt.stdout


def test_config_errors_and_full_mode(run_knut, lake, tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("tables:\n  t:\n    path: x\n    mode: append\n"
                   "    vertices: [{labels: [A], keys: [k]}]\n")
    r = run_knut("sync", "--once", "--config", bad)
    assert r.returncode == 2 and f"{bad}:4:11: table 't'" in r.stderr
    full = tmp_path / "full.yml"
    full.write_text("store: g.duckdb\ntables:\n  t:\n    path: x\n    mode: full\n"
                    "    vertices: [{labels: [A], keys: [k]}]\n")
    r = run_knut("sync", "--once", "--config", full)
    assert r.returncode == 0, r.stderr  # mode full: tests/integration/test_sync_full.py
    r = run_knut("sync", "--once")
    assert r.returncode == 2 and "--config" in r.stderr
    r = run_knut("sync", "--help")
    assert r.returncode == 0 and "Example:" in r.stdout


def test_loop_inotify_and_sigterm(knut, run_knut, lake, tmp_path):
    err = tmp_path / "err.log"
    with open(err, "w") as ef:
        p = subprocess.Popen([str(knut), "sync", "--config", str(lake / "sync.yml"),
                              "--interval", "30"], stderr=ef,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json"))
        try:
            assert wait_for(lambda: '"round done"' in err.read_text()), err.read_text()
            # a new file wakes the loop long before the 30 s interval
            (lake / "changes" / "people-changes-0009.csv").write_text(
                "_change_type,person_id,first_name,last_name,born,manager_id\n"
                "INSERT,60,Ino,Tify,2000-01-01,\n")
            assert wait_for(lambda: err.read_text().count('"round done"') >= 2, 10), \
                err.read_text()
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=20) == 0
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert person(run_knut, lake, 60)["last_name"] == "Tify"
    st = status(run_knut, lake)
    assert all(x["state"] == "done" for x in st) and len(st) == 5


def test_loop_wakes_for_renamed_in_file_not_for_temp_name(knut, run_knut, lake, tmp_path):
    """The write-then-rename pattern: writing `.x.tmp` wakes no round, the
    rename does (the interval is an hour: only inotify can wake the loop),
    and the renamed-in file is complete at once (synced, not pending)."""
    err = tmp_path / "err.log"
    rounds = lambda: [r for r in records(err) if r.get("msg", "").startswith("round ")]  # noqa: E731
    with open(err, "w") as ef:
        p = subprocess.Popen([str(knut), "sync", "--config", str(lake / "sync.yml"),
                              "--interval", "3600"], stderr=ef,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json"))
        try:
            assert wait_for(lambda: len(rounds()) == 1), err.read_text()
            tmp = lake / "changes" / ".people-changes-0009.csv.tmp"
            tmp.write_text("_change_type,person_id,first_name,last_name,born,manager_id\n"
                           "INSERT,61,Re,Named,2000-01-01,\n")
            time.sleep(0.3)  # room for a wrong wake-up to show as an idle round
            os.rename(tmp, lake / "changes" / "people-changes-0009.csv")
            assert wait_for(lambda: len(rounds()) >= 2), err.read_text()
            p.send_signal(signal.SIGTERM)
            assert p.wait(timeout=20) == 0
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    rs = rounds()
    assert [r["msg"] for r in rs] == ["round done", "round done"], err.read_text()
    assert rs[1]["files"] == 1 and rs[1]["pending_files"] == 0
    assert person(run_knut, lake, 61)["last_name"] == "Named"


def test_staging_spill_dir_and_memory_limit(run_knut, lake, tmp_path):
    """The staging engine's spill directory lives under $TMPDIR and is gone
    after the run; a --memory-limit DuckDB refuses is a usage error."""
    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    r = sync(run_knut, lake, "--once", "--memory-limit", "256MB", env={"TMPDIR": str(tmp)})
    assert r.returncode == 0, r.stderr
    assert table_log(r, "people")["files"] == 1
    assert list(tmp.iterdir()) == []
    r = sync(run_knut, lake, "--once", "--memory-limit", "lots")
    assert r.returncode == 2 and "memory limit 'lots'" in r.stderr, r.stderr


def test_falkordb_sink(run_knut, lake, falkordb, tmp_path):
    url = f"redis://{falkordb.host}:{falkordb.port}"
    ledger = tmp_path / "ledger.json"
    args = ("--falkordb", url, "--graph", "lake", "--ledger", ledger)
    r = sync(run_knut, lake, "--once", *args)
    assert r.returncode == 0, r.stderr
    rows = falkordb.query("lake", "MATCH (p:Person) RETURN count(p)")[1]
    assert rows[0][0] == 10
    rows = falkordb.query("lake", "MATCH (:Person)-[w:WORKS_AT]->(:Company) RETURN count(w)")[1]
    assert rows[0][0] == 9
    rows = falkordb.query("lake", "MATCH (p:Person {id: 3}) RETURN p.last_name, p.full_name")[1]
    assert [x.decode() if isinstance(x, bytes) else x for x in rows[0]] == [
        "Brewster Hopper", "Grace Brewster Hopper"]
    assert falkordb.query("lake", "MATCH (p:Person) WHERE p.id IN [10, 12] RETURN p")[1] == []
    doc = json.loads(ledger.read_text())
    assert sorted(e["table"] for e in doc["entries"] if e["status"] == "done") == [
        "companies", "employment", "people", "people_changes"]
    r = sync(run_knut, lake, "--once", *args)
    assert r.returncode == 0 and table_log(r, "people")["files"] == 0
    st = status(run_knut, lake, "--falkordb", url, "--ledger", ledger)
    assert len(st) == 4 and all(x["state"] == "done" for x in st)


def _many_changes(lake, n=40):
    hdr = "_change_type,person_id,first_name,last_name,born,manager_id\n"
    for i in range(n):
        (lake / "changes" / f"bulk-{i:04d}.csv").write_text(
            hdr + f"INSERT,{1000 + i},Bulk,N{i},2000-01-01,\n")


def _wait_for_log(p, pred, timeout=60.0):
    """Reads p's JSON stderr until a record satisfies pred; then keeps
    draining it in a thread (a full pipe would block the job). Returns
    (the record, the list all records are appended to)."""
    recs: list[dict] = []
    found: list[dict] = []
    ready = threading.Event()

    def drain():
        for line in p.stderr:
            line = line.strip()
            if line.startswith("{"):
                rec = json.loads(line)
                recs.append(rec)
                if not found and pred(rec):
                    found.append(rec)
                    ready.set()
        ready.set()  # EOF: the job ended before the record came

    threading.Thread(target=drain, daemon=True).start()
    ready.wait(timeout)
    assert found, f"no such log record within {timeout} s: {recs}"
    return found[0], recs


@pytest.mark.parametrize("signals", [1, 2])
def test_signal_mid_round_keeps_ledger_consistent(knut, run_knut, lake, signals):
    _many_changes(lake)
    p = subprocess.Popen([str(knut), "sync", "--config", str(lake / "sync.yml"),
                          "--interval", "30"], stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, KNUT_LOG_FORMAT="json"))
    try:
        # The first table committed: the first round has begun, whatever the
        # load on the machine (a fixed sleep could land before it).
        _wait_for_log(p, lambda r: r.get("msg", "").startswith("table "))
        for _ in range(signals):
            p.send_signal(signal.SIGTERM)
            time.sleep(0.02)
        rc = p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    st = status(run_knut, lake)
    done = {Path(x["path"]).name for x in st if x["state"] == "done"}
    if signals == 1:
        # the round finished (or had, if the signal came after it), then a
        # clean exit
        assert rc == 0
        assert len(done) == 4 + 40 and not [x for x in st if x["state"] != "done"]
    else:
        # the second signal stops at once, or the round was already over
        assert rc in (0, -signal.SIGTERM)
    # The ledger and the graph agree for every file: a bulk file is recorded
    # done exactly when its row is in the graph (one transaction holds both).
    # Before the Person table's first commit there is no v_Person to read.
    has_person = q(run_knut, lake, "SELECT count(*) AS n FROM information_schema.tables "
                                   "WHERE table_name = 'v_Person'")[0]["n"] > 0
    ids = {r["id"] for r in q(run_knut, lake, "SELECT id FROM v_Person WHERE id >= 1000")} \
        if has_person else set()
    assert has_person or not [n for n in done if n.startswith("bulk-")]
    for i in range(40):
        assert (f"bulk-{i:04d}.csv" in done) == ((1000 + i) in ids), (i, sorted(done))
