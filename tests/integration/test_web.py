"""`knut web`: the live pipeline page, in real headless Chromium.

The server runs on loopback on an ephemeral port. A plain Python client
reads /events (Server-Sent Events) and checks every frame; the page is
driven by tests/web/drive.mjs (npm playwright-core with the system
Chromium, both installed by scripts/setup.sh --test): every node reaches
completed in the demo and in a native --run; a failing flow shows its
error; the page reconnects when the server is restarted mid-run; the
screenshot of the finished DAG (in the test's tmp dir) has each node box
at its laid-out position, filled with the completed colour. Against the
real Spark Connect server (spark_peer.py): a pipeline run on Spark, and a
Spark job's stages (--connect --sql) appearing as the query runs, its
error on the result node, Ctrl-C stopping it on the server.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import textwrap
import time
import uuid
import urllib.request
from pathlib import Path

import pytest

from spark_peer import spark_connect  # noqa: F401  (the session fixture)

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "tests" / "web"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
COMPLETED_FILL = (0xE6, 0xF6, 0xEA)  # .node.completed rect in src/viewer/page.html


def start_web(knut: Path, *args: str, addr: str = "127.0.0.1:0", cwd: Path | None = None):
    """Starts `knut web ARGS --addr ADDR`; returns (process, "ip:port")."""
    proc = subprocess.Popen([str(knut), "web", *args, "--addr", addr], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()
    if not line.startswith("serving http://"):
        proc.kill()
        raise AssertionError(f"knut web did not start: {line!r} {proc.stderr.read()}")
    return proc, line.split("http://", 1)[1].split("/", 1)[0]


def stop(proc: subprocess.Popen) -> int:
    proc.terminate()
    try:
        return proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        return proc.wait()


def get_json(addr: str, path: str):
    with urllib.request.urlopen(f"http://{addr}{path}", timeout=10) as r:
        assert r.headers["Content-Type"].startswith("application/json")
        return json.load(r)


def read_events(addr: str, last_id: str | None = None, timeout: float = 60):
    """Every event of /events up to the end of the stream: [(id, data)]."""
    req = urllib.request.Request(f"http://{addr}/events")
    if last_id:
        req.add_header("Last-Event-ID", last_id)
    events, ev_id, data = [], None, []
    with urllib.request.urlopen(req, timeout=timeout) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        for raw in r:
            line = raw.decode().rstrip("\r\n")
            if line == "":
                if data:
                    events.append((ev_id, json.loads("\n".join(data))))
                ev_id, data = None, []
            elif line.startswith("data: "):
                data.append(line[6:])
            elif line.startswith("id: "):
                ev_id = line[4:]
    return events


def check_frame(frame: dict, graph: dict) -> None:
    assert set(frame) >= {"title", "stages", "edges"}
    assert [s["id"] for s in frame["stages"]] == [n["id"] for n in graph["nodes"]]
    for s in frame["stages"]:
        assert set(s) >= {"id", "name", "status", "kind", "error", "metrics"}
        assert s["status"] in {"idle", "queued", "running", "completed", "failed", "skipped"}
        assert set(s["metrics"]) == {"rows", "throughput_rows_s", "lag_s"}
    assert [(e["from"], e["to"], e["label"]) for e in frame["edges"]] == \
        [(e["from"], e["to"], e["label"]) for e in graph["edges"]]


def test_web_sse_plain_client(knut):
    proc, addr = start_web(knut, "--step-ms", "20")
    try:
        graph = get_json(addr, "/graph.json")
        assert graph["title"] == "demo" and len(graph["nodes"]) == 6
        assert {e["label"] for e in graph["edges"]} == {"batch", "cdc"}
        idle = get_json(addr, "/pipeline.json")
        check_frame(idle, graph)
        assert {s["status"] for s in idle["stages"]} == {"idle"}
        events = read_events(addr)
        assert events[-1] == (None, {"done": True})
        frames = events[:-1]
        assert frames, "no frame before done"
        seqs = [int(i.split("-")[1]) for i, _ in frames]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        for _, f in frames:
            check_frame(f, graph)
        last = frames[-1][1]
        assert {s["status"] for s in last["stages"]} == {"completed"}
        assert all(s["metrics"]["rows"] > 0 for s in last["stages"])
        # resuming at the newest id: only the end, no frame again
        assert read_events(addr, last_id=frames[-1][0]) == [(None, {"done": True})]
        # an id of another server (a restart): the latest frame, then the end
        again = read_events(addr, last_id="1-999999")
        assert len(again) == 2 and again[0][1] == last
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(f"http://{addr}/nope", timeout=5)
        assert e.value.code == 404
    finally:
        stop(proc)


def test_web_usage_errors(knut):
    for args, why in ((["--connect", "sc://localhost"], "--connect needs --run and SPEC"),
                      (["--token-file", "t"], "go with --connect"),
                      (["--run"], "--run needs SPEC"),
                      (["--sql", "SELECT 1"], "--sql and --report-interval go with --connect"),
                      (["demo", "--connect", "sc://localhost", "--sql", "SELECT 1"],
                       "drop SPEC and --run")):
        r = subprocess.run([str(knut), "web", *args], capture_output=True, text=True, timeout=30)
        assert r.returncode == 2 and why in r.stderr, (args, r.stderr)


def test_web_shows_a_run_on_spark(knut, tmp_path, spark_connect):
    """--run --connect: the pipeline lowered to Spark (the server of
    spark_peer.py), its events drawn as the native run's are."""
    db = "w" + uuid.uuid4().hex[:12]
    spark = ["--connect", spark_connect.url, "--token-file", str(spark_connect.token_file),
             "--allow-insecure-token"]
    made = subprocess.run([str(knut), "spark", "sql", *spark, f"CREATE DATABASE {db}"],
                          capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    (tmp_path / "t").mkdir()
    (tmp_path / "pipeline.yml").write_text(
        f"name: shop\nstorage: storage\nschema: {db}\nlibraries:\n  - glob:\n      include: t/**\n")
    (tmp_path / "t" / "a.sql").write_text(
        "CREATE MATERIALIZED VIEW totals AS SELECT id % 3 AS k, count(*) AS n FROM range(10) t(id) "
        "GROUP BY 1;\n"
        "CREATE MATERIALIZED VIEW top AS SELECT k FROM totals WHERE n > 3;\n")
    proc, addr = start_web(knut, str(tmp_path), "--run", *spark)
    try:
        graph = get_json(addr, "/graph.json")
        events = read_events(addr, timeout=600)
        assert events[-1] == (None, {"done": True})
        last = events[-2][1]
        check_frame(last, graph)
        assert {s["name"]: s["status"] for s in last["stages"]} == \
            {"totals": "completed", "top": "completed"}
        line = proc.stdout.readline()
        assert line == "run on Spark: ended\n", (line, proc.stderr.read())
    finally:
        assert stop(proc) == 0
    rows = subprocess.run([str(knut), "spark", "sql", *spark, "-f", "json",
                           f"SELECT k FROM {db}.top ORDER BY k"],
                          capture_output=True, text=True, timeout=300)
    assert rows.returncode == 0, rows.stderr
    assert [json.loads(x)["k"] for x in rows.stdout.splitlines()] == [0]


# A join and a group by: stages of 4 and 2 tasks, then the shuffles'.
MULTI_STAGE = (
    "SELECT a.k, count(*) AS c FROM (SELECT id % 7 AS k FROM range(0, 3000000, 1, 4)) a "
    "JOIN (SELECT id AS k FROM range(0, 7, 1, 2)) b ON a.k = b.k GROUP BY a.k")


def spark_job(knut: Path, peer, sql: str, *more: str):
    return start_web(knut, "--connect", peer.url, "--token-file", str(peer.token_file),
                     "--allow-insecure-token", "--report-interval", "0.1", "--sql", sql, *more)


def check_spark_frames(frames: list[dict], graph: dict) -> dict:
    """The frames of a Spark job: the graph grows (versions never go back),
    a node per stage in stage id order and the result; returns the last."""
    versions = [f["graph"] for f in frames]
    assert versions == sorted(versions) and versions[-1] == graph["version"]
    last = frames[-1]
    check_frame(last, graph)
    names = [s["name"] for s in last["stages"]]
    assert names[-1] == "result"
    ids = [int(n.split()[1]) for n in names[:-1]]
    assert names[:-1] == [f"stage {i}" for i in ids] and ids == sorted(ids)
    assert [(e["from"], e["to"], e["label"]) for e in graph["edges"]] == \
        [(n, "result", "stage") for n in names[:-1]]
    for s in last["stages"][:-1]:
        t = s["tasks"]
        assert t["total"] >= 1 and 0 <= t["done"] <= t["total"], s
        assert s["metrics"]["rows"] is None
    return last


def test_web_spark_job_stages(knut, spark_connect):
    """--connect --sql: the stages of a real Spark query as they appear,
    each ending completed with all its tasks (or skipped: Spark reused a
    shuffle), and the result's 7 rows."""
    proc, addr = spark_job(knut, spark_connect, MULTI_STAGE)
    try:
        events = read_events(addr, timeout=600)
        assert events[-1] == (None, {"done": True})
        graph = get_json(addr, "/graph.json")
        assert graph["title"].startswith("Spark job on ")
        frames = [f for _, f in events[:-1]]
        last = check_spark_frames(frames, graph)
        result = last["stages"][-1]
        assert result["status"] == "completed" and result["metrics"]["rows"] == 7, result
        stages = last["stages"][:-1]
        assert len(stages) >= 2, stages
        for s in stages:
            assert s["status"] in {"completed", "skipped"}, s
            if s["status"] == "completed" and s["tasks"]["done"]:
                assert s["tasks"]["done"] == s["tasks"]["total"], s
        totals = {s["tasks"]["total"] for s in stages if s["status"] == "completed"}
        assert {4, 2} <= totals, stages
        assert any(s["tasks"]["bytes_read"] >= 0 for s in stages)
        # a stage was seen running before it completed (the graph grew live)
        assert any(s["status"] == "running" for f in frames for s in f["stages"][:-1]) or \
            len({f["graph"] for f in frames}) > 1
        assert proc.stdout.readline() == "Spark job: ended\n"
    finally:
        assert stop(proc) == 0


def test_web_spark_job_error_on_the_result(knut, spark_connect):
    proc, addr = spark_job(knut, spark_connect, "SELECT * FROM no_such_table_for_web")
    try:
        events = read_events(addr, timeout=300)
        assert events[-1] == (None, {"done": True})
        last = events[-2][1]
        result = last["stages"][-1]
        assert result["name"] == "result" and result["status"] == "failed", result
        assert "TABLE_OR_VIEW_NOT_FOUND" in result["error"], result
        assert proc.stdout.readline() == "Spark job: failed\n"
    finally:
        assert stop(proc) == 1
    assert "TABLE_OR_VIEW_NOT_FOUND" in proc.stderr.read()


def test_web_spark_job_ctrl_c_stops_it_on_the_server(knut, spark_connect):
    sql = "SELECT count(*) FROM range(0, 100000000000, 1, 2) WHERE id % 1000003 = 7"
    proc, addr = spark_job(knut, spark_connect, sql)
    try:
        req = urllib.request.Request(f"http://{addr}/events")
        with urllib.request.urlopen(req, timeout=300) as r:
            for raw in r:  # until a stage of the job runs on the server
                line = raw.decode()
                if line.startswith("data: ") and '"name":"stage ' in line:
                    break
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=120) == 130
    finally:
        if proc.poll() is None:
            proc.kill()
    err = proc.stderr.read()
    assert "interrupted" in err and "stopped on the server" in err, err
    deadline, running = time.monotonic() + 180, None
    while time.monotonic() < deadline:
        try:
            running = [j for j in spark_connect.jobs() if j["status"] == "RUNNING"]
        except OSError:  # the UI answers slowly on a busy machine: ask again
            time.sleep(1)
            continue
        if not running:
            break
        time.sleep(0.5)
    assert running == [], running


