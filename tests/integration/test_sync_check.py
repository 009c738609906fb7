"""`knut sync check` and `knut sync --dry-run`, from the user's side.

Each test writes a small config and its drop files into a temporary
folder, runs the binary, and checks the lines it prints (one per problem:
`KIND: ...` naming the table, file and column), `--json`, and the exit
code (0 clean, 1 problems, 2 a config that does not load). The FalkorDB
cases run against a real FalkorDB (peers.py). --dry-run writes nothing:
the store, the ledger and the graph are compared before and after. And
the run-time side: `knut sync` warns once for a table whose path matches
no file.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from peers import REPO, free_port

EXAMPLE = REPO / "examples" / "lakehouse"

COMPANIES = "company_id,name,city\n1,Acme,Berlin\n2,Globex,Lisbon\n"
PEOPLE = "person_id,first_name,company_id\n1,Ada,1\n2,Grace,2\n"

BASE = """\
store: graph.duckdb
tables:
  companies:
    path: companies.csv
    vertices:
      - labels: [Company]
        keys: [company_id]
        rename: {company_id: id}
  people:
    path: people.csv
    vertices:
      - labels: [Person]
        keys: [person_id]
        properties: [first_name]
        rename: {person_id: id}
    fk_edges:
      - type: WORKS_AT
        column: company_id
        to: {label: Company, key: id}
"""


@pytest.fixture
def lake(tmp_path):
    d = tmp_path / "lake"
    d.mkdir()
    (d / "companies.csv").write_text(COMPANIES)
    (d / "people.csv").write_text(PEOPLE)
    (d / "sync.yml").write_text(BASE)
    return d


def check(run_knut, d, *args, cfg="sync.yml"):
    return run_knut("sync", "check", "--config", d / cfg, *args)


def problems(proc) -> list[str]:
    return [line for line in proc.stdout.splitlines() if line.strip()]


def rurl(falkordb) -> str:
    return f"redis://{falkordb.host}:{falkordb.port}"


def digest(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def test_clean_config_exits_0(run_knut, lake):
    p = check(run_knut, lake)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout == ""
    assert "ok (2 tables)" in p.stderr
    assert not (lake / "graph.duckdb").exists()  # nothing created


def test_the_shipped_example_is_clean(run_knut, tmp_path):
    d = tmp_path / "lake"
    shutil.copytree(EXAMPLE, d)
    p = run_knut("sync", "check", "--config", d / "sync.yml", "--store", d / "g.duckdb")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ok (4 tables)" in p.stderr


def test_path_matching_no_file(run_knut, lake):
    (lake / "sync.yml").write_text(BASE.replace("path: people.csv", "path: peple.csv"))
    p = check(run_knut, lake)
    assert p.returncode == 1, p.stdout + p.stderr
    lines = problems(p)
    assert len(lines) == 1, lines
    assert lines[0].startswith("path: table 'people': path '")
    assert "peple.csv' matches no data file" in lines[0]
    assert "1 problem" in p.stderr


def test_a_missing_folder_and_an_empty_glob(run_knut, lake):
    cfg = BASE.replace("path: people.csv", "path: drops/people-*.csv")
    cfg = cfg.replace("path: companies.csv", "path: nowhere/")
    (lake / "sync.yml").write_text(cfg)
    (lake / "drops").mkdir()
    p = check(run_knut, lake)
    assert p.returncode == 1
    lines = problems(p)
    assert any("table 'companies'" in l and "nowhere" in l for l in lines), lines
    assert any("table 'people'" in l and "people-*.csv" in l for l in lines), lines


def test_missing_columns_one_line_each(run_knut, lake):
    cfg = BASE.replace("properties: [first_name]", "properties: [first_nam, last_name]")
    (lake / "sync.yml").write_text(cfg)
    p = check(run_knut, lake)
    assert p.returncode == 1
    lines = problems(p)
    assert len(lines) == 2, lines
    for col in ("first_nam", "last_name"):
        line = next(l for l in lines if f"'{col}'" in l)
        assert line.startswith("column: table 'people': file ")
        assert "people.csv" in line and "is missing" in line
        assert "sync.yml:" in line  # where the config names it
    pj = check(run_knut, lake, "--json")
    objs = [json.loads(l) for l in pj.stdout.splitlines()]
    assert {o["column"] for o in objs} == {"first_nam", "last_name"}
    assert all(o["kind"] == "column" and o["table"] == "people" and
               o["file"].endswith("people.csv") for o in objs)


def test_a_column_the_sql_step_drops(run_knut, lake):
    cfg = BASE.replace("    path: people.csv\n",
                       "    path: people.csv\n    sql: SELECT person_id, company_id FROM input\n")
    (lake / "sync.yml").write_text(cfg)
    p = check(run_knut, lake)
    assert p.returncode == 1
    (line,) = problems(p)
    assert "'first_name'" in line and "from the sql step's result" in line


def test_a_bad_sql_step(run_knut, lake):
    cfg = BASE.replace("    path: people.csv\n",
                       "    path: people.csv\n    sql: SELECT nosuch, * FROM input\n")
    (lake / "sync.yml").write_text(cfg)
    p = check(run_knut, lake)
    assert p.returncode == 1
    (line,) = problems(p)
    assert line.startswith("sql: table 'people': file ")
    assert "nosuch" in line


def test_a_label_no_table_writes(run_knut, lake):
    (lake / "sync.yml").write_text(BASE.replace("to: {label: Company", "to: {label: Compnay"))
    p = check(run_knut, lake)
    assert p.returncode == 1
    (line,) = problems(p)
    assert line.startswith("label: table 'people': edge 'WORKS_AT'")
    assert "'Compnay' is written by no table" in line


def test_one_label_with_different_keys(run_knut, lake):
    cfg = BASE + """\
  more_companies:
    path: companies.csv
    vertices:
      - labels: [Company]
        keys: [name]
