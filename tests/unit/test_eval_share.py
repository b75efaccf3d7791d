"""The evaluations' held share (`evaluate.share`): evaluation and rating jobs run at the nice level whose
fair-scheduler weight keeps them that share of a core they share with a loop job, and the scheduler holds it.

The last test is the mechanism itself: two busy processes pinned to one core, one at nice 0 (a loop job) and
one at the level the config gives; their CPU times are compared (a ratio, not a wall time)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minigo_core.base import config
from minigo_core.pipeline import workflow

REPO = Path(__file__).resolve().parents[2]
# spins over one window of wall time common to both processes (from `start`, an absolute time after both have
# started: a process started later would otherwise spin alone at the end) and prints its CPU seconds in it
BUSY = (
    "import time\ntime.sleep(max(0.0, {start} - time.time()))\ncpu = time.process_time()\n"
    "while time.time() < {start} + {s}:\n    pass\nprint(time.process_time() - cpu)"
)


@pytest.mark.parametrize("share, nice", [(0.25, 5), (0.5, 0), (0.1, 10), (0.015, 19), (0.4, 2)])
def test_the_share_sets_the_nice_level_by_the_schedulers_weights(share, nice):
    cfg = config.from_dict({"evaluate": {"share": share}})
    assert workflow.evaluation_nice(cfg) == nice
    weight = workflow.NICE_WEIGHTS[nice]
    assert abs(weight / (weight + 1024) - share) < 0.03


@pytest.mark.parametrize("share", [0, 0.6, 1.5])
def test_a_share_out_of_range_is_refused_naming_the_key(share):
    with pytest.raises(config.ConfigError, match="evaluate.share"):
        config.from_dict({"evaluate": {"share": share}})


def test_every_evaluation_rule_runs_at_the_held_share():
    rules = (REPO / "workflow/rules/evaluate.smk").read_text()
    bodies = rules.split("\nrule ")[1:]
    assert len(bodies) == 4
    for body in bodies:
        assert "nice=eval_nice" in body and '"nice -n {params.nice:q} ' in body, body.splitlines()[0]
        assert "evaluations=1" not in body, body.splitlines()[0]  # the last generation's hold no slot
    assert "nice -n 19" not in rules


def test_the_last_generations_jobs_run_at_nice_0_and_hold_no_evaluation_slot():
    cfg = config.from_dict({"generations": 12, "evaluate": {"share": 0.25, "every": 4}})
    assert [workflow.evaluation_nice_at(cfg, g) for g in (4, 8, 12)] == [5, 5, 0]
    assert [workflow.evaluation_slots(cfg, g) for g in (4, 8, 12)] == [1, 1, 0]


def _busy_pair(nice: int, seconds: float) -> tuple[float, float]:
    """CPU seconds of a nice-0 and a nice-`nice` busy process sharing one core for `seconds`."""
    core = min(os.sched_getaffinity(0))

    def start(level: int) -> subprocess.Popen:
        def pin() -> None:
            os.sched_setaffinity(0, {core})
            os.nice(level)

        return subprocess.Popen([sys.executable, "-c", BUSY.format(start=window, s=seconds)],
                                stdout=subprocess.PIPE, text=True, preexec_fn=pin)  # fmt: skip

    window = time.time() + 1.0  # both interpreters are up by then, even on a loaded machine
    loop, evaluation = start(0), start(nice)
    cpu = [float(p.communicate(timeout=seconds + 60)[0]) for p in (loop, evaluation)]
    return cpu[0], cpu[1]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs Linux's scheduler")
def test_the_scheduler_holds_the_share_of_a_core():
    """At `evaluate.share` 0.25 an evaluation keeps about a quarter of a core beside a busy loop job
    (not nice 19's ~1.5%); at 0.5, half."""
    if os.nice(0) != 0:
        pytest.skip("the test process is niced already: its children cannot run at nice 0")
    seconds = 1.5
    for share, low, high in ((0.25, 0.15, 0.36), (0.5, 0.38, 0.62)):
        nice = workflow.evaluation_nice(config.from_dict({"evaluate": {"share": share}}))
        began = time.time()
        loop, evaluation = _busy_pair(nice, seconds)
        assert low < evaluation / (loop + evaluation) < high, (share, loop, evaluation, time.time() - began)