# ---- the page in Chromium ---------------------------------------------------


@pytest.fixture(scope="module")
def driver():
    # a peer the setup installs: missing is a failure, not a skip (as for
    # the other peers), so CI cannot pass without the browser tests
    if not Path(CHROMIUM).exists():
        pytest.fail("chromium is not installed (scripts/setup.sh --test)")
    if not (WEB / "node_modules" / "playwright-core").is_dir() or not shutil.which("node"):
        pytest.fail("playwright-core is not installed in tests/web (scripts/setup.sh --test)")
    return WEB / "drive.mjs"


def drive(driver: Path, addr: str, shot: Path, on_first_frame=None, timeout_ms: int = 90000):
    proc = subprocess.Popen(["node", str(driver), f"http://{addr}/", str(shot), str(timeout_ms)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "CHROMIUM": CHROMIUM})
    result = None
    for line in proc.stdout:
        if line.strip() == "first-frame" and on_first_frame:
            on_first_frame()
        elif line.startswith("{"):
            result = json.loads(line)
    err = proc.stderr.read()
    assert proc.wait(timeout=timeout_ms / 1000 + 30) == 0, err
    assert result is not None, err
    assert result["errors"] == [], result["errors"]
    return result


def check_picture(result: dict, shot: Path) -> None:
    """Node boxes where /graph.json put them, filled as completed in the PNG."""
    graph = {n["id"]: n for n in result["graph"]["nodes"]}
    assert len(result["nodes"]) == len(graph)
    assert result["edges"] == len(result["graph"]["edges"])
    for n in result["nodes"]:
        want = graph[n["id"]]
        for k in ("x", "y", "w", "h"):
            assert abs(n["box"][k] - want[k]) < 0.5, (n, want)
    assert shot.stat().st_size > 5000
    px = result["pixels"]
    assert px["width"] >= result["graph"]["width"]
    for n, (r, g, b, _) in zip(result["nodes"], px["at"]):
        if n["status"] == "completed":
            assert max(abs(r - COMPLETED_FILL[0]), abs(g - COMPLETED_FILL[1]),
                       abs(b - COMPLETED_FILL[2])) <= 6, (n["id"], (r, g, b))
    background = px["at"][-1][:3]
    assert tuple(background) != COMPLETED_FILL


