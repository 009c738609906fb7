"""`knut sync --airflow-url`: Airflow asset events after each round.

Against a real Airflow 3 (API server + scheduler + DAG processor on SQLite,
started once per session, see peers.Airflow) with the consumer DAGs of
tests/integration/airflow_dags: a round's event is recorded with knut's
extra and triggers the consumer DAG; an `asset:` URI from the config is
used; a wrong password or Airflow being down never fails the sync, and the
failure is logged (target "assets") without the password. A small
fault-injection fake (FaultyAirflow) covers what a healthy Airflow never
does: an expired token (401), oversized replies, and the Airflow 2 API's
request shape (a real Airflow 2 is in test_sync_airflow2.py).
"""

from __future__ import annotations

import base64
import json
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from peers import AIRFLOW_PASSWORD, AIRFLOW_USER, REPO, free_port

EXAMPLE = REPO / "examples" / "lakehouse"
DAGS = Path(__file__).resolve().parent / "airflow_dags"


@pytest.fixture
def consumers(airflow):
    """The session's Airflow once the consumer DAGs' assets exist."""
    assert airflow.dags == DAGS
    deadline = time.monotonic() + 120
    uris: set[str] = set()
    while time.monotonic() < deadline:
        uris = {a["uri"] for a in airflow.get("/api/v2/assets?limit=100")["assets"]}
        if {"knut://graph/people", "x-lake://hr/employment"} <= uris:
            return airflow
        time.sleep(1)
    pytest.fail(f"consumer assets not registered; have {uris}")


@pytest.fixture
def lake(tmp_path):
    d = tmp_path / "lake"
    shutil.copytree(EXAMPLE, d)
    cfg = d / "sync.yml"
    text = cfg.read_text().replace("store: ../../demo/graph.duckdb", "store: graph.duckdb")
    # employment names its asset; the other tables get knut://graph/<table>
    text = text.replace("  employment:\n    path: employment.csv\n",
                        "  employment:\n    path: employment.csv\n    asset: x-lake://hr/employment\n")
    cfg.write_text(text)
    return d


def records(proc, target="assets") -> list[dict]:
    out = []
    for line in proc.stderr.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("target") == target:
                out.append(rec)
    return out


def sync(run_knut, lake, url, *args, password=AIRFLOW_PASSWORD, user=AIRFLOW_USER):
    env = {"KNUT_LOG_FORMAT": "json", "KNUT_AIRFLOW_PASSWORD": password}
    return run_knut("sync", "--config", lake / "sync.yml", "--once", "--airflow-url", url,
                    "--airflow-user", user, *args, env=env)


def asset_id(airflow, uri) -> int:
    for a in airflow.get("/api/v2/assets?limit=100")["assets"]:
        if a["uri"] == uri:
            return a["id"]
    raise AssertionError(f"no asset {uri}")


def events_after(airflow, aid, after_id) -> list[dict]:
    evs = airflow.get(f"/api/v2/assets/events?asset_id={aid}&order_by=-timestamp&limit=50")["asset_events"]
    return [e for e in evs if e["id"] > after_id]


def last_event_id(airflow, aid) -> int:
    evs = airflow.get(f"/api/v2/assets/events?asset_id={aid}&order_by=-timestamp&limit=1")["asset_events"]
    return evs[0]["id"] if evs else 0


def test_round_emits_asset_events_that_trigger_the_consumer(run_knut, lake, consumers):
    airflow = consumers
    people, employment = asset_id(airflow, "knut://graph/people"), asset_id(airflow, "x-lake://hr/employment")
    before = {people: last_event_id(airflow, people), employment: last_event_id(airflow, employment)}
    runs_before = airflow.get("/api/v2/dags/knut_people_consumer/dagRuns")["total_entries"]

    prom = lake / "metrics.prom"
    # a generous drain: a busy CI box may answer slowly (the two events
    # without a consumer use it all up, then are dropped)
    r = sync(run_knut, lake, airflow.url, "--metrics-file", prom, "--airflow-drain", "20")
    assert r.returncode == 0, r.stderr
    sent = {rec["table"]: rec for rec in records(r) if rec["msg"] == "asset event sent"}
    assert set(sent) == {"people", "employment"}, r.stderr
    # counted once accepted (the file is written after the drain)
    assert "\nknut_sync_assets_emitted_total 2\n" in prom.read_text()
    assert sent["people"]["uri"] == "knut://graph/people"
    assert sent["employment"]["uri"] == "x-lake://hr/employment"
    # companies and people_changes have no consumer: logged, never fatal
    dropped = {rec["table"] for rec in records(r) if rec["msg"] == "asset event dropped"}
    assert dropped == {"companies", "people_changes"}, r.stderr
    assert any("no asset with URI 'knut://graph/companies'" in rec.get("error", "")
               for rec in records(r)), r.stderr

    evs = events_after(airflow, people, before[people])
    assert len(evs) == 1, evs
    extra = evs[0]["extra"]
    assert extra["round"] == 1 and extra["table"] == "people"
    assert extra["files"] == 1 and extra["rows"] == 10 and extra["vertices"] == 10
    assert extra["source"] == str((lake / "people.csv").resolve())
    assert extra["knut_instance"] and extra["synced_at"].endswith("Z")
    assert extra["from_rest_api"] is True
    emp = events_after(airflow, employment, before[employment])
    # 9: employment runs after people_changes, which deletes Ken (docs/sync.md)
    assert len(emp) == 1 and emp[0]["extra"]["edges"] == 9, emp

    # the scheduler turns the event into an asset-triggered run of the consumer
    deadline = time.monotonic() + 90
    runs = []
    while time.monotonic() < deadline:
        runs = airflow.get("/api/v2/dags/knut_people_consumer/dagRuns?order_by=-id")
        if runs["total_entries"] > runs_before:
            break
        time.sleep(1)
    assert runs["total_entries"] > runs_before, runs
    assert runs["dag_runs"][0]["run_type"] == "asset_triggered"

    # a second round with nothing new sends nothing
    again = sync(run_knut, lake, airflow.url)
    assert again.returncode == 0, again.stderr
    assert not [rec for rec in records(again) if rec["msg"].startswith("asset event")], again.stderr
    assert len(events_after(airflow, people, before[people])) == 1


