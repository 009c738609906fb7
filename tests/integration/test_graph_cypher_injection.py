"""Cypher rendering against a real FalkorDB: injection corpus and round trips.

knut's side is tests/tools/knut_cypher_tool: it reads an Arrow IPC stream
(made here with pyarrow), binds it as a vertex, edge or delete set and prints
the full GRAPH.QUERY texts. They are sent unchanged with the redis client,
then read back with fixed queries and compared exactly. Hostile values and
names must round-trip byte for byte and never change what the query does:
sentinel nodes created beforehand must survive, and node counts must match.
Values FalkorDB cannot hold (NUL, NaN, uint64 > int64, ...) and names with a
backtick must be refused by knut with a message naming row and column.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import pathlib
import random
import subprocess

import pyarrow as pa
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
GRAPH = "g"

# Strings that try to end the literal, the map, the list or the query.
CORPUS = [
    "",
    "plain",
    "it's",
    'double "quoted"',
    "back\\slash",
    "trailing backslash\\",
    "\\'",
    "\\\\'\\",
    "\\n is not a newline",
    "line\nbreak",
    "cr\rlf\r\n",
    "tab\there",
    "\x01\x1f\x7f controls",
    "'}) DETACH DELETE n //",
    '"}) DETACH DELETE n //',
    "'}] MATCH (x) DETACH DELETE x //",
    "$rows",
    "}]",
    "]}",
    "` backtick `",
    "CYPHER rows=[] MATCH (n) DETACH DELETE n",
    "émoji 🙂👩‍👩‍👧 and RTL \u202eשלום عربى\u202c",
    "zero-width\u200b joiner",
    "\U0010ffff max code point",
]


def find_tool() -> pathlib.Path:
    candidates = []
    if os.environ.get("KNUT_CYPHER_TOOL"):
        candidates.append(pathlib.Path(os.environ["KNUT_CYPHER_TOOL"]))
    if os.environ.get("KNUT_BIN"):
        candidates.append(pathlib.Path(os.environ["KNUT_BIN"]).parent / "tests" / "knut_cypher_tool")
    candidates.append(REPO / "build" / "tests" / "knut_cypher_tool")
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    pytest.fail("knut_cypher_tool not built (looked in %s); set KNUT_CYPHER_TOOL" % candidates)


@pytest.fixture(scope="module")
def tool():
    return find_tool()


def ipc(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def run_tool(tool, table, *args, budget=None):
    cmd = [str(tool), *args]
    if budget is not None:
        cmd += ["--budget", str(budget)]
    return subprocess.run(cmd, input=ipc(table), capture_output=True, timeout=60, check=False)


def render(tool, table, *args, budget=None) -> list[bytes]:
    """The GRAPH.QUERY texts knut makes for the table (framed as <len>\\n<bytes>\\n)."""
    r = run_tool(tool, table, *args, budget=budget)
    if r.returncode != 0:
        pytest.fail("knut_cypher_tool %s failed: %s" % (args, r.stderr.decode(errors="replace")))
    out, texts = r.stdout, []
    while out:
        n, rest = out.split(b"\n", 1)
        texts.append(rest[: int(n)])
        assert rest[int(n) : int(n) + 1] == b"\n"
        out = rest[int(n) + 1 :]
    return texts


def refused(tool, table, *args) -> str:
    r = run_tool(tool, table, *args)
    assert r.returncode == 1, r.stdout[:300]
    assert r.stdout == b"", "nothing may be printed for a refused set"
    return r.stderr.decode()


def query(client, text):
    return client.execute_command("GRAPH.QUERY", GRAPH, text, "--compact")


def apply(client, texts):
    replies = [query(client, t) for t in texts]
    for rep in replies:
        assert isinstance(rep, list)
    return replies


def rows(client, text):
    rep = query(client, text)
    return rep[1]


def cell(c):
    """A compact cell [type, value] as Python (strings stay bytes)."""
    t, v = c
    if t == 6:
        return [cell(x) for x in v]
    if t == 4:
        return v == b"true"
    if t == 5:
        return float(v)
    if t == 10:
        return {v[i]: cell(v[i + 1]) for i in range(0, len(v), 2)}
    return v


def add_sentinels(client):
    query(client, "UNWIND range(1, 3) AS i CREATE (:Sentinel {n: i})")


def check_sentinels(client, total_nodes):
    assert rows(client, "MATCH (s:Sentinel) RETURN count(s)") == [[[3, 3]]]
    assert rows(client, "MATCH (n) RETURN count(n)") == [[[3, total_nodes]]]


def big_string(seed: int, size: int) -> str:
    rnd = random.Random(seed)
    alphabet = "ab'\"\\\n\r\t}])({[$`/ é🙂\u202e"
    return "".join(rnd.choice(alphabet) for _ in range(size))


# ---- values -----------------------------------------------------------------


def test_injection_values_round_trip(falkordb, tool):
    values = CORPUS + [big_string(1, 100_000), "x" * 100_000]
    table = pa.table(
        {
            "id": pa.array(range(len(values)), pa.int64()),
            "s": pa.array(values, pa.string()),
            "l": pa.array([[v, v[::-1]] for v in values], pa.list_(pa.string())),
            "big": pa.array(values, pa.large_string()),
        }
    )
    with falkordb.client() as c:
        add_sentinels(c)
        texts = render(tool, table, "vertex", "--label", "Item", "--key", "id", "--all-props",
                       budget=1 << 20)
        apply(c, texts)
        got = rows(c, "MATCH (n:Item) RETURN n.id, n.s, n.l, n.big ORDER BY n.id")
        assert len(got) == len(values)
        for (i, s, lst, big), want in zip(got, values):
            assert cell(s) == want.encode(), "row %d" % cell(i)
            assert cell(lst) == [want.encode(), want[::-1].encode()]
            assert cell(big) == want.encode()
        check_sentinels(c, 3 + len(values))

        # the same strings as MERGE keys: a second upsert finds every node again
        keyed = pa.table({"k": pa.array(values, pa.string()), "n": pa.array(range(len(values)))})
        for _ in range(2):
            apply(c, render(tool, keyed, "vertex", "--label", "Keyed", "--key", "k",
                            "--all-props"))
        assert rows(c, "MATCH (n:Keyed) RETURN count(n)") == [[[3, len(values)]]]
        got = rows(c, "MATCH (n:Keyed) RETURN n.n, n.k ORDER BY n.n")
        assert [cell(k) for _, k in got] == [v.encode() for v in values]
        check_sentinels(c, 3 + 2 * len(values))


def test_names_round_trip(falkordb, tool):
    props = ["sp ace", "it's", 'quo"te', "back\\slash", "ünï🙂", "$rows", "}]", "new\nline",
             "'}) DETACH DELETE n //", "p:q", "-dash"]
    labels = ["Lab el", "it's", 'quo"te', "ünï🙂", "x}) DETACH DELETE n //", "new\nline"]
    table = pa.table({"key id": pa.array([1, 2], pa.int64()),
                      **{p: pa.array(["%s-%d" % (p, i) for i in range(2)]) for p in props}})
    args = ["vertex", "--key", "key id", "--all-props"]
    for lb in labels:
        args += ["--label", lb]
    with falkordb.client() as c:
        add_sentinels(c)
        apply(c, render(tool, table, *args))
        got = rows(c, "MATCH (n:Sentinel) RETURN count(n)")
        assert got == [[[3, 3]]]
        got = rows(c, "MATCH (n) WHERE NOT n:Sentinel RETURN labels(n), properties(n) "
                      "ORDER BY n.`key id`")
        assert len(got) == 2
        for i, (lbls, pmap) in enumerate(got):
            assert sorted(cell(lbls)) == sorted(lb.encode() for lb in labels)
            want = {p.encode(): ("%s-%d" % (p, i)).encode() for p in props}
            want[b"key id"] = i + 1
            assert cell(pmap) == want
        check_sentinels(c, 5)


def test_backtick_names_refused(falkordb, tool):
    table = pa.table({"id": [1], "a`b": ["x"]})
    err = refused(tool, table, "vertex", "--label", "L", "--key", "id", "--all-props")
    assert "property name 'a`b'" in err and "backtick" in err
    err = refused(tool, table, "vertex", "--label", "L`) DETACH DELETE n //", "--key", "id")
    assert "backtick" in err and "label" in err
    with falkordb.client() as c:
        add_sentinels(c)
        check_sentinels(c, 3)


def test_impossible_values_refused(tool):
    cases = [
        (pa.table({"id": [1, 2], "s": ["ok", "nul\x00byte"]}), "row 1, column 's'", "NUL byte"),
        (pa.table({"id": [1, 2], "f": [1.0, float("nan")]}), "row 1, column 'f'", "NaN"),
        (pa.table({"id": [1], "u": pa.array([2**63], pa.uint64())}), "row 0, column 'u'",
         "int64"),
        (pa.table({"id": pa.array([1, None], pa.int64())}), "row 1, column 'id'", "null"),
        (pa.table({"id": [1], "t": pa.array([-1], pa.timestamp("s"))}), "row 0, column 't'",
         "1969-12-31T23:59:59"),
        (pa.table({"id": [1], "d": pa.array([-800000], pa.date32())}), "row 0, column 'd'",
         "0000-9999"),
        (pa.table({"id": [1], "l": pa.array([[1, None]], pa.list_(pa.int64()))}),
         "row 0, column 'l'", "list element 1 is null"),
        (pa.table({"id": [1], "b": pa.array([b"\x00"], pa.binary())}), "column 'b'", "binary"),
        (pa.table({"id": [1], "m": pa.array([{"x": 1}])}), "property column 'm'", "maps"),
    ]
    for table, where, what in cases:
        err = refused(tool, table, "vertex", "--label", "L", "--key", "id", "--all-props")
        assert where in err and what in err, err
    # invalid UTF-8 smuggled into a string column is caught when the batch is read
    bad = pa.Array.from_buffers(pa.string(), 1, [None, pa.py_buffer(b"\x00\x00\x00\x00\x01\x00\x00\x00"),
                                                 pa.py_buffer(b"\xff")])
    err = refused(tool, pa.table({"id": [1], "s": bad}), "vertex", "--label", "L", "--key", "id",
                  "--all-props")
    assert "column 's'" in err and "UTF-8" in err, err


# ---- types ------------------------------------------------------------------


def test_numbers_temporal_lists_round_trip(falkordb, tool):
    doubles = [0.1, -0.0, 1e300, 5e-324, 1 / 3, 3.0, float("inf"), float("-inf"), -2.5e-7]
    n = len(doubles)
    epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
    instants = [dt.datetime(2020, 2, 29, 23, 59, 58, 999999, tzinfo=dt.timezone.utc),
                dt.datetime(1900, 1, 1, tzinfo=dt.timezone.utc),
                dt.datetime(1, 1, 1, tzinfo=dt.timezone.utc),
                dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.timezone.utc),
                dt.datetime(1969, 12, 31, 23, 59, 58, tzinfo=dt.timezone.utc)]
    instants = (instants * n)[:n]
    dates = ([dt.date(2020, 2, 29), dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(1969, 12, 31)]
             * n)[:n]
    table = pa.table({
        "id": pa.array(range(n), pa.int64()),
        "f": pa.array(doubles, pa.float64()),
        "f32": pa.array([0.5] * n, pa.float32()),
        "i": pa.array([(-2**63, 2**63 - 1, 0)[k % 3] for k in range(n)], pa.int64()),
        "u": pa.array([2**63 - 1] * n, pa.uint64()),
        "b": pa.array([k % 2 == 0 for k in range(n)]),
        "d": pa.array(dates, pa.date32()),
        "d64": pa.array(dates, pa.date64()),
        "ts_oslo": pa.array(instants, pa.timestamp("us", tz="Europe/Oslo")),
        "ts_naive": pa.array([x.replace(tzinfo=None) for x in instants], pa.timestamp("ms")),
        "ts_ns": pa.array([instants[0]] * n, pa.timestamp("ns", tz="UTC")),
        "tm": pa.array([dt.time(23, 59, 59, 5)] * n, pa.time64("us")),
        "li": pa.array([[1, -2, 3]] * n, pa.list_(pa.int64())),
        "lf": pa.array([[0.1, 2.0]] * n, pa.list_(pa.float64())),
        "lb": pa.array([[True, False]] * n, pa.list_(pa.bool_())),
        "ll": pa.array([[[1], [], [2, 3]]] * n, pa.list_(pa.list_(pa.int64()))),
        "ld": pa.array([[dt.date(2000, 1, 1), dt.date(1999, 12, 31)]] * n, pa.list_(pa.date32())),
        "le": pa.array([[]] * n, pa.list_(pa.int64())),
        "nul": pa.array([None] * n, pa.int64()),
    })
    with falkordb.client() as c:
        apply(c, render(tool, table, "vertex", "--label", "T", "--key", "id", "--all-props"))
        got = rows(c, "MATCH (n:T) RETURN n.id, n.f32, n.i, n.u, n.b, n.d, n.d64, n.ts_oslo, "
                      "n.ts_naive, n.ts_ns, n.tm, n.li, n.lf, n.lb, n.ll, n.ld, n.le, n.nul "
                      "ORDER BY n.id")
        assert len(got) == n
        for k, r in enumerate(got):
            (i, f32, iv, u, b, d, d64, tso, tsn, tsns, tm, li, lf, lb, ll, ld, le, nul) = r
            assert cell(f32) == 0.5
            assert cell(iv) == (-2**63, 2**63 - 1, 0)[k % 3]
            assert cell(u) == 2**63 - 1
            assert cell(b) is (k % 2 == 0)
            day = (dates[k] - dt.date(1970, 1, 1)).days * 86400
            assert d == [14, day] and d64 == [14, day]
            secs = math.floor((instants[k] - epoch).total_seconds())
            assert tso == [13, secs] and tsn == [13, secs]  # FalkorDB keeps whole seconds
            assert tsns == [13, math.floor((instants[0] - epoch).total_seconds())]
            assert tm[0] == 15 and tm[1] % 86400 == 23 * 3600 + 59 * 60 + 59
            assert cell(li) == [1, -2, 3] and cell(lf) == [0.1, 2.0] and cell(lb) == [True, False]
            assert cell(ll) == [[1], [], [2, 3]]
            assert ld[0] == 6 and [x[0] for x in ld[1]] == [14, 14]
            assert [x[1] for x in ld[1]] == [946684800, 946598400]
            assert cell(le) == [] and nul == [1, None]
        # doubles exactly: compare in Cypher with Python's shortest repr (a
        # parameter, since query-text literals refuse subnormals like 5e-324)
        for k, x in enumerate(doubles):
            if math.isinf(x):
                cond = "CYPHER x=0 MATCH (n:T {id: %d}) RETURN n.f %s 1.7976931348623157e308" % (
                    k, ">" if x > 0 else "< -")
            else:
                cond = ("CYPHER x=%r MATCH (n:T {id: %d}) RETURN n.f = $x AND "
                        "toString(n.f) = toString($x)" % (x, k))
            assert rows(c, cond) == [[[4, b"true"]]], x


# ---- edges, deletes, plan cache ---------------------------------------------


def test_edges_and_deletes(falkordb, tool):
    names = ["alice'", 'bob"', "carol\\", "'}) DETACH DELETE n //"]
    people = pa.table({"name": names, "age": [30, 40, 50, 60]})
    knows = pa.table({
        "from": [names[0], names[1], names[2], names[0]],
        "to": [names[1], names[2], names[3], names[3]],
        "since": pa.array([dt.date(2020, 1, 1)] * 4, pa.date32()),
        "note": ["a'", "}]", "$rows", "x\ny"],
    })
    with falkordb.client() as c:
        add_sentinels(c)
        apply(c, render(tool, people, "vertex", "--label", "Person", "--key", "name",
                        "--all-props"))
        edge_args = ["edge", "--type", "KNOWS'", "--src-label", "Person", "--src-key", "name",
                     "--src-col", "from", "--dst-label", "Person", "--dst-key", "name",
                     "--dst-col", "to", "--key", "since", "--all-props"]
        for _ in range(2):  # MERGE: the second run changes nothing
            apply(c, render(tool, knows, *edge_args))
        got = rows(c, "MATCH (a:Person)-[e:`KNOWS'`]->(b:Person) RETURN a.name, b.name, e.note, "
                      "e.since ORDER BY e.note")
        want = sorted(zip(knows["from"].to_pylist(), knows["to"].to_pylist(),
                          knows["note"].to_pylist()), key=lambda t: t[2].encode())
        assert [(cell(a), cell(b), cell(n)) for a, b, n, _ in got] == \
            [(x.encode(), y.encode(), z.encode()) for x, y, z in want]
        assert all(s == [14, 1577836800] for *_, s in got)
        # delete the hostile-named vertex: its two edges go with it
        gone = pa.table({"name": [names[3]]})
        apply(c, render(tool, gone, "delete", "--label", "Person", "--key", "name"))
        assert rows(c, "MATCH (p:Person) RETURN count(p)") == [[[3, 3]]]
        assert rows(c, "MATCH ()-[e]->() RETURN count(e)") == [[[3, 2]]]
        check_sentinels(c, 6)


def test_budget_split_shares_one_cached_plan(falkordb, tool):
    table = pa.table({"id": pa.array(range(200), pa.int64()),
                      "v": ["value %d '}) //" % i for i in range(200)]})
    texts = render(tool, table, "vertex", "--label", "B", "--key", "id", "--all-props",
                   budget=1000)
    assert len(texts) > 5
    assert all(len(t) <= 1000 for t in texts)
    queries = {t[t.rindex(b"] UNWIND $rows AS r ") + 2:] for t in texts}
    assert len(queries) == 1  # one text per shape, whatever the values
    with falkordb.client() as c:
        replies = apply(c, texts)
        assert b"Cached execution: 1" in replies[-1][0]  # [stats] without RETURN
        got = rows(c, "MATCH (n:B) RETURN n.id, n.v ORDER BY n.id")
        assert [(cell(i), cell(v)) for i, v in got] == \
            [(i, ("value %d '}) //" % i).encode()) for i in range(200)]
