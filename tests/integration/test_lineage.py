"""OpenLineage run events from `knut sync` (docs/lineage.md).

Every event is checked by the schema-validating test receiver
(lineage_receiver.py: the events rebuilt from openlineage-python's classes
generated from the spec, and compared with what knut sent). A table turn
that read files is one run: START then COMPLETE (or FAIL naming what
failed) with the same runId; the input is the table's source, the output
the graph. An idle round sends nothing. The consumer being down, or
answering 503 at first (fault injection in the receiver), never fails the
sync; the API key is sent as a bearer token and never logged.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from lineage_receiver import Receiver, validate
from peers import free_port
from synclake import lake, records  # noqa: F401 (lake: a fixture)

TABLES = ["companies", "people", "employment", "people_changes"]


def sync(knut, lake: Path, *extra, env=None):
    e = dict(os.environ, KNUT_LOG_FORMAT="json")
    for k in list(e):
        if k.startswith("OPENLINEAGE_"):
            del e[k]
    e.update(env or {})
    return subprocess.run([str(knut), "sync", "--once", "--config", str(lake / "sync.yml"), *extra],
                          capture_output=True, text=True, env=e, timeout=120)


def logs(r) -> list[dict]:
    return [json.loads(l) for l in r.stderr.splitlines() if l.startswith("{")]


def runs(events: list[dict]) -> dict[str, list[dict]]:
    """Events by job name, in the order received."""
    out: dict[str, list[dict]] = {}
    for ev in events:
        out.setdefault(ev["job"]["name"], []).append(ev)
    return out


def test_sync_round_is_one_run_per_table(knut, lake):
    with Receiver() as rc:
        r = sync(knut, lake, "--lineage-url", rc.url, "--lineage-namespace", "hr")
        assert r.returncode == 0, r.stderr
    assert not rc.invalid, rc.invalid
    by_job = runs(rc.events)
    assert sorted(by_job) == sorted(f"sync.graph.{t}" for t in TABLES)
    store = str((lake / "graph.duckdb").resolve())
    for t in TABLES:
        start, done = by_job[f"sync.graph.{t}"]
        assert [start["eventType"], done["eventType"]] == ["START", "COMPLETE"]
        assert start["run"]["runId"] == done["run"]["runId"]
        assert start["eventTime"] <= done["eventTime"]
        assert done["job"]["namespace"] == "hr"
        assert done["job"]["facets"]["jobType"]["jobType"] == "SYNC_TABLE"
        [inp], [out] = done["inputs"], done["outputs"]
        assert inp["namespace"] == "file" and Path(inp["name"]).is_absolute()
        assert (out["namespace"], out["name"]) == ("file", store)
        assert "inputFacets" not in start["inputs"][0]  # counts only at the end
    companies = by_job["sync.graph.companies"][1]
    assert companies["inputs"][0]["name"] == str((lake / "companies.csv").resolve())
    stats = companies["inputs"][0]["inputFacets"]["inputStatistics"]
    assert (stats["rowCount"], stats["fileCount"]) == (4, 1)
    assert companies["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == 4
    sent = [x for x in logs(r) if x.get("msg") == "lineage event sent"]
    assert len(sent) == 2 * len(TABLES)

    # nothing new: an idle round is no run
    with Receiver() as rc2:
        again = sync(knut, lake, "--lineage-url", rc2.url)
        assert again.returncode == 0, again.stderr
    assert rc2.events == [] and rc2.auth == []


def test_failed_file_is_a_fail_event(knut, lake):
    (lake / "changes" / "people-changes-0002.csv").write_text("nobody,here\n1,2\n")
    with Receiver() as rc:
        r = sync(knut, lake, "--lineage-url", rc.url)
        assert r.returncode == 1, r.stderr  # --once: a failed file
    assert not rc.invalid, rc.invalid
    start, fail = runs(rc.events)["sync.graph.people_changes"]
    assert (start["eventType"], fail["eventType"]) == ("START", "FAIL")
    facet = fail["run"]["facets"]["errorMessage"]
    assert "1 file(s) failed" in facet["message"] and facet["programmingLanguage"] == "C"
    assert runs(rc.events)["sync.graph.companies"][1]["eventType"] == "COMPLETE"


def test_events_as_json_lines(knut, lake, tmp_path):
    out = tmp_path / "lineage" / "events.jsonl"
    out.parent.mkdir()
    r = sync(knut, lake, "--lineage-file", str(out))
    assert r.returncode == 0, r.stderr
    events = [json.loads(l) for l in out.read_text().splitlines()]
    assert len(events) == 2 * len(TABLES)
    for ev in events:
        validate(ev)
    # appended, never rewritten
    (lake / "companies.csv").write_text((lake / "companies.csv").read_text() + "9,Nine Nodes,Oslo,2020\n")
    assert sync(knut, lake, "--lineage-file", str(out)).returncode == 0
    assert len(out.read_text().splitlines()) == 2 * len(TABLES) + 2


def test_api_key_is_a_bearer_token_never_logged(knut, lake, tmp_path):
    key = "ol-key-5f0c2f7e-do-not-log"
    kf = tmp_path / "ol.key"
    kf.write_text(key + "\n")
    with Receiver(api_key=key) as rc:
        r = sync(knut, lake, "--lineage-url", rc.url, "--lineage-api-key-file", str(kf))
        assert r.returncode == 0, r.stderr
    assert len(rc.events) == 2 * len(TABLES) and set(rc.auth) == {f"Bearer {key}"}
    assert key not in r.stderr and key not in r.stdout
    # from the environment, as OpenLineage's own clients read it
    with Receiver(api_key=key) as rc:
        r = sync(knut, lake, "--store", str(tmp_path / "other.duckdb"),
                 env={"OPENLINEAGE_URL": rc.url, "OPENLINEAGE_API_KEY": key,
                      "OPENLINEAGE_NAMESPACE": "from-env"})
        assert r.returncode == 0, r.stderr
    assert len(rc.events) == 2 * len(TABLES)
    assert {ev["job"]["namespace"] for ev in rc.events} == {"from-env"}
    assert key not in r.stderr


def test_disabled_by_environment(knut, lake):
    with Receiver() as rc:
        r = sync(knut, lake, env={"OPENLINEAGE_URL": rc.url, "OPENLINEAGE_DISABLED": "true"})
        assert r.returncode == 0, r.stderr
    assert rc.auth == []


def test_consumer_down_never_fails_the_sync(knut, lake):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens
    r = sync(knut, lake, "--lineage-url", url, "--lineage-drain", "1")
    assert r.returncode == 0, r.stderr
    recs = logs(r)
    assert any(x.get("msg") == "round done" for x in recs)
    dropped = [x for x in recs if x.get("msg") == "lineage event dropped"]
    assert len(dropped) == 2 * len(TABLES), r.stderr
    assert all(x["target"] == "lineage" for x in dropped)
    tried = [x for x in recs if x.get("msg") in ("lineage event not sent yet", "lineage event dropped")
             and x.get("attempts", 0) > 0]
    assert tried and all("127.0.0.1" in x["error"] for x in tried if x["error"] != "not sent before shutdown")


def test_retried_through_503(knut, lake):
    # fault injection: the receiver answers 503 to its first two posts
    with Receiver(fail_first=2) as rc:
        r = sync(knut, lake, "--lineage-url", rc.url, "--lineage-drain", "20")
        assert r.returncode == 0, r.stderr
    assert not rc.invalid, rc.invalid
    assert len(rc.events) == 2 * len(TABLES)
    for job, evs in runs(rc.events).items():  # a run's events stay in order
        assert [e["eventType"] for e in evs] == ["START", "COMPLETE"], job
    assert any(x.get("msg") == "lineage event not sent yet" for x in logs(r))


def test_bad_options(knut, lake, tmp_path):
    r = sync(knut, lake, "--lineage-url", "http://127.0.0.1:1", "--lineage-file", str(tmp_path / "x"))
    assert r.returncode == 2 and "exclude each other" in r.stderr
    r = sync(knut, lake, "--lineage-namespace", "x")
    assert r.returncode == 2 and "--lineage-url or --lineage-file" in r.stderr
    r = sync(knut, lake, "--lineage-url", "ftp://example")
    assert r.returncode == 2, r.stderr
    assert "lineage" in r.stderr


# ---- knut pipeline run --------------------------------------------------------

PIPE_SQL = {
    "t/raw.sql": "CREATE OR REFRESH STREAMING TABLE raw AS SELECT * FROM read_csv('data/*.csv');",
    "t/orders.sql": "CREATE MATERIALIZED VIEW orders AS SELECT id, amount FROM raw WHERE amount > 0;",
    # fails at run time: FAILED, and its reader SKIPPED (no run of its own)
    "t/bad.sql": "CREATE MATERIALIZED VIEW bad AS SELECT CAST('x' || id AS INTEGER) AS v FROM orders;",
    "t/after_bad.sql": "CREATE MATERIALIZED VIEW after_bad AS SELECT * FROM bad;",
}


def pipeline_project(root: Path, lineage: str, files=PIPE_SQL) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pipeline.yml").write_text(
        "name: shop\nstorage: storage\nlibraries:\n  - glob:\n      include: t/**\n" + lineage)
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    (root / "data").mkdir(exist_ok=True)
    (root / "data" / "o1.csv").write_text("id,amount\n1,10\n2,-1\n3,5\n")
    return root


def pipeline_run(run_knut, root: Path, env=None):
    e = {k: "" for k in os.environ if k.startswith("OPENLINEAGE_")}
    e.update({"KNUT_LOG_FORMAT": "json", "KNUT_LOG": "info"}, **(env or {}))
    return run_knut("pipeline", "run", root, env=e, timeout=180)


def test_pipeline_run_and_its_flows(run_knut, tmp_path):
    with Receiver() as rc:
        root = pipeline_project(tmp_path / "p", f"lineage:\n  url: {rc.url}\n  namespace: shop-ns\n")
        r = pipeline_run(run_knut, root)
        assert r.returncode == 1, r.stderr  # bad failed
    assert not rc.invalid, rc.invalid
    by_job = runs(rc.events)
    assert set(by_job) == {"pipeline.shop", "pipeline.shop.raw", "pipeline.shop.orders",
                           "pipeline.shop.bad"}  # after_bad was skipped: no run
    top = by_job["pipeline.shop"]
    assert [e["eventType"] for e in top] == ["START", "FAIL"]
    assert "1 failed, 1 skipped" in top[1]["run"]["facets"]["errorMessage"]["message"]
    parent = top[0]["run"]["runId"]
    db_file = (root / "storage").resolve() / "pipeline.duckdb"  # the default catalog
    assert db_file.exists()
    db = f"duckdb://{db_file}"
    for name, evs in by_job.items():
        assert {e["job"]["namespace"] for e in evs} == {"shop-ns"}
        if name == "pipeline.shop":
            continue
        assert {e["run"]["facets"]["parent"]["run"]["runId"] for e in evs} == {parent}
        assert evs[0]["run"]["facets"]["parent"]["job"] == {"namespace": "shop-ns", "name": "pipeline.shop"}
        assert evs[0]["run"]["runId"] == evs[1]["run"]["runId"] != parent
    raw_start, raw_done = by_job["pipeline.shop.raw"]
    assert raw_done["eventType"] == "COMPLETE"
    assert [(i["namespace"], i["name"]) for i in raw_done["inputs"]] == \
        [("file", str(root / "data" / "*.csv"))]
    [out] = raw_done["outputs"]
    assert (out["namespace"], out["name"]) == (db, "pipeline.main.raw")
    assert out["outputFacets"]["outputStatistics"]["rowCount"] == 3
    orders = by_job["pipeline.shop.orders"][1]
    assert [(i["namespace"], i["name"]) for i in orders["inputs"]] == [(db, "pipeline.main.raw")]
    assert orders["outputs"][0]["outputFacets"]["outputStatistics"]["rowCount"] == 2
    bad = by_job["pipeline.shop.bad"]
    assert [e["eventType"] for e in bad] == ["START", "FAIL"]
    assert "x1" in bad[1]["run"]["facets"]["errorMessage"]["message"] or \
        "Could not convert" in bad[1]["run"]["facets"]["errorMessage"]["message"]


def test_pipeline_lineage_file_and_env(run_knut, tmp_path):
    ok = {k: v for k, v in PIPE_SQL.items() if "bad" not in k}
    root = pipeline_project(tmp_path / "f", "lineage:\n  file: lineage/events.jsonl\n", files=ok)
    (root / "lineage").mkdir()
    r = pipeline_run(run_knut, root)
    assert r.returncode == 0, r.stderr
    events = [json.loads(l) for l in (root / "lineage" / "events.jsonl").read_text().splitlines()]
    for ev in events:
        validate(ev)
    assert [e["eventType"] for e in events if e["job"]["name"] == "pipeline.shop"] == ["START", "COMPLETE"]
    assert len(events) == 2 + 2 * 2
    # without lineage: in the spec, OpenLineage's own variables
    root2 = pipeline_project(tmp_path / "e", "", files=ok)
    with Receiver(api_key="k-123") as rc:
        r = pipeline_run(run_knut, root2, env={"OPENLINEAGE_URL": rc.url, "OPENLINEAGE_API_KEY": "k-123"})
        assert r.returncode == 0, r.stderr
    assert len(rc.events) == 6 and not rc.invalid
    assert "k-123" not in r.stderr


def test_pipeline_lineage_spec_errors(run_knut, tmp_path):
    for text, want in [
        ("lineage:\n  url: ftp://x\n", "lineage: url: must be an http"),
        ("lineage:\n  colour: red\n", "unexpected field 'colour'"),
        ("lineage:\n  namespace: x\n", "needs one of 'url:' and 'file:'"),
        ("lineage:\n  file: x.jsonl\n  api_key_env: K\n", "need 'url:'"),
    ]:
        root = pipeline_project(tmp_path / f"s{len(want)}", text)
        r = pipeline_run(run_knut, root)
        assert r.returncode == 2, (text, r.stderr)
        assert want in r.stderr and "pipeline.yml:" in r.stderr, r.stderr
    root = pipeline_project(tmp_path / "nokey", "lineage:\n  url: http://127.0.0.1:1\n  api_key_env: NO_SUCH_KEY_VAR\n")
    r = pipeline_run(run_knut, root)
    assert r.returncode != 0 and "NO_SUCH_KEY_VAR" in r.stderr
