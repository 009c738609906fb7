"""End-to-end tests of `knut gar validate`.

Two halves. First the official corpus: every gar/v1 graph the reference
(`graphar check` from the `graphar` Python package, always run in a
subprocess because it can segfault) accepts must come out without errors,
and the graphs it rejects must come out with errors. Then broken copies:
each test copies a corpus graph to a temp dir, breaks one thing (a chunk,
a count file, a YAML field, a column type, an offset) and asserts the rule
id and the file the validator names. Where the reference has an opinion
on a broken copy (info-level faults), the test asks it too.
"""
from __future__ import annotations

import json
import os
import pathlib
import re
import shutil
import struct
import subprocess

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "data" / "graphar-testing"
GRAPHAR_CLI = REPO / ".venv" / "bin" / "graphar"

# Graphs the reference accepts (see reference_verdict) and those it rejects.
ACCEPTED = [
    "ldbc_sample/parquet/ldbc_sample.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_date.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_timestamp.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_with_feature.graph.yml",
    "ldbc_sample/csv/ldbc_sample.graph.yml",
    "ldbc_sample/orc/ldbc_sample.graph.yml",
    "modern_graph/modern_graph.graph.yml",
    "neo4j/MovieGraph.graph.yml",
    "nebula/basketballplayergraph.graph.yml",
    "ldbc/parquet/ldbc.graph.yml",
    "ldbc/ldbc.graph.yml",
    "transformer/ldbc_sample.graph.yml",
]
REJECTED = {
    "java/ldbc_sample/csv/ldbc_sample.graph.yml": "info.legacy_keys",
    "java/ldbc_sample/orc/ldbc_sample.graph.yml": "info.legacy_keys",
    "java/ldbc_sample/parquet/ldbc_sample.graph.yml": "info.legacy_keys",
    "ldbc_sample/json/LdbcSample.graph.yml": "file_type.json",
}

PQ = "ldbc_sample/parquet"
KNOWS = "edge/person_knows_person"


@pytest.fixture(scope="module", autouse=True)
def corpus_present():
    if not CORPUS.is_dir():
        pytest.fail(f"GraphAr corpus not found at {CORPUS}")


def reference_verdict(graph_yml: pathlib.Path) -> bool | None:
    """True/False from `graphar check`; None if it crashed or is missing."""
    if not GRAPHAR_CLI.exists():
        return None
    try:
        p = subprocess.run([str(GRAPHAR_CLI), "check", "-p", str(graph_yml)],
                           capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return None
    out = p.stdout + p.stderr
    if p.returncode < 0:
        return None  # killed by a signal (it segfaults on some inputs)
    if "Graph is valid" in out:
        return True
    if "not valid" in out or "Error" in out or "error" in out or p.returncode != 0:
        return False
    return None


def validate(run_knut, path, *args):
    """Runs `knut gar validate --format json`; returns (exit code, document)."""
    p = run_knut("gar", "validate", "--format", "json", *args, path)
    assert p.returncode in (0, 1), (p.returncode, p.stdout, p.stderr)
    doc = json.loads(p.stdout)
    shown = sum(i["severity"] == "error" for i in doc["issues"])
    # every issue is counted, the listed ones only up to --max-issues
    assert doc["errors"] == shown if not doc["truncated"] else doc["errors"] >= shown
    assert (p.returncode == 1) == (doc["errors"] > 0)
    return p.returncode, doc


def issues(doc, rule, file_suffix=None, severity=None):
    found = [i for i in doc["issues"] if i["rule"] == rule]
    if file_suffix is not None:
        found = [i for i in found if i["file"].endswith(file_suffix)]
    if severity is not None:
        found = [i for i in found if i["severity"] == severity]
    return found


def errors(doc):
    return [i for i in doc["issues"] if i["severity"] == "error"]


def copy_graph(tmp_path, rel_dir) -> pathlib.Path:
    dst = tmp_path / "g"
    shutil.copytree(CORPUS / rel_dir, dst, symlinks=True)
    return dst


def edit(path: pathlib.Path, old: str, new: str, count: int = 1):
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, count))


def write_count(path: pathlib.Path, value: int):
    path.write_bytes(struct.pack("<q", value))


def rewrite_parquet(path: pathlib.Path, fn):
    """Reads a Parquet chunk, applies fn(table) -> table, writes it back."""
    table = pq.read_table(path)
    pq.write_table(fn(table), path)


