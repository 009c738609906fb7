"""`knut sync` secrets and key namespace (docs/operations.md).

Real peers only: a Valkey and a FalkorDB that both require a password
(`requirepass`). The passwords come from files (--falkordb-password-file,
--ledger-password-file) or the environment (KNUT_FALKORDB_URL,
KNUT_LEDGER_PASSWORD), never from the command line, and never show in the
log, the errors, the metrics (live and file) or `knut sync status`. A URL
with a password on the command line still works but is warned about; a
password given twice is refused. The shared ledger's keys are named after
the config's `name:`: two configs both called sync.yml with different
names share nothing, the same name from two folders shares the ledger,
and a shared ledger without `name:` is a config error naming file:line.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from peers import FalkorDB, Valkey

VK_PW = "vk-s3cret-Xy9"
FK_PW = "fk-s3cret-Qz7"
GRAPH = "secrets"


def requirepass(base, name: str, password: str):
    """A subclass of the peer class base whose server needs password."""

    class Peer(base):
        def server_args(self):
            return super().server_args() + ["--requirepass", password]

        def client(self, **kw):
            kw.setdefault("password", password)
            return super().client(**kw)

    Peer.name = name
    return Peer


SecretValkey = requirepass(Valkey, "valkey_pw", VK_PW)
SecretFalkorDB = requirepass(FalkorDB, "falkordb_pw", FK_PW)


def make_lake(root: Path, name: str | None, rows: int = 5) -> Path:
    (root / "t0").mkdir(parents=True, exist_ok=True)
    (root / "t0" / "f000.csv").write_text(
        "id,name\n" + "".join(f"{i},n{i}\n" for i in range(rows)))
    head = f"name: {name}\n" if name else ""
    cfg = root / "sync.yml"
    cfg.write_text(head + "tables:\n  t0:\n    path: t0\n    vertices:\n"
                   "      - labels: [T0]\n        keys: [id]\n")
    return cfg


def no_secret(*texts):
    for t in texts:
        assert VK_PW not in t and FK_PW not in t, t


@pytest.fixture
def peers(start_peer):
    return start_peer(SecretValkey), start_peer(SecretFalkorDB)


def addr(p) -> str:
    return f"{p.host}:{p.port}"


def test_passwords_from_files_never_shown(run_knut, knut, peers, tmp_path):
    vk, fk = peers
    cfg = make_lake(tmp_path / "lake", "secret-lake")
    (tmp_path / "vk.pw").write_text(VK_PW + "\n")
    (tmp_path / "fk.pw").write_text(FK_PW + "\r\n")
    common = ["--config", cfg, "--falkordb", f"redis://{addr(fk)}",
              "--falkordb-password-file", tmp_path / "fk.pw",
              "--ledger-url", f"redis://{addr(vk)}", "--ledger-password-file", tmp_path / "vk.pw"]
    r = run_knut("sync", "--once", "--graph", GRAPH, "--metrics-file", tmp_path / "m.prom",
                 *common, env={"KNUT_LOG_FORMAT": "json", "KNUT_LOG": "debug"})
    assert r.returncode == 0, r.stderr
    assert "holds a password" not in r.stderr  # nothing on the command line
    with vk.client() as c:
        assert c.hlen("knut:sync:secret-lake:ledger") == 1
    assert fk.query(GRAPH, "MATCH (n:T0) RETURN count(n)")[1][0][0] == 5
    st = run_knut("sync", "status", *common)
    sj = run_knut("sync", "status", "--json", *common)
    assert st.returncode == 0 and sj.returncode == 0, st.stderr + sj.stderr
    assert "done" in st.stdout and json.loads(sj.stdout)["files"][0]["state"] == "done"
    no_secret(r.stdout, r.stderr, st.stdout, st.stderr, sj.stdout, sj.stderr,
              (tmp_path / "m.prom").read_text())

    # live metrics, and the process list, of a looping instance
    log = tmp_path / "loop.log"
    with open(log, "w") as f:
        p = subprocess.Popen([str(knut), "sync", "--graph", GRAPH, "--interval", "0.2",
                              "--metrics-addr", "127.0.0.1:0", *map(str, common)],
                             stderr=f, stdout=subprocess.DEVNULL,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json"))
    try:
        port = None
        end = time.monotonic() + 30
        while port is None and time.monotonic() < end:
            for line in log.read_text().splitlines():
                if '"metrics server listening"' in line:
                    port = json.loads(line)["port"]
            time.sleep(0.1)
        assert port, log.read_text()
        body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10).read()
        no_secret(body.decode(), Path(f"/proc/{p.pid}/cmdline").read_bytes().decode(
            errors="replace"))
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
    assert p.returncode == 0
    no_secret(log.read_text())


def test_wrong_password_errors_name_peer_only(run_knut, peers, tmp_path):
    vk, fk = peers
    cfg = make_lake(tmp_path / "lake", "wrong")
    (tmp_path / "bad.pw").write_text("not-the-" + VK_PW + "\n")
    (tmp_path / "fk.pw").write_text(FK_PW + "\n")
    r = run_knut("sync", "--once", "--config", cfg, "--falkordb", f"redis://{addr(fk)}",
                 "--falkordb-password-file", tmp_path / "fk.pw",
                 "--ledger-url", f"redis://{addr(vk)}", "--ledger-password-file",
                 tmp_path / "bad.pw")
    assert r.returncode == 1
    assert addr(vk) in r.stderr and "authentication failed" in r.stderr
    no_secret(r.stderr)
    # FalkorDB without its password: its error names host:port, not a secret
    r = run_knut("sync", "--once", "--config", cfg, "--falkordb", f"redis://{addr(fk)}",
                 "--ledger-url", f"redis://{addr(vk)}", "--ledger-password-file",
                 tmp_path / "fk.pw")
    assert r.returncode == 1
    no_secret(r.stderr)


def test_environment_urls_and_passwords(run_knut, peers, tmp_path):
    vk, fk = peers
    cfg = make_lake(tmp_path / "lake", "env-lake")
    env = {"KNUT_FALKORDB_URL": f"redis://:{FK_PW}@{addr(fk)}",  # the environment: not in ps
           "KNUT_LEDGER_URL": f"redis://{addr(vk)}", "KNUT_LEDGER_PASSWORD": VK_PW}
    r = run_knut("sync", "--once", "--config", cfg, "--graph", GRAPH, env=env)
    assert r.returncode == 0, r.stderr
    assert "holds a password" not in r.stderr
    no_secret(r.stderr, r.stdout)
    with vk.client() as c:
        assert c.hlen("knut:sync:env-lake:ledger") == 1
    # --store wins over KNUT_FALKORDB_URL: the embedded store, which refuses
    # the shared ledger KNUT_LEDGER_URL asks for
    r = run_knut("sync", "--once", "--config", cfg, "--store", tmp_path / "g.duckdb", env=env)
    assert r.returncode == 2 and "single-process" in r.stderr


def test_password_on_command_line_warned_and_twice_refused(run_knut, peers, tmp_path):
    vk, fk = peers
    cfg = make_lake(tmp_path / "lake", "cli-lake")
    (tmp_path / "vk.pw").write_text(VK_PW + "\n")
    r = run_knut("sync", "--once", "--config", cfg, "--graph", GRAPH,
                 "--falkordb", f"redis://:{FK_PW}@{addr(fk)}",
                 "--ledger-url", f"redis://{addr(vk)}", "--ledger-password-file", tmp_path / "vk.pw",
                 env={"KNUT_LOG_FORMAT": "json"})
    assert r.returncode == 0, r.stderr
    warn = [json.loads(l) for l in r.stderr.splitlines()
            if l.startswith("{") and "holds a password" in l]
    assert len(warn) == 1 and warn[0]["level"] == "warn" and warn[0]["option"] == "--falkordb"
    no_secret(r.stderr)
    r = run_knut("sync", "--once", "--config", cfg, "--falkordb", f"redis://{addr(fk)}",
                 "--ledger-url", f"redis://:{VK_PW}@{addr(vk)}",
                 "--ledger-password-file", tmp_path / "vk.pw")
    assert r.returncode == 2 and "both in the URL and in --ledger-password-file" in r.stderr
    no_secret(r.stderr)


@pytest.mark.parametrize("content,why", [(None, "cannot open"), ("", "empty first line"),
                                         ("\n", "empty first line"),
                                         (VK_PW + "\nmore\n", "must hold one line"),
                                         ("x" * 5000, "over the 4096-byte limit")])
def test_password_file_errors(run_knut, valkey, falkordb, tmp_path, content, why):
    cfg = make_lake(tmp_path / "lake", "x")
    pw = tmp_path / "pw"
    if content is not None:
        pw.write_text(content)
    r = run_knut("sync", "--once", "--config", cfg, "--falkordb", f"redis://{addr(falkordb)}",
                 "--falkordb-password-file", pw)
    assert r.returncode == 2, r.stderr
    assert "--falkordb-password-file" in r.stderr and str(pw) in r.stderr and why in r.stderr
    no_secret(r.stderr)
    r = run_knut("sync", "--once", "--config", cfg, "--ledger-password-file", pw)
    assert r.returncode == 2 and "needs --ledger-url" in r.stderr


def test_name_is_the_key_namespace(run_knut, valkey, falkordb, tmp_path):
    def sync(cfg, graph):
        r = run_knut("sync", "--once", "--config", cfg, "--graph", graph,
                     "--falkordb", f"redis://{addr(falkordb)}",
                     "--ledger-url", f"redis://{addr(valkey)}", env={"KNUT_LOG_FORMAT": "json"})
        assert r.returncode == 0, r.stderr
        return [json.loads(l) for l in r.stderr.splitlines() if l.startswith("{")]

    def files_synced(recs):
        return sum(x.get("files", 0) for x in recs if x.get("msg") == "table synced")

    # two unrelated deployments, both sync.yml: different names share nothing
    a = make_lake(tmp_path / "a", "sales")
    b = make_lake(tmp_path / "b", "hr")
    assert files_synced(sync(a, "ga")) == 1
    assert files_synced(sync(b, "gb")) == 1  # not taken as done by 'sales'
    with valkey.client() as c:
        assert c.hlen("knut:sync:sales:ledger") == 1 and c.hlen("knut:sync:hr:ledger") == 1
        assert c.keys("knut:sync:sync:*") == []  # the old basename keys are gone
    # one deployment seen from another folder (another machine's mount): shared
    c2 = tmp_path / "mount2"
    shutil.copytree(tmp_path / "a", c2)  # copy2: same sizes and mtimes
    assert files_synced(sync(c2 / "sync.yml", "ga")) == 0  # done by the other copy
    st = run_knut("sync", "status", "--json", "--config", c2 / "sync.yml",
                  "--ledger-url", f"redis://{addr(valkey)}")
    assert [f["state"] for f in json.loads(st.stdout)["files"]] == ["done"]

    # a shared ledger without name: is a config error naming file:line
    n = make_lake(tmp_path / "n", None)
    r = run_knut("sync", "--once", "--config", n, "--falkordb", f"redis://{addr(falkordb)}",
                 "--ledger-url", f"redis://{addr(valkey)}")
    assert r.returncode == 2
    assert f"{n}:1:1: a shared ledger (--ledger-url) needs 'name:'" in r.stderr
    assert "'name: sync'" in r.stderr
    r = run_knut("sync", "status", "--config", n, "--ledger-url", f"redis://{addr(valkey)}")
    assert r.returncode == 2 and "needs 'name:'" in r.stderr


def test_load_and_graph_query_passwords(run_knut, peers, tmp_path):
    """`knut load` and `knut graph query` take FalkorDB's password the way
    `knut sync` does: a file or the environment, never required on the
    command line, never shown; a password given twice is refused."""
    _, fk = peers
    cfg = make_lake(tmp_path / "lake", None, rows=4)
    pw = tmp_path / "fk.pw"
    pw.write_text(FK_PW + "\n")
    url = f"redis://{addr(fk)}"
    r = run_knut("load", "--mapping", cfg, "--falkordb", url, "--graph", "loaded",
                 "--falkordb-password-file", pw, "-q")
    assert r.returncode == 0, r.stderr
    no_secret(r.stderr, r.stdout)
    r = run_knut("graph", "query", "--falkordb", url, "--falkordb-password-file", pw,
                 "--graph", "loaded", "-f", "csv", "MATCH (n:T0) RETURN count(n) AS n")
    assert r.returncode == 0 and r.stdout.splitlines() == ["n", "4"], r.stderr
    env = {"KNUT_FALKORDB_URL": url, "KNUT_FALKORDB_PASSWORD": FK_PW}
    r = run_knut("graph", "query", "--graph", "loaded", "-f", "csv",
                 "MATCH (n:T0) RETURN count(n) AS n", env=env)
    assert r.returncode == 0 and r.stdout.splitlines() == ["n", "4"], r.stderr
    r = run_knut("load", "--mapping", cfg, "--graph", "loaded2", "-q", env=env)
    assert r.returncode == 0, r.stderr
    no_secret(r.stderr, r.stdout)
    # without it: the server's refusal, naming the peer, not a secret
    r = run_knut("graph", "query", "--falkordb", url, "--graph", "loaded", "RETURN 1")
    assert r.returncode == 1 and addr(fk) in r.stderr, r.stderr
    # twice: refused before anything is sent
    for cmd in (("load", "--mapping", cfg, "--graph", "x"), ("graph", "query", "--graph", "x")):
        r = run_knut(*cmd, "--falkordb", f"redis://:{FK_PW}@{addr(fk)}",
                     "--falkordb-password-file", pw, *(("RETURN 1",) if "query" in cmd else ()))
        assert r.returncode == 2 and "both in the URL and in --falkordb-password-file" \
            in r.stderr, r.stderr
        no_secret(r.stderr)
