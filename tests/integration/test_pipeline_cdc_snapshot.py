"""End-to-end tests of AUTO CDC ... FROM SNAPSHOT (docs/pipelines.md, "CDC
from snapshots") and of the dbt / SQLMesh behaviours knut reproduces with
its CDC features: conformance cases 31 and 42-45 of
../shared/reference/pipeline-semantics.md as input -> exact expected table,
plus repeated runs with nothing new, keys that vanish and come back, stale
rows, the refusals and full refresh.

A snapshot is the current content of a source table: each run rewrites
s/snap.parquet (pyarrow, explicit types), a materialized view reads it and
the snapshot flow diffs it with the target; `--execution-time` gives each
run its snapshot version.
"""
import datetime as dt

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from test_pipeline import flow_event, knut, outcomes, project, rows, run

KV = pa.schema([("id", pa.int64()), ("v", pa.string())])


def snap_project(tmp_path, clauses, source_sql="SELECT * FROM read_parquet('s/*.parquet')"):
    (tmp_path / "s").mkdir(parents=True, exist_ok=True)
    return project(tmp_path, {"t/snap.sql": (
        f"CREATE MATERIALIZED VIEW source AS {source_sql};\n"
        "CREATE STREAMING TABLE target;\n"
        f"CREATE FLOW apply AS AUTO CDC INTO target FROM SNAPSHOT source {clauses};\n")})


def snapshot(root, records, schema=KV):
    pq.write_table(pa.Table.from_pylist(records, schema=schema), root / "s" / "snap.parquet")


def at(root, when, records, schema=KV, code=0):
    """The source becomes records; one run at execution time when."""
    snapshot(root, records, schema)
    return run(root, "--execution-time", when, code=code)


def kv(*pairs):
    return [{"id": k, "v": v} for k, v in pairs]


def history(root, cols="id, v"):
    return [tuple(r.values()) for r in rows(
        root, f"SELECT {cols}, __START_AT::VARCHAR AS s, __END_AT::VARCHAR AS e FROM target "
              "ORDER BY id, __START_AT")]


def current(root):
    return [(r["id"], r["v"]) for r in rows(root, "SELECT * FROM target ORDER BY id")]


T0, T12 = "2024-01-01 00:00:00", "2024-01-01 12:00:00"


# ---- conformance 31: the periodic snapshot example (D1) ------------------------

def test_c31_periodic_snapshot_scd2(tmp_path):
    root = snap_project(tmp_path, "KEYS (id) STORED AS SCD TYPE 2")
    at(root, T0, kv((1, "a1"), (2, "a2")))
    events = at(root, T12, kv((2, "b2"), (3, "a3")))
    assert history(root) == [(1, "a1", T0, T12), (2, "a2", T0, T12), (2, "b2", T12, None),
                             (3, "a3", T12, None)]
    d = flow_event(events, "apply")["details"]
    assert (d["rows_in"], d["num_upserted_rows"], d["num_deleted_rows"]) == (2, 2, 1)
    assert d["snapshot_version"] == T12
    # typed like the snapshot version: TIMESTAMP
    assert rows(root, "SELECT data_type FROM information_schema.columns WHERE table_name = "
                      "'target' AND column_name IN ('__START_AT', '__END_AT')") == [
        {"data_type": "TIMESTAMP"}, {"data_type": "TIMESTAMP"}]


def test_c31_periodic_snapshot_scd1(tmp_path):
    root = snap_project(tmp_path, "KEYS (id)")
    at(root, T0, kv((1, "a1"), (2, "a2")))
    at(root, T12, kv((2, "b2"), (3, "a3")))
    assert current(root) == [(2, "b2"), (3, "a3")]


DAYS = [f"2024-01-0{d} 00:00:00" for d in range(1, 8)]


