"""The examples of docs/cli.md run, and exit with the codes of its table.

Every fenced block marked ``console`` on the page is run: its ``$ ``
lines are commands (a line ending in ``\\`` goes on, a ``<<'EOF'``
here-document takes the lines up to ``EOF``), the other lines are what
they print. All blocks run in page order in one scratch folder with the
binary under test first on PATH, each block as one bash script (so
``$ Q=...`` holds for the block), with pipefail. A command must exit with
the code of its ``# exit: N`` comment, 0 without one, and N must be a row
of the "Exit codes" table. When it fails, the first line the page shows
under it (if it starts with ``knut`` or ``ERROR``) must be the first line
it prints on stderr (else stdout), so the messages on the page are real.

Blocks not marked ``console`` are not run: usage synopses, the ten-million-
row memory measurement, and the FalkorDB examples (they need a server with
a `social` graph; test_query.py and test_graph_falkor_sink.py run those).
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "cli.md"
EXIT = re.compile(r"#\s*exit:\s*(\d+)\s*$")


def blocks(text: str) -> list[list[tuple[str, int, list[str]]]]:
    """Each console block: (command, expected exit, the lines shown after it)."""
    out = []
    for body in re.findall(r"^```console\n(.*?)^```$", text, re.S | re.M):
        cmds: list[tuple[str, int, list[str]]] = []
        lines = body.splitlines()
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            if not line.startswith("$ "):
                if cmds:
                    cmds[-1][2].append(line)
                continue
            cmd = line[2:]
            while cmd.endswith("\\") and i < len(lines):
                cmd += "\n" + lines[i]
                i += 1
            if "<<'EOF'" in cmd:
                while i < len(lines):
                    cmd += "\n" + lines[i]
                    i += 1
                    if lines[i - 1] == "EOF":
                        break
            m = EXIT.search(cmd.splitlines()[0])
            cmds.append((cmd, int(m.group(1)) if m else 0, []))
        out.append(cmds)
    return out


def table_codes(text: str) -> set[int]:
    section = text.split("\n## Exit codes\n", 1)[1].split("\n## ", 1)[0]
    return {int(c) for c in re.findall(r"^\| (\d) \|", section, re.M)}


def script(cmds, work: Path) -> str:
    """One bash script running each command with its outputs and code saved."""
    parts = ["set -o pipefail"]
    for n, (cmd, _, _) in enumerate(cmds):
        parts.append(f"{{ {cmd}\n}} >{work}/.out.{n} 2>{work}/.err.{n}; echo $? >{work}/.rc.{n}")
    return "\n".join(parts) + "\n"


@pytest.fixture(scope="module")
def scratch(knut, tmp_path_factory):
    """The folder the page's examples ran in: the data the page reads but
    does not make (people.parquet is made further down the page than it is
    first read; data/ holds two halves of it)."""
    work = tmp_path_factory.mktemp("cli-docs")
    (work / "data").mkdir()
    (work / "people.csv").write_text("id,name,born\n1,Ada,1815-12-10\n2,Grace,1906-12-09\n")
    setup = [
        "COPY (SELECT i::INTEGER AS id, 'person ' || i AS name, DATE '2020-01-01' + i::INTEGER "
        "AS joined FROM range(1, 1001) t(i)) TO 'people.parquet' (FORMAT parquet)",
        "COPY (SELECT * FROM 'people.parquet' WHERE id <= 500) TO 'data/a.parquet' "
        "(FORMAT parquet)",
        "COPY (SELECT * FROM 'people.parquet' WHERE id > 500) TO 'data/b.parquet' "
        "(FORMAT parquet)",
    ]
    for sql in setup:
        subprocess.run([str(knut), "query", sql], cwd=work, check=True, capture_output=True)
    return work


def test_page_has_examples_and_a_table():
    text = PAGE.read_text()
    assert table_codes(text) == {0, 1, 2}
    cmds = [c for b in blocks(text) for c in b]
    assert len(cmds) > 40
    # every row of the table has an example
    assert {code for _, code, _ in cmds} == {0, 1, 2}


def test_examples_exit_as_the_table_says(knut, scratch):
    text = PAGE.read_text()
    codes = table_codes(text)
    env = dict(os.environ)
    venv_bin = REPO / ".venv" / "bin"  # `python` with pyarrow, for the Arrow example
    env["PATH"] = f"{knut.parent}{os.pathsep}{venv_bin}{os.pathsep}{env.get('PATH', '')}"
    for var in ("KNUT_LOG", "KNUT_LOG_FORMAT", "KNUT_FALKORDB_URL", "KNUT_GRAPH"):
        env.pop(var, None)
    failures = []
    for cmds in blocks(text):
        p = subprocess.run(["bash", "-c", script(cmds, scratch)], cwd=scratch, env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, p.stderr
        for n, (cmd, want, shown) in enumerate(cmds):
            assert want in codes, (cmd, want)
            rc = int((scratch / f".rc.{n}").read_text())
            out = (scratch / f".out.{n}").read_text(errors="replace")
            err = (scratch / f".err.{n}").read_text(errors="replace")
            if rc != want:
                failures.append(f"{cmd!r}: exit {rc}, the page says {want}; stderr: {err}")
                continue
            if rc != 0 and shown and re.match(r"^(knut|ERROR)", shown[0]):
                first = (err or out).splitlines()[0] if (err or out) else ""
                if first != shown[0]:
                    failures.append(f"{cmd!r}: prints\n  {first}\nthe page shows\n  {shown[0]}")
    assert not failures, "\n".join(failures)


# A bad line DuckDB's sniffer sees, and one past its sample (found while
# the rows are read, not when the file is opened).
BAD_CSV = {
    "early": (b"id,name\n1,Ada\n2,Bob\n3,B\xff\xfeb\n", 4),
    "late": (b"id,name\n" + b"".join(b"%d,n%d\n" % (i, i) for i in range(1, 40001))
             + b"40001,B\xff\xfeb\n", 40002),
}


@pytest.mark.parametrize("case", sorted(BAD_CSV))
def test_the_same_bad_csv_reads_the_same_in_sync_and_gar_import(run_knut, tmp_path, case):
    """One bad file, two commands that read it: the same reason, naming the
    line, without knut's or DuckDB's internal prefixes."""
    data, line_no = BAD_CSV[case]
    csv = tmp_path / "people.csv"
    csv.write_bytes(data)
    (tmp_path / "sync.yml").write_text(
        "store: g.duckdb\ntables:\n  people:\n    path: people.csv\n    format: csv\n"
        "    mode: incremental\n    vertices: [{labels: [Person], keys: [id]}]\n")
    (tmp_path / "import.yml").write_text(
        "graph: g\noutput: out\nvertices:\n  - {type: person, table: people.csv, key: id}\n")
    r = run_knut("sync", "--once", "--config", tmp_path / "sync.yml",
                 env={"KNUT_LOG": "off"})
    assert r.returncode == 1, r.stderr
    st = run_knut("sync", "status", "--config", tmp_path / "sync.yml")
    assert st.returncode == 1, st.stderr  # a failed file
    line = next((l for l in st.stdout.splitlines() if " failed " in l and f"{csv}: " in l),
                st.stdout + st.stderr)
    assert f"{csv}: " in line, line
    sync_reason = line.split(f"{csv}: ", 1)[1]
    g = run_knut("gar", "import", "--config", tmp_path / "import.yml", "-q")
    assert g.returncode == 1
    assert g.stderr.count("\n") == 1, g.stderr
    assert g.stderr.startswith(f"knut gar import: "), g.stderr
    assert f"reading {csv}: " in g.stderr, g.stderr
    gar_reason = g.stderr.split(f"reading {csv}: ", 1)[1].rstrip("\n")
    assert sync_reason == gar_reason
    assert gar_reason.startswith(f"line {line_no}: ") and "utf-8" in gar_reason
    for leak in ("executing", "preparing", "Invalid Input Error", "Original Line",
                 "Possible Solution", "file = ", "LINE 1", "B\ufffd"):
        assert leak not in sync_reason and leak not in g.stderr, leak
