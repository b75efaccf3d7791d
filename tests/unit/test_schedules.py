"""The run's generation schedules: progressive simulations (`selfplay.readouts_schedule`: generation g's
self-play searches with the schedule's readouts) and a growing window (`window.generations_schedule`: the
games generation g's window reads, the workflow's window inputs, and when a generation may be packed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minigo_core.base import config
from minigo_core.base.config import ConfigError, load_config
from minigo_core.bench.dag import build_run
from minigo_core.data import gamefile, layout, schedule, window
from minigo_core.jobs.selfplay import cli_main as selfplay_main
from minigo_core.pipeline import plan as planning
from minigo_core.search import engine
from minigo_core.selfplay import cost
from minigo_core.selfplay.selfplay_game import play_selfplay_game

REPO = Path(__file__).resolve().parents[2]
READOUTS = {"readouts_schedule": [[0, 8], [3, 32]], "fast_readouts": 16}  # tiny: parallel_readouts 8
GROWING = {"generations_schedule": [[0, 1], [3, 3]]}  # W 1 for generations 1-2, then 3


def test_schedule_lookup_is_piecewise_constant_by_generation(make_config):
    pairs = ((0, 8), (3, 32), (10, 64))
    assert [config.schedule_at(pairs, g) for g in (0, 2, 3, 9, 10, 500)] == [8, 8, 32, 32, 64, 64]
    assert config.learning_rate_at(((0, 0.02), (100, 0.01)), 99) == 0.02  # the same lookup
    off = make_config()
    assert off.selfplay.readouts_schedule is None and off.window.generations_schedule is None  # the default
    assert config.selfplay_config(off, 7) is off and config.window_size(off, 7) == off.window.generations == 2
    cfg = make_config(selfplay=READOUTS, window=GROWING)
    assert [config.readouts_at(cfg, g) for g in range(5)] == [8, 8, 8, 32, 32]
    assert [config.window_size(cfg, g) for g in range(1, 6)] == [1, 1, 3, 3, 3]
    early, late = config.selfplay_config(cfg, 0).selfplay, config.selfplay_config(cfg, 4).selfplay
    assert (early.readouts, early.fast_readouts, early.readouts_schedule) == (8, 8, None)  # fast capped
    assert (late.readouts, late.fast_readouts) == (32, 16)
    assert config.selfplay_config(config.selfplay_config(cfg, 4), 0) == config.selfplay_config(cfg, 4)


BAD = [
    ("selfplay.readouts_schedule", [[1, 8]], "generation 0"),
    ("selfplay.readouts_schedule", [[0, 8], [0, 16]], "above 0"),
    ("selfplay.readouts_schedule", [[0, 4]], "parallel_readouts (8)"),
    ("selfplay.readouts_schedule", [[0, 8.5]], "integer"),
    ("selfplay.readouts_schedule", [[0, 8, 2]], "[generation, readouts] pair"),
    ("selfplay.readouts_schedule", [], "at least one"),
    ("selfplay.readouts_schedule", 16, "list"),
    ("window.generations_schedule", [[0, 0]], "1..100"),
    ("window.generations_schedule", [[0, 2], [4, 101]], "1..100"),
    ("window.generations_schedule", [[2, 3]], "generation 0"),
    ("window.generations_schedule", [[0, 2], [-1, 3]], "above 0"),
]


@pytest.mark.parametrize("key,value,words", BAD, ids=[f"{k}={v!r}" for k, v, _ in BAD])
def test_a_bad_schedule_is_rejected_naming_the_key(make_config, key, value, words):
    section, name = key.split(".")
    with pytest.raises(ConfigError) as info:
        make_config({section: {name: value}})
    assert key in str(info.value) and words in str(info.value)


def test_fast_readouts_are_bounded_by_the_schedule_s_largest_readouts(make_config):
    with pytest.raises(
        ConfigError, match=r"selfplay.fast_readouts.*largest selfplay.readouts_schedule \(32\)"
    ):
        make_config(selfplay={**READOUTS, "fast_readouts": 33})
    assert make_config(selfplay={**READOUTS, "readouts": 8}).selfplay.fast_readouts == 16  # above `readouts`


def test_engine_settings_take_the_generation_s_readouts(make_config):
    cfg = make_config(selfplay=READOUTS)
    early = engine.settings_for(config.search_settings(cfg, 0), "agz", cfg.board_size)
    late = engine.settings_for(config.search_settings(cfg, 5), "agz", cfg.board_size)
    assert (early.readouts, early.fast_readouts, late.readouts, late.fast_readouts) == (8, 8, 32, 16)
    with pytest.raises(ValueError, match="generation"):
        config.search_settings(cfg)  # a scheduled config cannot be searched without its generation
    plain = make_config()
    plain = engine.settings_for(config.search_settings(plain), "agz", plain.board_size)
    assert (plain.readouts, plain.fast_readouts) == (16, 8)  # config/tiny.yaml's, unscheduled


def _play(config_file: Path, model: str, generation: int, out: Path) -> tuple[list, dict]:
    """Two games of `generation` by the compiled engine (one job); their records and the job record."""
    pattern, record = str(out / "game{game:05d}.arrow"), str(out / "job.json")
    argv = ["--config", str(config_file), "--model", model, "--generation", str(generation), "--game", "0",
            "--count", "2", "--out", pattern, "--record", record, "--engine", "compiled"]  # fmt: skip
    assert selfplay_main(argv) == 0
    games = [gamefile.read_game(pattern.format(game=i)) for i in range(2)]
    return games, json.loads(Path(record).read_text())


def test_a_selfplay_job_searches_and_records_its_generation_s_readouts(
    tmp_path, write_config, compiled_library
):
    compiled_library(engine.LIBRARY)
    from minigo_core.nn.model import ModelConfig, load_model, random_model, save_model  # lazy: torch

    scheduled = write_config(tmp_path / "scheduled", selfplay=READOUTS)  # tiny: half the moves full searches
    cfg = load_config(str(scheduled))
    model = str(tmp_path / "model.safetensors")
    save_model(model, random_model(ModelConfig.from_run(cfg), seed=3), {"generation": 0})
    early, early_job = _play(scheduled, model, 0, tmp_path / "gen0")
    late, late_job = _play(scheduled, model, 3, tmp_path / "gen3")
    for games, (readouts, fast) in ((early, (8, 8)), (late, (32, 16))):
        for record in games:
            search = record.metadata["search"]
            assert (search["readouts"], search["fast_readouts"]) == (readouts, fast)
            assert "readouts_schedule" not in search
    # the searches themselves: the root's visits of a full search grow with the readouts
    visits = [np.concatenate([r.visits.sum(axis=1) for r in games]) for games in (early, late)]
    assert visits[0].max() < visits[1].min() and visits[1].min() >= 32
    per_move = [sum(g["readouts"] for g in job["attempt"]["games"]) / sum(len(r.moves) for r in games)
                for job, games in ((early_job, early), (late_job, late))]  # fmt: skip
    assert per_move[1] > 2 * per_move[0]
    # the reference search (python engine) plays a generation at its readouts too
    reference = play_selfplay_game(load_model(model, backend="torch"), cfg, 3, 0, model)
    assert reference.metadata["search"]["readouts"] == 32 and reference.visits.sum(axis=1).min() >= 32
    # generation 3's games are those of a config that sets its readouts outright, byte for byte
    fixed = write_config(tmp_path / "fixed", selfplay={"readouts": 32, "fast_readouts": 16})
    same, _ = _play(fixed, model, 3, tmp_path / "fixed3")
    assert [gamefile.game_bytes(r) for r in same] == [gamefile.game_bytes(r) for r in late]


def test_a_growing_window_reads_more_generations_and_is_packed_after_its_last_window(
    finished_run, make_config
):
    cfg, _ = finished_run(6, generations=8)
    grown = make_config({"root": cfg.root, "generations": 8, "selfplay": {"games": 3}}, window=GROWING)
    assert [schedule.window_of(grown, g) for g in (1, 2, 3, 4)] == [[0], [1], [0, 1, 2], [1, 2, 3]]
    assert [schedule.window_of(cfg, g) for g in (1, 2, 3)] == [[0], [0, 1], [1, 2]]  # tiny: W = 2
    assert window.plan_window(grown, 3).generations == [0, 1, 2]
    assert sorted({gen for gen, _ in window.plan_window(grown, 3).files}) == [0, 1, 2]
    assert sorted({gen for gen, _ in window.plan_window(cfg, 3).files}) == [1, 2]
    # the last window that reads a generation: g + W fixed; window 3 reaches back to generation 0
    assert [schedule.last_window(cfg, h) for h in range(4)] == [2, 3, 4, 5]
    assert [schedule.last_window(grown, h) for h in range(4)] == [3, 4, 5, 6]
    one = make_config(
        {"root": cfg.root, "generations": 8, "selfplay": {"games": 3}}, window={"generations": 1}
    )
    assert [schedule.last_window(one, h) for h in range(3)] == [1, 2, 3]
    # packing: generations 0..5 done, 6..8 planned; each generation packed once its last window is built
    pack = {"storage": {"pack_old_generations": True}}
    assert planning.plan(make_config(one.to_dict(), pack)).packs == tuple(range(8))
    assert planning.plan(make_config(grown.to_dict(), pack)).packs == tuple(range(6))
    assert planning.plan(make_config(grown.to_dict(), pack), last=6).packs == (0, 1, 2, 3)


def _dry_run_inputs(run_config: Path) -> dict[str, list[str]]:
    """`snakemake -n` of the repository with one generation planned: rule name -> its jobs' input files."""
    cmd = [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(run_config),
           "--config", "plan_max_jobs=1"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    inputs: dict[str, list[str]] = {}
    for rule, files in re.findall(r"^rule (\w+):\n\s+input: (.*)$", proc.stdout + proc.stderr, flags=re.M):
        inputs.setdefault(rule, []).extend(files.split(", "))
    return inputs


def test_the_workflow_s_window_and_pack_inputs_follow_the_growing_window(tmp_path, write_config):
    # generations 0..2 finished (windows 1 and 2 read one generation each), generation 3 planned
    layers = ({"window": GROWING}, {"storage": {"pack_old_generations": True}})
    run_config = build_run(str(tmp_path / "run"), write_config(tmp_path, *layers), 3, 3, 6)
    root = str(tmp_path / "run")
    inputs = _dry_run_inputs(run_config)
    markers = [f for f in inputs["window"] if f.endswith(".complete.json")]
    assert markers == [layout.complete_marker_path(root, h) for h in (0, 1, 2)]
    # generation 0 waits for window 3, which reads it again; generations 1 and 2 stay loose for windows 4, 5
    assert layout.window_manifest_path(root, 3) in inputs["pack"] and len(inputs["pack"]) == 3
    assert layout.complete_marker_path(root, 0) in inputs["pack"]


def test_the_cost_plan_prices_each_generation_at_its_readouts_and_window(make_config):
    units = cost.Measured("test CPU", 4, 0.001, 0.002, 0.5, 100.0, 2000.0, 300.0, 1_000_000)
    plain = {"generations": 8, "selfplay": {"full_search_fraction": 1.0}, "train": {"replay_ratio": None}}
    cfg = make_config(plain, selfplay=READOUTS, window=GROWING)
    costs = [cost.generation_cost(cfg, units, 10, g) for g in range(cfg.generations + 1)]
    assert costs[3].selfplay_core_s == pytest.approx(4 * costs[2].selfplay_core_s)  # 32 readouts, not 8
    assert costs[3].train_examples == pytest.approx(3 * costs[2].train_examples)  # 3 generations, not 1
    assert [c.last_window for c in costs[:3]] == [3, 4, 5] and cost.steady_generation(cfg) == 3
    packed = cost.run_cost(cfg, units, 10, packed=True)  # 0..5 packed: their last windows, 3..8, are built
    assert costs[5].last_window == 8 < costs[6].last_window
    assert packed.files_kept == packed.total("files_created") - sum(c.files_packable - 3 for c in costs[:6])
