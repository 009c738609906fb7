"""`knut serve --config serve.yml`: parse errors with file:line:col, views
over Parquet and CSV files listed and queryable through the ADBC Flight
SQL driver and pyarrow.flight, over a read-only DuckDB file; the example
examples/serve/serve.yml, shown verbatim in docs/serve.md, works.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pyarrow.flight as fl
import pyarrow.parquet as pq
import pytest

import flightsql_wire as w
from test_serve import Server, fetch, still_serves

REPO = Path(__file__).resolve().parents[2]
GRAPHAR = Path("/work/shared/data/graphar-testing")
if not GRAPHAR.is_dir():
    GRAPHAR = REPO / "third_party" / "graphar-testing"


def serve_fails(knut, cfg: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(knut), "serve", "--memory", "--addr", "127.0.0.1:0",
                           "--config", str(cfg)], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("text, where, what", [
    ("views:\n  lake:\n    o: {path: a.parquet, fromat: parquet}\n", ":3:", "unknown key 'fromat' "
     "in a view (did you mean 'format'?)"),
    ("veiws: {}\n", ":1:1:", "unknown key 'veiws' in serve.yml (did you mean 'views'?)"),
    ("views:\n  lake:\n    o: {format: csv}\n", ":3:", "a view needs 'path'"),
    ("views:\n  cypher:\n    o: {path: a.csv}\n", ":3:", "is a name DuckDB or knut keeps"),
    ("queries:\n  q: {cypher: 'RETURN 1 AS x', columns: {x: BIGINT}}\n", ":2:",
     "queries need a 'falkordb:' connection"),
    ("falkordb: {url: 'redis://u:pw@h:1', graph: g}\n", ":1:", "give it by password_file"),
    ("falkordb: {url: 'redis://h:1', graph: g}\nqueries:\n  q:\n    cypher: RETURN 1\n"
     "    params: {'bad name': VARCHAR}\n", ":5:", "a name of letters, digits and '_'"),
    ("falkordb: {url: 'redis://h:1', graph: g}\nqueries:\n  q:\n    cypher: RETURN 1\n"
     "    columns: {x: 'INT; DROP TABLE t'}\n", ":5:", "is not a DuckDB type name"),
    ("views: [1, 2\n", ":", "serve.yml"),
])
def test_parse_errors_name_line_and_column(knut, tmp_path, text, where, what):
    cfg = tmp_path / "serve.yml"
    cfg.write_text(text)
    r = serve_fails(knut, cfg)
    assert r.returncode == 2, r.stderr
    assert str(cfg) + where in r.stderr, r.stderr
    assert what in r.stderr, r.stderr


def test_missing_file_and_bad_type(knut, tmp_path):
    r = serve_fails(knut, tmp_path / "nope.yml")
    assert r.returncode != 0 and "nope.yml" in r.stderr
    cfg = tmp_path / "serve.yml"
    cfg.write_text("views:\n  lake:\n    gone: {path: missing.parquet}\n")
    r = serve_fails(knut, cfg)
    assert r.returncode != 0
    assert f"{cfg}:3:" in r.stderr and "view lake.gone" in r.stderr and "missing.parquet" in r.stderr


@pytest.fixture
def lake(tmp_path) -> Path:
    d = tmp_path / "data"
    (d / "orders").mkdir(parents=True)
    pq.write_table(pa.table({"id": [1, 2], "amount": [9.5, 3.25]}), d / "orders" / "p1.parquet")
    pq.write_table(pa.table({"id": [3], "amount": [1.0]}), d / "orders" / "p2.parquet")
    shutil.copy(GRAPHAR / "modern_graph" / "original_dataset" / "person.csv", d / "person.csv")
    shutil.copy(GRAPHAR / "neo4j" / "data" / "Person.parquet", d / "Person.parquet")
    cfg = tmp_path / "serve.yml"
    cfg.write_text("""
views:
  lake:
    orders: {path: data/orders}            # a folder of Parquet files
    person: {path: data/person.csv}
  neo4j:
    person: {path: data/Person.parquet, format: parquet}
