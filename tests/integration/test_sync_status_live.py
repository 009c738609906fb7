"""`knut sync status` next to a running `knut sync` (docs/sync.md
"Inspecting a running sync"), from the user's side.

The embedded store is locked by the sync that writes it, so status reads
the snapshot the sync writes beside the store each round; with no sync
running it reads the store read-only. A FalkorDB sync's status needs no
FalkorDB: the ledger file is named by the config. Exit 1 when a file has
failed, 0 otherwise; --json is one document; each file appears once, in
its latest state.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from peers import REPO
from synclake import lake, records, wait_for  # noqa: F401 (lake: a fixture)

HDR = "_change_type,person_id,first_name,last_name,born,manager_id\n"


def rounds(err: Path) -> list[dict]:
    return [r for r in records(err) if r.get("msg") in ("round done", "round idle", "round failed")]


class Loop:
    """`knut sync --interval 3600` in the background (inotify wakes it)."""

    def __init__(self, knut, cfg: Path, err: Path, *args, env=None):
        self.err = err
        self.f = open(err, "w")
        self.p = subprocess.Popen([str(knut), "sync", "--config", str(cfg), "--interval", "3600",
                                   *map(str, args)], stderr=self.f,
                                  env=dict(os.environ, KNUT_LOG_FORMAT="json", **(env or {})))

    def stop(self) -> int:
        if self.p.poll() is None:
            self.p.send_signal(signal.SIGTERM)
        try:
            return self.p.wait(timeout=30)
        finally:
            self.f.close()

    def kill(self):
        if self.p.poll() is None:
            self.p.kill()
            self.p.wait()
        self.f.close()


def status(run_knut, cfg, *args, env=None):
    r = run_knut("sync", "status", "--config", cfg, "--json", *args, env=env)
    assert r.returncode in (0, 1), r.stderr
    return r, json.loads(r.stdout)


def digest(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_status_while_the_loop_runs_on_the_store(knut, run_knut, lake, tmp_path):
    cfg = lake / "sync.yml"
    loop = Loop(knut, cfg, tmp_path / "err.log")
    try:
        assert wait_for(lambda: len(rounds(loop.err)) >= 1), loop.err.read_text()
        r, doc = status(run_knut, cfg)
        assert r.returncode == 0, r.stderr
        assert doc["source"]["kind"] == "store snapshot"
        assert doc["source"]["pid"] == loop.p.pid
        assert doc["source"]["path"].endswith("graph.duckdb.status.json")
        assert doc["failed"] == 0
        tables = {t["table"]: t for t in doc["tables"]}
        assert set(tables) == {"companies", "people", "employment", "people_changes"}
        assert all(t["done"] == 1 and t["failed"] == 0 and t["pending"] == 0
                   for t in tables.values()), tables
        assert tables["people"]["rows"] == 10 and tables["people"]["last_success"]
        # the sample's employment file names a deleted person: skip counts it
        assert tables["employment"]["edges_skipped"] == 1
        paths = [f["path"] for f in doc["files"]]
        assert len(paths) == len(set(paths)) == 4
        # the text form says what it read, and one line per table
        txt = run_knut("sync", "status", "--config", cfg)
        assert txt.returncode == 0, txt.stderr
        assert "source: store snapshot" in txt.stdout and f"pid {loop.p.pid}" in txt.stdout
        assert any(line.split()[:4] == ["people", "1", "0", "0"]
                   for line in txt.stdout.splitlines()), txt.stdout

        # a bad changelog file: recorded failed, status exits 1 and says why
        (lake / "changes" / "people-changes-0002.csv").write_text(HDR + "BOGUS,1,a,b,2000-01-01,\n")
        assert wait_for(lambda: status(run_knut, cfg)[1]["failed"] == 1), loop.err.read_text()
        r, doc = status(run_knut, cfg)
        assert r.returncode == 1
        bad = [f for f in doc["files"] if f["path"].endswith("people-changes-0002.csv")]
        assert len(bad) == 1 and bad[0]["state"] == "failed" and bad[0]["reason"], bad
        assert {t["table"]: t["failed"] for t in doc["tables"]}["people_changes"] == 1
        assert run_knut("sync", "status", "--config", cfg).returncode == 1

        # the fixed file is synced by the running loop; status sees it done
        (lake / "changes" / "people-changes-0002.csv").write_text(
            HDR + "UPDATE_AFTER,2,Alan,Fixed,1990-06-23,1\n")
        def fixed():
            r, doc = status(run_knut, cfg)
            again = [f for f in doc["files"] if f["path"].endswith("people-changes-0002.csv")]
            # once, and pending (changed since it failed) until the round took it
            assert len(again) == 1 and again[0]["state"] in ("pending", "done"), again
            return again[0]["state"] == "done" and r.returncode == 0
        assert wait_for(fixed), loop.err.read_text()
        assert loop.stop() == 0
    finally:
        loop.kill()

    # no sync running: the store itself, opened read-only (not changed)
    store = lake / "graph.duckdb"
    before = digest(store)
    r, doc = status(run_knut, cfg)
    assert r.returncode == 0 and doc["source"]["kind"] == "store", doc["source"]
    assert doc["source"]["pid"] is None
    assert digest(store) == before and not (lake / "graph.duckdb.wal").exists()
    # one line per file, in its latest state: a done file changed since is
    # pending only (not done and pending)
    (lake / "companies.csv").write_text("company_id,name,city,founded\n1,Acme,Berlin,2009\n")
    r, doc = status(run_knut, cfg)
    comp = [f for f in doc["files"] if f["table"] == "companies"]
    assert [f["state"] for f in comp] == ["pending"], comp
    t = {t["table"]: t for t in doc["tables"]}["companies"]
    assert (t["done"], t["failed"], t["pending"]) == (0, 0, 1)


def test_status_of_a_store_not_written_yet(run_knut, lake):
    r, doc = status(run_knut, lake / "sync.yml")
    assert r.returncode == 0, r.stderr
    assert doc["source"]["kind"] == "none"
    assert {f["state"] for f in doc["files"]} == {"pending"} and len(doc["files"]) == 4
    assert not (lake / "graph.duckdb").exists()  # status created nothing


def test_status_of_a_falkordb_sync_needs_no_falkordb_option(knut, run_knut, lake, tmp_path,
                                                           falkordb):
    cfg = lake / "sync.yml"
    cfg.write_text(cfg.read_text().replace("store: graph.duckdb", ""))
    url = f"redis://{falkordb.host}:{falkordb.port}"
    env = {"KNUT_FALKORDB_URL": ""}  # status has no FalkorDB to reach
    loop = Loop(knut, cfg, tmp_path / "err.log", "--falkordb", url, "--graph", "g")
    try:
        assert wait_for(lambda: len(rounds(loop.err)) >= 1), loop.err.read_text()
        r, doc = status(run_knut, cfg, env=env)
        assert r.returncode == 0, r.stderr
        assert doc["source"]["kind"] == "ledger file"
        assert doc["source"]["path"] == f"{cfg}.ledger.json"
        assert {f["state"] for f in doc["files"]} == {"done"} and len(doc["files"]) == 4, doc
        tables = {t["table"]: t for t in doc["tables"]}
        assert tables["people"]["last_success"] and tables["employment"]["edges_skipped"] == 1
        assert loop.stop() == 0
    finally:
        loop.kill()
    # FalkorDB gone: status still reads the ledger file
    falkordb.stop()
    r, doc = status(run_knut, cfg, env=env)
    assert r.returncode == 0 and doc["source"]["kind"] == "ledger file", r.stderr
    txt = run_knut("sync", "status", "--config", cfg, env=env)
    assert f"source: ledger file {cfg}.ledger.json" in txt.stdout, txt.stdout


def test_status_with_neither_store_nor_ledger_says_so(run_knut, lake):
    cfg = lake / "sync.yml"
    cfg.write_text(cfg.read_text().replace("store: graph.duckdb", ""))
    r = run_knut("sync", "status", "--config", cfg, env={"KNUT_FALKORDB_URL": ""})
    assert r.returncode == 2, r.stderr
    assert "no graph store" in r.stderr and "ledger file" in r.stderr
