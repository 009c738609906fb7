"""`knut sync --ledger-url`: several instances share one set of tables.

Real peers only: the shared ledger lives in a real Valkey (the `valkey`
fixture, or a persistent one started here), the graph in a real FalkorDB.
Two looping instances on one config sync every file exactly once (the
ledger hash, the graph counts and the per-table log records agree); an
instance killed with SIGKILL while it holds a table's lease hands the table
to the other once the lease expires; a Valkey that goes away mid-run makes
rounds fail with an error naming host:port, the loop backs off, and it
resumes when Valkey is back with its data; the embedded store refuses a
shared ledger; a password in the URL never shows.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from peers import Valkey

GRAPH = "shared"


def make_lake(root: Path, tables: int, files: int, rows: int, big: dict | None = None) -> Path:
    """CSV tables t0..t<n>, each file of `rows` vertices with ids unique per table."""
    root.mkdir(parents=True, exist_ok=True)
    lines = ["name: shared", "tables:"]  # name: the shared keys (knut:sync:shared:...)
    for t in range(tables):
        d = root / f"t{t}"
        d.mkdir(exist_ok=True)
        for f in range(files):
            add_file(root, t, f, (big or {}).get(t, rows))
        lines += [f"  t{t}:", f"    path: t{t}", "    vertices:",
                  f"      - labels: [L{t}]", "        keys: [id]"]
    cfg = root / "shared.yml"
    cfg.write_text("\n".join(lines) + "\n")
    return cfg


def add_file(root: Path, t: int, f: int, rows: int) -> None:
    body = "".join(f"{f * 1_000_000 + i},name-{t}-{f}-{i}\n" for i in range(rows))
    tmp = root / f"t{t}" / f".f{f:03d}.csv"
    tmp.write_text("id,name\n" + body)
    tmp.rename(root / f"t{t}" / f"f{f:03d}.csv")  # appears whole


def ledger(vk) -> dict:
    """The shared ledger: {(table, path relative to the config): entry}."""
    with vk.client() as c:
        raw = c.hgetall("knut:sync:shared:ledger")
    out = {}
    for field, value in raw.items():
        table, path = field.decode().split("\0", 1)
        e = json.loads(value)
        assert (e["table"], e["path"]) == (table, path)
        out[(table, path)] = e
    return out


def count(falkordb, label: str) -> int:
    return falkordb.query(GRAPH, f"MATCH (n:{label}) RETURN count(n)")[1][0][0]


def records(log: Path) -> list[dict]:
    out = []
    for line in log.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            out.append(json.loads(line))
    return out


def synced(log: Path) -> dict:
    """{table: files} summed over the instance's 'table synced' records."""
    out: dict = {}
    for r in records(log):
        if r.get("msg") == "table synced" and r.get("files"):
            out[r["table"]] = out.get(r["table"], 0) + r["files"]
    return out


