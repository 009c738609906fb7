"""`knut pipeline run` with `airflow:` in the spec: Airflow asset events.

Against the real Airflow 3 of the session (peers.Airflow, the consumer DAGs
of tests/integration/airflow_dags/knut_pipeline_consumers.py): after a run,
each completed dataset's event is recorded with knut's extra and triggers
the DAG scheduled on it; a failed dataset (and the one skipped after it)
sends nothing; Airflow refusing the password or being down never fails the
run. The sender is the one knut sync uses (src/net/airflow.c).
"""

from __future__ import annotations

import json
import time
import urllib.error
import uuid

import pytest

from peers import AIRFLOW_PASSWORD, AIRFLOW_USER, free_port
from spark_peer import spark_connect  # noqa: F401  (the session fixture)

SQL = {
    "t/orders.sql": "CREATE MATERIALIZED VIEW orders AS SELECT * FROM range(3) t(id);",
    # fails at run time: the dataset is FAILED, its reader SKIPPED
    "t/bad.sql": "CREATE MATERIALIZED VIEW bad AS SELECT CAST('x' || id AS INTEGER) AS v FROM orders;",
    "t/after_bad.sql": "CREATE MATERIALIZED VIEW after_bad AS SELECT * FROM bad;",
}


def project(root, url, extra_airflow="", name="shop", files=SQL):
    root.mkdir(parents=True, exist_ok=True)
    (root / "pipeline.yml").write_text(
        f"name: {name}\nstorage: storage\nlibraries:\n  - glob:\n      include: t/**\n"
        f"airflow:\n  url: {url}\n  user: {AIRFLOW_USER}\n{extra_airflow}")
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    return root


def pipeline_run(run_knut, root, password=AIRFLOW_PASSWORD):
    env = {"KNUT_LOG_FORMAT": "json", "KNUT_LOG": "info", "KNUT_AIRFLOW_PASSWORD": password}
    return run_knut("pipeline", "run", root, env=env, timeout=180)


def records(proc, target="assets") -> list[dict]:
    out = []
    for line in proc.stderr.splitlines():
        line = line.strip()
        if line.startswith("{"):
            rec = json.loads(line)
            if rec.get("target") == target:
                out.append(rec)
    return out


def get(airflow, path):
    """airflow.get, again after a 5xx: Airflow on SQLite answers 500 now and
    then while its scheduler holds the database (a busy CI box)."""
    for attempt in range(5):
        try:
            return airflow.get(path)
        except urllib.error.HTTPError as e:
            if e.code < 500 or attempt == 4:
                raise
            time.sleep(1)


@pytest.fixture
def consumers(airflow):
    """The session's Airflow once the pipeline consumer DAGs' assets exist."""
    want = {"knut://shop/orders", "knut://shop/bad", "x-pipe://sales/totals",
            "knut://sparkshop/totals"}
    deadline = time.monotonic() + 120
    uris: set[str] = set()
    while time.monotonic() < deadline:
        uris = {a["uri"] for a in get(airflow, "/api/v2/assets?limit=100")["assets"]}
        if want <= uris:
            return airflow
        time.sleep(1)
    pytest.fail(f"pipeline consumer assets not registered; have {uris}")


def asset_id(airflow, uri) -> int:
    for a in get(airflow, "/api/v2/assets?limit=100")["assets"]:
        if a["uri"] == uri:
            return a["id"]
    raise AssertionError(f"no asset {uri}")


def events(airflow, aid) -> list[dict]:
    return get(airflow, f"/api/v2/assets/events?asset_id={aid}&order_by=-timestamp&limit=50")["asset_events"]


def test_completed_dataset_triggers_its_dag_and_failed_sends_nothing(run_knut, tmp_path, consumers):
    airflow = consumers
    orders, bad = asset_id(airflow, "knut://shop/orders"), asset_id(airflow, "knut://shop/bad")
    before_orders = {e["id"] for e in events(airflow, orders)}
    before_bad = {e["id"] for e in events(airflow, bad)}
    runs_before = get(airflow, "/api/v2/dags/knut_pipe_orders_consumer/dagRuns")["total_entries"]

    root = project(tmp_path / "p", airflow.url, "  drain: 20\n")
    r = pipeline_run(run_knut, root)
    assert r.returncode != 0, r.stderr  # bad failed: the run says so, as without Airflow
    sent = [rec for rec in records(r) if rec["msg"] == "asset event sent"]
    # only orders completed: bad FAILED and after_bad was SKIPPED
    assert [(rec["dataset"], rec["uri"]) for rec in sent] == [("orders", "knut://shop/orders")], r.stderr
    assert sent[0]["run_id"] == 1 and sent[0]["attempts"] >= 1
    assert all(rec.get("dataset") != "bad" for rec in records(r)), r.stderr
    assert AIRFLOW_PASSWORD not in r.stderr

    new = [e for e in events(airflow, orders) if e["id"] not in before_orders]
    assert len(new) == 1, new  # at most once per dataset per run
    extra = new[0]["extra"]
    assert extra["pipeline"] == "shop" and extra["dataset"] == "orders"
    assert extra["rows"] == 3 and extra["output_type"] == "materialized_view"
    assert extra["run_id"] == 1 and extra["source"] == "knut-native"
    assert extra["knut_instance"]
    # the failed dataset's asset exists in Airflow and got no event
    assert [e for e in events(airflow, bad) if e["id"] not in before_bad] == []

    deadline = time.monotonic() + 90
    runs = {}
    while time.monotonic() < deadline:
        runs = get(airflow, "/api/v2/dags/knut_pipe_orders_consumer/dagRuns?order_by=-id")
        if runs["total_entries"] > runs_before:
            break
        time.sleep(1)
    assert runs["total_entries"] > runs_before, runs
    assert runs["dag_runs"][0]["run_type"] == "asset_triggered"


