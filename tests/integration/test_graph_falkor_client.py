"""The FalkorDB client (src/graph/falkor_client*.c) against a real FalkorDB.

knut's side is tests/tools/knut_falkor_tool (modes query, repl, batch).
Values of every storable property type are written with Cypher, read back
through the client as JSON lines and as an Arrow IPC stream (read by
pyarrow), and compared with what was written; statistics, server errors,
a killed server, a restart on the same port (one connection across it), a
password-protected server (right and wrong passwords; the password never
printed), RESULTSET_SIZE truncation and pipelined batches are checked.
"""

import datetime as dt
import json
import os
import pathlib
import subprocess

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from peers import FalkorDB

REPO = pathlib.Path(__file__).resolve().parents[2]
GRAPH = "knut_client"


def find_tool():
    """$KNUT_FALKOR_TOOL, next to $KNUT_BIN's build, or build/tests."""
    if os.environ.get("KNUT_FALKOR_TOOL"):
        return pathlib.Path(os.environ["KNUT_FALKOR_TOOL"])
    candidates = []
    if os.environ.get("KNUT_BIN"):
        candidates.append(pathlib.Path(os.environ["KNUT_BIN"]).parent / "tests" / "knut_falkor_tool")
    candidates.append(REPO / "build" / "tests" / "knut_falkor_tool")
    for c in candidates:
        if c.exists():
            return c
    pytest.fail("knut_falkor_tool not built (looked in %s); set KNUT_FALKOR_TOOL" % candidates)


TOOL = None


def run(peer, mode, *args, input=None, env=None, binary=False, conn=None):
    """Runs the tool against peer; returns the CompletedProcess."""
    global TOOL
    TOOL = TOOL or find_tool()
    conn = conn if conn is not None else ["--host", peer.host, "--port", str(peer.port)]
    full_env = dict(os.environ, **(env or {}))
    return subprocess.run([str(TOOL), mode, *conn, *args], input=input, env=full_env,
                          capture_output=True, text=not binary, timeout=120, check=False)


def rows_of(peer, query, *flags):
    p = run(peer, "query", *flags, GRAPH, query)
    assert p.returncode == 0, p.stderr
    return [json.loads(line) for line in p.stdout.splitlines()]


def stats_of(p):
    line = [s for s in p.stderr.splitlines() if s.startswith("stats: ")][-1]
    return json.loads(line[len("stats: "):])


class Repl:
    """One tool process and one connection, driven line by line."""

    def __init__(self, peer, *args, conn=None):
        global TOOL
        TOOL = TOOL or find_tool()
        conn = conn if conn is not None else ["--host", peer.host, "--port", str(peer.port)]
        self.proc = subprocess.Popen([str(TOOL), "repl", *conn, *args, GRAPH],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)

    def ask(self, line):
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        return self.proc.stderr.read()


CREATE = (
    "CREATE (a:Thing:Tagged {s: 'h\u00e9llo \"q\"\\n', i: 9007199254740993, d: 0.1, b: true,"
    " li: [1, 2, 3], mixed: [1, 'a', 2.5], nested: [[1], [2, 3]],"
    " da: date('2024-02-29'), dt: localdatetime('2024-02-29T12:34:56'),"
    " t: localtime('23:59:58'), du: duration('P1DT2H3M4S'),"
    " pt: point({latitude: 51.5, longitude: -0.125}), v: vecf32([1.5, -2.25, 3.0])})"
    "-[:LINKS {w: 2.5, since: date('2020-01-01')}]->(b:Thing {s: 'other'})"
)
READ = ("MATCH (a:Tagged)-[r:LINKS]->(b) RETURN a.s, a.i, a.d, a.b, a.li, a.mixed, a.nested,"
        " a.da, a.dt, a.t, a.du, a.pt, a.v, {k: a.i, m: null} AS m, a, r, b")


