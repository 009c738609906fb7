"""End-to-end tests of AUTO CDC / APPLY CHANGES INTO in `knut pipeline run`:
every CDC conformance case of ../shared/reference/pipeline-semantics.md
(section 7, cases 17-30) as input -> exact expected output, plus knut's
policies (docs/pipelines.md, "CDC"): ties, NULLs, tombstones, deleted keys
that come back, repeated runs, column lists, atomic failure, and the same
table from a changelog however it is split into runs.

Each batch of changes is a Parquet file (pyarrow, explicit types) dropped
into d/ and read by a bronze streaming table; the CDC flow applies
STREAM(changes) into the target, one run per batch.
"""
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from test_pipeline import flow_event, knut, outcomes, project, rows, run

SCHEMA = pa.schema([("id", pa.int64()), ("v", pa.string()), ("op", pa.string()),
                    ("seq", pa.int64())])


def cdc(tmp_path, clauses, keys="id", target="target", extra=""):
    """A project: d/*.parquet -> streaming table changes -> AUTO CDC target."""
    (tmp_path / "d").mkdir(parents=True, exist_ok=True)
    return project(tmp_path, {"t/cdc.sql": (
        "CREATE STREAMING TABLE changes AS SELECT * FROM read_parquet('d/*.parquet');\n"
        f"CREATE STREAMING TABLE {target};\n"
        f"CREATE FLOW apply AS AUTO CDC INTO {target} FROM STREAM(changes) KEYS ({keys})\n"
        f"  {clauses};\n{extra}")})


def drop(root, records, schema=SCHEMA):
    n = len(list((root / "d").glob("*.parquet")))
    pq.write_table(pa.Table.from_pylist(records, schema=schema),
                   root / "d" / f"{n:04d}.parquet")


def batches(root, *bs, schema=SCHEMA):
    """One run per batch; returns the events of the last run."""
    events = None
    for b in bs:
        drop(root, b, schema)
        events = run(root)
    return events


def ch(id, v, seq, op=None):
    return {"id": id, "v": v, "op": op, "seq": seq}


DEL = "APPLY AS DELETE WHEN op = 'D'"
SCD1 = f"{DEL} SEQUENCE BY seq COLUMNS * EXCEPT (op, seq)"
SCD2 = SCD1 + " STORED AS SCD TYPE 2"


def table(root, name="target"):
    return rows(root, f"SELECT * FROM {name} ORDER BY ALL")


def versions(root, name="target"):
    return [(r["id"], r["v"], r["__START_AT"], r["__END_AT"])
            for r in rows(root, f"SELECT * FROM {name} ORDER BY id, __START_AT")]


# ---- the Databricks example (conformance 17, 18, 26, 27) --------------------

D1_SCHEMA = pa.schema([("userId", pa.int64()), ("name", pa.string()), ("city", pa.string()),
                       ("operation", pa.string()), ("sequenceNum", pa.int64())])
D1 = [(124, "Raul", "Oaxaca", "INSERT", 1), (123, "Isabel", "Monterrey", "INSERT", 1),
      (125, "Mercedes", "Tijuana", "INSERT", 2), (126, "Lily", "Cancun", "INSERT", 2),
      (123, None, None, "DELETE", 6), (125, "Mercedes", "Guadalajara", "UPDATE", 6),
      (125, "Mercedes", "Mexicali", "UPDATE", 5), (123, "Isabel", "Chihuahua", "UPDATE", 5)]


def d1(tmp_path, clauses, extra_rows=()):
    (tmp_path / "d").mkdir(parents=True, exist_ok=True)
    root = project(tmp_path, {"t/cdc.sql": (
        "CREATE STREAMING TABLE cdc_data AS SELECT * FROM read_parquet('d/*.parquet');\n"
        "CREATE STREAMING TABLE target;\n"
        "APPLY CHANGES INTO LIVE.target FROM STREAM(LIVE.cdc_data) KEYS (userId)\n"
        f"  {clauses};\n")})
    recs = [dict(zip(D1_SCHEMA.names, r)) for r in (*D1, *extra_rows)]
    drop(root, recs, D1_SCHEMA)
    events = run(root)
    assert outcomes(events) == [("cdc_data", "COMPLETED"), ("target", "COMPLETED")]
    return root