def test_asset_prefix_and_password_file(run_knut, tmp_path, consumers):
    airflow = consumers
    totals = asset_id(airflow, "x-pipe://sales/totals")
    before = {e["id"] for e in events(airflow, totals)}
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "pw").write_text(AIRFLOW_PASSWORD + "\n")
    files = {"t/totals.sql": "CREATE MATERIALIZED VIEW totals AS SELECT 42 AS n;"}
    root = project(tmp_path / "p", airflow.url,
                   "  asset_prefix: x-pipe://sales/\n  password_file: ../secret/pw\n  drain: 20\n",
                   name="sales", files=files)
    r = pipeline_run(run_knut, root, password="not-this-one")
    assert r.returncode == 0, r.stderr
    new = [e for e in events(airflow, totals) if e["id"] not in before]
    assert len(new) == 1 and new[0]["extra"]["rows"] == 1, new
    assert new[0]["extra"]["pipeline"] == "sales"


def test_a_run_on_spark_sends_its_completed_datasets(run_knut, tmp_path, consumers,
                                                     spark_connect):
    airflow = consumers
    totals = asset_id(airflow, "knut://sparkshop/totals")
    before = {e["id"] for e in events(airflow, totals)}
    spark = ["--connect", spark_connect.url, "--token-file", str(spark_connect.token_file),
             "--allow-insecure-token"]
    db = "a" + uuid.uuid4().hex[:12]
    made = run_knut("spark", "sql", *spark, f"CREATE DATABASE {db}", timeout=300)
    assert made.returncode == 0, made.stderr
    files = {"t/totals.sql": "CREATE MATERIALIZED VIEW totals AS SELECT 42 AS n;\n"
                             "CREATE TEMPORARY VIEW scratch AS SELECT n FROM totals;\n"
                             "CREATE MATERIALIZED VIEW top AS SELECT n FROM scratch;"}
    root = project(tmp_path / "p", airflow.url, "  drain: 20\n", name="sparkshop", files=files)
    spec = root / "pipeline.yml"
    spec.write_text(spec.read_text().replace("storage: storage\n", f"storage: storage\nschema: {db}\n"))
    env = {"KNUT_LOG_FORMAT": "json", "KNUT_LOG": "info", "KNUT_AIRFLOW_PASSWORD": AIRFLOW_PASSWORD}
    r = run_knut("pipeline", "run", root, "--backend", "spark", *spark, env=env, timeout=600)
    assert r.returncode == 0, r.stderr
    sent = [rec["dataset"] for rec in records(r) if rec["msg"] == "asset event sent"]
    assert "totals" in sent, r.stderr
    # top's asset has no DAG in Airflow, so it may be sent or dropped; the
    # temporary view sends nothing
    assert {rec.get("dataset") for rec in records(r)} - {None} <= {"totals", "top"}, r.stderr
    new = [e for e in events(airflow, totals) if e["id"] not in before]
    assert len(new) == 1, new
    extra = new[0]["extra"]
    assert extra["source"] == "spark-sdp" and extra["pipeline"] == "sparkshop"
    assert extra["dataset"] == "totals" and extra["output_type"] == "materialized_view"
    assert extra["rows"] is None  # Spark's events do not count rows


def test_wrong_password_or_airflow_down_never_fails_the_run(run_knut, tmp_path, airflow):
    files = {"t/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;"}
    root = project(tmp_path / "p", airflow.url, "  drain: 2\n", name="refused", files=files)
    r = pipeline_run(run_knut, root, password="wrong-password")
    assert r.returncode == 0, r.stderr
    dropped = [rec for rec in records(r) if rec["msg"] == "asset event dropped"]
    assert [rec["dataset"] for rec in dropped] == ["a"], r.stderr
    assert "wrong-password" not in r.stderr

    down = project(tmp_path / "q", f"http://127.0.0.1:{free_port()}", "  drain: 1\n",
                   name="down", files=files)
    r = pipeline_run(run_knut, down)
    assert r.returncode == 0, r.stderr
    assert [rec["dataset"] for rec in records(r) if rec["msg"] == "asset event dropped"] == ["a"]


def test_airflow_spec_errors(run_knut, tmp_path):
    files = {"t/a.sql": "CREATE MATERIALIZED VIEW a AS SELECT 1 AS x;"}
    root = project(tmp_path / "p", "http://127.0.0.1:1", "  asset_prefix: Knut://x/\n", files=files)
    r = run_knut("pipeline", "run", root)
    assert r.returncode != 0
    assert "pipeline.yml:9" in r.stderr and "asset_prefix" in r.stderr, r.stderr
    assert not (root / "storage").exists()

    root = project(tmp_path / "q", "http://127.0.0.1:1", "  token: x\n", files=files)
    r = run_knut("pipeline", "run", root)
    assert r.returncode != 0 and "unexpected field 'token'" in r.stderr, r.stderr

    # no password: refused before any flow runs
    root = project(tmp_path / "r", "http://127.0.0.1:1", "  password_env: KNUT_TEST_NO_SUCH_PW\n",
                   files=files)
    r = run_knut("pipeline", "run", root)
    assert r.returncode != 0 and "KNUT_TEST_NO_SUCH_PW" in r.stderr, r.stderr
    assert not (root / "storage").exists()
