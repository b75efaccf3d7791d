"""`minigo status`'s last line: what is left to do, from the run's files alone (`describe_next`)."""

from __future__ import annotations

from pathlib import Path

from minigo_core.base.config import load_config
from minigo_core.data.schedule import generation_outputs
from minigo_core.report.status import describe_next


def test_next_names_the_first_unfinished_generation_and_the_late_evaluations(tmp_path):
    cfg = load_config(
        {
            "root": str(tmp_path / "run"),
            "generations": 2,
            "evaluate": {"every": 1, "quiet_last": 0, "opponents": ["gen0", "previous"], "target": "gen0"},
        }
    )
    assert describe_next(cfg) == ("generation 0 of 2", False)
    files = [f for g in range(3) for f in generation_outputs(cfg, g)]
    for f in files:
        Path(f).parent.mkdir(parents=True, exist_ok=True)
        Path(f).write_text("{}")
    assert describe_next(cfg) == ("all 2 generations are done", True)
    late = [f for f in generation_outputs(cfg, 1) if "/eval/" in f][0]
    Path(late).unlink()
    assert describe_next(cfg) == ("late evaluations of generations 1", False)
    Path(generation_outputs(cfg, 2)[0]).unlink()  # generation 2's model
    assert describe_next(cfg) == ("generation 2 of 2; late evaluations of generations 1", False)
