"""The C examples of the documentation keep working.

Every ``docs/examples/NAME.c`` is compiled against the built static library
(the build folder of ``$KNUT_BIN``, else ``<repo>/build``) with warnings as
errors, run, and its stdout compared with ``docs/examples/NAME.out``. Each
example must be shown on some ``docs/*.md`` page, and that page must carry
the example's output verbatim, so the output quoted in the docs is the
output the code really prints.

To refresh an expected output after an intended change, run the example by
hand and overwrite its ``.out`` file (and the copy in the page)::

    cc -std=c17 -Iinclude docs/examples/NAME.c build/libknut.a \\
       -Lthird_party/duckdb/lib -lduckdb -ljansson -lyaml -lm -lpthread \\
       -Wl,-rpath,$PWD/third_party/duckdb/lib -o /tmp/NAME && /tmp/NAME
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "docs" / "examples"
DOCS = REPO / "docs"
SOURCES = sorted(EXAMPLES.glob("*.c"))


def build_dir() -> Path:
    """The build folder holding the knut binary under test."""
    knut_bin = os.environ.get("KNUT_BIN")
    return Path(knut_bin).resolve().parent if knut_bin else REPO / "build"


def cmake_cache(build: Path) -> dict[str, str]:
    """NAME -> value from the build's CMakeCache.txt (empty if there is none)."""
    values: dict[str, str] = {}
    cache = build / "CMakeCache.txt"
    if not cache.is_file():
        return values
    for line in cache.read_text(errors="replace").splitlines():
        m = re.match(r"^([A-Za-z0-9_]+):[A-Z]+=(.*)$", line)
        if m:
            values[m.group(1)] = m.group(2)
    return values


@pytest.fixture(scope="module")
def compile_cmd():
    """compile_cmd(src, exe) -> the argv that builds one example."""
    build = build_dir()
    lib = build / "libknut.a"
    if not lib.is_file():
        pytest.fail(f"{lib} not found: build knut first (ninja -C {build}) or set KNUT_BIN",
                    pytrace=False)
    cache = cmake_cache(build)
    if cache.get("KNUT_FUZZ", "OFF").upper() in ("ON", "TRUE", "1"):
        pytest.skip(f"{build} is a libFuzzer build")
    duck_lib = cache.get("DUCKDB_LIBRARY")
    duck_dir = Path(duck_lib).parent if duck_lib else REPO / "third_party" / "duckdb" / "lib"
    cc = os.environ.get("CC") or cache.get("CMAKE_C_COMPILER") or "cc"
    if not shutil.which(cc):
        pytest.fail(f"C compiler {cc!r} not found", pytrace=False)
    flags = ["-std=c17", "-Wall", "-Wextra", "-Wpedantic", "-Werror"]
    if cache.get("KNUT_SANITIZE", "OFF").upper() in ("ON", "TRUE", "1"):
        flags += ["-fsanitize=address,undefined", "-fno-omit-frame-pointer"]

    def cmd(src: Path, exe: Path) -> list[str]:
        return [cc, *flags, f"-I{REPO / 'include'}", str(src), str(lib), f"-L{duck_dir}",
                "-lduckdb", "-ljansson", "-lyaml", "-lm", "-lpthread",
                f"-Wl,-rpath,{duck_dir}", "-o", str(exe)]

    return cmd


def test_there_are_examples():
    assert SOURCES, f"no examples in {EXAMPLES}"


@pytest.mark.parametrize("src", SOURCES, ids=[s.stem for s in SOURCES])
def test_example_compiles_and_prints_its_output(src, compile_cmd, tmp_path):
    expected_path = src.with_suffix(".out")
    assert expected_path.is_file(), f"{src.name} has no expected output {expected_path.name}"
    exe = tmp_path / src.stem
    cmd = compile_cmd(src, exe)
    built = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, (
        f"compiling {src.name} failed:\n{shlex.join(cmd)}\n{built.stdout}{built.stderr}")
    # Run where the example cannot see or touch the repository's files.
    ran = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert ran.returncode == 0, (
        f"{src.name} exited with {ran.returncode}\nstdout:\n{ran.stdout}\nstderr:\n{ran.stderr}")
    expected = expected_path.read_text()
    if ran.stdout != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), ran.stdout.splitlines(True),
                                            f"{expected_path.name} (expected)",
                                            f"{src.name} (actual)"))
        pytest.fail(f"{src.name} printed something else than {expected_path.name}:\n{diff}",
                    pytrace=False)


@pytest.mark.parametrize("src", SOURCES, ids=[s.stem for s in SOURCES])
def test_example_is_documented_with_its_output(src):
    text = src.read_text()
    assert text.startswith("/*\n * " + src.stem + ": "), (
        f"{src.name} should open with a header comment '/*\\n * {src.stem}: ...'")
    ref = f"examples/{src.name}"
    pages = [p for p in sorted(DOCS.glob("*.md")) if ref in p.read_text()]
    assert pages, f"no page in docs/ shows {ref}"
    expected = src.with_suffix(".out").read_text().strip("\n")
    assert any(expected in p.read_text() for p in pages), (
        f"{', '.join(p.name for p in pages)} should quote the output of {src.name} "
        f"exactly as in {src.with_suffix('.out').name}")