@pytest.mark.parametrize("scd", [1, 2])
def test_repeated_snapshots_with_nothing_new_write_nothing(tmp_path, scd):
    root = snap_project(tmp_path, f"KEYS (id) STORED AS SCD TYPE {scd}")
    at(root, DAYS[0], kv((1, "a"), (2, "b")))
    before = rows(root, "SELECT * FROM target ORDER BY ALL")
    for day in DAYS[1:4]:
        d = flow_event(at(root, day, kv((2, "b"), (1, "a"))), "apply")["details"]
        assert (d["rows_out"], d["num_upserted_rows"], d["num_deleted_rows"]) == (0, 0, 0)
    assert rows(root, "SELECT * FROM target ORDER BY ALL") == before
    assert len(before) == 2


def test_a_rerun_at_one_execution_time_is_skipped(tmp_path):
    root = snap_project(tmp_path, "KEYS (id) STORED AS SCD TYPE 2")
    at(root, DAYS[1], kv((1, "a")))
    # the same version again, or an older one: not a new snapshot
    for day in (DAYS[1], DAYS[0]):
        ev = flow_event(at(root, day, kv((1, "changed"))), "apply")
        assert ev["status"] == "IDLE"
        assert ev["details"]["skipped"] == f"not newer than the last snapshot ({DAYS[1]})"
    assert history(root) == [(1, "a", DAYS[1], None)]


def test_a_key_that_vanishes_and_comes_back(tmp_path):
    r2 = snap_project(tmp_path / "two", "KEYS (id) STORED AS SCD TYPE 2")
    r1 = snap_project(tmp_path / "one", "KEYS (id) STORED AS SCD TYPE 1")
    for root in (r1, r2):
        at(root, DAYS[0], kv((1, "a"), (2, "x")))
        at(root, DAYS[1], kv((2, "x")))
        if root is r1:
            assert current(root) == [(2, "x")]
        at(root, DAYS[2], kv((2, "x")))  # still gone: nothing more written
        at(root, DAYS[3], kv((1, "a"), (2, "x")))
    assert current(r1) == [(1, "a"), (2, "x")]
    assert history(r2) == [(1, "a", DAYS[0], DAYS[1]), (1, "a", DAYS[3], None),
                           (2, "x", DAYS[0], None)]


def test_an_empty_snapshot_deletes_every_key(tmp_path):
    root = snap_project(tmp_path, "KEYS (id) STORED AS SCD TYPE 2")
    at(root, DAYS[0], kv((1, "a"), (2, "b")))
    at(root, DAYS[1], [])
    assert history(root) == [(1, "a", DAYS[0], DAYS[1]), (2, "b", DAYS[0], DAYS[1])]


THREE = pa.schema([("id", pa.int64()), ("a", pa.string()), ("b", pa.string())])


def test_historical_example_track_history_updates_in_place(tmp_path):
    """D1's historical example (track history on one column): key 4's
    untracked change updates its open version in place."""
    root = snap_project(tmp_path, "KEYS (id) STORED AS SCD TYPE 2 TRACK HISTORY ON a")
    at(root, DAYS[0], [{"id": 1, "a": "a1", "b": "b1"}, {"id": 2, "a": "a2", "b": "b2"},
                       {"id": 4, "a": "a4", "b": "b4"}], THREE)
    at(root, DAYS[1], [{"id": 2, "a": "a2_new", "b": "b2"}, {"id": 3, "a": "a3", "b": "b3"},
                       {"id": 4, "a": "a4", "b": "b4_new"}], THREE)
    assert history(root, "id, a, b") == [
        (1, "a1", "b1", DAYS[0], DAYS[1]), (2, "a2", "b2", DAYS[0], DAYS[1]),
        (2, "a2_new", "b2", DAYS[1], None), (3, "a3", "b3", DAYS[1], None),
        (4, "a4", "b4_new", DAYS[0], None)]