def set_column(table: pa.Table, name: str, values, type=None) -> pa.Table:
    i = table.schema.get_field_index(name)
    return table.set_column(i, name, pa.array(values, type=type or table.schema.field(i).type))


# ---- the corpus ------------------------------------------------------------


@pytest.mark.parametrize("graph", ACCEPTED)
def test_corpus_graph_the_reference_accepts_has_no_errors(run_knut, graph):
    yml = CORPUS / graph
    assert reference_verdict(yml) in (True, None), f"the reference rejects {graph}"
    rc, doc = validate(run_knut, yml)
    assert rc == 0, errors(doc)
    assert doc["valid"] is True


@pytest.mark.parametrize("graph,rule", sorted(REJECTED.items()))
def test_corpus_graph_the_reference_rejects_has_errors(run_knut, graph, rule):
    yml = CORPUS / graph
    assert reference_verdict(yml) in (False, None), f"the reference accepts {graph}"
    rc, doc = validate(run_knut, yml)
    assert rc == 1
    assert issues(doc, rule, severity="error")


def test_orc_groups_are_checked_for_existence_only(run_knut):
    rc, doc = validate(run_knut, CORPUS / "ldbc_sample/orc/ldbc_sample.graph.yml")
    assert rc == 0
    unchecked = issues(doc, "contents.unchecked", severity="warning")
    assert any(i["file"].endswith("vertex/person/id/") for i in unchecked)
    assert all("ORC unsupported" in i["message"] for i in unchecked)


def test_metadata_only_graph_warns_and_require_data_makes_it_an_error(run_knut):
    yml = CORPUS / "transformer/ldbc_sample.graph.yml"
    rc, doc = validate(run_knut, yml)
    assert rc == 0 and len(issues(doc, "data.absent")) == 2
    rc, doc = validate(run_knut, yml, "--require-data")
    assert rc == 1 and len(issues(doc, "data.missing", severity="error")) == 2


def test_nebula_absolute_prefix_falls_back_to_the_yaml_directory(run_knut, tmp_path):
    rc, doc = validate(run_knut, CORPUS / "nebula/basketballplayergraph.graph.yml")
    assert rc == 0
    assert issues(doc, "prefix.not_found", "basketballplayergraph.graph.yml")
    assert issues(doc, "column.index_missing")  # legacy vertex chunks
    assert issues(doc, "offset.int32")          # Spark offsets
    # Re-rooted as the report suggests: no fallback needed, still clean.
    g = copy_graph(tmp_path, "nebula")
    edit(g / "basketballplayergraph.graph.yml", "prefix: /tmp/graphar/nebula2graphar/\n", "")
    rc, doc = validate(run_knut, g / "basketballplayergraph.graph.yml")
    assert rc == 0 and not issues(doc, "prefix.not_found")
    assert reference_verdict(g / "basketballplayergraph.graph.yml") in (True, None)


def test_a_directory_with_one_graph_yaml_is_accepted(run_knut):
    rc, doc = validate(run_knut, CORPUS / "modern_graph")
    assert rc == 0 and doc["issues"] == []
    rc, doc = validate(run_knut, CORPUS / PQ)  # four graph YAMLs
    assert rc == 1 and issues(doc, "info.unreadable")


# ---- broken copies: vertex data ----------------------------------------------------


def test_missing_last_chunk(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    (g / "vertex/person/id/chunk9").unlink()
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "chunk.missing")
    assert it["file"].endswith("vertex/person/id/chunk9")
    assert not issues(doc, "chunk.gap")


def test_gap_in_chunk_numbering(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    (g / "vertex/person/firstName_lastName_gender/chunk4").unlink()
    (g / "vertex/person/firstName_lastName_gender/chunk5").unlink()
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "chunk.gap")
    assert it["file"].endswith("firstName_lastName_gender/chunk4")
    assert "chunk4..chunk5" in it["message"]


