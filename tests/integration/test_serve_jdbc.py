"""The Flight SQL JDBC driver (org.apache.arrow:flight-sql-jdbc-driver, what
DBeaver and Tableau load) against `knut serve`: tests/jdbc/JdbcCheck.java
runs the DatabaseMetaData calls those tools make on connecting, a query and
a PreparedStatement with INTEGER, DECIMAL and TIMESTAMP parameters, and
prints what the driver got; the lines are compared exactly with the
fixture's data and with what the server says through pyarrow.flight.
The driver jar and a JDK come from scripts/setup.sh --test.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pyarrow.flight as fl
import pytest

import flightsql_wire as w
from test_serve import Server, dbfile  # noqa: F401  (the fixture)

REPO = Path(__file__).resolve().parents[2]
JAR = REPO / "third_party" / "jdbc" / "flight-sql-jdbc-driver-18.3.0.jar"
CHECK = REPO / "tests" / "jdbc" / "JdbcCheck.java"


def run_check(url: str) -> list[str]:
    java = shutil.which("java")
    if not java or not JAR.exists():
        pytest.fail("no java or no JDBC driver jar: run scripts/setup.sh --test", pytrace=False)
    # Arrow's memory module reads java.nio internals (its documented flag)
    p = subprocess.run([java, "--add-opens=java.base/java.nio=ALL-UNNAMED", "-cp", str(JAR),
                        str(CHECK), url], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-4000:]
    return p.stdout.splitlines()


def section(lines: list[str], head: str) -> list[str]:
    """The line starting with head and the indented lines under it."""
    i = next(k for k, l in enumerate(lines) if l.split(" ")[0] == head)
    out = [lines[i]]
    for l in lines[i + 1:]:
        if not l.startswith("  "):
            break
        out.append(l.strip())
    return out


@pytest.fixture
def jdbc_lines(knut, dbfile):  # noqa: F811
    s = Server(knut, dbfile)
    try:
        lines = run_check(f"jdbc:arrow-flight-sql://127.0.0.1:{s.port}/?useEncryption=false")
        # what the server says through another client, to compare with
        c = s.client()
        info = c.get_flight_info(fl.FlightDescriptor.for_command(w.get_catalogs()))
        cats = c.do_get(info.endpoints[0].ticket).read_all().column(0).to_pylist()
    finally:
        assert s.stop() == 0
    return lines, cats


def test_jdbc_database_metadata(knut, jdbc_lines):
    lines, cats = jdbc_lines
    version = subprocess.run([str(knut), "--version"], capture_output=True, text=True,
                             check=True).stdout.strip()
    keywords = subprocess.run([str(knut), "query", "-f", "csv",
                               "SELECT count(*) FROM duckdb_keywords()"], capture_output=True,
                              text=True, check=True).stdout.split()[-1]
    assert lines[0] == f"product {version}"  # SqlInfo 0 and 1: "knut", "0.1.0 (DuckDB v…)"
    assert lines[1] == 'quote "'
    assert lines[2] == "readonly true"
    assert lines[3] == f"keywords {keywords}"  # SqlInfo 508, from DuckDB's own list
    assert lines[4] == "keywords-pragma true"  # a DuckDB keyword, not SQL:2003's
    assert cats == ["store"]
    assert section(lines, "catalogs") == ["catalogs 1", "store"]
    assert section(lines, "schemas") == ["schemas 2", "store|graph", "store|main"]
    assert section(lines, "tabletypes") == ["tabletypes 3", "BASE TABLE", "LOCAL TEMPORARY",
                                            "VIEW"]
    assert section(lines, "tables") == ["tables 2", "store|main|adults|VIEW",
                                        "store|main|people|BASE TABLE"]
    # name | java.sql.Types | type name | size | digits | nullable | position
    assert section(lines, "columns") == [
        "columns 7",
        "id|4|INTEGER|10|0|1|1",
        "name|12|VARCHAR|65536|null|1|2",
        "score|8|DOUBLE|null|null|1|3",
        "born|91|DATE|10|0|1|4",
        "seen|93|TIMESTAMP|26|6|1|5",
        "paid|3|DECIMAL|10|2|1|6",
        "ok|16|BOOLEAN|null|null|1|7",
    ]
    assert section(lines, "primarykeys") == ["primarykeys 0"]  # people has no key
    assert section(lines, "importedkeys") == ["importedkeys 0"]


def test_jdbc_query_and_prepared_statement(jdbc_lines):
    lines, _ = jdbc_lines
    origin = "store.main.people"  # ResultSetMetaData's catalog/schema/table (colorigin.c)
    head = (f"columns id:INTEGER:{origin}|name:VARCHAR:{origin}|paid:DECIMAL:{origin}"
            f"|seen:TIMESTAMP:{origin}")
    assert section(lines, "query")[:1] == [f"query {head}"]
    assert section(lines, "query")[1:] == []
    i = lines.index("query rows 3")
    assert lines[i + 1:i + 4] == ["  1|ada|12.34|2026-01-02 03:04:05.0", "  2|null|null|null",
                                  "  3|grace|-5.00|2026-06-07 08:09:10.0"]
    # id >= 1 AND paid > -10.50 AND seen < 2026-06-01: a DECIMAL and a TIMESTAMP bound
    i = lines.index(f"prepared {head}")
    assert lines[i + 1:i + 3] == ["prepared rows 1", "  1|ada|12.34|2026-01-02 03:04:05.0"]
    # the same statement rebound: id >= 2, seen < 2027-01-01
    i = lines.index(f"prepared2 {head}")
    assert lines[i + 1:i + 3] == ["prepared2 rows 1", "  3|grace|-5.00|2026-06-07 08:09:10.0"]
    assert "error true" in lines  # bad SQL: an SQLException naming the table
