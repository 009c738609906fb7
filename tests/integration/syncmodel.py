"""Shared by test_sync_crash.py, test_sync_outage.py and
test_sync_exactly_once.py: a sync config of
four tables, a seeded model of what the graph must hold after every landed
file is synced, readers of the graph (embedded store, FalkorDB), and small
process helpers (one killed run of a crash loop, the end-of-loop checks). Files are written only while no sync runs, or atomically
(tmp name + rename), so every round sees whole files and the model can
apply them in name order.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

from peers import FalkorDB

SEED = int(os.environ.get("KNUT_CRASH_SEED", "0")) or random.SystemRandom().randrange(1, 1 << 30)

CONFIG = """\
store: graph.duckdb
tables:
  people:
    path: people/
    format: csv
    vertices: [{labels: [Person], keys: [id], properties: [name, score]}]
  knows:
    path: knows/
    format: csv
    edges:
      - type: KNOWS
        from: {label: Person, keys: {id: src}}
        to: {label: Person, keys: {id: dst}}
        properties: [w]
  items:
    path: items/
    format: csv
    mode: cdc
    vertices: [{labels: [Item], keys: [id], properties: [name]}]
  notes:                           # no properties: list: every file adds a
    path: notes/                   # column, so the store's tables are
    format: csv                    # altered in killed rounds too
    vertices: [{labels: [Note], keys: [id]}]
"""


class Model:
    """What the graph must hold after every landed file is synced."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.people: dict[int, tuple[str, int]] = {}
        self.knows: dict[tuple[int, int], int] = {}
        self.items: dict[int, str] = {}
        self.notes: dict[int, dict[str, str]] = {}
        self.next_person = 1
        self.next_item = 1
        self.seq = 0

    def _land(self, folder: Path, text: str) -> None:
        self.seq += 1
        tmp = folder / f".f{self.seq:05d}.csv"
        tmp.write_text(text)
        os.rename(tmp, folder / f"f{self.seq:05d}.csv")

    def land(self, root: Path) -> None:
        """Drops one file per table (sometimes none), updating the model."""
        rng = self.rng
        rows = []
        for _ in range(rng.randint(1, 4)):
            if self.people and rng.random() < 0.4:
                pid = rng.choice(sorted(self.people))  # an update of a known key
            else:
                pid, self.next_person = self.next_person, self.next_person + 1
            val = (f"p{pid}-{self.seq}", rng.randint(0, 1000))
            self.people[pid] = val
            rows.append(f"{pid},{val[0]},{val[1]}")
        self._land(root / "people", "id,name,score\n" + "\n".join(rows) + "\n")
        if len(self.people) >= 2 and rng.random() < 0.8:
            rows = []
            for _ in range(rng.randint(1, 3)):
                a, b = rng.sample(sorted(self.people), 2)
                self.knows[(a, b)] = rng.randint(0, 99)
                rows.append(f"{a},{b},{self.knows[(a, b)]}")
            self._land(root / "knows", "src,dst,w\n" + "\n".join(rows) + "\n")
        if rng.random() < 0.8:
            self._land(root / "items", "_change_type,id,name\n" + "\n".join(self._cdc()) + "\n")
        if rng.random() < 0.5:
            col, nid = f"c{self.seq + 1}", self.seq + 1
            self.notes[nid] = {col: f"v{nid}"}
            self._land(root / "notes", f"id,{col}\n{nid},v{nid}\n")

    def _cdc(self) -> list[str]:
        rng, out = self.rng, []
        for _ in range(rng.randint(1, 4)):
            r = rng.random()
            if self.items and r < 0.3:  # update
                iid = rng.choice(sorted(self.items))
                out.append(f"UPDATE_BEFORE,{iid},{self.items[iid]}")
                self.items[iid] = f"i{iid}-u{self.seq}"
                out.append(f"UPDATE_AFTER,{iid},{self.items[iid]}")
            elif self.items and r < 0.45:  # delete (keys are never reused)
                iid = rng.choice(sorted(self.items))
                out.append(f"DELETE,{iid},{self.items.pop(iid)}")
            elif r < 0.55:  # an upsert and a delete of one key in one file
                iid, self.next_item = self.next_item, self.next_item + 1
                out.append(f"INSERT,{iid},i{iid}")
                out.append(f"DELETE,{iid},i{iid}")
            else:
                iid, self.next_item = self.next_item, self.next_item + 1
                self.items[iid] = f"i{iid}"
                out.append(f"INSERT,{iid},i{iid}")
        return out

    def expected(self):
        return ({k: list(v) for k, v in self.people.items()}, dict(self.knows),
                dict(self.items), {k: dict(v) for k, v in self.notes.items()})