def test_every_property_type_round_trips(falkordb):
    p = run(falkordb, "query", GRAPH, CREATE)
    assert p.returncode == 0, p.stderr
    st = stats_of(p)["stats"]
    assert (st["nodes_created"], st["relationships_created"], st["labels_added"]) == (2, 1, 2)
    assert st["properties_set"] == 16

    [row] = rows_of(falkordb, READ, "--ro")
    assert row["a.s"] == 'h\u00e9llo "q"\n'
    assert row["a.i"] == 9007199254740993
    assert row["a.d"] == 0.1 and row["a.b"] is True
    assert row["a.li"] == [1, 2, 3]
    assert row["a.mixed"] == ["1", '"a"', "2.5"]  # mixed list items: JSON text
    assert row["a.nested"] == [[1], [2, 3]]
    assert (row["a.da"], row["a.dt"], row["a.t"]) == ("2024-02-29", "2024-02-29T12:34:56", "23:59:58")
    assert row["a.du"] == 93784
    assert row["a.pt"] == {"latitude": 51.5, "longitude": -0.125}
    assert row["a.v"] == [1.5, -2.25, 3.0]
    assert row["m"] == {"k": 9007199254740993, "m": None}
    a, r, b = row["a"], row["r"], row["b"]
    assert sorted(a["labels"]) == ["Tagged", "Thing"] and b["labels"] == ["Thing"]
    props = json.loads(a["properties"])
    assert props["s"] == 'h\u00e9llo "q"\n' and props["mixed"] == [1, "a", 2.5]
    assert props["dt"] == "2024-02-29T12:34:56" and props["du"] == "PT93784S"
    assert props["pt"] == {"latitude": 51.5, "longitude": -0.125}
    assert (r["type"], r["src"], r["dst"]) == ("LINKS", a["id"], b["id"])
    assert json.loads(r["properties"]) == {"w": 2.5, "since": "2020-01-01"}

    # the same through Arrow IPC, typed
    p = run(falkordb, "query", "--ro", "--arrow", GRAPH, READ, binary=True)
    assert p.returncode == 0, p.stderr.decode()
    table = ipc.open_stream(p.stdout).read_all()
    types = {f.name: f.type for f in table.schema}
    assert types["a.i"] == pa.int64() and types["a.d"] == pa.float64()
    assert types["a.da"] == pa.date32() and types["a.dt"] == pa.timestamp("s")
    assert types["a.t"] == pa.time32("s") and types["a.du"] == pa.duration("s")
    assert types["a.v"] == pa.list_(pa.float32())
    assert types["m"] == pa.map_(pa.string(), pa.int64())
    assert table.schema.field("a.mixed").type.value_field.metadata == {
        b"knut.falkordb.kind": b"mixed"}
    got = table.to_pylist()[0]
    assert got["a.dt"] == dt.datetime(2024, 2, 29, 12, 34, 56)
    assert got["a.da"] == dt.date(2024, 2, 29) and got["a.t"] == dt.time(23, 59, 58)
    assert got["a.du"] == dt.timedelta(days=1, hours=2, minutes=3, seconds=4)
    assert got["a"]["id"] == a["id"] and got["r"]["type"] == "LINKS"

    # and a path
    [row] = rows_of(falkordb, "MATCH p = (:Tagged)-[:LINKS]->() RETURN p", "--ro")
    assert [n["id"] for n in row["p"]["nodes"]] == [a["id"], b["id"]]
    assert [e["type"] for e in row["p"]["edges"]] == ["LINKS"]


def test_statistics(falkordb):
    def stats(q):
        p = run(falkordb, "query", GRAPH, q)
        assert p.returncode == 0, p.stderr
        return stats_of(p)["stats"]

    s = stats("CREATE (:S {k: 1})-[:R]->(:S {k: 2}), (:T)")
    assert (s["nodes_created"], s["relationships_created"], s["labels_added"]) == (3, 1, 2)
    assert s["cached_execution"] == 0 and s["execution_ms"] > 0
    assert stats("CREATE INDEX FOR (n:S) ON (n.k)")["indices_created"] == 1
    assert stats("MATCH (n:S) SET n.x = 1")["properties_set"] == 2
    assert stats("MATCH (n:S) REMOVE n.x")["properties_removed"] == 2
    s = stats("MATCH (n:S) DETACH DELETE n")
    assert (s["nodes_deleted"], s["relationships_deleted"]) == (2, 1)
    assert stats("MATCH (n:T) RETURN count(n)")["cached_execution"] == 0
    assert stats("MATCH (n:T) RETURN count(n)")["cached_execution"] == 1


def test_server_errors_are_surfaced(falkordb):
    p = run(falkordb, "query", GRAPH, "MATCH (n RETURN n")
    assert p.returncode == 1
    assert f"peer error: falkordb {falkordb.host}:{falkordb.port}: " in p.stderr
    assert "Invalid input" in p.stderr or "parse" in p.stderr
    p = run(falkordb, "query", "--ro", GRAPH, "CREATE ()")
    assert p.returncode == 1 and "read-only" in p.stderr
    p = run(falkordb, "query", GRAPH, "UNWIND [1, 0] AS x RETURN 1 / x")
    assert p.returncode == 1 and "Division by zero" in p.stderr


def test_killed_server_and_restart_on_the_same_port(falkordb):
    repl = Repl(falkordb)
    assert repl.ask("RETURN 1")["rows"] == [{"1": 1}]
    pid = falkordb.pid
    falkordb.stop()
    got = repl.ask("RO RETURN 2")
    assert got["ok"] is False and got["status"] == "input/output error"
    assert f"falkordb {falkordb.host}:{falkordb.port}: connect: " in got["error"]
    # same port, new process: the same connection object reconnects
    assert falkordb._start_once() is None and falkordb.pid != pid
    assert repl.ask("RETURN 3")["rows"] == [{"3": 3}]
    assert repl.ask("CREATE (:Again)")["stats"]["nodes_created"] == 1
    # restarted again while the connection sits idle: found closed, reopened
    falkordb.stop()
    assert falkordb._start_once() is None
    assert repl.ask("RETURN 4")["rows"] == [{"4": 4}]
    repl.close()