def test_c17_d1_example_scd1(tmp_path):
    root = d1(tmp_path, "APPLY AS DELETE WHEN operation = 'DELETE' SEQUENCE BY sequenceNum "
                        "COLUMNS * EXCEPT (operation, sequenceNum) STORED AS SCD TYPE 1")
    assert table(root) == [{"userId": 124, "name": "Raul", "city": "Oaxaca"},
                           {"userId": 125, "name": "Mercedes", "city": "Guadalajara"},
                           {"userId": 126, "name": "Lily", "city": "Cancun"}]


def test_c18_d1_example_scd1_truncate(tmp_path):
    root = d1(tmp_path, "APPLY AS DELETE WHEN operation = 'DELETE' "
                        "APPLY AS TRUNCATE WHEN operation = 'TRUNCATE' SEQUENCE BY sequenceNum "
                        "COLUMNS * EXCEPT (operation, sequenceNum) STORED AS SCD TYPE 1",
              extra_rows=[(None, None, None, "TRUNCATE", 3)])
    assert table(root) == [{"userId": 125, "name": "Mercedes", "city": "Guadalajara"}]


def test_c26_d1_example_scd2(tmp_path):
    root = d1(tmp_path, "APPLY AS DELETE WHEN operation = 'DELETE' SEQUENCE BY sequenceNum "
                        "COLUMNS * EXCEPT (operation, sequenceNum) STORED AS SCD TYPE 2")
    got = rows(root, "SELECT * FROM target ORDER BY userId, __START_AT")
    assert [(r["userId"], r["name"], r["city"], r["__START_AT"], r["__END_AT"]) for r in got] == [
        (123, "Isabel", "Monterrey", 1, 5), (123, "Isabel", "Chihuahua", 5, 6),
        (124, "Raul", "Oaxaca", 1, None),
        (125, "Mercedes", "Tijuana", 2, 5), (125, "Mercedes", "Mexicali", 5, 6),
        (125, "Mercedes", "Guadalajara", 6, None), (126, "Lily", "Cancun", 2, None)]
    # typed like the sequence column (BIGINT here)
    assert rows(root, "SELECT column_name, data_type FROM information_schema.columns WHERE "
                      "table_name = 'target' AND column_name LIKE '\\_\\_%' ESCAPE '\\' "
                      "ORDER BY 1") == [
        {"column_name": "__END_AT", "data_type": "BIGINT"},
        {"column_name": "__START_AT", "data_type": "BIGINT"}]


def test_c27_d1_example_scd2_track_history_except(tmp_path):
    root = d1(tmp_path, "APPLY AS DELETE WHEN operation = 'DELETE' SEQUENCE BY sequenceNum "
                        "COLUMNS * EXCEPT (operation, sequenceNum) STORED AS SCD TYPE 2 "
                        "TRACK HISTORY ON * EXCEPT (city)")
    got = rows(root, "SELECT * FROM target ORDER BY userId, __START_AT")
    assert [(r["userId"], r["name"], r["city"], r["__START_AT"], r["__END_AT"]) for r in got] == [
        (123, "Isabel", "Chihuahua", 1, 6), (124, "Raul", "Oaxaca", 1, None),
        (125, "Mercedes", "Guadalajara", 2, None), (126, "Lily", "Cancun", 2, None)]


# ---- SCD1 (conformance 19-25) ---------------------------------------------

def test_c19_late_older_update_ignored(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10)], [ch(1, "b", 5)])
    assert table(root) == [{"id": 1, "v": "a"}]


def test_c20_same_batch_latest_wins(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10), ch(1, "b", 20)])
    assert table(root) == [{"id": 1, "v": "b"}]


def test_c21_tombstone_keeps_a_late_update_deleted(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10)], [ch(1, None, 20, "D")])
    assert table(root) == []
    batches(root, [ch(1, "c", 15)])
    assert table(root) == []
    # the tombstone is kept (in the change log)
    assert rows(root, "SELECT id, seq FROM (SELECT id, __knut_seq AS seq, __knut_kind AS k "
                      "FROM _knut.target__cdc_log) WHERE k = 1") == [{"id": 1, "seq": 20}]


def test_c22_newer_upsert_revives(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10)], [ch(1, None, 20, "D")], [ch(1, "c", 25)])
    assert table(root) == [{"id": 1, "v": "c"}]


NAME_CITY = pa.schema([("id", pa.int64()), ("name", pa.string()), ("city", pa.string()),
                       ("seq", pa.int64())])