def wait_for(pred, timeout=60.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return False


class Instances:
    """Looping `knut sync` processes; all stopped at teardown."""

    def __init__(self, knut, cfg, falkordb, tmp):
        self.knut, self.cfg, self.falkordb, self.tmp = Path(knut).resolve(), cfg, falkordb, tmp
        self.procs: list[subprocess.Popen] = []

    def start(self, name, ledger_url, lease="1.5", interval="0.2", extra=(), env=None,
              cwd=None):
        log = self.tmp / f"{name}.log"
        f = open(log, "a")
        cfg = self.cfg.name if cwd else str(self.cfg)
        args = [str(self.knut), "sync", "--config", cfg,
                "--falkordb", f"redis://{self.falkordb.host}:{self.falkordb.port}",
                "--graph", GRAPH, "--ledger-url", ledger_url, "--instance", name,
                "--lease", lease, "--interval", interval, "--max-backoff", "1", *extra]
        p = subprocess.Popen(args, stderr=f, stdout=subprocess.DEVNULL, cwd=cwd,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json", **(env or {})))
        f.close()
        self.procs.append(p)
        return p, log

    def stop_all(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


@pytest.fixture
def instances(knut, falkordb, tmp_path):
    made = []

    def make(cfg):
        i = Instances(knut, cfg, falkordb, tmp_path)
        made.append(i)
        return i

    yield make
    for i in made:
        i.stop_all()


def vk_url(vk) -> str:
    return f"redis://{vk.host}:{vk.port}"


def test_two_instances_sync_each_file_once(instances, valkey, falkordb, tmp_path):
    tables, files, rows = 4, 3, 20
    lake = tmp_path / "lake"
    cfg = make_lake(lake, tables, files, rows)
    inst = instances(cfg)
    pa, la = inst.start("a", vk_url(valkey))
    # b runs from the lake folder with a relative config: the stored paths
    # are relative to the config's folder, so both agree on every key
    pb, lb = inst.start("b", vk_url(valkey), cwd=lake)
    assert wait_for(lambda: len(ledger(valkey)) == tables * files), (la.read_text(), lb.read_text())
    # more drops while both run: each lands once too
    for t in range(tables):
        add_file(lake, t, files, rows)
    assert wait_for(lambda: len(ledger(valkey)) == tables * (files + 1))
    inst.stop_all()
    assert pa.returncode == 0 and pb.returncode == 0, (la.read_text(), lb.read_text())

    led = ledger(valkey)
    assert all(e["status"] == "done" and e["rows"] == rows for e in led.values())
    assert sorted(led) == sorted((f"t{t}", f"t{t}/f{f:03d}.csv")
                                 for t in range(tables) for f in range(files + 1))
    for t in range(tables):
        assert count(falkordb, f"L{t}") == (files + 1) * rows
    # exactly once: over both instances, every table's files were synced once
    sa, sb = synced(la), synced(lb)
    for t in range(tables):
        assert sa.get(f"t{t}", 0) + sb.get(f"t{t}", 0) == files + 1, (sa, sb)
    # the leases were released at the end
    with valkey.client() as c:
        assert c.keys("knut:sync:shared:lease:*") == []
    # status reads the shared ledger
    r = subprocess.run([str(inst.knut), "sync", "status", "--config", str(cfg), "--json",
                        "--ledger-url", vk_url(valkey)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)["files"]
    assert len(st) == tables * (files + 1) and {x["state"] for x in st} == {"done"}


def test_killed_instance_hands_its_tables_over(instances, valkey, falkordb, tmp_path):
    # t0 holds one big file: its apply takes long enough to be caught mid-lease
    lake = tmp_path / "lake"
    big_rows = 60000
    cfg = make_lake(lake, 3, 1, 10, big={0: big_rows})
    inst = instances(cfg)
    pa, la = inst.start("a", vk_url(valkey), lease="2")
    lease_key = "knut:sync:shared:lease:t0"

    def a_holds_t0():
        with valkey.client() as c:
            return c.get(lease_key) == b"a"

    assert wait_for(a_holds_t0, 60), la.read_text()
    pa.send_signal(signal.SIGKILL)
    pa.wait()
    with valkey.client() as c:
        assert c.get(lease_key) == b"a"  # left behind by the dead instance
    assert ("t0", "t0/f000.csv") not in ledger(valkey)

    pb, lb = inst.start("b", vk_url(valkey), lease="2")
    assert wait_for(lambda: len(ledger(valkey)) == 3, 120), lb.read_text()
    inst.stop_all()
    assert pb.returncode == 0, lb.read_text()
    skips = [r for r in records(lb) if r.get("msg", "").startswith("table t0 skipped")]
    assert skips and skips[0]["holder"] == "a"  # waited for the lease to expire
    assert synced(lb).get("t0") == 1 and synced(la).get("t0") is None
    led = ledger(valkey)
    assert led[("t0", "t0/f000.csv")]["rows"] == big_rows
    assert count(falkordb, "L0") == big_rows
    assert count(falkordb, "L1") == 10 and count(falkordb, "L2") == 10
    # over both instances every file was recorded once
    assert sum(synced(la).values()) + sum(synced(lb).values()) == 3


# Fault injection: takes the lease over from its holder, as a stalled
# holder would find it after expiry (a fake holder, no knut behind it).
STEAL_LUA = ("if redis.call('GET', KEYS[1]) == ARGV[1] then "
             "redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end return 0")


def test_lost_lease_stops_without_commit(instances, valkey, falkordb, tmp_path):
    lake = tmp_path / "lake"
    big_rows = 60000
    cfg = make_lake(lake, 1, 1, 0, big={0: big_rows})
    inst = instances(cfg)
    pa, la = inst.start("a", vk_url(valkey), lease="2")
    key = "knut:sync:shared:lease:t0"

    def steal():
        with valkey.client() as c:
            return c.eval(STEAL_LUA, 1, key, "a", "fake-intruder", 3000) == 1

    assert wait_for(steal, 60), la.read_text()
    lost = lambda: [r for r in records(la) if r.get("level") == "warn" and "lease lost" in r["msg"]]
    assert wait_for(lost, 60), la.read_text()
    assert lost()[0]["table"] == "t0" and "without committing" in lost()[0]["msg"]
    # the table's failure is logged after the warning: wait for it too
    failed = lambda: [r for r in records(la) if r.get("msg") == "table failed"]
    assert wait_for(failed, 60), la.read_text()
    assert "lease on table 't0' lost" in failed()[0]["error"]
    # the fake lease expires, the instance takes the table again and commits it once
    assert wait_for(lambda: len(ledger(valkey)) == 1, 60), la.read_text()
    inst.stop_all()
    assert pa.returncode == 0
    assert synced(la) == {"t0": 1}
    assert count(falkordb, "L0") == big_rows


PASSWORD = "s3cr3t-pw"


class PersistentValkey(Valkey):
    """Valkey with a password and an fsync'ed append-only file, restartable
    on its port with its data."""

    name = "valkey_aof"

    def server_args(self):
        args = super().server_args()
        i = args.index("--appendonly")
        args[i + 1] = "yes"
        return args + ["--appendfsync", "always", "--requirepass", PASSWORD]

    def client(self, **kw):
        kw.setdefault("password", PASSWORD)
        return super().client(**kw)

    def restart(self):
        err = self._start_once()  # same ports, same data folder
        assert err is None, f"{err}\n{self.log_tail()}"


def test_valkey_loss_fails_rounds_then_resumes(instances, start_peer, falkordb, tmp_path):
    vk = start_peer(PersistentValkey)
    lake = tmp_path / "lake"
    cfg = make_lake(lake, 2, 2, 5)
    inst = instances(cfg)
    url = f"redis://:{PASSWORD}@{vk.host}:{vk.port}"
    p, log = inst.start("a", url, env={"KNUT_LOG": "debug"})

    def ledger_n():
        with vk.client() as c:
            return c.hlen("knut:sync:shared:ledger")

    assert wait_for(lambda: ledger_n() == 4), log.read_text()
    # steady state: a table whose ledger version did not move is not re-read
    def hscans():
        with vk.client() as c:
            return c.info("commandstats").get("cmdstat_hscan", {}).get("calls", 0)

    idle = lambda: sum(r.get("msg") == "round idle" for r in records(log))
    n0 = idle()
    assert wait_for(lambda: idle() >= n0 + 1)
    h0 = hscans()
    assert h0 > 0  # the load at start and the first leases did read
    assert wait_for(lambda: idle() >= n0 + 4)
    assert hscans() == h0
    with vk.client() as c:
        assert int(c.get("knut:sync:shared:version:t0")) >= 1
    vk.stop()
    add_file(lake, 1, 7, 5)
    peer = f"{vk.host}:{vk.port}"
    failed = lambda: [r for r in records(log)
                      if r.get("msg") == "table failed" and peer in r.get("error", "")]
    assert wait_for(lambda: len(failed()) >= 4, 60), log.read_text()
    # the loop backs off after failed rounds: the waits grow
    waits = [r["msg"] for r in records(log) if r.get("msg", "").startswith("next round in")]
    secs = [float(w.split()[3]) for w in waits]
    assert max(secs) > min(secs), waits

    vk.restart()
    assert wait_for(lambda: ledger_n() == 5, 60), log.read_text()
    inst.stop_all()
    assert p.returncode == 0, log.read_text()
    assert count(falkordb, "L0") == 10 and count(falkordb, "L1") == 15
    text = log.read_text()
    assert PASSWORD not in text
    assert synced(log) == {"t0": 2, "t1": 3}  # nothing redone after the restart


def test_embedded_store_refuses_shared_ledger(run_knut, valkey, tmp_path):
    cfg = make_lake(tmp_path / "lake", 1, 1, 3)
    r = run_knut("sync", "--once", "--config", cfg, "--store", tmp_path / "g.duckdb",
                 "--ledger-url", vk_url(valkey))
    assert r.returncode == 2
    assert "--ledger-url" in r.stderr and "single-process" in r.stderr
    r = run_knut("sync", "--once", "--config", cfg, "--instance", "x")
    assert r.returncode == 2 and "--ledger-url" in r.stderr


def test_password_never_shown(run_knut, valkey, falkordb, tmp_path):
    cfg = make_lake(tmp_path / "lake", 1, 1, 3)
    url = f"redis://:hunter2-secret@{valkey.host}:{valkey.port}"  # no password configured
    r = run_knut("sync", "--once", "--config", cfg, "--graph", GRAPH,
                 "--falkordb", f"redis://{falkordb.host}:{falkordb.port}", "--ledger-url", url)
    assert r.returncode == 1
    assert f"{valkey.host}:{valkey.port}" in r.stderr and "authentication failed" in r.stderr
    assert "hunter2" not in r.stderr
    r = run_knut("sync", "status", "--config", cfg, "--ledger-url",
                 "redis://:hunter2-secret@127.0.0.1:notaport")
    assert r.returncode != 0 and "port" in r.stderr and "hunter2" not in r.stderr