"""
    (lake / "sync.yml").write_text(cfg)
    p = check(run_knut, lake)
    assert p.returncode == 1
    lines = problems(p)
    assert any(l.startswith("keys: table 'more_companies': label 'Company' is merged on {name}")
               and "table 'companies' merges it on {id}" in l for l in lines), lines


def test_an_edge_finding_a_label_by_other_keys(run_knut, lake):
    (lake / "sync.yml").write_text(BASE.replace("key: id}", "key: company_id}"))
    p = check(run_knut, lake)
    assert p.returncode == 1
    (line,) = problems(p)
    assert line.startswith("keys: table 'people': edge 'WORKS_AT'")
    assert "by {company_id}" in line and "merges 'Company' on {id}" in line


def test_format_that_disagrees_with_the_files(run_knut, lake):
    # format: parquet over a .csv path: a round would ignore the file
    cfg = BASE.replace("    path: companies.csv\n", "    path: companies.csv\n    format: parquet\n")
    (lake / "sync.yml").write_text(cfg)
    p = check(run_knut, lake)
    assert p.returncode == 1
    (line,) = problems(p)
    assert line.startswith("format: table 'companies': format: parquet")
    assert "named as csv" in line
    # a Parquet file named .csv: read as CSV by its extension
    (lake / "sync.yml").write_text(BASE)
    pq.write_table(pa.table({"company_id": [1], "name": ["Acme"]}), lake / "companies.csv")
    p = check(run_knut, lake)
    assert p.returncode == 1
    (line,) = problems(p)
    assert line.startswith("format: table 'companies': file ")
    assert "companies.csv is read as csv (by its extension) but is a Parquet file" in line


def test_an_unwritable_store(run_knut, lake):
    p = check(run_knut, lake, "--store", lake / "missing" / "g.duckdb")
    assert p.returncode == 1
    (line,) = problems(p)
    assert line.startswith("store: store ") and "missing does not exist" in line
    (lake / "adir").mkdir()
    p = check(run_knut, lake, "--store", lake / "adir")
    assert p.returncode == 1
    assert "is not a regular file" in p.stdout
    if os.geteuid() != 0:  # root may write anywhere: no problem there
        ro = lake / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        p = check(run_knut, lake, "--store", ro / "g.duckdb")
        assert p.returncode == 1 and "cannot be written" in p.stdout


def test_unknown_key_did_you_mean_at_the_key(run_knut, lake):
    cfg = BASE.replace("    path: people.csv\n", "    path: people.csv\n    mdoe: cdc\n")
    (lake / "sync.yml").write_text(cfg)
    line_no = cfg.splitlines().index("    mdoe: cdc") + 1
    for args in (("sync", "check"), ("sync", "--dry-run")):
        p = run_knut(*args, "--config", lake / "sync.yml")
        assert p.returncode == 2, p.stderr
        assert f"sync.yml:{line_no}:5: table 'people': unknown key 'mdoe'" in p.stderr
        assert "(did you mean 'mode'?)" in p.stderr
    top = "stor: graph.duckdb\n" + BASE.split("\n", 1)[1]
    (lake / "sync.yml").write_text(top)
    p = check(run_knut, lake)
    assert p.returncode == 2
    assert "sync.yml:1:1: unknown key 'stor'" in p.stderr and "did you mean 'store'" in p.stderr


def test_usage_errors_exit_2(run_knut, lake):
    p = run_knut("sync", "check")
    assert p.returncode == 2 and "--config" in p.stderr
    p = check(run_knut, lake, "--store", "a.duckdb", "--falkordb", "redis://127.0.0.1:1")
    assert p.returncode == 2
    p = run_knut("sync", "check", "--help")
    assert p.returncode == 0 and "usage: knut sync check" in p.stdout


def test_dry_run_writes_nothing_embedded(run_knut, lake):
    first = run_knut("sync", "--once", "--config", lake / "sync.yml")
    assert first.returncode == 0, first.stderr
    store = lake / "graph.duckdb"
    before = {p.name: digest(p) for p in lake.iterdir()}
    (lake / "people.csv").write_text(PEOPLE + "3,Edsger,1\n")  # new work a run would do
    before["people.csv"] = digest(lake / "people.csv")
    p = run_knut("sync", "--dry-run", "--config", lake / "sync.yml")
    assert p.returncode == 0, p.stdout + p.stderr
    after = {p.name: digest(p) for p in lake.iterdir()}
    assert after == before  # store bytes unchanged, no WAL, no new file
    q = run_knut("query", "--db", store, "SELECT count(*) AS n FROM _knut_sync_ledger")
    assert q.returncode == 0 and "2" in q.stdout, q.stdout + q.stderr


def test_dry_run_with_problems_exits_1(run_knut, lake):
    (lake / "sync.yml").write_text(BASE.replace("path: people.csv", "path: peple.csv"))
    p = run_knut("sync", "--dry-run", "--config", lake / "sync.yml")
    assert p.returncode == 1
    assert problems(p)[0].startswith("path: table 'people'")
    assert not (lake / "graph.duckdb").exists()


# ---- FalkorDB ----------------------------------------------------------------


def test_falkordb_types_and_dry_run(run_knut, lake, falkordb):
    # a decimal with a fraction: the embedded store keeps it, FalkorDB cannot
    cfg = BASE.replace("    path: people.csv\n",
                       "    path: people.csv\n"
                       "    sql: SELECT *, 1.25::DECIMAL(10,2) AS salary FROM input\n")
    cfg = cfg.replace("properties: [first_name]", "properties: [first_name, salary]")
    (lake / "sync.yml").write_text(cfg)
    assert check(run_knut, lake).returncode == 0
    p = check(run_knut, lake, "--falkordb", rurl(falkordb), "--json")
    assert p.returncode == 1, p.stdout + p.stderr
    (o,) = [json.loads(l) for l in p.stdout.splitlines()]
    assert o["kind"] == "type" and o["table"] == "people" and o["column"] == "salary"
    assert "FalkorDB sink cannot store it" in o["message"] and "decimal(10,2)" in o["message"]
    # --dry-run into FalkorDB: no graph, no ledger file
    (lake / "sync.yml").write_text(BASE)
    p = run_knut("sync", "--dry-run", "--config", lake / "sync.yml", "--falkordb", rurl(falkordb),
                 "--graph", "dry")
    assert p.returncode == 0, p.stdout + p.stderr
    with falkordb.client() as c:
        assert c.exists("dry") == 0
    assert not (lake / "sync.yml.ledger.json").exists()


def test_falkordb_unwritable_ledger_and_server_down(run_knut, lake, falkordb):
    (lake / "ledger").mkdir()
    p = check(run_knut, lake, "--falkordb", rurl(falkordb), "--ledger", lake / "ledger")
    assert p.returncode == 1
    (line,) = problems(p)
    assert line.startswith("ledger: ledger ") and "is not a regular file" in line
    p = check(run_knut, lake, "--falkordb", rurl(falkordb), "--ledger", lake / "no" / "l.json")
    assert p.returncode == 1 and "folder" in p.stdout and "does not exist" in p.stdout
    down = f"redis://127.0.0.1:{free_port()}"
    p = check(run_knut, lake, "--falkordb", down)
    assert p.returncode == 1
    (line,) = problems(p)
    assert line.startswith("peer: FalkorDB: ")


# ---- at run time -------------------------------------------------------------


def test_sync_warns_once_for_a_path_matching_nothing(knut, lake):
    (lake / "sync.yml").write_text(BASE.replace("path: people.csv", "path: peple.csv"))
    env = dict(os.environ, KNUT_LOG_FORMAT="json")
    proc = subprocess.Popen([str(knut), "sync", "--config", str(lake / "sync.yml"),
                             "--interval", "0.1", "--max-backoff", "0.1"],
                            stderr=subprocess.PIPE, text=True, env=env)
    rounds = 0
    lines = []
    deadline = time.monotonic() + 60
    while rounds < 4 and time.monotonic() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if '"msg":"round' in line.replace(" ", ""):
            rounds += 1
    proc.send_signal(signal.SIGTERM)
    _, rest = proc.communicate(timeout=60)
    lines += rest.splitlines()
    assert proc.returncode == 0
    recs = [json.loads(l) for l in lines if l.strip().startswith("{")]
    warned = [r for r in recs if "matches no data file" in r.get("msg", "")]
    assert rounds >= 3, lines
    assert len(warned) == 1, warned
    assert warned[0]["level"] == "warn" and warned[0]["table"] == "people"
    assert "peple.csv" in warned[0]["path"]
