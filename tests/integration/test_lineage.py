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