def test_null_is_a_value_composite_keys_and_columns(tmp_path):
    schema = pa.schema([("k1", pa.int64()), ("k2", pa.string()), ("v", pa.string()),
                        ("junk", pa.string())])
    root = snap_project(tmp_path, "KEYS (k1, k2) COLUMNS * EXCEPT (junk) STORED AS SCD TYPE 2")
    at(root, DAYS[0], [{"k1": 1, "k2": "x", "v": "a", "junk": "1"},
                       {"k1": 1, "k2": "y", "v": None, "junk": "2"}], schema)
    at(root, DAYS[1], [{"k1": 1, "k2": "x", "v": None, "junk": "3"},
                       {"k1": 1, "k2": "y", "v": None, "junk": "4"}], schema)
    got = rows(root, "SELECT k1, k2, v, __START_AT::VARCHAR AS s, __END_AT::VARCHAR AS e "
                     "FROM target ORDER BY k2, s")
    # a -> NULL opens a version; NULL -> NULL does not; junk is no column
    assert [tuple(r.values()) for r in got] == [
        (1, "x", "a", DAYS[0], DAYS[1]), (1, "x", None, DAYS[1], None),
        (1, "y", None, DAYS[0], None)]


def test_refusals_name_the_row_and_leave_the_target(tmp_path):
    root = snap_project(tmp_path, "KEYS (id) STORED AS SCD TYPE 2")
    at(root, DAYS[0], kv((1, "a")))
    ev = flow_event(at(root, DAYS[1], kv((1, "b"), (2, "c"), (1, "d")), code=1), "apply")
    assert ("flow 'apply': snapshot 'source' holds key {'id': 1} (2 rows) from row 1 on; a "
            "snapshot has one row per key, so nothing of this update is applied"
            in ev["message"])
    ev = flow_event(at(root, DAYS[2], kv((1, "b"), (None, "c")), code=1), "apply")
    assert ("flow 'apply': row 2 of snapshot 'source' has a NULL key {'id': NULL}; every row "
            "of a snapshot needs a key (NULL_KEY)" in ev["message"])
    ev = flow_event(at(root, "yesterday-ish", kv((1, "b")), code=1), "apply")
    assert ("flow 'apply': the execution time 'yesterday-ish' is not a timestamp"
            in ev["message"])
    assert history(root) == [(1, "a", DAYS[0], None)]


def test_full_refresh_starts_from_the_current_snapshot(tmp_path):
    root = snap_project(tmp_path, "KEYS (id) STORED AS SCD TYPE 2")
    at(root, DAYS[0], kv((1, "a")))
    at(root, DAYS[1], kv((1, "b")))
    snapshot(root, kv((1, "b"), (2, "c")))
    run(root, "--full-refresh", "--execution-time", DAYS[2])
    assert history(root) == [(1, "b", DAYS[2], None), (2, "c", DAYS[2], None)]


def test_snapshot_syntax_errors(tmp_path):
    root = snap_project(tmp_path, "KEYS (id) APPLY AS DELETE WHEN v = 'x'")
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1 and "expected a FROM SNAPSHOT clause" in p.stderr
    root = snap_project(tmp_path / "seq1", "KEYS (id) SEQUENCE BY v")
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1
    assert "SEQUENCE BY and INITIAL START AT of FROM SNAPSHOT are for SCD TYPE 2" in p.stderr
    (tmp_path / "two" / "s").mkdir(parents=True)
    root = project(tmp_path / "two", {"t/snap.sql": (
        "CREATE MATERIALIZED VIEW source AS SELECT 1 AS id;\n"
        "CREATE STREAMING TABLE changes AS SELECT * FROM read_parquet('s/*.parquet');\n"
        "CREATE STREAMING TABLE target;\n"
        "CREATE FLOW apply AS AUTO CDC INTO target FROM SNAPSHOT source KEYS (id);\n"
        "CREATE FLOW feed AS AUTO CDC INTO target FROM STREAM(changes) KEYS (id) "
        "SEQUENCE BY seq;\n")})
    p = knut("pipeline", "validate", root)
    assert p.returncode == 1
    assert "the target of AUTO CDC FROM SNAPSHOT takes no other flow" in p.stderr


def test_a_source_named_snapshot_is_still_a_change_feed(tmp_path):
    (tmp_path / "d").mkdir()
    root = project(tmp_path, {"t/cdc.sql": (
        "CREATE MATERIALIZED VIEW snapshot AS SELECT 1 AS id, 'a' AS v, 1 AS seq;\n"
        "CREATE STREAMING TABLE target;\n"
        "CREATE FLOW apply AS AUTO CDC INTO target FROM snapshot KEYS (id) SEQUENCE BY seq "
        "COLUMNS * EXCEPT (seq);\n")})
    run(root)
    assert current(root) == [(1, "a")]


