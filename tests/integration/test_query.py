"""End-to-end tests of `knut query`: the binary against real files written by
pyarrow and DuckDB, every output format parsed back by an independent reader
(csv, json, pyarrow.ipc), exit codes, and bounded memory on a large result.
"""
import csv
import datetime as dt
import io
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
KNUT = os.environ.get("KNUT_BIN", str(REPO / "build" / "knut"))
PEAK_RSS = pathlib.Path(__file__).with_name("peak_rss.py")


def knut(*args, stdin=None, check=None):
    """Runs `knut query ARGS`; returns the CompletedProcess (text mode)."""
    p = subprocess.run([KNUT, "query", *args], input=stdin, capture_output=True,
                       text=True, timeout=300)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout[-2000:], p.stderr)
    return p


def knut_bytes(*args):
    p = subprocess.run([KNUT, "query", *args], capture_output=True, timeout=300)
    assert p.returncode == 0, p.stderr.decode()
    return p.stdout


@pytest.fixture(scope="module", autouse=True)
def binary_exists():
    if not os.access(KNUT, os.X_OK):
        pytest.fail(f"knut binary not found at {KNUT} (build it or set KNUT_BIN)")


MIXED = (
    "SELECT * FROM (VALUES "
    " (1, 'plain', 2.5::DOUBLE, true, DATE '2024-02-29', TIMESTAMP '2024-02-29 12:34:56.789',"
    "  [1, 2], {'a': 1, 'b': 'x'}),"
    " (2, 'comma, \"quote\"\nnewline', -0.125::DOUBLE, false, DATE '1969-12-31',"
    "  TIMESTAMP '1970-01-01 00:00:00', [], {'a': NULL, 'b': 'y'}),"
    " (3, '', NULL, NULL, NULL, NULL, NULL, NULL),"
    " (4, NULL, 1e300::DOUBLE, true, DATE '2000-01-01', TIMESTAMP '2000-01-01 00:00:00.000001',"
    "  [NULL, 3], NULL)"
    ") t(id, s, d, b, day, ts, l, st) ORDER BY id"
)


def test_select_42_prints_a_table():
    p = knut("SELECT 42", check=0)
    assert "42" in p.stdout
    lines = p.stdout.splitlines()
    assert lines[0].startswith("+") and lines[-1] == "(1 row)"
    assert any(line.strip("| ").strip() == "42" for line in lines[3:-2])


def test_table_cuts_at_max_rows_and_says_so():
    p = knut("--max-rows", "5", "SELECT * FROM range(100) t(n)", check=0)
    assert p.stdout.rstrip().endswith("(5 rows shown; more not shown)")
    shown = [line for line in p.stdout.splitlines() if line.startswith("|")][1:]
    assert [int(line.strip("| ")) for line in shown] == [0, 1, 2, 3, 4]
    p = knut("--max-rows", "0", "SELECT * FROM range(3000)", check=0)
    assert p.stdout.rstrip().endswith("(3000 rows)")


def test_table_never_cuts_numbers_wider_than_the_sample():
    # Widths come from the first rows; a later, wider number must still
    # print whole (text may be cut with an ellipsis, digits never).
    sql = "SELECT CASE WHEN range < 2999 THEN 1 ELSE 1000000 END AS v FROM range(3000)"
    p = knut("--max-rows", "0", sql, check=0)
    cells = [line.strip("| ") for line in p.stdout.splitlines() if line.startswith("|")][1:]
    assert cells[-1] == "1000000"


def test_csv_output_round_trips():
    p = knut("--format", "csv", MIXED, check=0)
    rows = list(csv.reader(io.StringIO(p.stdout, newline="")))
    assert rows[0] == ["id", "s", "d", "b", "day", "ts", "l", "st"]
    assert rows[1] == ["1", "plain", "2.5", "true", "2024-02-29", "2024-02-29 12:34:56.789",
                       "[1, 2]", '{"a": 1, "b": "x"}']
    assert rows[2][1] == 'comma, "quote"\nnewline'
    assert rows[2][2:6] == ["-0.125", "false", "1969-12-31", "1970-01-01 00:00:00"]
    assert rows[2][6:] == ["[]", '{"a": null, "b": "y"}']
    # An empty string is quoted, NULL is an empty field: raw text tells them apart.
    raw = p.stdout.split("\n")
    assert any(line.startswith('3,"",,') for line in raw)
    assert any(line.startswith("4,,1e+300,") for line in raw)
    assert len(rows) == 5