def test_wrong_password_is_logged_and_the_sync_goes_on(run_knut, lake, consumers):
    airflow = consumers
    secret = "not-the-password-42"
    r = sync(run_knut, lake, airflow.url, password=secret)
    assert r.returncode == 0, r.stderr
    recs = records(r)
    assert any("POST /auth/token: HTTP 401 (user or password refused)" in rec.get("error", "")
               for rec in recs), r.stderr
    assert any(rec["msg"] == "asset event dropped" for rec in recs)
    assert secret not in r.stderr and secret not in r.stdout
    synced = [rec for rec in records(r, "sync") if rec["msg"].startswith("round")]
    assert synced and synced[0]["files"] == 4


def test_airflow_down_sync_succeeds_and_logs(run_knut, lake):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    r = sync(run_knut, lake, url, password="pw-down-123")
    assert r.returncode == 0, r.stderr
    recs = records(r)
    assert any(rec["msg"] == "asset event not sent yet" and rec["level"] == "warn"
               and "connect" in rec["error"].lower() for rec in recs), r.stderr
    dropped = [rec for rec in recs if rec["msg"] == "asset event dropped"]
    assert {rec["table"] for rec in dropped} == {"companies", "people", "employment",
                                                 "people_changes"}
    assert all(rec["error"] == "not sent before shutdown" for rec in dropped)
    assert "pw-down-123" not in r.stderr
    # the data is in the graph all the same
    q = run_knut("query", "--db", lake / "graph.duckdb", "--format", "json",
                 "SELECT count(*) AS n FROM v_Person")
    assert q.returncode == 0 and json.loads(q.stdout)["n"] > 0, q.stderr


def test_bad_asset_uri_is_a_config_error(run_knut, lake):
    cfg = lake / "sync.yml"
    cfg.write_text(cfg.read_text().replace("asset: x-lake://hr/employment",
                                           "asset: airflow://hr/employment"))
    r = run_knut("sync", "--config", cfg, "--once")
    assert r.returncode == 2
    assert "sync.yml:" in r.stderr and "table 'employment'" in r.stderr
    assert "'airflow' is reserved" in r.stderr


def test_password_never_on_the_command_line(run_knut, lake):
    r = run_knut("sync", "--config", lake / "sync.yml", "--once", "--airflow-url",
                 "http://127.0.0.1:1", "--airflow-user", "u", "--airflow-password", "x")
    assert r.returncode == 2 and "KNUT_AIRFLOW_PASSWORD" in r.stderr
    r = run_knut("sync", "--config", lake / "sync.yml", "--once", "--airflow-url",
                 "http://127.0.0.1:1", "--airflow-user", "u", env={"KNUT_AIRFLOW_PASSWORD": ""})
    assert r.returncode == 2 and "needs a password" in r.stderr
    pw = lake / "pw"
    pw.write_text("from-file-pass\n")
    r = run_knut("sync", "--config", lake / "sync.yml", "--once", "--airflow-url",
                 f"http://127.0.0.1:{free_port()}", "--airflow-user", "u",
                 "--airflow-password-file", pw, env={"KNUT_LOG_FORMAT": "json"})
    assert r.returncode == 0, r.stderr
    assert "from-file-pass" not in r.stderr


# ---- fault injection: a fake Airflow that misbehaves on purpose ---------------