# ---- dbt and SQLMesh parity (conformance 42-45) --------------------------------

def test_c42_dbt_merge_with_and_without_unique_key(tmp_path):
    """dbt incremental merge: unique_key = AUTO CDC SCD1 (the load order, here
    the file name, as the sequence); no unique_key = a streaming table append."""
    (tmp_path / "d").mkdir()
    root = project(tmp_path, {"t/m.sql": (
        "CREATE STREAMING TABLE staged AS SELECT * FROM read_parquet('d/*.parquet', "
        "filename = true);\n"
        "CREATE STREAMING TABLE merged;\n"
        "CREATE FLOW merge AS AUTO CDC INTO merged FROM STREAM(staged) KEYS (id) "
        "SEQUENCE BY filename COLUMNS id, v;\n"
        "CREATE STREAMING TABLE appended AS SELECT id, v FROM STREAM(staged);\n")})
    pq.write_table(pa.Table.from_pylist(kv((1, "a"), (2, "b")), schema=KV),
                   root / "d" / "0001.parquet")
    run(root)
    pq.write_table(pa.Table.from_pylist(kv((2, "c"), (3, "d")), schema=KV),
                   root / "d" / "0002.parquet")
    run(root)
    assert rows(root, "SELECT * FROM merged ORDER BY ALL") == kv((1, "a"), (2, "c"), (3, "d"))
    assert rows(root, "SELECT * FROM appended ORDER BY ALL") == kv((1, "a"), (2, "b"),
                                                                    (2, "c"), (3, "d"))


ORDERS = pa.schema([("id", pa.int64()), ("status", pa.string()),
                    ("updated_at", pa.timestamp("us"))])


def order(id, status, hhmm):
    h, m = map(int, hhmm.split(":"))
    return {"id": id, "status": status, "updated_at": dt.datetime(2024, 1, 1, h, m)}


def dbt_snapshot(tmp_path, extra=""):
    """dbt's snapshot (timestamp strategy) of a mutable source, with dbt's
    column names on a view over the target."""
    (tmp_path / "s").mkdir(parents=True)
    return project(tmp_path, {"t/snap.sql": (
        "CREATE MATERIALIZED VIEW orders AS SELECT * FROM read_parquet('s/*.parquet');\n"
        "CREATE STREAMING TABLE orders_snapshot;\n"
        "CREATE FLOW snap AS AUTO CDC INTO orders_snapshot FROM SNAPSHOT orders KEYS (id) "
        f"SEQUENCE BY updated_at STORED AS SCD TYPE 2 {extra};\n"
        "CREATE MATERIALIZED VIEW orders_dbt AS SELECT id, status, updated_at, "
        "__START_AT AS dbt_valid_from, __END_AT AS dbt_valid_to FROM orders_snapshot;\n")})


def dbt_rows(root):
    return [(r["id"], r["status"], r["f"], r["t"]) for r in rows(
        root, "SELECT id, status, strftime(dbt_valid_from, '%H:%M') AS f, "
              "strftime(dbt_valid_to, '%H:%M') AS t FROM orders_dbt ORDER BY id, f")]


def test_c43_dbt_snapshot_timestamp_strategy(tmp_path):
    root = dbt_snapshot(tmp_path)
    at(root, "2024-01-01 10:50:00", [order(1, "pending", "10:47")], ORDERS)
    at(root, "2024-01-01 11:10:00", [order(1, "shipped", "11:05")], ORDERS)
    assert dbt_rows(root) == [(1, "pending", "10:47", "11:05"), (1, "shipped", "11:05", None)]
    # valid_from/valid_to come from updated_at, not from the run: another run
    # that sees no newer updated_at changes nothing, and a stale row (updated_at
    # not newer than the current version's) is ignored
    at(root, "2024-01-01 12:00:00", [order(1, "shipped", "11:05")], ORDERS)
    at(root, "2024-01-01 12:30:00", [order(1, "lost", "11:00")], ORDERS)
    assert dbt_rows(root) == [(1, "pending", "10:47", "11:05"), (1, "shipped", "11:05", None)]