@pytest.mark.parametrize("ignore,expected", [(True, "a"), (False, None)])
def test_c23_ignore_null_updates(tmp_path, ignore, expected):
    root = cdc(tmp_path, ("IGNORE NULL UPDATES " if ignore else "") + "SEQUENCE BY seq "
                         "COLUMNS * EXCEPT (seq)")
    batches(root, [{"id": 1, "name": "a", "city": "x", "seq": 1}],
            [{"id": 1, "name": None, "city": "y", "seq": 2}], schema=NAME_CITY)
    assert table(root) == [{"id": 1, "name": expected, "city": "y"}]


def test_c24_null_sequence_refused_naming_the_row_target_unchanged(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10)])
    drop(root, [ch(2, "b", 11), ch(3, "c", None)])
    events = run(root, code=1)
    ev = flow_event(events, "apply")
    assert ev["status"] == "FAILED"
    assert ("flow 'apply': row 3 of 'changes' (key {'id': 3}) has a NULL sequence value "
            "(SEQUENCE BY seq); every change needs one (NULL_SEQUENCE), so nothing of this "
            "update is applied") in ev["message"]
    assert table(root) == [{"id": 1, "v": "a"}]
    # the offset did not move: the next run refuses it again
    assert flow_event(run(root, code=1), "apply")["status"] == "FAILED"


def test_c24_null_key_refused_naming_the_row_target_unchanged(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10)])
    drop(root, [ch(None, "b", 11)])
    ev = flow_event(run(root, code=1), "apply")
    assert ("flow 'apply': row 2 of 'changes' has a NULL key {'id': NULL}; every change needs "
            "a key (NULL_KEY), so nothing of this update is applied") in ev["message"]
    assert table(root) == [{"id": 1, "v": "a"}]


def test_c25_null_delete_condition_is_an_upsert(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10), ch(1, "b", 20, None)])
    assert table(root) == [{"id": 1, "v": "b"}]


# ---- SCD2 (conformance 28-30) ------------------------------------------------

B1_B7 = [[ch(1, "a", 10)], [ch(1, "c", 30)], [ch(1, "b", 20)], [ch(1, None, 40, "D")],
         [ch(1, "d", 35)], [ch(1, "e", 50)], [ch(1, "e", 60)]]
SCD1_AFTER = [[("a",)], [("c",)], [("c",)], [], [], [("e",)], [("e",)]]
SCD2_AFTER = [
    [("a", 10, None)],
    [("a", 10, 30), ("c", 30, None)],
    [("a", 10, 20), ("b", 20, 30), ("c", 30, None)],
    [("a", 10, 20), ("b", 20, 30), ("c", 30, 40)],
    [("a", 10, 20), ("b", 20, 30), ("c", 30, 35), ("d", 35, 40)],
    [("a", 10, 20), ("b", 20, 30), ("c", 30, 35), ("d", 35, 40), ("e", 50, None)],
    [("a", 10, 20), ("b", 20, 30), ("c", 30, 35), ("d", 35, 40), ("e", 50, None)]]


def test_c28_multi_batch_b1_to_b7(tmp_path):
    r1 = cdc(tmp_path / "one", SCD1)
    r2 = cdc(tmp_path / "two", SCD2)
    for b, want1, want2 in zip(B1_B7, SCD1_AFTER, SCD2_AFTER):
        batches(r1, b)
        batches(r2, b)
        assert [(r["v"],) for r in table(r1)] == want1
        assert [(v, s, e) for _, v, s, e in versions(r2)] == want2


def test_c29_identical_tracked_values_one_version(tmp_path):
    root = cdc(tmp_path, SCD2)
    batches(root, [ch(1, "a", 10)], [ch(1, "a", 20)])
    assert versions(root) == [(1, "a", 10, None)]


STRUCT_SEQ = pa.schema([("k", pa.string()), ("v", pa.string()), ("ts", pa.int64()),
                        ("n", pa.int64())])


def test_c30_struct_sequence_lexicographic(tmp_path):
    root = cdc(tmp_path, "SEQUENCE BY STRUCT_PACK(ts, n) COLUMNS k, v", keys="k")
    batches(root, [{"k": "k1", "v": "v1", "ts": 5, "n": 2},
                   {"k": "k1", "v": "v2", "ts": 5, "n": 1},
                   {"k": "k2", "v": "old", "ts": 4, "n": 9},
                   {"k": "k2", "v": "new", "ts": 5, "n": 0}], schema=STRUCT_SEQ)
    assert table(root) == [{"k": "k1", "v": "v1"}, {"k": "k2", "v": "new"}]