def test_json_lines_output_round_trips():
    p = knut("--format", "json", MIXED, check=0)
    recs = [json.loads(line) for line in p.stdout.splitlines()]
    assert len(recs) == 4
    assert recs[0] == {"id": 1, "s": "plain", "d": 2.5, "b": True, "day": "2024-02-29",
                       "ts": "2024-02-29T12:34:56.789", "l": [1, 2], "st": {"a": 1, "b": "x"}}
    assert recs[1]["s"] == 'comma, "quote"\nnewline'
    assert recs[1]["st"] == {"a": None, "b": "y"}
    assert recs[2] == {"id": 3, "s": "", "d": None, "b": None, "day": None, "ts": None,
                       "l": None, "st": None}
    assert recs[3]["d"] == 1e300 and recs[3]["l"] == [None, 3]
    assert recs[3]["ts"] == "2000-01-01T00:00:00.000001"
    assert isinstance(recs[0]["id"], int) and isinstance(recs[0]["d"], float)
    # ISO strings parse with the standard library.
    assert dt.datetime.fromisoformat(recs[0]["ts"]) == dt.datetime(2024, 2, 29, 12, 34, 56,
                                                                   789000)


def test_json_numbers_stay_exact():
    p = knut("-f", "json", "SELECT 9007199254740993::BIGINT AS big, "
             "123456789012345678901234567890::HUGEINT AS huge, 12.340::DECIMAL(10,3) AS dec, "
             "18446744073709551615::UBIGINT AS ub, 'NaN'::DOUBLE AS nan", check=0)
    rec = json.loads(p.stdout)
    assert rec["big"] == 9007199254740993
    assert rec["huge"] == 123456789012345678901234567890
    assert p.stdout.count('"dec":12.340') == 1
    assert rec["ub"] == 18446744073709551615
    assert rec["nan"] == "NaN"


def test_parquet_written_by_pyarrow(tmp_path):
    path = tmp_path / "people.parquet"
    table = pa.table({
        "id": pa.array([1, 2, 3], pa.int64()),
        "name": ["ada", "brian", None],
        "born": pa.array([dt.date(1815, 12, 10), dt.date(1942, 1, 8), None], pa.date32()),
        "tags": pa.array([["math"], [], None], pa.list_(pa.string())),
    })
    pq.write_table(table, path)
    p = knut("-f", "json", f"SELECT * FROM '{path}' ORDER BY id", check=0)
    recs = [json.loads(line) for line in p.stdout.splitlines()]
    assert recs == [
        {"id": 1, "name": "ada", "born": "1815-12-10", "tags": ["math"]},
        {"id": 2, "name": "brian", "born": "1942-01-08", "tags": []},
        {"id": 3, "name": None, "born": None, "tags": None},
    ]
    p = knut("-f", "csv", f"SELECT count(*) AS n FROM read_parquet('{path}')", check=0)
    assert p.stdout.splitlines() == ["n", "3"]


def test_csv_file_query(tmp_path):
    path = tmp_path / "edges.csv"
    path.write_text("src,dst,weight\n1,2,0.5\n2,3,1.5\n3,1,\n")
    p = knut("-f", "csv", f"SELECT src, dst, weight FROM '{path}' ORDER BY src", check=0)
    rows = list(csv.reader(io.StringIO(p.stdout, newline="")))
    assert rows == [["src", "dst", "weight"], ["1", "2", "0.5"], ["2", "3", "1.5"], ["3", "1", ""]]
    p = knut("-f", "json", f"SELECT sum(weight) AS w FROM read_csv('{path}')", check=0)
    assert json.loads(p.stdout) == {"w": 2.0}


def test_arrow_output_read_by_pyarrow():
    out = knut_bytes("--format", "arrow",
                     "SELECT range AS i, range::VARCHAR AS s, [range, range + 1] AS l, "
                     "{'a': range % 7} AS st, DATE '2024-01-01' + (range % 30)::INT AS d, "
                     "CASE WHEN range % 3 = 0 THEN NULL ELSE range * 0.5 END AS x "
                     "FROM range(10000)")
    table = ipc.open_stream(io.BytesIO(out)).read_all()
    assert table.num_rows == 10000
    assert table.schema.names == ["i", "s", "l", "st", "d", "x"]
    assert table.column("i").to_pylist() == list(range(10000))
    assert table.column("s")[123].as_py() == "123"
    assert table.column("l")[5].as_py() == [5, 6]
    assert table.column("st")[9].as_py() == {"a": 2}
    assert table.column("d")[31].as_py() == dt.date(2024, 1, 2)
    assert table.column("x").null_count == 3334


