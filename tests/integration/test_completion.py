"""`knut completion bash|zsh` and `knut man` (docs/install.md) know exactly
what `--help` prints.

The commands are found as in test_cli_help.py, from the help texts alone;
then for every command, in a real bash, the completion script is sourced
and the completion function called with COMP_WORDS/COMP_CWORD set as bash
sets them (`knut gar info --`): COMPREPLY must hold every option of the
command's Options section, and its man page (`knut man gar info`) must
have an entry for each. A few cases check sub-commands, choices, files
and `--opt=value`; zsh, when installed, runs the zsh script with
compadd/_files stubbed (completion builtins only work inside zle).
"""
from __future__ import annotations

import shutil
import subprocess

import pytest

from test_cli_help import commands, options


def run(knut, *args, **kw):
    return subprocess.run([str(knut), *args], capture_output=True, text=True, timeout=60, **kw)


@pytest.fixture(scope="module")
def all_commands(knut):
    return commands(lambda *a: run(knut, *a))


@pytest.fixture(scope="module")
def bash_script(knut, tmp_path_factory):
    p = run(knut, "completion", "bash")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    path = tmp_path_factory.mktemp("completion") / "knut.bash"
    path.write_text(p.stdout)
    return path


def bash_complete(script, cases, cwd):
    """COMPREPLY for each case (the words, the last one being completed),
    all in one bash that sourced the script."""
    lines = [f"source {script}"]
    for words in cases:
        quoted = " ".join("'" + w.replace("'", "'\\''") + "'" for w in words)
        lines.append(f"COMP_WORDS=({quoted}); COMP_CWORD={len(words) - 1}; "
                     "COMPREPLY=(); _knut; printf '%s\\n' \"${COMPREPLY[*]}\"")
    p = subprocess.run(["bash", "--norc", "--noprofile", "-c", "\n".join(lines)],
                       capture_output=True, text=True, timeout=60, cwd=cwd)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    out = p.stdout.split("\n")[:len(cases)]
    return [set(line.split()) for line in out]


def test_every_option_has_a_completion_and_a_man_entry(knut, all_commands, bash_script,
                                                       tmp_path):
    cases = [["knut", *name.split(), "--"] for name in all_commands]
    replies = bash_complete(bash_script, cases, tmp_path)
    checked = 0
    for name, reply in zip(all_commands, replies):
        helped = options(run(knut, *name.split(), "--help").stdout)
        page = run(knut, "man", *name.split())
        assert page.returncode == 0 and page.stderr == "", (name, page.stderr)
        for opt in helped:
            assert f"--{opt}" in reply, (name, opt, sorted(reply))
            # roff escapes every dash: \-\-name, bold, as the entry's tag
            assert "\\fB\\-\\-" + opt.replace("-", "\\-") + "\\fR" in page.stdout, (name, opt)
            checked += 1
        # and nothing --help does not print (--help itself aside)
        assert {r for r in reply if r.startswith("--")} - {"--help"} == \
            {f"--{o}" for o in helped}, name
    assert checked > 150, checked


def test_every_command_has_a_page(knut, all_commands, tmp_path):
    p = run(knut, "man", "--output-dir", str(tmp_path))
    assert p.returncode == 0, p.stderr
    pages = {f.name for f in tmp_path.iterdir()}
    want = {"knut.1"} | {"knut-" + n.replace(" ", "-") + ".1" for n in all_commands}
    assert want <= pages, want - pages
    # man renders each one without a warning
    if shutil.which("man"):
        for page in ("knut.1", "knut-sync.1", "knut-gar-info.1", "knut-sync-status.1"):
            r = subprocess.run(["man", "--warnings", "-l", str(tmp_path / page)],
                               capture_output=True, text=True, timeout=60,
                               env={"MANWIDTH": "80", "PATH": "/usr/bin:/bin",
                                    "MAN_KEEP_FORMATTING": "0"})
            assert r.returncode == 0 and r.stderr == "", (page, r.stderr)
            assert "knut" in r.stdout


def test_man_errors(knut):
    p = run(knut, "man", "nosuch")
    assert p.returncode == 2 and p.stderr.startswith("knut man: no page for 'nosuch'")
    p = run(knut, "completion", "fish")
    assert p.returncode == 2
    assert p.stderr == ("knut completion: SHELL must be one of bash, zsh, not 'fish'; "
                        "see 'knut completion --help'\n")


CASES = [
    (["knut", ""], {"sync", "gar", "iceberg", "completion", "man", "help"}),
    (["knut", "g"], {"gar", "graph"}),
    (["knut", "gar", ""], {"info", "cat", "validate", "import"}),
    (["knut", "iceberg", "c"], {"cat", "changes"}),
    (["knut", "sync", ""], {"check", "status", "retry"}),
    (["knut", "sync", "status", "--j"], {"--json"}),
    (["knut", "sync", "--on"], {"--once"}),
    (["knut", "gar", "info", "--format", ""], {"text", "json"}),
    (["knut", "gar", "info", "-f", "j"], {"json"}),
    (["knut", "gar", "info", "--format", "=", "j"], {"json"}),  # --format=j in bash
    (["knut", "completion", ""], {"bash", "zsh"}),
    (["knut", "help", "sync", ""], {"check", "status", "retry"}),
    (["knut", "man", "g"], {"gar", "graph"}),
    (["knut", "sync", "--config", ""], {"a.yml", "data"}),
    (["knut", "iceberg", "cat", "a"], {"a.yml"}),
    (["knut", "pipeline", "init", ""], {"data"}),        # DIR: folders only
    (["knut", "sync", "--interval", ""], set()),          # SEC: nothing to offer
    (["knut", "query", "--db", "x", ""], set()),          # SQL
]


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "a.yml").write_text("")
    (tmp_path / "data").mkdir()
    return tmp_path


def test_bash_cases(bash_script, folder):
    replies = bash_complete(bash_script, [c for c, _ in CASES], folder)
    for (words, want), got in zip(CASES, replies):
        if not want:
            assert got == set(), (words, got)
        else:
            assert want <= got, (words, want, got)
            assert all(g.startswith(words[-1]) for g in got), (words, got)


@pytest.mark.skipif(not shutil.which("zsh"), reason="zsh is not installed")
def test_zsh_cases(knut, folder):
    script = folder / "_knut"
    script.write_text(run(knut, "completion", "zsh").stdout)
    # compadd and _files only work inside zle: stubs record what they get
    lines = ["compdef() { :; }", "compset() { :; }",
             "compadd() { [[ $1 == -- ]] && shift; reply+=(\"$@\"); }",
             "_files() { reply+=(\"<files$*>\"); }", f"source {script}"]
    zcases = [(["knut", ""], {"sync", "gar"}),
              (["knut", "gar", "info", "--format", ""], {"text", "json"}),
              (["knut", "gar", "info", "--format=j"], {"text", "json"}),
              (["knut", "sync", "status", "--"], {"--config", "--json"}),
              (["knut", "sync", "--config", ""], {"<files>"}),
              (["knut", "pipeline", "init", ""], {"<files-/>"}),
              (["knut", "help", "gar", ""], {"info", "cat"})]
    for words, _ in zcases:
        quoted = " ".join("'" + w + "'" for w in words)
        lines.append(f"reply=(); words=({quoted}); CURRENT={len(words)}; _knut; "
                     "print -r -- \"${reply[*]}\"")
    p = subprocess.run(["zsh", "-f", "-c", "\n".join(lines)], capture_output=True, text=True,
                       timeout=60, cwd=folder)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    for (words, want), line in zip(zcases, p.stdout.split("\n")):
        assert want <= set(line.split()), (words, want, line)