def test_struct_sequence_scd2_bounds_are_structs(tmp_path):
    root = cdc(tmp_path, "SEQUENCE BY {'ts': ts, 'n': n} COLUMNS k, v STORED AS SCD TYPE 2",
               keys="k")
    batches(root, [{"k": "k1", "v": "v2", "ts": 5, "n": 1},
                   {"k": "k1", "v": "v1", "ts": 5, "n": 2}], schema=STRUCT_SEQ)
    assert rows(root, "SELECT v, __START_AT.n AS s, __END_AT.n AS e FROM target "
                      "ORDER BY __START_AT") == [{"v": "v2", "s": 1, "e": 2},
                                                 {"v": "v1", "s": 2, "e": None}]


def test_struct_sequence_with_a_null_field_refused(tmp_path):
    root = cdc(tmp_path, "SEQUENCE BY STRUCT_PACK(ts, n) COLUMNS k, v", keys="k")
    drop(root, [{"k": "k1", "v": "v1", "ts": 5, "n": None}], STRUCT_SEQ)
    ev = flow_event(run(root, code=1), "apply")
    assert "row 1 of 'changes' (key {'k': k1}) has a NULL sequence value" in ev["message"]
    p = knut("query", "--db", root / "storage" / "pipeline.duckdb",
             "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'target__cdc_log'")
    assert p.returncode == 0 and "0" in p.stdout


# ---- knut's policies ---------------------------------------------------------

def test_identical_repeat_applies_once(tmp_path):
    root = cdc(tmp_path, SCD2)
    batches(root, [ch(1, "a", 10), ch(1, "a", 10)], [ch(1, "a", 10)], [ch(1, "b", 20)])
    assert versions(root) == [(1, "a", 10, 20), (1, "b", 20, None)]


def test_delete_wins_a_tie_with_an_upsert(tmp_path):
    r1 = cdc(tmp_path / "one", SCD1)
    r2 = cdc(tmp_path / "two", SCD2)
    for root in (r1, r2):
        batches(root, [ch(1, "a", 10), ch(2, "x", 10)],
                [ch(1, "b", 20), ch(1, None, 20, "D"), ch(2, None, 10, "D")])
    assert table(r1) == []
    # the version opened and closed at 20 (and 2's at 10) is no version
    assert versions(r2) == [(1, "a", 10, 20)]


def test_two_different_changes_at_one_sequence_value_refused(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10), ch(2, "b", 10)])
    drop(root, [ch(3, "c", 30), ch(2, "other", 10)])  # conflicts with the first run's
    ev = flow_event(run(root, code=1), "apply")
    assert ("flow 'apply': two different changes of key and sequence value {'id': 2} 10; "
            "the changes of one key need distinct sequence values") in ev["message"]
    assert table(root) == [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]


def test_deleted_key_that_comes_back_opens_a_new_version(tmp_path):
    root = cdc(tmp_path, SCD2)
    batches(root, [ch(1, "a", 10)], [ch(1, None, 20, "D")], [ch(1, "a", 30)])
    assert versions(root) == [(1, "a", 10, 20), (1, "a", 30, None)]


def test_delete_with_no_prior_row(tmp_path):
    r1 = cdc(tmp_path / "one", SCD1)
    r2 = cdc(tmp_path / "two", SCD2)
    for root in (r1, r2):
        batches(root, [ch(1, None, 20, "D")])
        assert table(root) == []
        batches(root, [ch(1, "late", 15)])  # older than the delete: closed by it
    assert table(r1) == []
    assert versions(r2) == [(1, "late", 15, 20)]


def test_repeated_runs_with_nothing_new_write_nothing(tmp_path):
    root = cdc(tmp_path, SCD2)
    batches(root, [ch(1, "a", 10), ch(2, "b", 10), ch(2, None, 20, "D")])
    before = versions(root)
    for _ in range(3):
        events = run(root)
        assert outcomes(events) == [("changes", "IDLE"), ("apply", "IDLE")]
    assert versions(root) == before == [(1, "a", 10, None), (2, "b", 10, 20)]


