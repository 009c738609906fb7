"""`knut sync` killed with SIGKILL at random moments: nothing lost, nothing twice.

Over 50 restarts per sink (the embedded store; a real FalkorDB), each run
is killed at a random delay after its start; between restarts new files
land in an incremental vertex table, an incremental edge table, a CDC table
(inserts, updates, an upsert and a delete of one key) and a table whose
every file brings a new column (the store's tables are altered in killed
rounds too). At the end the graph must equal the model exactly (every
vertex, edge and property) and every file must be done in the ledger. The
RNG is seeded (KNUT_CRASH_SEED=N replays a run) and the seed is in every
assertion message. FalkorDB outages and signals: test_sync_outage.py.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from pathlib import Path

from syncmodel import (SEED, Model, graph_embedded, graph_falkor, make_root, settle,
                       sync_cmd)

ROUNDS = 50


def crash_loop(knut, run_knut, root: Path, sink_args, status_args, check):
    rng = random.Random(SEED)
    model = Model(rng)
    log = root / "runs.log"
    kills = 0
    for i in range(ROUNDS):
        model.land(root)
        with open(log, "a") as lf:
            lf.write(f"--- start {i}\n")
            lf.flush()
            p = subprocess.Popen(sync_cmd(knut, root, sink_args, "--interval", "0.05"),
                                 stderr=lf, stdout=subprocess.DEVNULL,
                                 env=dict(os.environ, KNUT_LOG_FORMAT="json"))
            try:
                time.sleep(rng.uniform(0.0, 0.7))
                p.send_signal(signal.SIGKILL)
                rc = p.wait(timeout=30)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        # it may have died on its own (a crash is a failure, not a kill)
        assert rc == -signal.SIGKILL, f"seed {SEED}: run {i} exited {rc}:\n{log.read_text()[-3000:]}"
        kills += 1
    # the kills landed while work was done (how much depends on the box's
    # load: only "some" is asserted, the count is printed)
    done_runs = log.read_text().count('"round done"')
    print(f"seed {SEED}: {done_runs} rounds committed over {ROUNDS} killed runs")
    assert done_runs >= 1, f"seed {SEED}: no round committed before a kill"
    settle(run_knut, root, sink_args)
    got = check()
    want = model.expected()
    for name, g, w in zip(("Person", "KNOWS", "Item", "Note"), got, want):
        lost = sorted(set(w) - set(g))
        extra = sorted(set(g) - set(w))
        wrong = sorted(k for k in set(g) & set(w) if g[k] != w[k])
        assert not (lost or extra or wrong), (
            f"seed {SEED}: {name}: lost {lost[:10]}, not expected {extra[:10]}, "
            f"wrong values {[(k, g[k], w[k]) for k in wrong[:10]]}")
    # every landed file is done in the ledger, none failed or pending
    r = run_knut("sync", "status", "--config", root / "sync.yml", "--json", *status_args)
    assert r.returncode == 0, r.stderr
    st = [json.loads(x) for x in r.stdout.splitlines()]
    assert {x["state"] for x in st} == {"done"}, f"seed {SEED}: {st}"
    assert len(st) == model.seq, f"seed {SEED}: {len(st)} ledger entries, {model.seq} files"
    assert kills == ROUNDS
    assert len(want[0]) > 20 and want[1] and want[2] and want[3], f"seed {SEED}: a trivial model"


def test_kill9_embedded_store(knut, run_knut, tmp_path):
    root = make_root(tmp_path)
    crash_loop(knut, run_knut, root, (), (), lambda: graph_embedded(run_knut, root))


def test_kill9_falkordb(knut, run_knut, tmp_path, falkordb):
    root = make_root(tmp_path)
    url = f"redis://{falkordb.host}:{falkordb.port}"
    ledger = root / "ledger.json"
    args = ("--falkordb", url, "--graph", "crash", "--ledger", ledger)
    crash_loop(knut, run_knut, root, args, ("--falkordb", url, "--ledger", ledger),
               lambda: graph_falkor(falkordb, "crash"))