def test_web_page_demo(knut, driver, tmp_path):
    proc, addr = start_web(knut, "--step-ms", "150")
    try:
        shot = tmp_path / "viewer-demo.png"
        res = drive(driver, addr, shot)
        assert res["frames"] >= 2
        assert {n["status"] for n in res["nodes"]} == {"completed"}
        for n in res["nodes"]:  # idle -> running -> completed, each seen by the page
            assert {"idle", "running", "completed"} <= set(n["seen"]), n
        assert {r["status"] for r in res["rows"]} == {"completed"}
        assert all(r["rows"] for r in res["rows"])
        check_picture(res, shot)
        if os.environ.get("KNUT_WEB_SCREENSHOT_TO"):  # how docs/viewer.png is made
            shutil.copy(shot, os.environ["KNUT_WEB_SCREENSHOT_TO"])
    finally:
        stop(proc)


def test_web_page_native_run(knut, driver, tmp_path):
    subprocess.run([str(knut), "pipeline", "init", str(tmp_path / "demo")], check=True,
                   capture_output=True, timeout=60)
    proc, addr = start_web(knut, str(tmp_path / "demo"), "--run")
    try:
        shot = tmp_path / "viewer-run.png"
        res = drive(driver, addr, shot)
        assert {n["status"] for n in res["nodes"]} == {"completed"}
        rows = {r["id"]: r for r in res["rows"]}
        assert set(rows) == {"raw_orders", "orders", "daily_revenue"}
        assert all(int(r["rows"].replace(",", "")) > 0 for r in rows.values())
        check_picture(res, shot)
    finally:
        assert stop(proc) in (0, -15)
    # the run was real: its storage holds the datasets
    assert (tmp_path / "demo" / "storage" / "events.jsonl").exists()


