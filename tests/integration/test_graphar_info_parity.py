"""GraphAr info files: knut against the reference C++ library.

The reference is the Python ``graphar`` package (pybind11 over the C++
library, pinned in tests/requirements.txt). knut's side is the small test
program tests/tools/knut_gar_info_tool (modes dump, save). For every graph
of the official corpus that the reference considers valid, knut's graph,
vertex and edge dumps must be byte-identical to the reference's ``dump()``;
and every graph knut saves must load in the reference, validate, and hold
the same infos.
"""

import os
import pathlib
import subprocess

import pytest

import garref

REPO = pathlib.Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "data" / "graphar-testing"

# Every graph of the corpus the reference validates (ldbc_sample/json is
# JSON, which its IsValidated() rejects; java/ uses the pre-v0.13 keys).
GRAPHS = [
    "ldbc_sample/csv/ldbc_sample.graph.yml",
    "ldbc_sample/orc/ldbc_sample.graph.yml",
    "ldbc_sample/parquet/ldbc_sample.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_date.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_timestamp.graph.yml",
    "ldbc_sample/parquet/ldbc_sample_with_feature.graph.yml",
    "modern_graph/modern_graph.graph.yml",
    "nebula/basketballplayergraph.graph.yml",
    "neo4j/MovieGraph.graph.yml",
    "ldbc/ldbc.graph.yml",
    "ldbc/parquet/ldbc.graph.yml",
    "transformer/ldbc_sample.graph.yml",
]


def find_tool():
    """The tool: $KNUT_GAR_INFO_TOOL, next to $KNUT_BIN's build, or build/."""
    if os.environ.get("KNUT_GAR_INFO_TOOL"):
        return pathlib.Path(os.environ["KNUT_GAR_INFO_TOOL"])
    candidates = []
    if os.environ.get("KNUT_BIN"):
        candidates.append(pathlib.Path(os.environ["KNUT_BIN"]).parent / "tests" /
                          "knut_gar_info_tool")
    candidates.append(REPO / "build" / "tests" / "knut_gar_info_tool")
    for c in candidates:
        if c.exists():
            return c
    pytest.fail("knut_gar_info_tool not built (looked in %s); set KNUT_GAR_INFO_TOOL"
                % candidates)


@pytest.fixture(scope="module")
def tool():
    if not CORPUS.is_dir():
        pytest.fail(f"GraphAr corpus not found at {CORPUS}")
    return find_tool()


def run(tool, *args):
    r = subprocess.run([str(tool), *map(str, args)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"knut_gar_info_tool {args} failed: {r.stderr}"
    return r.stdout


def reference_dumps(ref):
    return [ref["graph"]] + ref["vertices"] + ref["edges"]


@pytest.mark.parametrize("graph", GRAPHS)
def test_dump_is_byte_identical_to_reference(tool, graph):
    ours = run(tool, "dump", CORPUS / graph).split("====\n")
    theirs = reference_dumps(garref.info(CORPUS / graph))
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a == b


@pytest.mark.parametrize("graph", GRAPHS)
def test_reference_loads_what_knut_saves(tool, graph, tmp_path):
    run(tool, "save", CORPUS / graph, tmp_path)
    saved = list(tmp_path.glob("*.graph.yml"))
    assert len(saved) == 1
    ours = garref.info(saved[0])
    assert ours["validated"]
    orig = garref.info(CORPUS / graph)
    # Same infos, listed under the .yml names knut wrote.
    assert ours["vertices"] == orig["vertices"]
    assert ours["edges"] == orig["edges"]
    assert ours["name"] == orig["name"]
    # A prefix the corpus gave is kept; a defaulted one follows the file.
    if "nebula" in graph:
        assert ours["prefix"] == orig["prefix"]
    else:
        assert ours["prefix"] == str(tmp_path) + "/"
