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
import time
from pathlib import Path

from syncmodel import (SEED, Model, assert_all_done, assert_graph_is_model, graph_embedded,
                       graph_falkor, killed_run, make_root, settle)

ROUNDS = 50
COMMIT_EVERY = 5  # every 5th run is killed only after it committed a round


def wait_for_commit(log: Path, i: int, p, timeout: float = 60.0):
    """Waits until run i's log (after its start marker) has a committed
    round, or the run has ended, or timeout seconds have passed (then the
    kill goes ahead and the asserts below report what happened)."""
    marker = f"--- start {i}\n"
    end = time.monotonic() + timeout
    while time.monotonic() < end and p.poll() is None:
        text = log.read_text()
        run = text[text.rfind(marker):]
        if '"round done"' in run or '"round failed"' in run:
            return
        time.sleep(0.02)


def crash_loop(knut, run_knut, root: Path, sink_args, status_args, check):
    rng = random.Random(SEED)
    model = Model(rng)
    log = root / "runs.log"
    kills = 0
    for i in range(ROUNDS):
        model.land(root)
        delay, wait = rng.uniform(0.0, 0.7), None
        if i % COMMIT_EVERY == 0:
            # Every few runs the kill waits for this run's first committed
            # round, so rounds commit however slow the machine is; the other
            # runs die at random moments (often before any commit when the
            # box is loaded).
            delay, wait = rng.uniform(0.0, 0.2), (lambda p, i=i: wait_for_commit(log, i, p))
        rc = killed_run(knut, root, sink_args, log, i, delay, ("--interval", "0.05"),
                        after_start=wait)
        # it may have died on its own (a crash is a failure, not a kill)
        assert rc == -signal.SIGKILL, f"seed {SEED}: run {i} exited {rc}:\n{log.read_text()[-3000:]}"
        kills += 1
    # the kills landed while work was done (how much depends on the box's
    # load: only "some" is asserted, the count is printed)
    done_runs = log.read_text().count('"round done"')
    print(f"seed {SEED}: {done_runs} rounds committed over {ROUNDS} killed runs")
    assert done_runs >= ROUNDS // COMMIT_EVERY, f"seed {SEED}: {done_runs} rounds committed"
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