@pytest.mark.parametrize("hard_deletes,want", [
    ("invalidate", [(1, "pending", "10:47", "12:00"), (2, "open", "10:00", None)]),
    ("ignore", [(1, "pending", "10:47", None), (2, "open", "10:00", None)])])
def test_c44_dbt_snapshot_hard_deletes(tmp_path, hard_deletes, want):
    root = dbt_snapshot(tmp_path, "IGNORE DELETES" if hard_deletes == "ignore" else "")
    at(root, "2024-01-01 11:00:00", [order(1, "pending", "10:47"), order(2, "open", "10:00")],
       ORDERS)
    at(root, "2024-01-01 12:00:00", [order(2, "open", "10:00")], ORDERS)  # key 1 disappears
    assert dbt_rows(root) == want
    # and comes back (dbt: a new current row); with invalidate it starts no
    # earlier than the time its last version was invalidated
    at(root, "2024-01-01 13:00:00", [order(1, "pending", "10:47"), order(2, "open", "10:00")],
       ORDERS)
    if hard_deletes == "invalidate":
        assert dbt_rows(root) == [(1, "pending", "10:47", "12:00"),
                                  (1, "pending", "12:00", None), (2, "open", "10:00", None)]
    else:
        assert dbt_rows(root) == want


MENU = pa.schema([("id", pa.int64()), ("name", pa.string()), ("price", pa.decimal128(5, 2)),
                  ("updated_at", pa.timestamp("us"))])


def item(id, name, price, day):
    import decimal
    return {"id": id, "name": name, "price": decimal.Decimal(price),
            "updated_at": dt.datetime(2020, 1, day)}


def sqlmesh_rows(root):
    return [(r["id"], r["name"], str(r["price"]), r["updated_at"], r["valid_from"],
             r["valid_to"]) for r in rows(
        root, "SELECT id, name, price::VARCHAR AS price, updated_at::VARCHAR AS updated_at, "
              "valid_from::VARCHAR AS valid_from, valid_to::VARCHAR AS valid_to FROM menu "
              "ORDER BY id, valid_from")]


