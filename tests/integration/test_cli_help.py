"""Help and usage errors read the same in every knut command (docs/cli.md).

The commands are found the way a user finds them: `knut help` lists them,
a group's `--help` lists its sub-commands, and a command's usage lines name
the forms it parses itself (`knut sync status`). Each one's options come
from its `Options:` section, which src/cli/args.c writes from the command's
option table; the union of those sections is checked against the tables in
src/cli/*.[ch], so no table is left out of every help.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# One line: what is wrong, then where the help is.
ONE_LINE = re.compile(r"^knut( [a-z]+)*: [^\n]+; see 'knut( [a-z]+)* --help'\n$")


def commands(run_knut) -> list[str]:
    """Every command, group sub-command and form, as 'gar cat'."""
    out = run_knut("help").stdout
    names = re.findall(r"^  ([a-z]+) ", out.split("Commands:\n", 1)[1], re.M)
    found = []
    for name in names:
        text = run_knut(name, "--help").stdout
        if text.startswith(f"usage: knut {name} COMMAND"):  # a group
            subs = re.findall(r"^  ([a-z]+) ", text.split("Commands:\n", 1)[1], re.M)
            found += [f"{name} {s}" for s in subs]
            continue
        found.append(name)
        forms = re.findall(rf"^ +(?:usage: )?knut {name} ([a-z]+) ", usage(text), re.M)
        found += [f"{name} {f}" for f in dict.fromkeys(forms)]
    return found


def usage(text: str) -> str:
    """The usage lines: the help up to its first blank line."""
    return text.split("\n\n", 1)[0]


def options(text: str) -> list[str]:
    """The long options of the Options: section, --help left out."""
    if "\nOptions:\n" not in text:
        return []
    section = text.split("\nOptions:\n", 1)[1].split("\n\n", 1)[0]
    return [o for o in re.findall(r"^  (?:-\w, )?--([a-z0-9-]+)", section, re.M)
            if o != "help"]


@pytest.fixture(scope="module")
def all_commands(knut):
    import subprocess

    def run(*args):
        return subprocess.run([str(knut), *args], capture_output=True, text=True, timeout=60)
    found = commands(run)
    # the ones the issue names are all there
    for name in ("sync", "sync status", "sync retry", "gar cat", "gar info", "gar import",
                 "gar validate", "graph query", "graph export", "load", "query",
                 "pipeline init", "pipeline validate", "pipeline show", "pipeline run",
                 "serve", "help", "version"):
        assert name in found, (name, found)
    return found


def test_every_command_prints_its_own_help(run_knut, all_commands):
    for name in all_commands:
        words = name.split()
        for flag in ("--help", "-h"):
            p = run_knut(*words, flag)
            assert p.returncode == 0 and p.stderr == "", (name, flag, p.stderr)
            assert p.stdout.startswith(f"usage: knut {name} ") or \
                p.stdout.startswith(f"usage: knut {name}\n"), (name, p.stdout[:200])
        # `knut help X Y` is the same text
        p = run_knut("help", *words)
        assert p.returncode == 0 and p.stdout == run_knut(*words, "--help").stdout, name


def test_help_routes(run_knut):
    cat = run_knut("gar", "cat", "--help").stdout
    assert run_knut("help", "gar", "cat").stdout == cat
    assert run_knut("gar", "help", "cat").stdout == cat
    status = run_knut("sync", "status", "--help").stdout
    assert status.startswith("usage: knut sync status ")
    assert status != run_knut("sync", "--help").stdout
    for bad in (("help", "nosuch"), ("help", "sync", "nosuch"), ("help", "query", "x"),
                ("gar", "help", "nosuch"), ("nosuch",), ("gar", "nosuch")):
        p = run_knut(*bad)
        assert p.returncode == 2 and p.stdout == "", bad
        assert p.stderr.count("\n") == 1 and "see 'knut" in p.stderr, (bad, p.stderr)


def test_usage_lines_list_every_option(run_knut, all_commands):
    for name in all_commands:
        text = run_knut(*name.split(), "--help").stdout
        lines = usage(text)
        for opt in options(text):
            assert re.search(rf"--{opt}(?![a-z0-9-])", lines), (name, opt, lines)


def test_option_tables_are_all_in_some_help(run_knut, all_commands):
    """The options named in src/cli's tables are exactly the ones the help
    sections show (a refused option, KNUT_CLI_OPT_REFUSE, is never shown)."""
    in_code = set()
    for src in (REPO / "src" / "cli").glob("*.[ch]"):  # shared tables live in headers
        in_code |= set(re.findall(r"KNUT_CLI_OPT_(?!REFUSE)[A-Z]+\(\s*\"([a-z0-9-]+)\"",
                                  src.read_text()))
    in_help = set()
    for name in all_commands:
        in_help |= set(options(run_knut(*name.split(), "--help").stdout))
    assert in_code and in_code == in_help, (in_code ^ in_help)


def test_forms_take_only_their_own_options(run_knut):
    status = run_knut("sync", "status", "--help").stdout
    assert "--once" not in status and "--json" in status
    assert "--json" not in options(run_knut("sync", "--help").stdout)
    p = run_knut("sync", "status", "--config", "x.yml", "--once")
    assert p.returncode == 2
    assert p.stderr == ("knut sync status: --once is not an option of knut sync status; "
                        "see 'knut sync status --help'\n")
    p = run_knut("sync", "--config", "x.yml", "--skip")
    assert p.returncode == 2 and "--skip is not an option of knut sync;" in p.stderr


# (command words, what the one line names as missing)
MISSING = [
    ((), "COMMAND"),
    (("sync",), "--config FILE"),
    (("sync", "status"), "--config FILE"),
    (("sync", "retry"), "--config FILE"),
    (("query",), "SQL"),
    (("gar",), "COMMAND"),
    (("gar", "cat"), "PATH"),
    (("gar", "cat", "graph/"), "TYPE"),
    (("gar", "info"), "PATH"),
    (("gar", "validate"), "PATH"),
    (("gar", "import"), "--config FILE"),
    (("graph",), "COMMAND"),
    (("graph", "query"), "CYPHER"),
    (("graph", "query", "RETURN 1"), "--falkordb URL"),
    (("graph", "query", "--falkordb", "redis://127.0.0.1:1", "RETURN 1"), "--graph NAME"),
    (("graph", "export"), "--db FILE"),
    (("graph", "export", "--db", "g.duckdb"), "--out DIR"),
    (("load",), "--graphar PATH or --mapping FILE"),
    (("load", "--graphar", "g/"), "--db FILE or --falkordb URL"),
    (("load", "--graphar", "g/", "--falkordb", "redis://127.0.0.1:1"), "--graph NAME"),
    (("pipeline",), "COMMAND"),
    (("pipeline", "init"), "DIR"),
    (("pipeline", "validate"), "SPEC"),
    (("pipeline", "show"), "SPEC"),
    (("pipeline", "run"), "SPEC"),
    (("serve",), "--db FILE or --memory"),
]


@pytest.mark.parametrize("words,what", MISSING, ids=[" ".join(w) or "knut" for w, _ in MISSING])
def test_missing_argument_is_one_line(run_knut, words, what):
    env = {"KNUT_FALKORDB_URL": "", "KNUT_FALKORDB": "", "KNUT_GRAPH": ""}
    p = run_knut(*words, env=env)
    assert p.returncode == 2 and p.stdout == "", (words, p.returncode, p.stdout)
    cmd = " ".join(w for w in words if not w.startswith("-") and "/" not in w
                   and " " not in w and not w.endswith(".duckdb") and not w.startswith("redis"))
    who = f"knut {cmd}" if cmd else "knut"
    assert p.stderr.startswith(f"{who}: missing {what}"), (words, p.stderr)
    assert p.stderr.count("\n") == 1, (words, p.stderr)
    assert p.stderr.endswith("; see 'knut help'\n" if not cmd else f"; see '{who} --help'\n")


def test_unknown_option_is_one_line_everywhere(run_knut, all_commands):
    for name in all_commands:
        p = run_knut(*name.split(), "--no-such-option")
        assert p.returncode == 2 and p.stdout == "", name
        assert ONE_LINE.match(p.stderr), (name, p.stderr)
        assert p.stderr.startswith(f"knut {name}: unknown option --no-such-option"), p.stderr