def test_sql_from_stdin_and_multiple_statements(tmp_path):
    p = knut("-f", "csv", "-", stdin="CREATE TABLE t AS SELECT 41 AS x;\n"
                                     "SELECT x + 1 AS answer FROM t;\n", check=0)
    assert p.stdout.splitlines() == ["answer", "42"]


def test_database_file_persists_between_runs(tmp_path):
    db = str(tmp_path / "k.duckdb")
    knut("--db", db, "CREATE TABLE v AS SELECT * FROM range(5) t(n)", check=0)
    p = knut("--db", db, "--read-only", "-f", "csv", "SELECT sum(n)::BIGINT AS s FROM v", check=0)
    assert p.stdout.splitlines() == ["s", "10"]


def test_invalid_sql_fails_with_duckdb_message():
    p = knut("SELEC 42", check=1)
    assert p.stdout == ""
    err = p.stderr.strip()
    assert err.startswith("knut query: ")
    assert "syntax error" in err and "SELEC" in err
    assert len(err.splitlines()) == 1


def test_missing_file_fails(tmp_path):
    p = knut(f"SELECT * FROM '{tmp_path}/missing.parquet'", check=1)
    assert p.stderr.startswith("knut query: ")
    assert "missing.parquet" in p.stderr
    p = knut("--read-only", "--db", str(tmp_path / "nope.duckdb"), "SELECT 1", check=1)
    assert "nope.duckdb" in p.stderr


def test_error_while_streaming_fails(tmp_path):
    # Row 5000 does not convert: the error surfaces after rows were printed.
    p = knut("-f", "csv", "SELECT (CASE WHEN range < 5000 THEN range::VARCHAR ELSE 'x' END)"
             "::INTEGER AS v FROM range(10000)", check=1)
    assert "Conversion" in p.stderr


def test_usage_errors_exit_2():
    for args in (["--bogus", "SELECT 1"], [], ["-f", "xml", "SELECT 1"],
                 ["--max-rows", "many", "SELECT 1"], ["SELECT 1", "SELECT 2"],
                 ["--read-only", "SELECT 1"]):
        p = knut(*args, check=2)
        assert p.stderr.startswith("knut query: "), args
        # one line: what is wrong, and where the help is
        assert p.stderr.endswith("; see 'knut query --help'\n") and p.stderr.count("\n") == 1


def test_help_exits_0():
    p = subprocess.run([KNUT, "query", "--help"], capture_output=True, text=True)
    assert p.returncode == 0
    for word in ("--db", "--format", "--max-rows", "csv", "json", "arrow", "Examples:"):
        assert word in p.stdout
    p = subprocess.run([KNUT, "help", "query"], capture_output=True, text=True)
    assert p.returncode == 0 and "usage: knut query" in p.stdout


