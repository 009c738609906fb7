"""Arrow IPC interop between knut and pyarrow, both directions.

knut's side is the small test program tests/tools/knut_ipc_tool (modes gen,
roundtrip, dump). pyarrow reads what knut writes and the values are checked
against an independent Python copy of the generator (tests/tools/ipc_gen.h);
pyarrow writes streams of every type (nulls, empty and sliced batches,
timestamps with time zones, nested list<struct>) that knut must read back
exactly (roundtrip) and dump as the same values; malformed bytes must make
knut fail cleanly with one error line.
"""

import decimal
import json
import os
import pathlib
import subprocess

import pyarrow as pa
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]


def find_tool():
    """The tool: $KNUT_IPC_TOOL, next to $KNUT_BIN's build, or build/."""
    if os.environ.get("KNUT_IPC_TOOL"):
        return pathlib.Path(os.environ["KNUT_IPC_TOOL"])
    candidates = []
    if os.environ.get("KNUT_BIN"):
        candidates.append(pathlib.Path(os.environ["KNUT_BIN"]).parent / "tests" / "knut_ipc_tool")
    candidates.append(REPO / "build" / "tests" / "knut_ipc_tool")
    for c in candidates:
        if c.exists():
            return c
    pytest.fail("knut_ipc_tool not built (looked in %s); set KNUT_IPC_TOOL" % candidates)


@pytest.fixture(scope="module")
def tool():
    return find_tool()


def run(tool, mode, data=b"", check=True):
    r = subprocess.run([str(tool), mode], input=data, capture_output=True, timeout=120)
    if check and r.returncode != 0:
        pytest.fail("knut_ipc_tool %s failed (%d): %s" % (mode, r.returncode, r.stderr.decode()))
    return r


def to_stream(batches, schema=None, **opts):
    sink = pa.BufferOutputStream()
    schema = schema if schema is not None else batches[0].schema
    options = pa.ipc.IpcWriteOptions(**opts) if opts else None
    with pa.ipc.new_stream(sink, schema, options=options) as w:
        for b in batches:
            w.write_batch(b)
    return sink.getvalue().to_pybytes()


def read_stream(data):
    r = pa.ipc.open_stream(pa.BufferReader(data))
    batches = list(r)
    for b in batches:
        b.validate(full=True)
    return r.schema, batches


# ---- values in knut_ipc_tool dump's representation -------------------------


def norm(arr):
    """Row values of a pyarrow array in the form `knut_ipc_tool dump` prints."""
    t = arr.type
    n = len(arr)
    valid = [not x for x in arr.is_null().to_pylist()]
    if pa.types.is_null(t):
        return [None] * n
    if pa.types.is_float16(t):
        vals = arr.view(pa.uint16()).to_pylist()
    elif t == pa.month_day_nano_interval():
        vals = [None if v is None else [v.months, v.days, v.nanoseconds] for v in arr.to_pylist()]
    elif str(t) == "day_time_interval":
        raw = arr.view(pa.int64()).to_pylist()
        vals = [None if v is None else [to_i32(v & 0xFFFFFFFF), to_i32((v >> 32) & 0xFFFFFFFF)]
                for v in raw]
    elif str(t) == "month_interval":
        vals = arr.view(pa.int32()).to_pylist()
    elif pa.types.is_temporal(t):
        width = pa.int32() if t.bit_width == 32 else pa.int64()
        vals = arr.view(width).to_pylist()
    elif pa.types.is_decimal(t):
        vals = [None if v is None else int.from_bytes(v, "little", signed=True)
                for v in arr.view(pa.binary(16)).to_pylist()]
    elif pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        vals = [None if v is None else v.hex() for v in arr.to_pylist()]
    elif pa.types.is_map(t) or pa.types.is_list(t) or pa.types.is_large_list(t):
        offs = arr.offsets.to_pylist()
        child = norm(arr.values)
        vals = [child[offs[i]:offs[i + 1]] for i in range(n)]
    elif pa.types.is_struct(t):
        kids = [(t.field(k).name, norm(arr.field(k))) for k in range(t.num_fields)]
        vals = [{name: col[i] for name, col in kids} for i in range(n)]
    else:
        vals = arr.to_pylist()
    return [v if ok else None for v, ok in zip(vals, valid)]


def to_i32(u):
    return u - (1 << 32) if u & 0x80000000 else u


