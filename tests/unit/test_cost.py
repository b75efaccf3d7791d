"""`minigo cost` (alias `minigo plan`): the cost arithmetic from fixed per-unit costs, and the command on the
tiny config."""

from __future__ import annotations

import dataclasses
import json

import pytest

from minigo_core.base.config import load_config
from minigo_core.cli import main
from minigo_core.data import schedule
from minigo_core.selfplay import cost

UNITS = cost.Measured(
    cpu="test CPU",
    probe_k=64,
    readout_s=0.001,
    eval_readout_s=0.002,
    train_step_s=0.5,
    game_bytes_per_position=100.0,
    game_file_bytes=2000.0,
    shard_bytes_per_example=300.0,
    model_bytes=1_000_000,
)


@pytest.fixture(scope="module")
def paper():
    return load_config("config/paper.yaml")


def test_selfplay_and_training_scale_with_the_config(paper):
    moves = 300
    steady = cost.generation_cost(paper, UNITS, moves, paper.window.generations)
    s = paper.selfplay
    move_s = (0.25 * s.readouts + 0.75 * s.fast_readouts) * UNITS.readout_s  # 0.26 s
    assert steady.selfplay_core_s == pytest.approx(s.games * moves * move_s)
    assert steady.job_s == pytest.approx(s.games_per_job * moves * move_s)
    assert steady.jobs == schedule.selfplay_job_count(paper) == 128
    # a full window: W generations of games, 25% of moves recorded, sample_fraction of them
    examples = paper.window.sample_fraction * paper.window.generations * s.games * 0.25 * moves
    assert steady.train_examples == pytest.approx(examples)
    one = steady.train_rank_s[1]
    assert one == pytest.approx(examples / paper.train.batch_per_rank * UNITS.train_step_s)
    assert steady.train_rank_s[paper.train.ranks] == pytest.approx(one / paper.train.ranks)
    assert cost.rank_counts(43) == [1, 2, 4, 8, 16, 32, 43]
    # bytes: per file, per move (the move list), per recorded position
    assert steady.game_bytes == pytest.approx(s.games * (2000 + 2 * moves + 0.25 * moves * 100))


def test_window_ramps_up_and_the_last_model_plays_no_selfplay(paper):
    costs = [cost.generation_cost(paper, UNITS, 271, g) for g in range(paper.generations + 1)]
    assert costs[0].train_examples == 0 and costs[0].train_rank_s == {}
    assert costs[2].train_examples == pytest.approx(2 * costs[1].train_examples)
    assert costs[5].train_examples == pytest.approx(costs[50].train_examples)
    assert costs[-1].selfplay_core_s == 0 and costs[-1].jobs == 0


def test_packing_keeps_far_fewer_files(paper):
    loose = cost.run_cost(paper, UNITS, 271, packed=False)
    packed = cost.run_cost(paper, UNITS, 271, packed=True)
    assert loose.total("files_created") == packed.total("files_created") > 800_000
    assert loose.files_kept == loose.total("files_created")
    assert packed.files_kept < 100_000
    # at the end generations G-W+1 .. G-1 stay loose (the last window, G's, read G-W .. G-1; G plays none)
    loose_games = (paper.window.generations - 1) * paper.selfplay.games
    assert loose_games < packed.files_kept < loose_games + 10_000


def test_evaluations_count_both_sides_of_a_model_match(paper):
    cfg = dataclasses.replace(paper, evaluate=dataclasses.replace(paper.evaluate, opponents=["previous"]))
    g = cfg.evaluate.every
    seconds, matches = cost._match_core_s(cfg, UNITS, g, 200)
    assert matches == len(schedule.evaluation_specs(cfg, g)) >= 1
    per_match = cfg.evaluate.games * 200 * cfg.evaluate.readouts * UNITS.eval_readout_s
    specs = schedule.evaluation_specs(cfg, g)
    sides = sum(1.0 if s.kind in ("generation", "previous", "file") else 0.5 for s in specs)
    assert seconds == pytest.approx(per_match * sides)


def test_cost_command_measures_the_tiny_config(capsys):
    assert main(["cost", "--config", "config/tiny.yaml", "--json", "--probe-moves", "4"]) == 0
    data = json.loads(capsys.readouterr().out)
    m = data["measured"]
    assert m["readout_s"] > 0 and m["train_step_s"] > 0 and m["game_bytes_per_position"] > 0
    assert data["run"]["files_created"] > 0 and data["run"]["bytes_kept"] > 0
    assert data["assumed_moves_per_game"] == cost.default_moves(5)
    assert main(["plan", "--config", "config/tiny.yaml", "--probe-moves", "4"]) == 0  # the old name
    out, err = capsys.readouterr()
    assert "measured on this CPU" in out and "the whole run" in out
    assert "`plan` is now `minigo cost`" in err


@pytest.mark.parametrize(
    "args", [["--moves-per-game", "0"], ["--moves-per-game", "51"], ["--probe-moves", "1"]]
)
def test_cost_rejects_bad_options(args, capsys):
    assert main(["cost", "--config", "config/tiny.yaml", *args]) == 2
    err = capsys.readouterr().err
    assert args[0] in err
