"""`knut query` on CSV files DuckDB's sniffer reads lossily, from the user's side.

A title line the sniffer skips, a header it does not find (column0...),
an empty or repeated header name, lines of different field counts read as
one column: each warns on stderr naming the file (the query still runs,
exit 0); --strict makes it an error (exit 1, nothing on stdout). A clean
CSV, a Parquet file and a read_csv call whose options settle the guess
get no warning.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

CASES = {
    # name: (content, the warning's words)
    "title.csv": ("Sales report 2026\nid,name\n1,Ada\n2,Bob\n", "skips its first 1 line"),
    "numbers.csv": ("2025,2026\n1,2\n3,4\n", "no header found: the columns are named column0"),
    "empty_name.csv": ("id,,name\n1,x,Ada\n", "header name 2 is empty: the column is named "
                                             "'column1'"),
    "repeat.csv": ("id,id\n1,2\n", "header name 'id' repeats"),
    "ragged.csv": ("id,name\n1,Ada\n2,Bob,extra\n3,Cy\n", "read as one column 'id,name'"),
}


@pytest.fixture
def files(tmp_path):
    for name, (text, _) in CASES.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "good.csv").write_text("id,name\n1,Ada\n2,Bob\n")
    pq.write_table(pa.table({"id": [1, 2]}), tmp_path / "good.parquet")
    return tmp_path


@pytest.mark.parametrize("name", sorted(CASES))
def test_lossy_csv_warns_then_strict_fails(run_knut, files, name):
    words = CASES[name][1]
    p = run_knut("query", "-f", "csv", f"SELECT count(*) AS n FROM '{name}'", cwd=files)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("n\n")  # the query still ran
    (line,) = [l for l in p.stderr.splitlines() if l.strip()]
    assert line.startswith(f"knut query: warning: {name}: "), line
    assert words in line
    s = run_knut("query", "--strict", "-f", "csv", f"SELECT count(*) AS n FROM '{name}'",
                 cwd=files)
    assert s.returncode == 1
    assert s.stdout == ""
    assert f"knut query: {name}: " in s.stderr and words in s.stderr
    assert "(--strict)" in s.stderr


def test_read_csv_call_and_glob(run_knut, files):
    p = run_knut("query", "-f", "csv", "SELECT * FROM read_csv('numbers.csv')", cwd=files)
    assert p.returncode == 0 and "numbers.csv: no header found" in p.stderr
    (files / "drops").mkdir()
    (files / "drops" / "a.csv").write_text(CASES["title.csv"][0])
    (files / "drops" / "b.csv").write_text("id,name\n3,Cy\n")
    p = run_knut("query", "--strict", "SELECT count(*) FROM 'drops/*.csv'", cwd=files)
    assert p.returncode == 1 and "drops/a.csv: DuckDB's sniffer skips" in p.stderr


def test_options_that_settle_it_and_clean_files(run_knut, files):
    for sql in ("SELECT * FROM 'good.csv'",
                "SELECT * FROM 'good.parquet'",
                "SELECT * FROM read_csv('numbers.csv', header = false)",
                "SELECT * FROM read_csv('title.csv', skip = 1)",
                "SELECT * FROM read_csv('empty_name.csv', names = ['id', 'x', 'name'])",
                "SELECT * FROM 'missing.csv' UNION ALL SELECT 1, 'x'"):
        p = run_knut("query", "--strict", sql, cwd=files)
        assert "warning" not in p.stderr and "(--strict)" not in p.stderr, (sql, p.stderr)
        if "missing" in sql:
            assert p.returncode == 1 and "missing.csv" in p.stderr  # DuckDB's own error
        else:
            assert p.returncode == 0, (sql, p.stderr)


def test_two_files_two_warnings_and_non_select(run_knut, files):
    p = run_knut("query", "SELECT * FROM 'title.csv' t JOIN 'repeat.csv' r USING (id)",
                 cwd=files)
    assert p.returncode == 0, p.stderr
    assert "title.csv:" in p.stderr and "repeat.csv:" in p.stderr
    # not a SELECT: DuckDB's parse tree has none to look in; runs as before
    p = run_knut("query", "--strict", "CREATE TABLE t AS SELECT 1 AS x; SELECT * FROM t",
                 cwd=files)
    assert p.returncode == 0, p.stderr