def test_c45_sqlmesh_scd_type_2_by_time_menu_example(tmp_path):
    """SQLMesh's SCD_TYPE_2_BY_TIME example, three runs (the third source table
    of the example gives Chocolate Milkshake updated_at 2020-01-02, but its
    result table shows 2020-01-03 and a new version starting then: only an
    updated_at of 2020-01-03 gives that result, in SQLMesh too)."""
    (tmp_path / "s").mkdir()
    root = project(tmp_path, {"t/menu.sql": (
        "CREATE MATERIALIZED VIEW menu_source AS SELECT * FROM read_parquet('s/*.parquet');\n"
        "CREATE STREAMING TABLE menu_items;\n"
        "CREATE FLOW by_time AS AUTO CDC INTO menu_items FROM SNAPSHOT menu_source KEYS (id) "
        "SEQUENCE BY updated_at INITIAL START AT TIMESTAMP '1970-01-01 00:00:00' "
        "STORED AS SCD TYPE 2;\n"
        "CREATE MATERIALIZED VIEW menu AS SELECT * EXCLUDE (__START_AT, __END_AT), "
        "__START_AT AS valid_from, __END_AT AS valid_to FROM menu_items;\n")})
    at(root, "2020-01-01 11:00:00", [item(1, "Chicken Sandwich", "10.99", 1),
                                     item(2, "Cheeseburger", "8.99", 1),
                                     item(3, "French Fries", "4.99", 1)], MENU)
    E, D1, D2, D3 = ("1970-01-01 00:00:00", "2020-01-01 00:00:00", "2020-01-02 00:00:00",
                     "2020-01-03 00:00:00")
    assert sqlmesh_rows(root) == [(1, "Chicken Sandwich", "10.99", D1, E, None),
                                  (2, "Cheeseburger", "8.99", D1, E, None),
                                  (3, "French Fries", "4.99", D1, E, None)]
    at(root, "2020-01-02 11:00:00", [item(1, "Chicken Sandwich", "12.99", 2),
                                     item(3, "French Fries", "4.99", 1),
                                     item(4, "Milkshake", "3.99", 2)], MENU)
    assert sqlmesh_rows(root) == [(1, "Chicken Sandwich", "10.99", D1, E, D2),
                                  (1, "Chicken Sandwich", "12.99", D2, D2, None),
                                  (2, "Cheeseburger", "8.99", D1, E, "2020-01-02 11:00:00"),
                                  (3, "French Fries", "4.99", D1, E, None),
                                  (4, "Milkshake", "3.99", D2, D2, None)]
    at(root, "2020-01-03 11:00:00", [item(1, "Chicken Sandwich", "14.99", 3),
                                     item(2, "Cheeseburger", "8.99", 3),
                                     item(3, "French Fries", "4.99", 1),
                                     item(4, "Chocolate Milkshake", "3.99", 3)], MENU)
    assert sqlmesh_rows(root) == [(1, "Chicken Sandwich", "10.99", D1, E, D2),
                                  (1, "Chicken Sandwich", "12.99", D2, D2, D3),
                                  (1, "Chicken Sandwich", "14.99", D3, D3, None),
                                  (2, "Cheeseburger", "8.99", D1, E, "2020-01-02 11:00:00"),
                                  (2, "Cheeseburger", "8.99", D3, D3, None),
                                  (3, "French Fries", "4.99", D1, E, None),
                                  (4, "Milkshake", "3.99", D2, D2, D3),
                                  (4, "Chocolate Milkshake", "3.99", D3, D3, None)]


def test_sqlmesh_readded_with_its_old_updated_at_starts_when_it_was_deleted(tmp_path):
    """SQLMesh's note: Cheeseburger back with its original updated_at gets
    valid_from = the time it was invalidated (no gap, no overlap)."""
    (tmp_path / "s").mkdir()
    root = project(tmp_path, {"t/menu.sql": (
        "CREATE MATERIALIZED VIEW menu_source AS SELECT * FROM read_parquet('s/*.parquet');\n"
        "CREATE STREAMING TABLE menu;\n"
        "CREATE FLOW by_time AS AUTO CDC INTO menu FROM SNAPSHOT menu_source KEYS (id) "
        "SEQUENCE BY updated_at INITIAL START AT TIMESTAMP '1970-01-01' STORED AS SCD TYPE 2;\n")})
    burger = item(2, "Cheeseburger", "8.99", 1)
    at(root, "2020-01-01 11:00:00", [burger], MENU)
    at(root, "2020-01-02 11:00:00", [], MENU)
    at(root, "2020-01-03 11:00:00", [burger], MENU)
    assert [(r["s"], r["e"]) for r in rows(
        root, "SELECT __START_AT::VARCHAR AS s, __END_AT::VARCHAR AS e FROM menu ORDER BY 1")] == [
        ("1970-01-01 00:00:00", "2020-01-02 11:00:00"), ("2020-01-02 11:00:00", None)]


