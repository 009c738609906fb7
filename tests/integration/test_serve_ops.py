"""`knut serve --metrics-addr` and the request log: a real Prometheus
(peers.Prometheus) scrapes the server while pyarrow.flight clients run
queries, promtool lints the text, and the JSON log line of each request is
checked for its fields and for holding no secret (auth on, the token known).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pyarrow as pa
import pyarrow.flight as fl
import pytest

import flightsql_wire as w

TOKEN = "tok-secret-alice-7731"
NEEDLE = "needle-value-5512"  # a literal in a query: never in a log line


def records(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            pass
    return out


def wait_for(pred, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        got = pred()
        if got:
            return got
        time.sleep(0.2)
    return pred()


def parse_text(text: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


@pytest.fixture
def served(knut, tmp_path):
    err = tmp_path / "serve.log"
    env = dict(os.environ, KNUT_LOG_FORMAT="json", KNUT_SERVE_TOKEN=f"alice:{TOKEN}")
    env.pop("KNUT_LOG", None)
    with open(err, "w") as ef:
        p = subprocess.Popen([str(knut), "serve", "--memory", "--addr", "127.0.0.1:0",
                              "--metrics-addr", "0"], stdout=subprocess.PIPE, stderr=ef,
                             text=True, env=env)
    line = p.stdout.readline()
    assert line.startswith("listening on "), err.read_text()
    port = int(line.strip().rsplit(":", 1)[1])
    try:
        yield p, port, err
    finally:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0


def run_queries(port: int) -> None:
    c = fl.FlightClient(f"grpc://127.0.0.1:{port}")
    good = fl.FlightCallOptions(headers=[(b"authorization", f"Bearer {TOKEN}".encode())])
    for _ in range(3):
        info = c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query(
            f"SELECT range AS i, '{NEEDLE}' AS s FROM range(1000)")), good)
        assert c.do_get(info.endpoints[0].ticket, good).read_all().num_rows == 1000
    with pytest.raises(pa.ArrowInvalid):
        c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query(
            f"SELEC '{NEEDLE}'")), good)
    with pytest.raises(fl.FlightUnauthenticatedError):
        c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query("SELECT 1")))
    bad = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer wrong-token-0001")])
    with pytest.raises(fl.FlightUnauthenticatedError):
        c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query("SELECT 1")), bad)


def test_metrics_and_prometheus(served, prometheus):
    p, port, err = served
    listening = wait_for(lambda: [r for r in records(err)
                                  if r.get("msg") == "metrics server listening"])
    assert listening, err.read_text()
    mport = listening[0]["port"]
    assert listening[0]["addr"] == f"127.0.0.1:{mport}"  # a bare port is loopback
    run_queries(port)
    with urllib.request.urlopen(f"http://127.0.0.1:{mport}/metrics", timeout=10) as r:
        assert "version=0.0.4" in r.headers["Content-Type"]
        text = r.read().decode()
    got = parse_text(text)
    assert got['knut_serve_requests_total{rpc="DoGet",code="OK"}'] == 3
    assert got['knut_serve_requests_total{rpc="GetFlightInfo",code="OK"}'] == 3
    assert got['knut_serve_requests_total{rpc="GetFlightInfo",code="INVALID_ARGUMENT"}'] == 1
    assert got['knut_serve_requests_total{rpc="GetFlightInfo",code="UNAUTHENTICATED"}'] == 2
    assert got['knut_serve_rows_sent_total{rpc="DoGet"}'] == 3000
    assert got['knut_serve_bytes_sent_total{rpc="DoGet"}'] > 3000 * 8
    assert got["knut_serve_active_streams"] == 0
    assert got['knut_serve_request_duration_seconds_count{rpc="DoGet"}'] == 3
    assert got['knut_serve_request_duration_seconds_bucket{rpc="DoGet",le="+Inf"}'] == 3
    assert got["knut_serve_database_reopens_total"] == 0
    assert TOKEN not in text and NEEDLE not in text
    lint = subprocess.run([shutil.which("promtool") or "/usr/bin/promtool", "check", "metrics"],
                          input=text, capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr

    prometheus.set_targets([f"127.0.0.1:{mport}"])

    def scraped():
        res = prometheus.query('knut_serve_rows_sent_total{rpc="DoGet"}')
        return res and float(res[0]["value"][1]) == 3000
    assert wait_for(scraped), prometheus.log_tail()
    res = prometheus.query('knut_serve_requests_total{rpc="DoGet",code="OK"}')
    assert float(res[0]["value"][1]) == 3
    assert prometheus.query('up{job="knut"}')[0]["value"][1] == "1"


def test_request_log_lines(served):
    p, port, err = served
    run_queries(port)
    p.send_signal(signal.SIGTERM)
    assert p.wait(timeout=30) == 0
    text = err.read_text()
    assert TOKEN not in text and NEEDLE not in text and "wrong-token-0001" not in text
    reqs = [r for r in records(err) if r.get("msg") == "request"]
    fields = {"identity", "rpc", "command", "rows", "bytes", "status", "duration_ms"}
    for r in reqs:
        assert fields <= set(r), r
        assert r["level"] == "info"
    gets = [r for r in reqs if r["rpc"] == "DoGet"]
    assert len(gets) == 3
    for r in gets:
        assert r["identity"] == "alice" and r["command"] == "TicketStatementQuery"
        assert r["rows"] == 1000 and r["bytes"] > 8000 and r["status"] == "OK"
        assert r["duration_ms"] >= 0
    infos = [r for r in reqs if r["rpc"] == "GetFlightInfo"]
    assert sorted(r["status"] for r in infos) == ["INVALID_ARGUMENT", "OK", "OK", "OK",
                                                  "UNAUTHENTICATED", "UNAUTHENTICATED"]
    assert all(r["command"] == "CommandStatementQuery" for r in infos if r["status"] == "OK")
    assert all(r["identity"] == "" for r in infos if r["status"] == "UNAUTHENTICATED")
