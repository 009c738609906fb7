"""`knut sync --metrics-addr / --metrics-file`: Prometheus metrics.

A real Prometheus (peers.Prometheus, scraping every second) scrapes a
running `knut sync` (a loop, not --once) on the port it bound for
127.0.0.1:0; the counters read back through Prometheus's own HTTP API
(/api/v1/query) must equal what the sync's JSON log says it did (rows,
vertices, edges, deletes per table; rounds). The endpoint answers 404 on
other paths and 405 on other methods, and after SIGTERM the metrics file
holds the final counters.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import urllib.error
import urllib.request

import pytest

from peers import REPO
from synclake import lake, records, wait_for  # noqa: F401 (lake: a fixture)



def http(method: str, url: str) -> tuple[int, str, str]:
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type", ""), e.read().decode()


def by_table(result: list[dict]) -> dict[str, float]:
    return {r["metric"]["table"]: float(r["value"][1]) for r in result}


def parse_text(text: str) -> dict[str, float]:
    """Sample lines of the exposition text: {'name{labels}': value}."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def test_prometheus_scrapes_sync(knut, lake, tmp_path, prometheus):
    err = tmp_path / "err.log"
    mfile = tmp_path / "metrics" / "knut_sync.prom"
    mfile.parent.mkdir()
    # interval 1 s, backoff up to 4 s: a few idle rounds while Prometheus scrapes
    cmd = [str(knut), "sync", "--config", str(lake / "sync.yml"), "--interval", "1",
           "--max-backoff", "4", "--metrics-addr", "127.0.0.1:0", "--metrics-file", str(mfile)]
    with open(err, "w") as ef:
        p = subprocess.Popen(cmd, stderr=ef, env=dict(os.environ, KNUT_LOG_FORMAT="json"))
    try:
        listening = wait_for(lambda: [r for r in records(err)
                                      if r["msg"] == "metrics server listening"])
        assert listening, err.read_text()
        port = listening[0]["port"]
        assert listening[0]["addr"] == f"127.0.0.1:{port}" and port > 0
        base = f"http://127.0.0.1:{port}"

        # the endpoint itself: text format 0.0.4, 404 elsewhere, 405 for writes
        status, ctype, body = http("GET", f"{base}/metrics")
        assert status == 200 and "version=0.0.4" in ctype
        assert "# TYPE knut_sync_rounds_total counter" in body
        assert http("GET", f"{base}/")[0] == 404
        assert http("GET", f"{base}/metrics/x")[0] == 404
        assert http("POST", f"{base}/metrics")[0] == 405
        assert http("PUT", f"{base}/metrics")[0] == 405

        prometheus.set_targets([f"127.0.0.1:{port}"])
        # the first round syncs the whole example; what it did, from its log
        assert wait_for(lambda: any(r["msg"] == "round done" for r in records(err))), \
            err.read_text()
        tables = [r for r in records(err) if r["msg"] == "table synced" and r["round"] == 1]
        assert len(tables) == 4
        want = {k: {t["table"]: float(t[k]) for t in tables}
                for k in ("rows", "vertices", "edges", "deletes")}
        assert want["rows"] == {"companies": 4, "people": 10, "employment": 10,
                                "people_changes": 6}

        def scraped(metric, key):
            got = by_table(prometheus.query(metric))
            return got if got == want[key] else None

        assert wait_for(lambda: scraped("knut_sync_rows_ingested_total", "rows")), \
            (prometheus.query("knut_sync_rows_ingested_total"), prometheus.log_tail())
        assert scraped("knut_sync_vertices_written_total", "vertices")
        assert scraped("knut_sync_edges_written_total", "edges")
        assert scraped("knut_sync_deletes_total", "deletes")
        synced = by_table(prometheus.query("knut_sync_tables_synced_total"))
        assert synced == {t: 1.0 for t in want["rows"]}
        assert prometheus.query('up{job="knut"}')[0]["value"][1] == "1"

        # rounds: Prometheus catches up with the log's count (idle rounds too)
        def rounds_match():
            res = prometheus.query("knut_sync_rounds_total")
            n = sum(1 for r in records(err) if r["msg"].startswith("round "))
            return n >= 2 and res and float(res[0]["value"][1]) == n
        assert wait_for(rounds_match), err.read_text()
        assert float(prometheus.query("knut_sync_rounds_failed_total")[0]["value"][1]) == 0
        count = prometheus.query("knut_sync_round_duration_seconds_count")
        assert float(count[0]["value"][1]) >= 2
        last = by_table(prometheus.query("knut_sync_last_success_timestamp_seconds"))
        assert set(last) == set(want["rows"]) and all(v > 0 for v in last.values())

        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()

    # the file written on shutdown: the final counters, whole
    got = parse_text(mfile.read_text())
    n_rounds = sum(1 for r in records(err) if r["msg"].startswith("round "))
    assert got["knut_sync_rounds_total"] == n_rounds
    assert got["knut_sync_round_duration_seconds_count"] == n_rounds
    assert got['knut_sync_round_duration_seconds_bucket{le="+Inf"}'] == n_rounds
    for table, rows in want["rows"].items():
        assert got[f'knut_sync_rows_ingested_total{{table="{table}"}}'] == rows
        assert got[f'knut_sync_vertices_written_total{{table="{table}"}}'] == \
            want["vertices"][table]
    assert not list(mfile.parent.glob("*.tmp"))
    # Prometheus's own linter accepts the text (format, HELP/TYPE, names)
    lint = subprocess.run([shutil.which("promtool") or "/usr/bin/promtool", "check", "metrics"],
                          input=mfile.read_text(), capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr


def test_once_writes_file_and_failed_round(run_knut, lake, tmp_path):
    # a bad file: the round fails (exit 1), and the file counts it
    (lake / "changes" / "people-changes-0099.csv").write_text("not,the,right\ncolumns,at,all\n")
    mfile = tmp_path / "m.prom"
    r = run_knut("sync", "--config", lake / "sync.yml", "--once", "--metrics-file", mfile,
                 env={"KNUT_LOG_FORMAT": "json"})
    assert r.returncode == 1, r.stderr
    got = parse_text(mfile.read_text())
    assert got["knut_sync_rounds_total"] == 1
    assert got["knut_sync_rounds_failed_total"] == 1
    assert got['knut_sync_rows_ingested_total{table="people"}'] == 10


def test_bad_metrics_addr(run_knut, lake):
    r = run_knut("sync", "--config", lake / "sync.yml", "--once", "--metrics-addr", "localhost:1")
    assert r.returncode == 2
    assert "--metrics-addr" in r.stderr and "localhost:1" in r.stderr
    # status takes no metrics options
    r = run_knut("sync", "status", "--config", lake / "sync.yml", "--metrics-file", "x.prom")
    assert r.returncode == 2 and "metrics" in r.stderr
