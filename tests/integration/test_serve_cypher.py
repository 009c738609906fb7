"""`knut serve --config serve.yml` with named Cypher queries served as
tables of the `cypher` catalog, and ad-hoc Cypher, against a real FalkorDB
(Valkey with the module, tests/integration/peers.py), through the ADBC
Flight SQL driver and pyarrow.flight.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import adbc_driver_flightsql.dbapi as flightsql
import pyarrow as pa
import pyarrow.flight as fl
import pytest

import flightsql_wire as w
from test_serve import Server, fetch, info_of, still_serves

GRAPH = "social"

SEED = (
    "CREATE (:Person {name: 'ada', age: 36}), (:Person {name: 'grace', age: 85}), "
    "(:Person {name: \"o'brien\", age: 50}), (:Person {name: 'x} RETURN 1 //', age: 1})"
)


def config(tmp_path: Path, falkordb, extra: str = "") -> Path:
    p = tmp_path / "serve.yml"
    p.write_text(f"""
falkordb:
  url: redis://{falkordb.host}:{falkordb.port}
  graph: {GRAPH}
  timeout_ms: 5000
queries:
  people:
    cypher: MATCH (p:Person) RETURN p.name AS name, p.age AS age
    columns: {{name: VARCHAR, age: BIGINT}}
  person_named:
    cypher: MATCH (p:Person) WHERE p.name = $who RETURN p.name AS name, p.age AS age
    params: {{who: VARCHAR}}
    columns: {{name: VARCHAR, age: BIGINT}}
  older_than:
    cypher: MATCH (p:Person) WHERE p.age > $min RETURN p.name AS name ORDER BY name
    params: {{min: BIGINT}}
{extra}""")
    return p


def graph_calls(falkordb) -> int:
    """GRAPH.RO_QUERY calls the server has answered (INFO commandstats)."""
    with falkordb.client() as c:
        stats = c.info("commandstats")
    for k, v in stats.items():
        if k.lower() in ("cmdstat_graph.ro_query",):
            return int(v["calls"])
    return 0


@pytest.fixture
def seeded(falkordb):
    falkordb.query(GRAPH, SEED)
    return falkordb


@pytest.fixture
def cy(knut, tmp_path, seeded):
    s = Server(knut, None, "--config", str(config(tmp_path, seeded)))
    yield s
    assert s.stop() == 0


def rows(server, sql: str) -> pa.Table:
    _, t = fetch(server.client(), w.statement_query(sql))
    return t


def test_named_queries_listed_as_tables(cy):
    with flightsql.connect(cy.uri) as conn:
        objs = conn.adbc_get_objects(depth="tables", catalog_filter="cypher").read_all()
        names = sorted(t["table_name"] for c in objs.to_pylist()
                       for s in c["catalog_db_schemas"] for t in s["db_schema_tables"])
        assert names == ["older_than", "people", "person_named"]
        schema = conn.adbc_get_table_schema("person_named", catalog_filter="cypher",
                                            db_schema_filter="main")
        assert schema.names == ["name", "age", "who"]
        assert schema.field("age").type == pa.int64()
        # inferred once at start (no columns: declared)
        assert conn.adbc_get_table_schema("older_than", catalog_filter="cypher",
                                          db_schema_filter="main").names == ["name", "min"]


def test_select_star_runs_the_query(cy):
    t = rows(cy, "SELECT * FROM cypher.people ORDER BY name")
    assert t.column("name").to_pylist() == ["ada", "grace", "o'brien", "x} RETURN 1 //"]
    assert t.schema.field("age").type == pa.int64()


def test_parameter_from_literal_and_from_a_bound_value(cy):
    t = rows(cy, "SELECT name, age FROM cypher.person_named WHERE who = 'grace'")
    assert t.to_pylist() == [{"name": "grace", "age": 85}]
    t = rows(cy, "SELECT name FROM cypher.older_than WHERE min = 40")
    assert t.column("name").to_pylist() == ["grace", "o'brien"]
    with flightsql.connect(cy.uri) as conn:
        cur = conn.cursor()
        cur.execute("SELECT age FROM cypher.person_named WHERE who = ?", parameters=("ada",))
        assert cur.fetch_arrow_table().column("age").to_pylist() == [36]
        cur.execute("SELECT name FROM cypher.older_than WHERE min = ? ORDER BY name",
                    parameters=(80,))
        assert cur.fetch_arrow_table().column("name").to_pylist() == ["grace"]
        cur.close()


def test_injection_attempts_stay_values(cy, seeded):
    # quotes and Cypher syntax in a value are matched as a name, nothing else
    t = rows(cy, "SELECT name FROM cypher.person_named WHERE who = 'o''brien'")
    assert t.column("name").to_pylist() == ["o'brien"]
    t = rows(cy, "SELECT name FROM cypher.person_named WHERE who = 'x} RETURN 1 //'")
    assert t.column("name").to_pylist() == ["x} RETURN 1 //"]
    with flightsql.connect(cy.uri) as conn:
        cur = conn.cursor()
        for evil in ["' OR 1=1 //", "ada' RETURN p //", "\" MATCH (n) DETACH DELETE n //",
                     "$who", "ada\\' OR true"]:
            cur.execute("SELECT count(*) AS n FROM cypher.person_named WHERE who = ?",
                        parameters=(evil,))
            assert cur.fetch_arrow_table().column("n").to_pylist() == [0], evil
        cur.close()
    # the graph is untouched
    assert rows(cy, "SELECT count(*) AS n FROM cypher.people").column("n").to_pylist() == [4]


def test_missing_parameter_is_a_clear_error(cy):
    c = cy.client()
    info = info_of(c, w.statement_query("SELECT * FROM cypher.person_named"))
    with pytest.raises(pa.ArrowInvalid, match="takes the parameter 'who'"):
        c.do_get(info.endpoints[0].ticket).read_all()
    still_serves(c)


def test_schema_cache_flight_info_runs_no_cypher(cy, seeded):
    c = cy.client()
    before = graph_calls(seeded)
    info = info_of(c, w.statement_query("SELECT * FROM cypher.people"))
    assert info.schema.names == ["name", "age"]
    info = info_of(c, w.statement_query("SELECT * FROM cypher.older_than WHERE min = 1"))
    assert info.schema.names == ["name", "min"]
    assert graph_calls(seeded) == before  # GetFlightInfo: the cached schema only
    t = c.do_get(info.endpoints[0].ticket).read_all()
    assert t.schema == info.schema
    assert graph_calls(seeded) == before + 1  # DoGet: one run


def test_adhoc_cypher(cy):
    c = cy.client()
    info = info_of(c, w.statement_query("CYPHER MATCH (p:Person) RETURN p.name AS n ORDER BY n"))
    assert len(info.schema) == 0  # known once it runs: take the stream's
    t = c.do_get(info.endpoints[0].ticket).read_all()
    assert t.column("n").to_pylist() == ["ada", "grace", "o'brien", "x} RETURN 1 //"]
    with flightsql.connect(cy.uri) as conn:
        cur = conn.cursor()
        cur.execute("CYPHER MATCH (p:Person {name: 'ada'}) RETURN p.age AS age")
        assert cur.fetch_arrow_table().column("age").to_pylist() == [36]
        cur.close()
    with pytest.raises(pa.ArrowInvalid, match="falkordb .*"):  # FalkorDB's syntax error
        fetch(c, w.statement_query("CYPHER MATCH (n RETURN n"))
    still_serves(c)


def test_falkordb_down_is_unavailable_and_server_keeps_serving(knut, tmp_path, start_peer):
    from peers import FalkorDB
    fdb = start_peer(FalkorDB)
    fdb.query(GRAPH, SEED)
    s = Server(knut, None, "--config", str(config(tmp_path, fdb)))
    try:
        c = s.client()
        assert len(fetch(c, w.statement_query("SELECT * FROM cypher.people"))[1]) == 4
        fdb.stop()
        with pytest.raises(fl.FlightUnavailableError,
                           match=f"cypher.people: falkordb {fdb.host}:{fdb.port}"):
            fetch(c, w.statement_query("SELECT * FROM cypher.people"))
        with pytest.raises(fl.FlightUnavailableError, match="falkordb"):
            fetch(c, w.statement_query("CYPHER RETURN 1 AS x"))
        still_serves(c)
    finally:
        assert s.stop() == 0


def test_authz_on_query_names(knut, tmp_path, seeded):
    auth = tmp_path / "serve.auth"
    auth.write_text("token bi t-bi\ntoken ops t-ops\n"
                    "allow bi cypher.people\nallow ops *\n")
    auth.chmod(0o600)
    s = Server(knut, None, "--config", str(config(tmp_path, seeded)), "--auth-file", str(auth))
    try:
        c = s.client()
        bi = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer t-bi")])
        info = c.get_flight_info(fl.FlightDescriptor.for_command(
            w.statement_query("SELECT * FROM cypher.people")), bi)
        assert len(c.do_get(info.endpoints[0].ticket, bi).read_all()) == 4
        for sql in ["SELECT * FROM cypher.person_named WHERE who = 'ada'",
                    "SELECT * FROM cypher.main.older_than WHERE min = 1",
                    "SELECT * FROM temp.main.__knut_cypher_r_person_named",
                    "CYPHER MATCH (n) RETURN n"]:
            with pytest.raises(fl.FlightUnauthorizedError,
                               match="may not|restricted|whole graph|catalog view"):
                c.get_flight_info(fl.FlightDescriptor.for_command(w.statement_query(sql)), bi)
        with flightsql.connect(s.uri, db_kwargs={
                "adbc.flight.sql.authorization_header": "Bearer t-bi"}) as conn:
            objs = conn.adbc_get_objects(depth="tables").read_all().to_pylist()
            seen = sorted((cat["catalog_name"], t["table_name"]) for cat in objs
                          for sc in cat["catalog_db_schemas"] for t in sc["db_schema_tables"])
            assert seen == [("cypher", "people")]
        ops = fl.FlightCallOptions(headers=[(b"authorization", b"Bearer t-ops")])
        info = c.get_flight_info(fl.FlightDescriptor.for_command(
            w.statement_query("CYPHER MATCH (p:Person) RETURN count(p) AS n")), ops)
        assert c.do_get(info.endpoints[0].ticket, ops).read_all().column("n").to_pylist() == [4]
    finally:
        assert s.stop() == 0


def test_inference_needs_falkordb_at_start(knut, tmp_path, falkordb):
    # a query without columns: is run once at start; FalkorDB must be there
    p = tmp_path / "serve.yml"
    p.write_text("falkordb: {url: 'redis://127.0.0.1:1', graph: g, timeout_ms: 500}\n"
                 "queries:\n  q: {cypher: 'RETURN 1 AS x'}\n")
    r = subprocess.run([str(knut), "serve", "--memory", "--addr", "127.0.0.1:0",
                        "--config", str(p)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    assert "query q: falkordb 127.0.0.1:1" in r.stderr
