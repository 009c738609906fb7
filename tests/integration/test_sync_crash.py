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

import random
import signal
from pathlib import Path

from syncmodel import (SEED, Model, assert_all_done, assert_graph_is_model, graph_embedded,
                       graph_falkor, killed_run, make_root, settle)

ROUNDS = 50


def crash_loop(knut, run_knut, root: Path, sink_args, status_args, check):
    rng = random.Random(SEED)
    model = Model(rng)
    log = root / "runs.log"
    kills = 0
    for i in range(ROUNDS):
        model.land(root)
        rc = killed_run(knut, root, sink_args, log, i, rng.uniform(0.0, 0.7),
                        ("--interval", "0.05"))
        # it may have died on its own (a crash is a failure, not a kill)
        assert rc == -signal.SIGKILL, f"seed {SEED}: run {i} exited {rc}:\n{log.read_text()[-3000:]}"
        kills += 1
    # the kills landed while work was done (how much depends on the box's
    # load: only "some" is asserted, the count is printed)
    done_runs = log.read_text().count('"round done"')
    print(f"seed {SEED}: {done_runs} rounds committed over {ROUNDS} killed runs")
    assert done_runs >= 1, f"seed {SEED}: no round committed before a kill"
    settle(run_knut, root, sink_args)
    want = model.expected()
    assert_graph_is_model(check(), want)
    # every landed file is done in the ledger, none failed or pending
    assert_all_done(run_knut, root, status_args, model.seq)
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