def test_web_page_failed_flow_shows_error(knut, driver, tmp_path):
    spec = tmp_path / "bad"
    (spec / "sql").mkdir(parents=True)
    (spec / "pipeline.yml").write_text(
        "name: bad\nstorage: storage\nlibraries:\n  - glob:\n      include: sql/**\n")
    (spec / "sql" / "flows.sql").write_text(textwrap.dedent("""\
        CREATE MATERIALIZED VIEW good AS SELECT 1 AS x;
        CREATE MATERIALIZED VIEW broken AS SELECT CAST('not a number' AS INTEGER) AS x FROM good;
        CREATE MATERIALIZED VIEW after_broken AS SELECT * FROM broken;
        """))
    proc, addr = start_web(knut, str(spec), "--run")
    try:
        res = drive(driver, addr, tmp_path / "viewer-failed.png")
        status = {n["id"]: n["status"] for n in res["nodes"]}
        assert status == {"good": "completed", "broken": "failed", "after_broken": "skipped"}
        rows = {r["id"]: r for r in res["rows"]}
        assert "not a number" in rows["broken"]["error"]
        assert rows["good"]["error"] == ""
    finally:
        assert stop(proc) in (1, -15)


def test_web_page_reconnects_after_restart(knut, driver, tmp_path):
    first, addr = start_web(knut, "--step-ms", "3000")
    procs = [first]

    def restart():
        stop(first)
        deadline = time.monotonic() + 20
        while True:  # the port can take a moment to be free again
            try:
                procs.append(start_web(knut, "--step-ms", "50", addr=addr)[0])
                return
            except AssertionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.3)

    try:
        res = drive(driver, addr, tmp_path / "viewer-restart.png", on_first_frame=restart)
        assert res["reconnects"] >= 1
        assert {n["status"] for n in res["nodes"]} == {"completed"}
    finally:
        for p in procs:
            stop(p)