def test_batch_source_reapplied_each_run_adds_nothing(tmp_path):
    """FROM a materialized view (no STREAM): all of it is read each run;
    changes applied before are recognised, so nothing is doubled."""
    (tmp_path / "d").mkdir()
    root = project(tmp_path, {"t/cdc.sql": (
        "CREATE MATERIALIZED VIEW changes AS SELECT * FROM read_parquet('d/*.parquet');\n"
        "CREATE STREAMING TABLE target;\n"
        f"CREATE FLOW apply AS AUTO CDC INTO target FROM changes KEYS (id) {SCD2};\n")})
    drop(root, [ch(1, "a", 10), ch(1, "b", 20)])
    run(root)
    events = run(root)
    assert flow_event(events, "apply")["details"]["num_new_changes"] == 0
    assert versions(root) == [(1, "a", 10, 20), (1, "b", 20, None)]
    drop(root, [ch(1, "c", 15)])
    run(root)
    assert versions(root) == [(1, "a", 10, 15), (1, "c", 15, 20), (1, "b", 20, None)]


def test_null_in_a_tracked_column_is_a_value(tmp_path):
    """No COALESCE filling: a -> NULL -> NULL -> a is three versions."""
    root = cdc(tmp_path, SCD2)
    batches(root, [ch(1, "a", 10)], [ch(1, None, 20)], [ch(1, None, 30)], [ch(1, "a", 40)])
    assert versions(root) == [(1, "a", 10, 20), (1, None, 20, 40), (1, "a", 40, None)]


THREE = pa.schema([("id", pa.int64()), ("name", pa.string()), ("city", pa.string()),
                   ("n", pa.int64()), ("seq", pa.int64())])


def test_track_history_on_a_list_updates_the_rest_in_place(tmp_path):
    root = cdc(tmp_path, "SEQUENCE BY seq COLUMNS * EXCEPT (seq) STORED AS SCD TYPE 2 "
                         "TRACK HISTORY ON name")
    batches(root, [{"id": 1, "name": "a", "city": "x", "n": 1, "seq": 1}],
            [{"id": 1, "name": "a", "city": "y", "n": 2, "seq": 2}],
            [{"id": 1, "name": "b", "city": "y", "n": 3, "seq": 3}], schema=THREE)
    assert rows(root, "SELECT * FROM target ORDER BY __START_AT") == [
        {"id": 1, "name": "a", "city": "y", "n": 2, "__START_AT": 1, "__END_AT": 3},
        {"id": 1, "name": "b", "city": "y", "n": 3, "__START_AT": 3, "__END_AT": None}]


def test_ignore_null_updates_scd2_and_after_a_delete(tmp_path):
    root = cdc(tmp_path, "IGNORE NULL UPDATES APPLY AS DELETE WHEN n < 0 SEQUENCE BY seq "
                         "COLUMNS * EXCEPT (seq) STORED AS SCD TYPE 2", extra="")
    batches(root, [{"id": 1, "name": "a", "city": "x", "n": 1, "seq": 1}],
            [{"id": 1, "name": None, "city": "y", "n": None, "seq": 2}],
            [{"id": 1, "name": None, "city": None, "n": -1, "seq": 3}],
            [{"id": 1, "name": None, "city": "z", "n": 5, "seq": 4}], schema=THREE)
    # a NULL keeps the value before it; a key that was deleted starts afresh
    assert rows(root, "SELECT name, city, n, __START_AT AS s, __END_AT AS e FROM target "
                      "ORDER BY s") == [
        {"name": "a", "city": "x", "n": 1, "s": 1, "e": 2},
        {"name": "a", "city": "y", "n": 1, "s": 2, "e": 3},
        {"name": None, "city": "z", "n": 5, "s": 4, "e": None}]


def test_column_list_and_its_errors(tmp_path):
    root = cdc(tmp_path / "ok", "SEQUENCE BY seq COLUMNS id, city")
    batches(root, [{"id": 1, "name": "a", "city": "x", "n": 1, "seq": 1}], schema=THREE)
    assert table(root) == [{"id": 1, "city": "x"}]
    bad = cdc(tmp_path / "key", "SEQUENCE BY seq COLUMNS * EXCEPT (id, seq)")
    drop(bad, [{"id": 1, "name": "a", "city": "x", "n": 1, "seq": 1}], THREE)
    assert ("flow 'apply': key 'id' must be a column of the target (COLUMNS leaves it out)"
            in flow_event(run(bad, code=1), "apply")["message"])
    bad = cdc(tmp_path / "unknown", "SEQUENCE BY seq COLUMNS id, nope")
    drop(bad, [{"id": 1, "name": "a", "city": "x", "n": 1, "seq": 1}], THREE)
    assert ("flow 'apply': column 'nope' is not in the source 'changes'"
            in flow_event(run(bad, code=1), "apply")["message"])