def test_sqlmesh_scd_type_2_by_column_menu_example(tmp_path):
    """SQLMesh's SCD_TYPE_2_BY_COLUMN example: no SEQUENCE BY, so versions
    start and end at the execution time; the first load at 1970-01-01."""
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()),
                        ("price", pa.decimal128(5, 2))])
    root = snap_project(tmp_path, "KEYS (id) INITIAL START AT TIMESTAMP '1970-01-01' "
                                  "STORED AS SCD TYPE 2")
    import decimal

    def menu(*items):
        return [{"id": i, "name": n, "price": decimal.Decimal(p)} for i, n, p in items]
    at(root, "2020-01-01 00:00:00", menu((1, "Chicken Sandwich", "10.99"),
                                         (2, "Cheeseburger", "8.99"), (3, "French Fries", "4.99")),
       schema)
    at(root, "2020-01-02 11:00:00", menu((1, "Chicken Sandwich", "12.99"),
                                         (3, "French Fries", "4.99"), (4, "Milkshake", "3.99")),
       schema)
    at(root, "2020-01-03 11:00:00", menu((1, "Chicken Sandwich", "14.99"),
                                         (2, "Cheeseburger", "8.99"), (3, "French Fries", "4.99"),
                                         (4, "Chocolate Milkshake", "3.99")), schema)
    E, R2, R3 = "1970-01-01 00:00:00", "2020-01-02 11:00:00", "2020-01-03 11:00:00"
    assert history(root, "id, name, price::VARCHAR") == [
        (1, "Chicken Sandwich", "10.99", E, R2), (1, "Chicken Sandwich", "12.99", R2, R3),
        (1, "Chicken Sandwich", "14.99", R3, None), (2, "Cheeseburger", "8.99", E, R2),
        (2, "Cheeseburger", "8.99", R3, None), (3, "French Fries", "4.99", E, None),
        (4, "Milkshake", "3.99", R2, R3), (4, "Chocolate Milkshake", "3.99", R3, None)]


def test_docs_snapshot_example(tmp_path):
    """The FROM SNAPSHOT example of docs/pipelines.md runs and gives the table shown."""
    import re
    from test_pipeline import REPO
    page = (REPO / "docs" / "pipelines.md").read_text()
    blocks = re.findall(r"<!-- snapshot-(file|output): ([^>]+?) -->\n```[a-z]*\n(.*?)```", page,
                        re.S)
    files = {name: text for kind, name, text in blocks if kind == "file"}
    outputs = [(name, text) for kind, name, text in blocks if kind == "output"]
    assert len(files) == 1 and len(outputs) == 1
    root = project(tmp_path, files)
    (root / "export").mkdir()
    for when, recs in ((T0, kv((1, "a1"), (2, "a2"))), (T12, kv((2, "b2"), (3, "a3")))):
        pq.write_table(pa.Table.from_pylist(recs, schema=KV), root / "export" / "products.parquet")
        run(root, "--execution-time", when)
    sql, want = outputs[0]
    p = knut("query", "--db", root / "storage" / "pipeline.duckdb", "--format", "csv", sql)
    assert p.returncode == 0, p.stderr
    assert p.stdout.replace("\r\n", "\n") == want


def test_integer_sequence_needs_ignore_deletes_to_delete_nothing(tmp_path):
    """SEQUENCE BY an integer column: versions start at it; a delete would
    close at the execution time (a TIMESTAMP), so it is refused with the
    reason, and IGNORE DELETES keeps missing keys."""
    schema = pa.schema([("id", pa.int64()), ("v", pa.string()), ("ver", pa.int64())])
    bad = snap_project(tmp_path / "bad", "KEYS (id) SEQUENCE BY ver STORED AS SCD TYPE 2")
    ok = snap_project(tmp_path / "ok", "KEYS (id) IGNORE DELETES SEQUENCE BY ver "
                                       "STORED AS SCD TYPE 2")
    for root in (bad, ok):
        at(root, DAYS[0], [{"id": 1, "v": "a", "ver": 1}, {"id": 2, "v": "b", "ver": 1}], schema)
    ev = flow_event(at(bad, DAYS[1], [{"id": 1, "v": "a2", "ver": 2}], schema, code=1), "apply")
    assert ("a key missing from the snapshot closes its version at the execution time, a "
            "TIMESTAMP, which __END_AT (typed like SEQUENCE BY ver) cannot hold: use a timestamp "
            "sequence or IGNORE DELETES" in ev["message"])
    at(ok, DAYS[1], [{"id": 1, "v": "a2", "ver": 2}], schema)
    assert [(r["id"], r["v"], r["s"], r["e"]) for r in rows(
        ok, "SELECT id, v, __START_AT AS s, __END_AT AS e FROM target ORDER BY id, s")] == [
        (1, "a", 1, 2), (1, "a2", 2, None), (2, "b", 1, None)]