def _text(x):
    return x.decode() if isinstance(x, bytes) else x


def graph_embedded(run_knut, root: Path):
    def q(sql):
        r = run_knut("query", "--db", root / "graph.duckdb", "--format", "json", sql)
        assert r.returncode == 0, f"seed {SEED}: {r.stderr}"
        return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]

    people: dict[int, list] = {}
    for x in q("SELECT id, name, score FROM v_Person"):
        assert x["id"] not in people, f"seed {SEED}: Person {x['id']} twice"
        people[x["id"]] = [x["name"], x["score"]]
    knows: dict[tuple[int, int], int] = {}
    for x in q("SELECT a.id AS s, b.id AS d, e.w FROM e_KNOWS e "
               "JOIN v_Person a ON a._knut_vid = e._knut_src "
               "JOIN v_Person b ON b._knut_vid = e._knut_dst"):
        assert (x["s"], x["d"]) not in knows, f"seed {SEED}: KNOWS {x} twice"
        knows[(x["s"], x["d"])] = x["w"]
    items: dict[int, str] = {}
    if q("SELECT count(*) AS n FROM information_schema.tables WHERE table_name = 'v_Item'")[0]["n"]:
        for x in q("SELECT id, name FROM v_Item"):
            assert x["id"] not in items, f"seed {SEED}: Item {x['id']} twice"
            items[x["id"]] = x["name"]
    notes: dict[int, dict] = {}
    for x in q("SELECT * FROM v_Note"):
        assert x["id"] not in notes, f"seed {SEED}: Note {x['id']} twice"
        notes[x["id"]] = {k: v for k, v in x.items()
                          if k not in ("id", "_knut_vid") and v is not None}
    return people, knows, items, notes


def graph_falkor(falkordb: FalkorDB, graph: str):
    def q(cypher):
        return falkordb.query(graph, cypher)[1]

    people: dict[int, list] = {}
    for pid, name, score in q("MATCH (p:Person) RETURN p.id, p.name, p.score"):
        assert pid not in people, f"seed {SEED}: Person {pid} twice"
        people[pid] = [_text(name), score]
    knows: dict[tuple[int, int], int] = {}
    for s, d, w in q("MATCH (a:Person)-[e:KNOWS]->(b:Person) RETURN a.id, b.id, e.w"):
        assert (s, d) not in knows, f"seed {SEED}: KNOWS {s}->{d} twice"
        knows[(s, d)] = w
    items: dict[int, str] = {}
    for iid, name in q("MATCH (i:Item) RETURN i.id, i.name"):
        assert iid not in items, f"seed {SEED}: Item {iid} twice"
        items[iid] = _text(name)
    notes: dict[int, dict] = {}
    for nid, nkeys in q("MATCH (n:Note) RETURN n.id, size(keys(n))"):
        assert nid not in notes, f"seed {SEED}: Note {nid} twice"
        assert nkeys == 2, f"seed {SEED}: Note {nid} has {nkeys} properties"  # id, c<id>
        col = f"c{int(nid)}"
        notes[nid] = {col: _text(q(f"MATCH (n:Note {{id: {int(nid)}}}) RETURN n.{col}")[0][0])}
    return people, knows, items, notes


def make_root(tmp_path: Path, config: str = CONFIG, extra_dirs=()) -> Path:
    root = tmp_path / "lake"
    for d in ("people", "knows", "items", "notes", *extra_dirs):
        (root / d).mkdir(parents=True)
    (root / "sync.yml").write_text(config)
    return root