def test_names_cache_refreshes_on_new_ids(falkordb):
    repl = Repl(falkordb)
    repl.ask("CREATE (:First {a: 1})")
    assert repl.ask("MATCH (n) RETURN n")["rows"][0]["n"]["labels"] == ["First"]
    falkordb.query(GRAPH, "CREATE (:Second {b: 2})")  # another client adds ids
    rows = repl.ask("RO MATCH (n) RETURN n ORDER BY id(n)")["rows"]
    assert [r["n"]["labels"] for r in rows] == [["First"], ["Second"]]
    assert json.loads(rows[1]["n"]["properties"]) == {"b": 2}
    repl.close()


class SecureFalkorDB(FalkorDB):
    """FalkorDB behind --requirepass."""

    name = "falkordb_auth"
    password = "pa55-w0rd:secret"

    def command(self):
        return super().command() + ["--requirepass", self.password]

    def client(self, **kw):
        kw.setdefault("password", self.password)
        return super().client(**kw)


def test_password_protected_server(start_peer):
    peer = start_peer(SecureFalkorDB)
    secret = SecureFalkorDB.password
    env = {"FALKOR_PW": secret}
    p = run(peer, "query", "--password-env", "FALKOR_PW", "--log", "trace", GRAPH, "RETURN 1",
            env=env)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == {"1": 1}
    assert secret not in p.stderr

    wrong = "not-the-" + secret
    url = f"redis://:{wrong.replace(':', '%3A')}@{peer.host}:{peer.port}"
    for conn, extra in (([], ["--password-env", "FALKOR_PW"]), (["--url", url], [])):
        p = run(peer, "query", *extra, "--log", "trace", GRAPH, "RETURN 1",
                env={"FALKOR_PW": wrong}, conn=conn or None)
        assert p.returncode == 1
        assert "authentication failed" in p.stderr
        assert f"{peer.host}:{peer.port}" in p.stderr
        assert wrong not in p.stderr + p.stdout and secret not in p.stderr + p.stdout

    p = run(peer, "query", GRAPH, "RETURN 1")  # no password at all
    assert p.returncode == 1 and "NOAUTH" in p.stderr

    url = f"redis://:{secret.replace(':', '%3A')}@{peer.host}:{peer.port}"
    p = run(peer, "query", "--log", "trace", GRAPH, "RETURN 5", conn=["--url", url], env=env)
    assert p.returncode == 0, p.stderr
    assert secret not in p.stderr


def test_resultset_size_truncation_is_never_silent(falkordb):
    with falkordb.client() as c:
        c.execute_command("GRAPH.CONFIG", "SET", "RESULTSET_SIZE", "5")
    p = run(falkordb, "query", GRAPH, "UNWIND range(1, 10) AS x RETURN x")
    assert p.returncode == 1
    assert "size limit exceeded" in p.stderr and "RESULTSET_SIZE" in p.stderr
    p = run(falkordb, "query", "--allow-truncated", GRAPH, "UNWIND range(1, 10) AS x RETURN x")
    assert p.returncode == 0, p.stderr
    assert len(p.stdout.splitlines()) == 5 and stats_of(p)["truncated"] is True
    assert len(rows_of(falkordb, "UNWIND range(1, 4) AS x RETURN x")) == 4
    with falkordb.client() as c:
        c.execute_command("GRAPH.CONFIG", "SET", "RESULTSET_SIZE", "-1")
    assert len(rows_of(falkordb, "UNWIND range(1, 10) AS x RETURN x")) == 10


def test_pipelined_batch(falkordb):
    queries = [f"CREATE (:B {{i: {i}}})" for i in range(200)]
    queries.insert(50, "CREATE (:B {i: })")  # a syntax error in the middle
    queries.append("MATCH (n:B) RETURN count(n)")
    p = run(falkordb, "batch", GRAPH, input="\n".join(queries) + "\n")
    assert p.returncode == 1
    lines = [json.loads(s) for s in p.stdout.splitlines()]
    assert len(lines) == len(queries) + 1
    items, summary = lines[:-1], lines[-1]
    assert [i for i, it in enumerate(items) if not it["ok"]] == [50]
    assert items[50]["status"] == "peer error"
    assert all(it["stats"]["nodes_created"] == 1 for it in items[:50] + items[51:-1])
    assert items[-1]["rows"] == 1
    assert "1 of 202 batched queries failed; first (#50)" in summary["error"]
    assert rows_of(falkordb, "MATCH (n:B) RETURN count(n) AS c")[0]["c"] == 200