@pytest.mark.parametrize("fmt", ["json", "csv"])
def test_two_million_rows_in_bounded_memory(fmt):
    sql = ("SELECT range AS id, 'name-' || range AS name, range * 0.5 AS score, "
           "DATE '2020-01-01' + (range % 1000)::INT AS day FROM range(2000000)")
    peak = pathlib.Path(tempfile.mkdtemp()) / "peak.json"
    proc = subprocess.Popen([sys.executable, str(PEAK_RSS), str(peak), "--", KNUT, "query",
                             "-f", fmt, sql], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    nbytes = nlines = 0
    last = b""
    for chunk in iter(lambda: proc.stdout.read(1 << 20), b""):
        nbytes += len(chunk)
        nlines += chunk.count(b"\n")
        last = (last + chunk)[-200:]
    # the launcher's wait4: knut's own peak RSS (kilobytes on Linux)
    proc.wait()
    res = json.loads(peak.read_text())
    assert res["returncode"] == 0, proc.stderr.read().decode()
    assert nlines == 2000000 + (1 if fmt == "csv" else 0)
    assert nbytes > 60 * 1024 * 1024
    tail = last.rstrip(b"\n").split(b"\n")[-1].decode()
    if fmt == "json":
        assert json.loads(tail) == {"id": 1999999, "name": "name-1999999", "score": 999999.5,
                                    "day": "2022-09-26"}
    else:
        assert tail == "1999999,name-1999999,999999.5,2022-09-26"
    peak_mb = res["maxrss_kb"] / 1024
    assert peak_mb < 500, f"peak RSS {peak_mb:.0f} MB for {nbytes >> 20} MB of output"


# ---- knut graph query --param: typed values in the CYPHER block (real FalkorDB) ----

def gq(falkordb, graph, *args, check=None):
    """Runs `knut graph query` against the falkordb fixture; returns the process."""
    p = subprocess.run([KNUT, "graph", "query", "--falkordb",
                        f"redis://{falkordb.host}:{falkordb.port}", "--graph", graph,
                        *args], capture_output=True, text=True, timeout=120)
    if check is not None:
        assert p.returncode == check, (p.returncode, p.stdout[-2000:], p.stderr)
    return p


def test_graph_query_params_are_typed(falkordb):
    out = gq(falkordb, "params", "-f", "json",
             "-p", "i=-42", "--param", "f=2.5", "-p", "e=1e3", "-p", "t=true", "-p", "n=null",
             "-p", "s='it''s'".replace("''", "\\'"), "-p", 'd="dq \\"x\\"\\n"',
             "-p", "l=[1, 'a', [true, null], 0.5]", "-p", "m={k: 1, 'odd key': 'v'}",
             "RETURN $i AS i, $f AS f, $e AS e, $t AS t, $n AS n, $s AS s, $d AS d, "
             "$l[0] AS l0, $l[1] AS l1, $l[2][0] AS l20, $l[2][1] AS l21, $l[3] AS l3, "
             "size($l) AS ln, $m.k AS mk, $m.`odd key` AS mo, typeOf($i) AS ti, typeOf($e) AS te",
             check=0)
    row = json.loads(out.stdout)
    assert row["i"] == -42 and row["ti"] == "Integer"
    assert row["f"] == 2.5 and row["e"] == 1000.0 and row["te"] == "Float"
    assert row["t"] is True and row["n"] is None
    assert row["s"] == "it's" and row["d"] == 'dq "x"\n'
    assert (row["l0"], row["l1"], row["l20"], row["l21"], row["l3"], row["ln"]) == \
        (1, "a", True, None, 0.5, 4)
    assert row["mk"] == 1 and row["mo"] == "v"


def test_graph_query_param_injection_stays_a_value(falkordb):
    gq(falkordb, "inj", "CREATE (:P {name: 'keep'})", check=0)
    evil = "x'}) MATCH (n) DETACH DELETE n //"
    hostile = "'" + evil.replace("\\", "\\\\").replace("'", "\\'") + "'"
    out = gq(falkordb, "inj", "-f", "json", "-p", "name=" + hostile,
             "CREATE (p:P {name: $name}) RETURN p.name AS name", check=0)
    assert json.loads(out.stdout)["name"] == evil
    # Unquoted text that tries to end the block is refused, not sent.
    bad = gq(falkordb, "inj", "-p", "name=1 MATCH (n) DETACH DELETE n",
             "RETURN $name", check=2)
    assert "unexpected text after the value" in bad.stderr
    count = gq(falkordb, "inj", "-f", "json", "MATCH (p:P) RETURN count(p) AS c", check=0)
    assert json.loads(count.stdout)["c"] == 2


@pytest.mark.parametrize("param, message", [
    ("x=Alice", "strings need quotes"),
    ("x=9223372036854775808", "out of the 64-bit range"),
    ("x=nan", "strings need quotes"),
    ("x=1e999", "not a finite number"),
    ("x='open", "unterminated string"),
    ("x=[1, 2", "expected ',' or ']'"),
    ("x={`a`: 1}", "expected a map key"),
    ("1x=1", "parameter name"),
    ("bad name=1", "parameter name"),
    ("noequals", "NAME=VALUE"),
])
def test_graph_query_bad_params_are_usage_errors(falkordb, param, message):
    p = gq(falkordb, "bad", "-p", param, "RETURN 1", check=2)
    assert message in p.stderr, p.stderr