def test_composite_keys(tmp_path):
    schema = pa.schema([("a", pa.int64()), ("b", pa.string()), ("v", pa.string()),
                        ("seq", pa.int64())])
    root = cdc(tmp_path, "SEQUENCE BY seq COLUMNS * EXCEPT (seq) STORED AS SCD TYPE 2",
               keys="a, b")
    batches(root, [{"a": 1, "b": "x", "v": "p", "seq": 1}, {"a": 1, "b": "y", "v": "q", "seq": 1}],
            [{"a": 1, "b": "x", "v": "r", "seq": 2}], schema=schema)
    assert rows(root, "SELECT a, b, v, __START_AT AS s, __END_AT AS e FROM target "
                      "ORDER BY ALL") == [
        {"a": 1, "b": "x", "v": "p", "s": 1, "e": 2}, {"a": 1, "b": "x", "v": "r", "s": 2,
                                                       "e": None},
        {"a": 1, "b": "y", "v": "q", "s": 1, "e": None}]


def test_truncate_is_scd1_only(tmp_path):
    root = cdc(tmp_path, "APPLY AS TRUNCATE WHEN op = 'T' SEQUENCE BY seq STORED AS SCD TYPE 2")
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1
    assert "flow 'apply': APPLY AS TRUNCATE WHEN is for SCD TYPE 1 only" in p.stderr


def test_another_kind_of_flow_into_a_cdc_target_is_an_error(tmp_path):
    root = cdc(tmp_path, SCD1, extra="CREATE FLOW more AS INSERT INTO target "
                                     "SELECT id, v FROM STREAM(changes);\n")
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1
    assert ("flow 'apply' applies changes into 'target', which flow 'more' also writes"
            in p.stderr)


def test_two_cdc_flows_into_one_target(tmp_path):
    (tmp_path / "e").mkdir(parents=True)
    root = cdc(tmp_path, SCD1, extra=(
        "CREATE STREAMING TABLE more_changes AS SELECT * FROM read_parquet('e/*.parquet');\n"
        f"CREATE FLOW apply_more AS AUTO CDC INTO target FROM STREAM(more_changes) KEYS (id) "
        f"{SCD1};\n"))
    pq.write_table(pa.Table.from_pylist([ch(1, "newer", 20), ch(2, "b", 5)], schema=SCHEMA),
                   root / "e" / "0.parquet")
    batches(root, [ch(1, "a", 10), ch(2, None, 6, "D")])
    assert table(root) == [{"id": 1, "v": "newer"}]


def test_full_refresh_rebuilds_from_the_source(tmp_path):
    root = cdc(tmp_path, SCD2)
    batches(root, [ch(1, "a", 10)], [ch(1, "b", 20)], [ch(1, None, 30, "D")])
    before = versions(root)
    run(root, "--full-refresh")
    assert versions(root) == before == [(1, "a", 10, 20), (1, "b", 20, 30)]


def test_dry_run_plans_the_apply(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 10)])
    drop(root, [ch(1, "b", 20)])
    events = run(root, "--dry-run")  # the new rows are not in 'changes' yet
    assert outcomes(events) == [("changes", "PLANNED"), ("apply", "IDLE")]
    events = run(root, "--dry-run", "--full-refresh", "target")
    assert flow_event(events, "apply")["details"]["plan"] == "full refresh"
    assert table(root) == [{"id": 1, "v": "a"}]


def test_events_count_the_changes(tmp_path):
    root = cdc(tmp_path, SCD1)
    events = batches(root, [ch(1, "a", 10), ch(2, "b", 10), ch(1, None, 11, "D"),
                            ch(2, "b", 10)])
    d = flow_event(events, "apply")["details"]
    assert (d["rows_in"], d["num_new_changes"], d["num_upserted_rows"],
            d["num_deleted_rows"], d["rows_out"]) == (4, 3, 2, 1, 1)
    assert d["streams_read"] == {"changes": 4}


# ---- determinism: any split of a changelog gives the same table --------------

