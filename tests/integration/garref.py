"""The GraphAr reference (the ``graphar`` package), called in a subprocess.

The package bundles its own Arrow C++ library; importing it in the same
process as pyarrow makes pyarrow fail ("scheme 'file' already registered"),
and some of its calls crash the interpreter on bad input. So tests never
import it: they run a snippet in a fresh interpreter and read JSON back.
"""

import json
import subprocess
import sys

import pytest


def available():
    r = subprocess.run([sys.executable, "-c", "import graphar"], capture_output=True)
    return r.returncode == 0


def run(snippet, *args, timeout=300):
    """Runs snippet (which must print one JSON document) with sys.argv[1:] = args."""
    if not available():
        pytest.fail("the graphar reference package is not installed (scripts/setup.sh --test)")
    r = subprocess.run([sys.executable, "-c", snippet, *map(str, args)],
                       capture_output=True, text=True, timeout=timeout)
    if r.returncode != 0:
        raise RuntimeError(f"graphar reference failed (rc {r.returncode}): {r.stderr[-2000:]}")
    return json.loads(r.stdout)


INFO_SNIPPET = r"""
import json, sys, graphar
gi = graphar.GraphInfo.load(sys.argv[1])
ok = gi.is_validated()
print(json.dumps({
    "validated": ok,
    "name": gi.get_name(),
    "prefix": gi.get_prefix(),
    "graph": gi.dump() if ok else None,
    "vertices": [v.dump() for v in gi.get_vertex_infos()],
    "edges": [e.dump() for e in gi.get_edge_infos()],
}))
"""


def info(path):
    """The reference's view of a graph YAML: validated, name, prefix, dumps."""
    return run(INFO_SNIPPET, path)