def sync_cmd(knut, root: Path, sink_args, *extra):
    return [str(knut), "sync", "--config", str(root / "sync.yml"), *map(str, sink_args), *extra]


def killed_run(knut, root: Path, sink_args, log: Path, i: int, delay: float, extra=(),
               before_kill=None, after_start=None) -> int:
    """One run of a kill loop: `knut sync` (JSON logs; stderr appended to log
    after a "--- start i" line) killed with SIGKILL `delay` seconds after its
    start (after after_start(p) returned, when given: e.g. waiting for a log
    line); before_kill() runs right before the kill (e.g. to kill the server
    too). Returns the exit code (-SIGKILL unless it died on its own)."""
    with open(log, "a") as lf:
        lf.write(f"--- start {i}\n")
        lf.flush()
        p = subprocess.Popen(sync_cmd(knut, root, sink_args, *extra), stderr=lf,
                             stdout=subprocess.DEVNULL,
                             env=dict(os.environ, KNUT_LOG_FORMAT="json"))
        try:
            if after_start:
                after_start(p)
            time.sleep(delay)
            if before_kill:
                before_kill()
            p.send_signal(signal.SIGKILL)
            return p.wait(timeout=30)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()


def assert_graph_is_model(got, want):
    """The four tables' graph (graph_embedded / graph_falkor) equals
    Model.expected(): nothing lost, nothing extra, every value right."""
    for name, g, w in zip(("Person", "KNOWS", "Item", "Note"), got, want):
        lost = sorted(set(w) - set(g))
        extra = sorted(set(g) - set(w))
        wrong = sorted(k for k in set(g) & set(w) if g[k] != w[k])
        assert not (lost or extra or wrong), (
            f"seed {SEED}: {name}: lost {lost[:10]}, not expected {extra[:10]}, "
            f"wrong values {[(k, g[k], w[k]) for k in wrong[:10]]}")


def assert_all_done(run_knut, root: Path, status_args, n_files: int):
    """`knut sync status` lists n_files files, every one done."""
    r = run_knut("sync", "status", "--config", root / "sync.yml", "--json", *status_args)
    assert r.returncode == 0, r.stderr
    st = json.loads(r.stdout)["files"]
    assert {x["state"] for x in st} == {"done"}, f"seed {SEED}: {st}"
    assert len(st) == n_files, f"seed {SEED}: {len(st)} ledger entries, {n_files} files"


def settle(run_knut, root, sink_args):
    """Runs --once until a round is idle and clean; returns the last run."""
    for _ in range(6):
        r = run_knut("sync", "--once", "--config", root / "sync.yml", *sink_args,
                     env={"KNUT_LOG_FORMAT": "json"})
        assert r.returncode == 0, f"seed {SEED}: {r.stderr}"
        if '"round idle"' in r.stderr:
            return r
    pytest.fail(f"seed {SEED}: sync never became idle:\n{r.stderr}")



class PersistentFalkorDB(FalkorDB):
    """FalkorDB with an fsync'ed append-only file in its data dir, so a stop
    and a restart on the same port keep the graph (`restart()`)."""

    name = "falkordb_aof"

    def server_args(self):
        args = super().server_args()
        i = args.index("--appendonly")
        args[i + 1] = "yes"
        return args + ["--appendfsync", "always"]

    def restart(self):
        """Starts again on the same port with the same data dir."""
        err = self._start_once()
        assert err is None, f"{self.name} did not restart on {self.port}: {err}\n{self.log_tail()}"


def json_lines(path: Path) -> list[dict]:
    out = []
    for line in path.read_text(errors="replace").splitlines():
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:  # a line still being written
                pass
    return out


def wait_for(pred, timeout=45.0, what=""):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.05)
    pytest.fail(f"seed {SEED}: timed out waiting for {what}")


def handlers_installed(pid: int) -> bool:
    """True once the process catches SIGTERM (SigCgt in /proc), so a signal
    sent now tests knut, not the dynamic loader."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("SigCgt:"):
                return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    except OSError:
        pass
    return False


