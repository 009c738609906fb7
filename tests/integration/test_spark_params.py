"""SQL parameters of `knut spark sql` (--param, --arg) against a real Spark
Connect server (spark_peer.py): values travel as literals in the plan
(SQL.named_arguments / pos_arguments), so a value that looks like SQL is
only ever a value, and each arrives with its type.
"""
from __future__ import annotations

import json

from spark_peer import spark_connect  # noqa: F401  (the session fixture)


def spark_sql(run_knut, peer, *args):
    return run_knut("spark", "sql", "--connect", peer.url, "--token-file", str(peer.token_file),
                    "--allow-insecure-token", *args)


def test_named_parameters_are_values_not_text(run_knut, spark_connect):
    evil = "x' OR '1'='1"
    p = spark_sql(run_knut, spark_connect, "-f", "json", "-p", "lo=int:2", "-p", f"s={evil}",
                  "-p", "f=double:1.5", "-p", "ok=bool:true", "-p", "n=string:int:7",
                  "SELECT id, :s AS s, id * :f AS g, :ok AS ok, :n AS n, typeof(:lo) AS t "
                  "FROM range(5) WHERE id >= :lo ORDER BY id")
    assert p.returncode == 0, p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    assert [r["id"] for r in rows] == [2, 3, 4]
    # the quote-laden string came back whole: it was never part of the query
    assert all(r["s"] == evil and r["ok"] is True and r["n"] == "int:7" for r in rows)
    assert [r["g"] for r in rows] == [3.0, 4.5, 6.0]
    assert rows[0]["t"] == "bigint"


def test_a_value_cannot_change_the_query(run_knut, spark_connect):
    # spliced into the text this would be a second statement / a comment
    p = spark_sql(run_knut, spark_connect, "-f", "csv", "-p", "v=1; DROP TABLE t --",
                  "SELECT :v AS v, length(:v) AS n")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["v,n", "1; DROP TABLE t --,18"]


def test_positional_parameters(run_knut, spark_connect):
    p = spark_sql(run_knut, spark_connect, "-f", "csv", "--arg", "int:41", "--arg", "a'b",
                  "SELECT ? + 1 AS x, ? AS s")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == ["x,s", "42,a'b"]


def test_a_missing_parameter_is_spark_s_error(run_knut, spark_connect):
    p = spark_sql(run_knut, spark_connect, "-p", "a=int:1", "SELECT :a + :b")
    assert p.returncode == 1
    assert "UNBOUND_SQL_PARAMETER" in p.stderr, p.stderr


def test_bad_parameters_are_usage_errors(run_knut, spark_connect):
    for args, words in [
        (["-p", "a=int:x"], "--param value 'int:x': not an integer"),
        (["-p", "a=double:nan"], "not a finite number"),
        (["-p", "a=bool:yes"], "not true or false"),
        (["-p", "novalue"], "expected NAME=[TYPE:]VALUE"),
        (["-p", "a=1", "--arg", "2"], "cannot be mixed"),
    ]:
        p = spark_sql(run_knut, spark_connect, *args, "SELECT 1")
        assert p.returncode == 2 and words in p.stderr, (args, p.stderr)