def changelog(seed, n=400, keys=25):
    rnd = random.Random(seed)
    seqs = rnd.sample(range(1, 10 * n), n)  # distinct: no ties
    out = []
    for s in seqs:
        k = rnd.randrange(keys)
        if rnd.random() < 0.15:
            out.append(ch(k, None, s, "D"))
        else:
            out.append(ch(k, rnd.choice(["a", "b", "c", None]), s))
    # exact repeats (at-least-once delivery) are harmless
    out += rnd.sample(out, 20)
    rnd.shuffle(out)
    return out


@pytest.mark.parametrize("clauses", [SCD1, SCD2, "IGNORE NULL UPDATES " + SCD2,
                                     "IGNORE NULL UPDATES " + SCD1])
def test_any_split_of_a_changelog_gives_the_same_table(tmp_path, clauses):
    log = changelog(7)
    one = cdc(tmp_path / "one", clauses)
    batches(one, log)
    want = table(one)
    assert want  # not vacuous
    for k in (2, 5):
        rnd = random.Random(k)
        cuts = sorted(rnd.sample(range(1, len(log)), k - 1))
        parts = [log[a:b] for a, b in zip([0, *cuts], [*cuts, len(log)])]
        root = cdc(tmp_path / f"split{k}", clauses)
        batches(root, *parts)
        assert table(root) == want, k
    # re-applying the whole accumulated changelog changes nothing
    batches(one, log)
    assert table(one) == want


def test_stream_read_of_a_cdc_target_is_an_error_batch_read_is_fine(tmp_path):
    root = cdc(tmp_path / "stream", SCD1,
               extra="CREATE STREAMING TABLE down AS SELECT * FROM STREAM(target);\n")
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1
    assert ("flow 'down' reads STREAM(target), the target of AUTO CDC flow 'apply', whose rows "
            "change in place" in p.stderr)
    root = cdc(tmp_path / "batch", SCD1,
               extra="CREATE MATERIALIZED VIEW n AS SELECT count(*) AS n FROM target;\n")
    batches(root, [ch(1, "a", 1), ch(2, "b", 1)], [ch(1, None, 2, "D")])
    assert rows(root, "SELECT n FROM n") == [{"n": 1}]


def test_docs_cdc_example(tmp_path):
    """The CDC example of docs/pipelines.md runs and gives the table shown."""
    import re
    from test_pipeline import REPO
    page = (REPO / "docs" / "pipelines.md").read_text()
    blocks = re.findall(r"<!-- cdc-(file|output): ([^>]+?) -->\n```[a-z]*\n(.*?)```", page, re.S)
    files = {name: text for kind, name, text in blocks if kind == "file"}
    outputs = [(name, text) for kind, name, text in blocks if kind == "output"]
    assert len(files) == 2 and len(outputs) == 1
    root = project(tmp_path, files)
    run(root)
    sql, want = outputs[0]
    p = knut("query", "--db", root / "storage" / "pipeline.duckdb", "--format", "csv", sql)
    assert p.returncode == 0, p.stderr
    assert p.stdout.replace("\r\n", "\n") == want


def test_scd1_a_superseded_tie_decides_nothing_scd2_refuses_it(tmp_path):
    for split in (True, False):
        r1 = cdc(tmp_path / f"one{split}", SCD1)
        r2 = cdc(tmp_path / f"two{split}", SCD2)
        first, late = [ch(1, "a", 5), ch(1, "c", 9)], [ch(1, "b", 5)]
        for root in (r1, r2):
            if split:
                batches(root, first)
                drop(root, late)
            else:
                drop(root, first + late)
        run(r1)
        assert table(r1) == [{"id": 1, "v": "c"}]
        ev = flow_event(run(r2, code=1), "apply")
        assert "two different changes of key and sequence value {'id': 1} 5" in ev["message"]


def test_scd1_change_log_keeps_only_what_decides(tmp_path):
    root = cdc(tmp_path, SCD1)
    batches(root, [ch(1, "a", 1), ch(1, "b", 2), ch(2, "x", 1)], [ch(1, None, 3, "D"),
                                                                  ch(2, "y", 2)])
    assert rows(root, "SELECT id, __knut_seq AS s, __knut_kind AS k FROM "
                      "_knut.target__cdc_log ORDER BY ALL") == [
        {"id": 1, "s": 3, "k": 1}, {"id": 2, "s": 2, "k": 0}]
    assert table(root) == [{"id": 2, "v": "y"}]