# pyarrow 18 cannot wrap these arrays as Python objects (KeyError on the type
# id), so their values are checked through knut dump of a stream pyarrow
# re-wrote (test_gen_values_survive_pyarrow), not through norm().
NO_PYTHON_WRAPPER = {"interval_months", "interval_dt"}


def batch_rows(batch, skip=()):
    cols = [(batch.schema.field(k).name, norm(batch.column(k))) for k in range(batch.num_columns)
            if batch.schema.field(k).name not in skip]
    return [{name: col[i] for name, col in cols} for i in range(batch.num_rows)]


# ---- the generator of ipc_gen.h, in Python ----------------------------------

GEN_TEXT = b"\xc3\xa9tait-abcdefgh"


def gen_value(field, row):
    t = field.type
    if pa.types.is_null(t) or (field.nullable and row % 3 == 1):
        return None
    if pa.types.is_boolean(t):
        return row % 2 == 0 or row % 7 == 3
    if t in (pa.int8(), pa.int16(), pa.int32()):
        return (row * 37) % 251 - 125
    if t == pa.int64():
        return row * 1000003 - 500000000000
    if t in (pa.uint8(), pa.uint16(), pa.uint32()):
        return (row * 13) % 250
    if t == pa.uint64():
        return 18000000000000000000 + row
    if pa.types.is_float16(t):
        return 0x3C00 + row % 1024
    if pa.types.is_floating(t):
        return row * 0.25 - 3.5
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) \
            or pa.types.is_large_binary(t):
        if row % 5 == 0:
            raw = b""
        else:
            raw = b"v%d-" % row + GEN_TEXT[:row % 11]
            if (pa.types.is_string(t) or pa.types.is_large_string(t)) and row % 11 == 1:
                raw = raw[:-1]
        return raw.decode() if pa.types.is_string(t) or pa.types.is_large_string(t) else raw.hex()
    if pa.types.is_fixed_size_binary(t) or pa.types.is_decimal(t) or str(t) in (
            "day_time_interval", "month_day_nano_interval"):
        width = {"day_time_interval": 8, "month_day_nano_interval": 16}.get(
            str(t), 16 if pa.types.is_decimal(t) else getattr(t, "byte_width", 0))
        raw = bytes(((row * (i + 3)) & 0xFF) if i < 8 else 0 for i in range(width))
        if pa.types.is_decimal(t):
            return int.from_bytes(raw, "little", signed=True)
        if str(t) == "day_time_interval":
            return [int.from_bytes(raw[0:4], "little", signed=True),
                    int.from_bytes(raw[4:8], "little", signed=True)]
        if str(t) == "month_day_nano_interval":
            return [int.from_bytes(raw[0:4], "little", signed=True),
                    int.from_bytes(raw[4:8], "little", signed=True),
                    int.from_bytes(raw[8:16], "little", signed=True)]
        return raw.hex()
    if t == pa.date32() or str(t) == "month_interval" or pa.types.is_time32(t):
        return 18000 + row
    if t == pa.date64():
        return (18000 + row) * 86400000
    if pa.types.is_time64(t):
        return 3600000000000 + row * 1000001
    if pa.types.is_timestamp(t) or pa.types.is_duration(t):
        return 1700000000000000 + row * 1000001
    if pa.types.is_map(t):
        entries = pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False)
        return [gen_value(entries, row * 4 + k) for k in range(row % 4)]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [gen_value(t.value_field, row * 4 + k) for k in range(row % 4)]
    if pa.types.is_struct(t):
        return {t.field(k).name: gen_value(t.field(k), row + k) for k in range(t.num_fields)}
    raise AssertionError("no generator for %s" % t)


GEN_SCHEMA = [
    ("null", pa.null()), ("bool", pa.bool_()), ("int8", pa.int8()), ("uint8", pa.uint8()),
    ("int16", pa.int16()), ("uint16", pa.uint16()), ("int32", pa.int32()),
    ("uint32", pa.uint32()), ("int64", pa.int64()), ("uint64", pa.uint64()),
    ("half", pa.float16()), ("float", pa.float32()), ("double", pa.float64()),
    ("utf8", pa.string()), ("large_utf8", pa.large_string()), ("binary", pa.binary()),
    ("large_binary", pa.large_binary()), ("date32", pa.date32()), ("date64", pa.date64()),
    ("duration_us", pa.duration("us")), ("interval_months", "month_interval"),
    ("interval_dt", "day_time_interval"), ("interval_mdn", pa.month_day_nano_interval()),
    ("fixed3", pa.binary(3)), ("decimal", pa.decimal128(20, 4)), ("time32_s", pa.time32("s")),
    ("time64_ns", pa.time64("ns")), ("ts_us", pa.timestamp("us")),
    ("ts_ns_tz", pa.timestamp("ns", tz="Europe/Paris")), ("id", pa.int64()),
    ("list_i32", pa.list_(pa.int32())), ("large_list_str", pa.large_list(pa.string())),
    ("struct", pa.struct([("a", pa.int64()), ("b", pa.string())])),
    ("map", pa.map_(pa.string(), pa.int32())),
    ("list_struct", pa.list_(pa.struct([("x", pa.int32()), ("y", pa.list_(pa.int64())),
                                        ("s", pa.string())]))),
]