def test_extra_chunk_is_a_warning(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    shutil.copy(g / "vertex/person/id/chunk9", g / "vertex/person/id/chunk10")
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 0
    [it] = issues(doc, "chunk.extra", severity="warning")
    assert it["file"].endswith("vertex/person/id/chunk10")


def test_missing_group_directory(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    shutil.rmtree(g / "vertex/person/id")
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "chunk.missing")
    assert it["file"].endswith("vertex/person/id/")


def test_wrong_vertex_count_value(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    write_count(g / "vertex/person/vertex_count", 950)
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    rows = issues(doc, "chunk.rows")
    assert {i["file"].split("/vertex/person/")[-1] for i in rows} == {
        "id/chunk9", "firstName_lastName_gender/chunk9"}
    assert "expected 50" in rows[0]["message"]
    # Every adj list's own vertex_count still says 903.
    mism = issues(doc, "count.mismatch")
    assert len(mism) == 3 and all(i["file"].endswith("/vertex_count") for i in mism)


def test_count_file_with_wrong_size(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    (g / "vertex/person/vertex_count").write_bytes(b"903\n")
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "count.size")
    assert it["file"].endswith("vertex/person/vertex_count") and "4 bytes" in it["message"]


def test_negative_edge_count(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    write_count(g / KNOWS / "ordered_by_source/edge_count3", -5)
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    assert issues(doc, "count.negative", "ordered_by_source/edge_count3")


def test_missing_edge_count(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    (g / KNOWS / "unordered_by_source/edge_count7").unlink()
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    assert issues(doc, "count.missing", "unordered_by_source/edge_count7")


def test_wrong_column_type_in_a_parquet_chunk(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / "vertex/person/id/chunk3"
    rewrite_parquet(chunk, lambda t: set_column(t, "id", [str(v) for v in t["id"].to_pylist()],
                                                pa.string()))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "column.type_mismatch")
    assert it["file"].endswith("vertex/person/id/chunk3") and it["field"] == "id"
    assert "VARCHAR" in it["message"] and "BIGINT" in it["message"]


def test_missing_column_and_extra_column(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / "vertex/person/firstName_lastName_gender/chunk0"
    rewrite_parquet(chunk, lambda t: t.drop_columns(["gender"]).append_column(
        "nickname", pa.array(["x"] * t.num_rows)))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [miss] = issues(doc, "column.missing")
    assert miss["field"] == "gender" and miss["file"].endswith("gender/chunk0")
    [extra] = issues(doc, "column.extra", severity="warning")
    assert extra["field"] == "nickname"


def test_chunk_with_wrong_row_count(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / "vertex/person/id/chunk2"
    rewrite_parquet(chunk, lambda t: t.slice(0, 99))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "chunk.rows")
    assert it["file"].endswith("vertex/person/id/chunk2") and "99 rows; expected 100" in it["message"]


def test_vertex_index_values_must_follow_chunk_and_row(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / "vertex/person/id/chunk1"
    rewrite_parquet(chunk, lambda t: set_column(
        t, "_graphArVertexIndex", [v + 1 for v in t["_graphArVertexIndex"].to_pylist()]))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "column.index_value")
    assert it["file"].endswith("id/chunk1") and "100 rows" in it["message"]


def test_null_primary_key(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / "vertex/person/id/chunk0"
    rewrite_parquet(chunk, lambda t: set_column(t, "id", [None] + t["id"].to_pylist()[1:]))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "column.null")
    assert it["field"] == "id" and "1 nulls" in it["message"]


def test_csv_value_that_does_not_parse_and_null_in_non_nullable(run_knut, tmp_path):
    g = copy_graph(tmp_path, "ldbc_sample/csv")
    chunk = g / "vertex/person/id/chunk0"
    lines = chunk.read_text().splitlines()
    assert lines[0].split(",")[-1] == "id"
    idx, _ = lines[1].split(",")
    lines[1] = f"{idx},notanumber"
    idx, _ = lines[2].split(",")
    lines[2] = f"{idx},"
    chunk.write_text("\n".join(lines) + "\n")
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [bad] = issues(doc, "column.type_mismatch")
    assert bad["file"].endswith("id/chunk0") and "do not parse as int64" in bad["message"]
    [null] = issues(doc, "column.null")
    assert null["field"] == "id"


def test_corrupt_chunk_is_unreadable(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    (g / "vertex/person/id/chunk5").write_bytes(b"PAR1 not really")
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    assert issues(doc, "chunk.unreadable", "vertex/person/id/chunk5")


# ---- broken copies: edge data ---------------------------------------------------


def test_non_monotonic_offsets(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / KNOWS / "ordered_by_source/offset/chunk2"

    def swap(t):
        v = t["_graphArOffset"].to_pylist()
        v[10], v[11] = v[11] + 5, v[10]
        return set_column(t, "_graphArOffset", v)

    rewrite_parquet(chunk, swap)
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "offset.non_monotonic")
    assert it["file"].endswith("ordered_by_source/offset/chunk2") and "row 11" in it["message"]


def test_offset_difference_not_matching_degrees(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / KNOWS / "ordered_by_dest/offset/chunk4"

    def shift(t):
        v = t["_graphArOffset"].to_pylist()
        k = next(i for i in range(1, len(v) - 1) if v[i + 1] > v[i - 1] + 1)
        v[k] = v[k] + 1 if v[k] + 1 <= v[k + 1] else v[k] - 1
        return set_column(t, "_graphArOffset", v)

    rewrite_parquet(chunk, shift)
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "offset.degree")
    assert it["file"].endswith("ordered_by_dest/offset/chunk4")
    assert not issues(doc, "offset.non_monotonic")


def test_offset_last_value_and_first_value(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    off = g / "edge/person_created_software/ordered_by_source/offset/chunk1"
    lines = off.read_text().splitlines()
    assert lines[0].strip('"') == "_graphArOffset"
    lines[-1] = str(int(lines[-1]) + 7)
    off.write_text("\n".join(lines) + "\n")
    off0 = g / "edge/person_knows_person/ordered_by_source/offset/chunk0"
    lines = off0.read_text().splitlines()
    lines[1] = "3"
    off0.write_text("\n".join(lines) + "\n")
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml")
    assert rc == 1
    assert issues(doc, "offset.last", "person_created_software/ordered_by_source/offset/chunk1")
    assert issues(doc, "offset.first", "person_knows_person/ordered_by_source/offset/chunk0")


def test_offset_chunk_missing_and_wrong_length(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    (g / KNOWS / "ordered_by_source/offset/chunk6").unlink()
    rewrite_parquet(g / KNOWS / "ordered_by_dest/offset/chunk1", lambda t: t.slice(0, 50))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    assert issues(doc, "offset.missing", "ordered_by_source/offset/chunk6")
    [it] = issues(doc, "offset.length", "ordered_by_dest/offset/chunk1")
    assert "50 rows" in it["message"]


def test_adjacency_source_index_out_of_range(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / KNOWS / "ordered_by_dest/adj_list/part0/chunk0"

    def bump(t):
        v = t["_graphArSrcIndex"].to_pylist()
        v[3] = 5000
        return set_column(t, "_graphArSrcIndex", v)

    rewrite_parquet(chunk, bump)
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "adj.src_range")
    assert it["file"].endswith("ordered_by_dest/adj_list/part0/chunk0")
    assert "[0, 903)" in it["message"] and "row 3" in it["message"]
    assert not issues(doc, "adj.partition") and not issues(doc, "adj.unsorted")


def test_unsorted_ordered_adj_list(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / KNOWS / "ordered_by_source/adj_list/part1/chunk0"
    rewrite_parquet(chunk, lambda t: pa.concat_tables([t.slice(300), t.slice(0, 300)]))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "adj.unsorted", "ordered_by_source/adj_list/part1/chunk0")
    assert "first at row" in it["message"]
    # The same rows, reordered: counts and ranges stay right.
    assert not issues(doc, "chunk.rows") and not issues(doc, "adj.partition")
    # An unordered list may be in any order within its part.
    g2 = copy_graph(tmp_path / "u", PQ)
    chunk = g2 / KNOWS / "unordered_by_source/adj_list/part1/chunk0"
    rewrite_parquet(chunk, lambda t: pa.concat_tables([t.slice(300), t.slice(0, 300)]))
    rc, doc = validate(run_knut, g2 / "ldbc_sample.graph.yml")
    assert rc == 0, errors(doc)


def test_edge_in_the_wrong_part(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / KNOWS / "unordered_by_source/adj_list/part0/chunk0"

    def move(t):
        v = t["_graphArSrcIndex"].to_pylist()
        v[0] = 250  # part 2's range
        return set_column(t, "_graphArSrcIndex", v)

    rewrite_parquet(chunk, move)
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "adj.partition")
    assert it["file"].endswith("unordered_by_source/adj_list/part0/chunk0")
    assert "[0, 100)" in it["message"]


def test_edge_property_chunk_rows_must_mirror_the_adj_list(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    chunk = g / KNOWS / "ordered_by_source/creationDate/part3/chunk0"
    rewrite_parquet(chunk, lambda t: t.slice(1))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    [it] = issues(doc, "chunk.rows")
    assert it["file"].endswith("ordered_by_source/creationDate/part3/chunk0")
    assert "edge_count3" in it["message"]


def test_edge_totals_differ_between_adj_lists(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    # A consistent change to one adj list: drop the last edge of part 9.
    a = g / KNOWS / "unordered_by_source"
    write_count(a / "edge_count9", 3)
    for sub in ("adj_list", "creationDate", "creationDate-date", "creationDate-timestamp"):
        rewrite_parquet(a / sub / "part9/chunk0", lambda t: t.slice(0, 3))
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert rc == 1
    # The two untouched adj lists agree, so the changed one is named.
    [it] = issues(doc, "count.mismatch")
    assert it["file"].endswith("unordered_by_source/")
    assert "6625" in it["message"] and "6626" in it["message"]


def test_sparse_parts_and_an_empty_part_directory(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    # part0 of knows has 0 edges and no directory: fine. An empty one warns.
    (g / "edge/person_knows_person/ordered_by_source/adj_list/part0").mkdir()
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml")
    assert rc == 0
    assert issues(doc, "part.empty", "person_knows_person/ordered_by_source/adj_list/part0/")


# ---- broken copies: info files --------------------------------------------------


def test_duplicate_property_across_groups(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    edit(g / "person.vertex.yml", "name: name\n", "name: id\n")
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml")
    assert rc == 1
    [it] = issues(doc, "property.duplicate")
    assert it["file"].endswith("person.vertex.yml") and it["line"] > 0
    assert reference_verdict(g / "modern_graph.graph.yml") in (False, None)


def test_two_primary_keys_warn_as_the_reference_accepts_them(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    text = (g / "person.vertex.yml").read_text()
    assert text.count("is_primary: false") >= 1
    (g / "person.vertex.yml").write_text(text.replace("is_primary: false", "is_primary: true", 1))
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml")
    assert rc == 0
    [it] = issues(doc, "property.primary_multiple", "person.vertex.yml", severity="warning")
    assert "2 primary keys" in it["message"]
    assert reference_verdict(g / "modern_graph.graph.yml") in (True, None)


def test_unknown_data_type_names_the_file_and_line(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    edit(g / "software.vertex.yml", "data_type: string", "data_type: varchar")
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml")
    assert rc == 1
    [it] = issues(doc, "type.unknown")
    assert it["file"].endswith("software.vertex.yml") and it["line"] > 0
    assert "varchar" in it["message"]
    # Not also blamed on the edge to software, and the rest is checked.
    assert not issues(doc, "info.load") and not issues(doc, "edge.vertex_type_missing")
    assert len(errors(doc)) == 1
    assert reference_verdict(g / "modern_graph.graph.yml") in (False, None)


def test_bad_version(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    edit(g / "person.vertex.yml", "version: gar/v1", "version: gar/v2")
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml")
    assert rc == 1
    [it] = issues(doc, "version.bad")
    assert it["file"].endswith("person.vertex.yml") and "gar/v2" in it["message"]


def test_edge_naming_a_missing_vertex_type(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    edit(g / "person_created_software.edge.yml", "dst_type: software", "dst_type: program")
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml")
    assert rc == 1
    [it] = issues(doc, "edge.vertex_type_missing")
    assert it["file"].endswith("person_created_software.edge.yml") and it["field"] == "dst_type"
    assert reference_verdict(g / "modern_graph.graph.yml") in (False, None)


def test_src_chunk_size_differs_from_the_vertex_chunk_size(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    edit(g / "person_knows_person.edge.yml", "src_chunk_size: 2", "src_chunk_size: 3")
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml", "--info-only")
    assert rc == 1
    [it] = issues(doc, "edge.chunk_size_mismatch")
    assert it["field"] == "src_chunk_size"


def test_listed_file_missing_is_reported_and_the_rest_checked(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    (g / "software.vertex.yml").unlink()
    rc, doc = validate(run_knut, g / "modern_graph.graph.yml")
    assert rc == 1
    [it] = issues(doc, "info.unreadable")
    assert it["file"].endswith("software.vertex.yml")
    # The edge to software now names a missing vertex type.
    assert issues(doc, "edge.vertex_type_missing", "person_created_software.edge.yml")


def test_info_only_skips_data(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    (g / "vertex/person/id/chunk0").unlink()
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml", "--info-only")
    assert rc == 0 and doc["issues"] == []


def test_max_issues_stops_early(run_knut, tmp_path):
    g = copy_graph(tmp_path, PQ)
    for k in range(0, 10, 2):
        (g / f"vertex/person/id/chunk{k}").unlink()
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml", "--max-issues", "2")
    assert rc == 1 and len(doc["issues"]) == 2 and doc["truncated"] is True
    assert doc["errors"] == 5  # counted past the cap


def test_max_issues_never_hides_an_error(run_knut, tmp_path):
    """An error past the cap still makes the graph invalid (exit 1), and
    the counts are those of the whole check. Before: checking stopped at
    the cap, so a graph whose first issue was a warning passed with
    --max-issues 1."""
    g = copy_graph(tmp_path, PQ)
    shutil.rmtree(g / "vertex/person")  # no data for a type: a warning
    (g / f"{KNOWS}/ordered_by_source/adj_list/part0/chunk0").unlink()  # an error
    full_rc, full = validate(run_knut, g / "ldbc_sample.graph.yml")
    assert full_rc == 1 and full["warnings"] >= 1 and full["errors"] >= 1, full
    assert full["issues"][0]["severity"] == "warning", full["issues"][0]
    rc, doc = validate(run_knut, g / "ldbc_sample.graph.yml", "--max-issues", "1")
    assert rc == 1 and doc["valid"] is False and doc["truncated"] is True
    assert (doc["errors"], doc["warnings"]) == (full["errors"], full["warnings"])
    p = run_knut("gar", "validate", "--max-issues", "1", g / "ldbc_sample.graph.yml")
    assert p.returncode == 1 and "not shown: --max-issues" in p.stdout.splitlines()[-1]


# ---- the command line ---------------------------------------------------------


def test_text_output_format(run_knut, tmp_path):
    g = copy_graph(tmp_path, "modern_graph")
    edit(g / "software.vertex.yml", "data_type: string", "data_type: varchar")
    p = run_knut("gar", "validate", g / "modern_graph.graph.yml")
    assert p.returncode == 1
    line = next(l for l in p.stdout.splitlines() if "[type.unknown]" in l)
    assert re.match(r"^ERROR .*software\.vertex\.yml:\d+:\d+: property_groups\[\d+\]\.properties"
                    r"\[\d+\]\.data_type: unknown data_type 'varchar' \[type\.unknown\]$", line)
    assert p.stdout.splitlines()[-1].endswith("1 error, 0 warnings")


def test_usage_errors_and_list_rules(run_knut):
    assert run_knut("gar", "validate").returncode == 2
    assert run_knut("gar", "validate", "--format", "xml", "x").returncode == 2
    assert run_knut("gar", "validate", "--max-issues", "0", "x").returncode == 2
    assert run_knut("gar", "validate", "--bogus", "x").returncode == 2
    p = run_knut("gar", "validate", "--list-rules")
    assert p.returncode == 0
    ids = [l.split()[0] for l in p.stdout.splitlines()]
    for rule in ("chunk.missing", "chunk.gap", "count.mismatch", "offset.non_monotonic",
                 "property.duplicate", "property.primary_multiple", "type.unknown",
                 "version.bad", "edge.vertex_type_missing", "column.type_mismatch"):
        assert rule in ids
    assert len(ids) == len(set(ids))
    p = run_knut("gar", "validate")  # one line naming what is missing
    assert p.stderr == "knut gar validate: missing PATH; see 'knut gar validate --help'\n"
    p = run_knut("gar", "validate", "--help")
    assert p.returncode == 0 and "--info-only" in p.stdout
    p = run_knut("gar")  # the sub-command list
    assert "validate" in p.stderr


def test_unreadable_input_exits_1(run_knut, tmp_path):
    p = run_knut("gar", "validate", tmp_path / "nope.graph.yml")
    assert p.returncode == 1 and "[info.unreadable]" in p.stdout
    bad = tmp_path / "bad.graph.yml"
    bad.write_text("name: [unclosed\n")
    p = run_knut("gar", "validate", bad)
    assert p.returncode == 1 and "[yaml.parse]" in p.stdout


def test_docs_list_every_rule(run_knut):
    doc = (REPO / "docs" / "graphar.md").read_text()
    p = run_knut("gar", "validate", "--list-rules")
    for line in p.stdout.splitlines():
        assert f"`{line.split()[0]}`" in doc, line.split()[0]