def test_web_page_spark_job(knut, driver, tmp_path, spark_connect):
    """The page follows the growing graph of a Spark job: every stage drawn
    where the last /graph.json puts it, each settled, the result's rows."""
    proc, addr = spark_job(knut, spark_connect, MULTI_STAGE)
    try:
        shot = tmp_path / "viewer-spark-job.png"
        res = drive(driver, addr, shot, timeout_ms=300000)
        status = {n["id"]: n["status"] for n in res["nodes"]}
        assert status.pop("result") == "completed"
        assert len(status) >= 2 and set(status.values()) <= {"completed", "skipped"}, status
        rows = {r["id"]: r for r in res["rows"]}
        assert rows["result"]["rows"] == "7"
        check_picture(res, shot)
    finally:
        assert stop(proc) == 0


def test_web_frames_larger_than_one_write(knut, tmp_path):
    """400 flows: a frame is over the server's 64 KiB per-write buffer and
    still arrives whole (sent in parts)."""
    spec = tmp_path / "wide"
    (spec / "sql").mkdir(parents=True)
    (spec / "pipeline.yml").write_text(
        "name: wide\nstorage: storage\nlibraries:\n  - glob:\n      include: sql/**\n")
    stmts = [f"CREATE MATERIALIZED VIEW flow_with_a_long_name_{i:04d} AS SELECT "
             + (f"* FROM flow_with_a_long_name_{i - 1:04d}" if i % 20 else f"{i} AS x") + ";\n"
             for i in range(400)]
    (spec / "sql" / "flows.sql").write_text("".join(stmts))
    proc, addr = start_web(knut, str(spec), "--step-ms", "1")
    try:
        graph = get_json(addr, "/graph.json")
        assert len(graph["nodes"]) == 400
        events = read_events(addr, timeout=120)
        assert events[-1] == (None, {"done": True})
        last = events[-2][1]
        check_frame(last, graph)
        assert len(json.dumps(last)) > 65536
        assert {s["status"] for s in last["stages"]} == {"completed"}
    finally:
        stop(proc)


def test_pipeline_show_svg_is_well_formed(knut, tmp_path):
    """`knut pipeline show --format svg`: standalone SVG parsed by an XML
    parser, one box per flow where /graph.json (the same layout) puts it."""
    import xml.etree.ElementTree as ET

    root = tmp_path / "demo"
    subprocess.run([str(knut), "pipeline", "init", str(root)], check=True, capture_output=True,
                   timeout=60)
    r = subprocess.run([str(knut), "pipeline", "show", str(root), "--format", "svg"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    svg = ET.fromstring(r.stdout.encode())
    ns = {"s": "http://www.w3.org/2000/svg"}
    assert svg.tag == "{http://www.w3.org/2000/svg}svg"
    nodes = svg.findall("s:g[@class='node']", ns)
    edges = svg.findall("s:g[@class='edge']", ns)
    assert [n.find("s:title", ns).text for n in nodes] == ["raw_orders", "orders", "daily_revenue"]
    assert [e.find("s:title", ns).text for e in edges] == \
        ["raw_orders -> orders", "orders -> daily_revenue"]
    xs = [float(n.find("s:rect", ns).get("x")) for n in nodes]
    assert xs == sorted(xs) and len(set(xs)) == 3  # one column per layer, left to right
    proc, addr = start_web(knut, str(root))
    try:
        graph = get_json(addr, "/graph.json")
    finally:
        stop(proc)
    for n, want in zip(nodes, graph["nodes"]):
        rect = n.find("s:rect", ns)
        assert (float(rect.get("x")), float(rect.get("y"))) == (want["x"], want["y"])