# Column slice offsets of gen's last batch (gen_offsets in knut_ipc_tool.c).
GEN_OFFSETS = [8, 3, 13, 1, 0, 21]


def test_pyarrow_reads_knut_gen(tool):
    schema, batches = read_stream(run(tool, "gen").stdout)
    assert [f.name for f in schema] == [name for name, _ in GEN_SCHEMA]
    for field, (name, typ) in zip(schema, GEN_SCHEMA):
        assert str(field.type) == str(typ), name
        assert field.nullable == (name != "id"), name
    assert schema.field("map").type.key_field.nullable is False
    assert [b.num_rows for b in batches] == [50, 0, 25, 30]

    check_gen_rows(schema, [batch_rows(b, NO_PYTHON_WRAPPER) for b in batches],
                   NO_PYTHON_WRAPPER)
    # re-based offsets: pyarrow sees them starting at 0
    col = batches[3].column("utf8")
    assert col.offset == 0
    assert int.from_bytes(col.buffers()[1].to_pybytes()[:4], "little") == 0


def check_gen_rows(schema, rows, skip=()):
    """rows[b][i]: the dicts of gen's batches, against gen_value."""
    assert [len(r) for r in rows] == [50, 0, 25, 30]
    fields = [f for f in schema if f.name not in skip]
    # batch 0: rows 0..49; batch 2: rows 105..129 (a slice at row 5)
    for batch, first in ((rows[0], 0), (rows[2], 105)):
        for i, row in enumerate(batch):
            want = {f.name: gen_value(f, first + i) for f in fields}
            assert row == want, "row %d" % (first + i)
    # batch 3: column k holds rows 200 + GEN_OFFSETS[k % 6] ...
    for k, field in enumerate(schema):
        if field.name in skip:
            continue
        col = [row[field.name] for row in rows[3]]
        want = [gen_value(field, 200 + GEN_OFFSETS[k % 6] + i) for i in range(30)]
        assert col == want, field.name


def test_gen_values_survive_pyarrow(tool):
    """knut gen -> pyarrow reads and re-writes -> knut dump: every column."""
    schema, batches = read_stream(run(tool, "gen").stdout)
    rewritten = to_stream(batches)
    assert rewritten != run(tool, "gen").stdout  # pyarrow's own encoding
    lines = [json.loads(x) for x in run(tool, "dump", rewritten).stdout.decode().splitlines()]
    rows, pos = [], 0
    for n in (50, 0, 25, 30):
        rows.append(lines[pos:pos + n])
        pos += n
    assert pos == len(lines)
    check_gen_rows(schema, rows)


