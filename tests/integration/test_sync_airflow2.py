"""`knut sync --airflow-url` against a real Airflow 2.x.

knut finds no /api/v2 there (GET /api/v2/version answers 404) and so posts
the round's events to POST /api/v1/datasets/events with HTTP Basic. The peer
(peers.Airflow2: webserver + scheduler on SQLite, started once per session)
has the consumer DAG of tests/integration/airflow2_dags, scheduled on the
dataset knut://graph/people: the event is recorded with knut's extra and
the scheduler makes a dataset-triggered run of that DAG.
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.parse

import pytest

from peers import AIRFLOW_PASSWORD, AIRFLOW_USER, REPO

EXAMPLE = REPO / "examples" / "lakehouse"
PEOPLE = "knut://graph/people"
CONSUMER = "knut_people_consumer_v2"


@pytest.fixture
def consumer2(airflow2):
    """The session's Airflow 2 once the consumer DAG's dataset exists."""
    deadline = time.monotonic() + 120
    uris: set[str] = set()
    while time.monotonic() < deadline:
        uris = {d["uri"] for d in airflow2.get("/api/v1/datasets?limit=100")["datasets"]}
        if PEOPLE in uris:
            return airflow2
        time.sleep(1)
    pytest.fail(f"consumer dataset not registered; have {uris}")


@pytest.fixture
def people_lake(tmp_path):
    """The lakehouse example cut down to companies + people."""
    d = tmp_path / "lake"
    shutil.copytree(EXAMPLE, d)
    cfg = d / "sync.yml"
    text = cfg.read_text().replace("store: ../../demo/graph.duckdb", "store: graph.duckdb")
    cfg.write_text(text[:text.index("  employment:")])
    return d


def records(proc) -> list[dict]:
    out = []
    for line in proc.stderr.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("target") == "assets":
                out.append(rec)
    return out


def people_events(airflow2) -> list[dict]:
    # Airflow 2 filters events by dataset id, not URI
    ids = [d["id"] for d in airflow2.get("/api/v1/datasets?limit=100")["datasets"]
           if d["uri"] == PEOPLE]
    assert len(ids) == 1, ids
    q = urllib.parse.urlencode({"dataset_id": ids[0], "order_by": "-timestamp", "limit": 50})
    return airflow2.get(f"/api/v1/datasets/events?{q}")["dataset_events"]


def test_airflow2_records_the_event_and_triggers_the_consumer(run_knut, people_lake, consumer2):
    airflow2 = consumer2
    before = {e["id"] for e in people_events(airflow2)}
    runs_before = airflow2.get(f"/api/v1/dags/{CONSUMER}/dagRuns")["total_entries"]

    env = {"KNUT_LOG_FORMAT": "json", "KNUT_AIRFLOW_PASSWORD": AIRFLOW_PASSWORD}
    r = run_knut("sync", "--config", people_lake / "sync.yml", "--once",
                 "--airflow-url", airflow2.url, "--airflow-user", AIRFLOW_USER,
                 "--airflow-drain", "20", env=env)
    assert r.returncode == 0, r.stderr
    sent = {rec["table"]: rec for rec in records(r) if rec["msg"] == "asset event sent"}
    assert "people" in sent and sent["people"]["uri"] == PEOPLE, r.stderr
    # companies has no consumer DAG, so no dataset: Airflow 2 answers 404
    dropped = {rec["table"] for rec in records(r) if rec["msg"] == "asset event dropped"}
    assert dropped == {"companies"}, r.stderr
    assert any("POST /api/v1/datasets/events for asset 'knut://graph/companies': HTTP 404"
               in rec.get("error", "") for rec in records(r)), r.stderr
    assert AIRFLOW_PASSWORD not in r.stderr and AIRFLOW_PASSWORD not in r.stdout

    evs = [e for e in people_events(airflow2) if e["id"] not in before]
    assert len(evs) == 1, evs
    extra = evs[0]["extra"]
    assert extra["round"] == 1 and extra["table"] == "people"
    assert extra["files"] == 1 and extra["rows"] == 10 and extra["vertices"] == 10
    assert extra["source"] == str((people_lake / "people.csv").resolve())
    assert extra["knut_instance"] and extra["synced_at"].endswith("Z")
    assert extra["from_rest_api"] is True  # posted through the REST API, not by a task
    assert evs[0]["dataset_uri"] == PEOPLE

    # the scheduler turns the event into a dataset-triggered run of the consumer
    deadline = time.monotonic() + 120
    runs: dict = {}
    while time.monotonic() < deadline:
        runs = airflow2.get(f"/api/v1/dags/{CONSUMER}/dagRuns?order_by=-execution_date")
        if runs["total_entries"] > runs_before:
            break
        time.sleep(1)
    assert runs["total_entries"] > runs_before, runs
    assert runs["dag_runs"][0]["run_type"] == "dataset_triggered"

    # a second round with nothing new sends nothing
    again = run_knut("sync", "--config", people_lake / "sync.yml", "--once",
                     "--airflow-url", airflow2.url, "--airflow-user", AIRFLOW_USER, env=env)
    assert again.returncode == 0, again.stderr
    assert not [rec for rec in records(again) if rec["msg"].startswith("asset event")], again.stderr
    assert len([e for e in people_events(airflow2) if e["id"] not in before]) == 1


def test_airflow2_wrong_password_is_logged_and_the_sync_goes_on(run_knut, people_lake, consumer2):
    secret = "not-the-password-2x"
    env = {"KNUT_LOG_FORMAT": "json", "KNUT_AIRFLOW_PASSWORD": secret}
    r = run_knut("sync", "--config", people_lake / "sync.yml", "--once",
                 "--airflow-url", consumer2.url, "--airflow-user", AIRFLOW_USER, env=env)
    assert r.returncode == 0, r.stderr
    recs = records(r)
    # Airflow 2's basic auth answers a wrong password with 403 (Airflow 3: 401 on login)
    assert any("POST /api/v1/datasets/events for asset 'knut://graph/people': HTTP 403 "
               "(user or password refused" in rec.get("error", "") for rec in recs), r.stderr
    assert any(rec["msg"] == "asset event dropped" for rec in recs), r.stderr
    assert secret not in r.stderr and secret not in r.stdout
