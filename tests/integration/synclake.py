"""The sample lakehouse (examples/lakehouse/) as sync tests use it.

copy_lake() copies it into a test's folder with the store beside the
config; `lake` is the same as a fixture (import it into a test module to
use it). records() reads a JSON log, skipping a line still being written;
wait_for() polls a predicate and returns its first truthy value.
"""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from peers import REPO

EXAMPLE = REPO / "examples" / "lakehouse"


def copy_lake(tmp_path: Path, name: str = "lake") -> Path:
    d = tmp_path / name
    shutil.copytree(EXAMPLE, d)
    cfg = d / "sync.yml"
    cfg.write_text(cfg.read_text().replace("store: ../../demo/graph.duckdb", "store: graph.duckdb"))
    return d


@pytest.fixture
def lake(tmp_path):
    return copy_lake(tmp_path)


def records(path: Path) -> list[dict]:
    out = []
    for line in path.read_text().splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass  # a line still being written
    return out


def wait_for(pred, timeout: float = 30.0, step: float = 0.05):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None