def make_tables():
    """(name, batches, schema) cases written by pyarrow."""
    base = pa.record_batch({
        "i8": pa.array([1, None, -3, 4, 5, None, 7, 8, 9, 10, 11], pa.int8()),
        "u16": pa.array([1, 2, None, 65535, 5, 6, 7, 8, 9, 10, 11], pa.uint16()),
        "i32": pa.array([None, 2, 3, 4, -5, 6, 7, 8, 9, 10, 11], pa.int32()),
        "u64": pa.array([2**64 - 1, 0, None, 3, 4, 5, 6, 7, 8, 9, 10], pa.uint64()),
        "i64": pa.array(list(range(-5, 5)) + [None], pa.int64()),
        "f32": pa.array([0.5, None, 1.5, 2, 3, 4, 5, 6, 7, 8, 9], pa.float32()),
        "f64": pa.array([1e300, -0.0, None, 3.25, 4, 5, 6, 7, 8, 9, 10], pa.float64()),
        "half": pa.array([0x3C00, 0x4000, None, 0, 1, 2, 3, 4, 5, 6, 7], pa.uint16())
                  .view(pa.float16()),
        "b": pa.array([True, False, None, True, True, False, False, True, None, True, False]),
        "s": pa.array(["a", "", None, "été", "x" * 40, "q", "r", None, "t", "u", "v"]),
        "ls": pa.array(["A", None, "", "bb", "c", "d", "e", "f", "g", "h", "i"], pa.large_string()),
        "bin": pa.array([b"\x00\xff", None, b"", b"x", b"y", b"z", b"", b"1", b"2", b"3", b"4"]),
        "lbin": pa.array([b"q"] * 10 + [None], pa.large_binary()),
        "fsb": pa.array([b"abcd"] * 10 + [None], pa.binary(4)),
        "d32": pa.array([0, 1, None, 19000, 4, 5, 6, 7, 8, 9, 10], pa.date32()),
        "d64": pa.array([86400000 * i for i in range(10)] + [None], pa.date64()),
        "t32": pa.array([1, 2, 3, None, 5, 6, 7, 8, 9, 10, 11], pa.time32("ms")),
        "t64": pa.array([1, 2, 3, None, 5, 6, 7, 8, 9, 10, 11], pa.time64("us")),
        "ts_s": pa.array([0, 1, None, 3, 4, 5, 6, 7, 8, 9, 10], pa.timestamp("s")),
        "ts_ms_utc": pa.array([0, 1, None, 3, 4, 5, 6, 7, 8, 9, 10], pa.timestamp("ms", tz="UTC")),
        "ts_us_ny": pa.array([0, 1, None, 3, 4, 5, 6, 7, 8, 9, 10],
                             pa.timestamp("us", tz="America/New_York")),
        "ts_ns_off": pa.array([0, 1, None, 3, 4, 5, 6, 7, 8, 9, 10],
                              pa.timestamp("ns", tz="+05:30")),
        "dur": pa.array([1, None, 3, 4, 5, 6, 7, 8, 9, 10, 11], pa.duration("ns")),
        "dec": pa.array([None] + [decimal.Decimal(i * 100 - 321) / 100 for i in range(10)],
                        pa.decimal128(18, 2)),
        "mdn": pa.array([(1, 2, 3)] * 10 + [None], pa.month_day_nano_interval()),
        "n": pa.nulls(11),
    })
    nested = pa.record_batch({
        "l": pa.array([[1, 2], None, [], [3], [4, None], [], None, [5], [6], [7], [8]],
                      pa.list_(pa.int32())),
        "ll": pa.array([["a"], None, [], ["b", None], ["c"], [], ["d"], None, ["e"], ["f"], []],
                       pa.large_list(pa.large_string())),
        "st": pa.array([{"a": 1, "b": "x"}, None, {"a": None, "b": None}, {"a": 4, "b": "y"},
                        {"a": 5, "b": ""}] + [{"a": i, "b": str(i)} for i in range(6)],
                       pa.struct([("a", pa.int64()), ("b", pa.string())])),
        "lst": pa.array([[{"x": 1, "y": [1, 2]}], None, [], [{"x": None, "y": None}, None],
                         [{"x": 3, "y": []}], [], None, [{"x": 4, "y": [4]}], [], [],
                         [{"x": 5, "y": [5, 6, 7]}]],
                        pa.list_(pa.struct([("x", pa.int16()), ("y", pa.list_(pa.int64()))]))),
        "m": pa.array([[("k", 1)], None, [], [("a", 2), ("b", None)], [], [], [], [], [], [],
                       [("z", 9)]], pa.map_(pa.string(), pa.int32())),
    })
    meta = base.schema.with_metadata({b"origin": b"pytest", b"k": b""})
    base = base.replace_schema_metadata(meta.metadata)
    return [
        ("primitives", [base], None),
        ("nested", [nested], None),
        ("empty_batches", [base.slice(0, 0), base, base.slice(0, 0)], None),
        ("zero_batches", [], base.schema),
        ("sliced", [base.slice(3, 5), base.slice(9), nested.slice(1, 7), nested.slice(5, 0)],
         None),
        ("many_batches", [base.slice(i, 1) for i in range(11)], None),
    ]


CASES = make_tables()