""")
    return cfg


def test_views_listed_and_queryable(knut, tmp_path, lake):
    db = tmp_path / "store.duckdb"
    subprocess.run([str(knut), "query", "--db", str(db), "CREATE TABLE t AS SELECT 1 AS x"],
                   check=True, stdout=subprocess.DEVNULL)
    s = Server(knut, db, "--config", str(lake))
    try:
        c = s.client()
        _, t = fetch(c, w.statement_query("SELECT sum(amount) AS s, count(*) AS n FROM lake.orders"))
        assert t.to_pylist() == [{"s": 13.75, "n": 3}]
        _, t = fetch(c, w.statement_query("SELECT count(*) AS n FROM lake.person"))
        expected = len((lake.parent / "data" / "person.csv").read_text().strip().splitlines()) - 1
        assert t.column("n").to_pylist() == [expected]
        _, t = fetch(c, w.statement_query("SELECT count(*) AS n FROM neo4j.main.person"))
        assert t.column("n").to_pylist()[0] > 0
        # the served file is read-only still; the host is closed beyond the views' folders
        with pytest.raises((fl.FlightServerError, pa.ArrowInvalid),
                           match="disabled by configuration"):
            fetch(c, w.statement_query("SELECT * FROM read_csv('/etc/passwd')"))
        with flightsql.connect(s.uri) as conn:
            objs = conn.adbc_get_objects(depth="tables").read_all().to_pylist()
            seen = sorted((cat["catalog_name"], sc["db_schema_name"], t["table_name"])
                          for cat in objs for sc in cat["catalog_db_schemas"]
                          for t in sc["db_schema_tables"])
            assert ("lake", "main", "orders") in seen and ("neo4j", "main", "person") in seen
            assert ("store", "main", "t") in seen
            assert conn.adbc_get_table_schema("orders", catalog_filter="lake").names == \
                ["id", "amount"]
            cur = conn.cursor()
            cur.execute("SELECT id FROM lake.orders WHERE amount > ? ORDER BY id",
                        parameters=(2.0,))
            assert cur.fetch_arrow_table().column("id").to_pylist() == [1, 2]
            cur.close()
        still_serves(c)
    finally:
        assert s.stop() == 0


def test_views_authorized_by_their_name(knut, tmp_path, lake):
    auth = tmp_path / "serve.auth"
    auth.write_text("token bi t-bi\nallow bi lake.orders\n")
    auth.chmod(0o600)
    s = Server(knut, None, "--config", str(lake), "--auth-file", str(auth))
    try:
        c = s.client()
        bi = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer t-bi")])
        info = c.get_flight_info(fl.FlightDescriptor.for_command(
            w.statement_query("SELECT count(*) AS n FROM lake.orders")), bi)
        assert c.do_get(info.endpoints[0].ticket, bi).read_all().column("n").to_pylist() == [3]
        for sql in ["SELECT * FROM lake.person", "SELECT * FROM neo4j.person",
                    "SELECT * FROM lake.main.person"]:
            with pytest.raises(fl.FlightUnauthorizedError, match="may not read"):
                c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query(sql)), bi)
    finally:
        assert s.stop() == 0


def test_example_serve_yml_is_in_the_docs_and_parses(knut, tmp_path, falkordb):
    example = (REPO / "examples" / "serve" / "serve.yml").read_text()
    assert example in (REPO / "docs" / "serve.md").read_text()
    d = tmp_path / "data"
    d.mkdir()
    pq.write_table(pa.table({"id": [1]}), d / "orders.parquet")
    (d / "people.csv").write_text("id,name\n1,ada\n")
    shutil.copytree(GRAPHAR / "modern_graph", d / "modern_graph")
    shutil.copytree(GRAPHAR / "ldbc_sample" / "csv", d / "ldbc")
    cfg = tmp_path / "serve.yml"
    cfg.write_text(example.replace("redis://127.0.0.1:6379",
                                   f"redis://{falkordb.host}:{falkordb.port}")
                   .replace("  password_env: FALKORDB_PASSWORD\n", ""))
    falkordb.query("social", "CREATE (:Person {name: 'ada', age: 36})-[:KNOWS]->"
                             "(:Person {name: 'grace', age: 85})")
    s = Server(knut, None, "--config", str(cfg))
    try:
        c = s.client()
        _, t = fetch(c, w.statement_query(
            "SELECT friend, age FROM cypher.friends_of WHERE who = 'ada'"))
        assert t.to_pylist() == [{"friend": "grace", "age": 85}]
        _, t = fetch(c, w.statement_query("SELECT name FROM lake.people"))
        assert t.column("name").to_pylist() == ["ada"]
        _, t = fetch(c, w.statement_query(
            "SELECT a.name AS who, b.name AS knows FROM modern_graph.person a "
            "JOIN modern_graph.person_knows_person e ON e._graphArSrcIndex = a._graphArVertexIndex "
            "JOIN modern_graph.person b ON b._graphArVertexIndex = e._graphArDstIndex "
            "ORDER BY 1, 2"))
        assert t.to_pylist() == [{"who": "marko", "knows": "josh"},
                                 {"who": "marko", "knows": "vadas"}]
        _, t = fetch(c, w.statement_query(
            "SELECT count(*) AS n, count(DISTINCT _graphArDstIndex) AS d "
            "FROM ldbc.person_knows_person"))
        assert t.to_pylist()[0]["n"] == 6626
    finally:
        assert s.stop() == 0


@pytest.mark.parametrize("args, status, what", [
    (["--metrics-addr", "999.1.1.1:99"], 2, "--metrics-addr '999.1.1.1:99'"),
    (["--metrics-addr", "127.0.0.1:notaport"], 2, "expected IP:PORT"),
    (["--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem"], 1,
     "/nonexistent/c.pem"),
    (["--config", "/nonexistent/serve.yml"], None, "/nonexistent/serve.yml"),
], ids=["metrics-host", "metrics-port", "tls-file", "config-file"])
def test_startup_errors_exit_cleanly(knut, args, status, what):
    """An error after the server object exists (a --metrics-addr refused at
    start, once the gRPC port is bound) or before (TLS files, serve.yml)
    ends the CLI with its message and a status, never gRPC's abort."""
    r = subprocess.run([str(knut), "serve", "--memory", "--addr", "127.0.0.1:0", *args],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode > 0, (r.returncode, r.stderr)  # a signal (abort) is negative
    if status is not None:
        assert r.returncode == status, r.stderr
    assert "knut serve: " in r.stderr and what in r.stderr, r.stderr
    assert "assertion failed" not in r.stderr, r.stderr
    assert r.stdout == ""