class FaultyAirflow:
    """FAKE for fault injection only: answers like Airflow 3 (or 2 with
    api=2), but the first event POST gets 401 (an expired token) unless
    `exp_in` is set (then tokens are JWTs expiring that many seconds from
    now, and no 401), and `huge=True` makes /api/v2/version answer with
    2 MiB."""

    def __init__(self, api=3, huge=False, exp_in=None):
        self.api, self.huge, self.exp_in = api, huge, exp_in
        self.requests: list[tuple[str, str, dict, bytes]] = []
        self.logins = 0
        self.event_posts = 0
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def reply(self, code, obj):
                body = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                fake.requests.append(("GET", self.path, dict(self.headers), b""))
                if self.path == "/api/v2/version":
                    if fake.huge:
                        return self.reply(200, b"[" + b"0," * (1 << 20) + b"0]")
                    return self.reply(200 if fake.api == 3 else 404, {"version": "3.3.2"})
                if self.path.startswith("/api/v2/assets?"):
                    return self.reply(200, {"assets": [
                        {"id": 7, "uri": "knut://graph/people_x"},  # substring match only
                        {"id": 8, "uri": "knut://graph/people"},
                        {"id": 9, "uri": "knut://graph/companies"}], "total_entries": 3})
                self.reply(404, {"detail": "not found"})

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                fake.requests.append(("POST", self.path, dict(self.headers), body))
                if self.path == "/auth/token":
                    fake.logins += 1
                    if fake.exp_in is None:
                        return self.reply(201, {"access_token": f"tok{fake.logins}"})
                    b64 = lambda o: base64.urlsafe_b64encode(json.dumps(o).encode()).decode().rstrip("=")  # noqa: E731
                    jwt = (b64({"alg": "HS512", "typ": "JWT"}) + "." +
                           b64({"sub": "knut", "n": fake.logins, "exp": int(time.time()) + fake.exp_in})
                           + ".c2ln")
                    return self.reply(201, {"access_token": jwt})
                if self.path == "/api/v2/assets/events":
                    fake.event_posts += 1
                    if fake.event_posts == 1 and fake.exp_in is None:
                        return self.reply(401, {"detail": "token expired"})
                    return self.reply(200, {"id": 1})
                if self.path == "/api/v1/datasets/events":
                    return self.reply(200, {"id": 1})
                self.reply(404, {"detail": "not found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def people_only(lake):
    cfg = lake / "sync.yml"
    text = cfg.read_text()
    cfg.write_text(text[:text.index("  employment:")])  # companies + people
    return lake


def test_fault_401_logs_in_again_and_resends(run_knut, people_only):
    fake = FaultyAirflow()
    try:
        r = sync(run_knut, people_only, fake.url, password="pw-401")
    finally:
        fake.close()
    assert r.returncode == 0, r.stderr
    sent = [rec for rec in records(r) if rec["msg"] == "asset event sent"]
    assert sorted(rec["table"] for rec in sent) == ["companies", "people"], r.stderr
    assert all(rec["attempts"] == 1 for rec in sent)  # the 401 was retried within the attempt
    assert fake.logins == 2  # the 401 dropped the token; a new one was fetched at once
    posts = [(h, json.loads(b)) for m, p, h, b in fake.requests if p == "/api/v2/assets/events"]
    assert [h["Authorization"] for h, b in posts] == ["Bearer tok1", "Bearer tok2", "Bearer tok2"]
    assert [b["asset_id"] for h, b in posts] == [9, 9, 8]  # exact URIs, not substring matches
    assert all(set(b) == {"asset_id", "extra"} for h, b in posts)


def test_fault_airflow2_uses_datasets_and_basic_auth(run_knut, people_only):
    fake = FaultyAirflow(api=2)
    try:
        r = sync(run_knut, people_only, fake.url, password="pw-v2")
    finally:
        fake.close()
    assert r.returncode == 0, r.stderr
    posts = [(h, json.loads(b)) for m, p, h, b in fake.requests if p == "/api/v1/datasets/events"]
    assert {b["dataset_uri"] for h, b in posts} == {"knut://graph/people", "knut://graph/companies"}
    expect = "Basic " + base64.b64encode(f"{AIRFLOW_USER}:pw-v2".encode()).decode()
    assert all(h["Authorization"] == expect for h, b in posts)
    assert not [p for m, p, h, b in fake.requests if p == "/auth/token"]


def test_fault_oversized_reply_is_capped(run_knut, people_only):
    fake = FaultyAirflow(huge=True)
    try:
        r = sync(run_knut, people_only, fake.url, password="pw-big")
    finally:
        fake.close()
    assert r.returncode == 0, r.stderr
    assert any("response over the 1048576-byte cap" in rec.get("error", "")
               for rec in records(r)), r.stderr


@pytest.mark.parametrize("exp_in,logins", [(3600, 1), (30, 2)])
def test_fault_token_reused_until_near_its_exp(run_knut, people_only, exp_in, logins):
    # two events (companies, people): one token serves both, unless it
    # expires within knut's one-minute margin, then each send logs in anew
    fake = FaultyAirflow(exp_in=exp_in)
    try:
        r = sync(run_knut, people_only, fake.url, password="pw-exp")
    finally:
        fake.close()
    assert r.returncode == 0, r.stderr
    assert len([rec for rec in records(r) if rec["msg"] == "asset event sent"]) == 2, r.stderr
    assert fake.logins == logins