@pytest.mark.parametrize("name,batches,schema", CASES, ids=[c[0] for c in CASES])
def test_knut_roundtrips_pyarrow_streams(tool, name, batches, schema):
    if name == "sliced":  # two schemas in one case: write them as two streams
        groups = [[b for b in batches if b.schema == batches[0].schema],
                  [b for b in batches if b.schema != batches[0].schema]]
    else:
        groups = [batches]
    for group in groups:
        data = to_stream(group, schema)
        out = run(tool, "roundtrip", data).stdout
        got_schema, got = read_stream(out)
        want_schema = schema if schema is not None else group[0].schema
        assert got_schema.equals(want_schema, check_metadata=True)
        assert [b.num_rows for b in got] == [b.num_rows for b in group]
        for g, w in zip(got, group):
            assert g.equals(w), name


@pytest.mark.parametrize("name,batches,schema", CASES, ids=[c[0] for c in CASES])
def test_knut_dump_matches_pyarrow(tool, name, batches, schema):
    if not batches:
        assert run(tool, "dump", to_stream([], schema)).stdout == b""
        return
    groups = []
    for b in batches:
        for g in groups:
            if g[0].schema == b.schema:
                g.append(b)
                break
        else:
            groups.append([b])
    for group in groups:
        lines = run(tool, "dump", to_stream(group)).stdout.decode().splitlines()
        want = [row for b in group for row in batch_rows(b)]
        assert [json.loads(line) for line in lines] == want


def test_knut_reads_legacy_and_v4_streams(tool):
    batch = CASES[1][1][0]
    for opts in ({"use_legacy_format": True},
                 {"metadata_version": pa.ipc.MetadataVersion.V4}):
        out = run(tool, "roundtrip", to_stream([batch, batch], **opts)).stdout
        _, got = read_stream(out)
        assert len(got) == 2 and got[0].equals(batch) and got[1].equals(batch)


def expect_reject(tool, data, text):
    r = run(tool, "roundtrip", data, check=False)
    err = r.stderr.decode()
    assert r.returncode == 1, (r.returncode, err)
    assert err.startswith("knut_ipc_tool: ") and err.count("\n") == 1, err
    assert text in err, err


def test_knut_rejects_malformed_bytes(tool):
    good = to_stream([CASES[0][1][0]])
    expect_reject(tool, b"", "no Schema message")
    expect_reject(tool, b"\x00\x01garbage" * 4, "message 0 at byte 0")
    expect_reject(tool, b"\xfe\xff\xff\xff" + good[4:], "negative metadata length")
    expect_reject(tool, b"\xff\xff\xff\xff\xff\xff\xff\x7f", "exceeds the limit")
    for cut in (3, 20, len(good) // 2, len(good) - 9):
        expect_reject(tool, good[:cut], "truncated")
    # a byte flipped inside the flatbuffer metadata of the schema
    bad = bytearray(good)
    bad[8] ^= 0xFF
    r = run(tool, "roundtrip", bytes(bad), check=False)
    assert r.returncode in (0, 1) and (r.returncode == 0 or r.stderr.startswith(b"knut_ipc_tool: "))


def test_knut_rejects_dictionaries_and_compression(tool):
    dict_batch = pa.record_batch({"city": pa.array(["a", "b", "a"]).dictionary_encode()})
    expect_reject(tool, to_stream([dict_batch]), "dictionary-encoded fields are not supported")
    plain = CASES[0][1][0]
    try:
        data = to_stream([plain], compression="zstd")
    except pa.ArrowNotImplementedError:
        pytest.skip("pyarrow built without zstd")
    expect_reject(tool, data, "message 1 at byte")
    expect_reject(tool, data, "compressed record batches")


def test_knut_roundtrips_dense_unions_and_refuses_sparse(tool):
    """Dense unions (GetSqlInfo's value column) read back exactly, sliced too;
    a sparse union is refused by name."""
    u = pa.UnionArray.from_dense(pa.array([3, 7, 3, 7], pa.int8()),
                                 pa.array([0, 0, 1, 1], pa.int32()),
                                 [pa.array([5, None], pa.int32()), pa.array(["a", "b"])],
                                 ["n", "s"], [3, 7])
    batch = pa.record_batch({"u": u, "k": pa.array([1, 2, 3, 4])})
    for b in (batch, batch.slice(1, 2)):
        out = run(tool, "roundtrip", to_stream([b])).stdout
        got_schema, got = read_stream(out)
        assert got_schema.equals(b.schema)
        got[0].validate(full=True)
        assert got[0].to_pylist() == b.to_pylist()
    sparse = pa.UnionArray.from_sparse(pa.array([0, 1], pa.int8()),
                                       [pa.array([1, 2]), pa.array(["x", "y"])])
    expect_reject(tool, to_stream([pa.record_batch({"s": sparse})]),
                  "sparse unions are not supported")
