"""TensorBoard's events files of a run (`minigo_core.report.tensorboard`), read back with TensorBoard's own
`EventAccumulator`: the tags of each kind with one point per step record or generation, a rewrite that
replaces its points, the folders growing as the jobs of each generation finish, no half-written file under a
name TensorBoard reads, and the policy accuracy the training step records."""

from __future__ import annotations

import copy
import json
import logging
import os
from pathlib import Path

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

from minigo_core.base.config import load_config
from minigo_core.data import compare, gamefile, layout, storage
from minigo_core.jobs import games_complete as games_complete_job
from minigo_core.jobs import tensorboard as tensorboard_job
from minigo_core.report import tensorboard
from minigo_core.report.tfevents import Point, events_bytes, read_points
from tools.chaos import checks as chaos_checks

TRAIN_TAGS = {"train/loss_policy", "train/loss_value", "train/loss_ownership", "train/loss_score",
              "train/loss_l2", "train/loss_total", "train/policy_accuracy", "train/learning_rate",
              "train/examples_per_second"}  # fmt: skip


def scalars(folder: str | Path) -> dict[str, list[tuple[int, float]]]:
    """tag -> [(step, value)] of a TensorBoard run folder, as TensorBoard's accumulator reads it."""
    acc = event_accumulator.EventAccumulator(str(folder))
    acc.Reload()
    return {tag: [(e.step, e.value) for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}


def events_files(folder: str | Path) -> list[str]:
    return sorted(os.listdir(folder)) if os.path.isdir(folder) else []


@pytest.fixture
def run(tmp_path, write_config):
    """A tiny run's config file and config: 2 games a generation in jobs of 1, root `tmp_path/run`."""
    config = write_config(tmp_path, generations=2, selfplay={"games": 2, "games_per_job": 1})
    return config, load_config(str(config))


def write_metrics(cfg, generation: int, first_step: int, losses: list[float]) -> None:
    """A metrics.jsonl as `minigo train` writes it: a start record, a step record per loss, an end record."""
    records = [{"event": "start", "generation": generation, "steps": 10 * len(losses)}]
    for k, loss in enumerate(losses):
        records.append({"event": "step", "step": 10 * (k + 1), "global_step": first_step + 10 * (k + 1),
                        "lr": 0.01, "policy_loss": loss, "value_loss": loss / 2, "ownership_loss": 0.3,
                        "score_loss": 0.2, "l2_loss": 0.01, "loss": 2 * loss, "policy_accuracy": 0.25,
                        "examples_per_s": 500.0, "step_ms": 20.0, "data_wait_ms": 1.0})  # fmt: skip
    records.append({"event": "end", "steps": 10 * len(losses), "wall_s": 1.0})
    storage.write_text(
        layout.train_metrics_path(cfg.root, generation), "".join(json.dumps(r) + "\n" for r in records)
    )


def test_an_events_file_reads_back_in_tensorboards_accumulator(tmp_path):
    points = [Point(2, 20.0, {"a/x": 1.5, "a/y": 2.0}), Point(1, 10.0, {"a/x": 0.5, "a/y": float("nan")})]
    data = events_bytes(points)
    (tmp_path / "events.out.tfevents.gen0001").write_bytes(data)
    in_step_order = {"a/x": [(1, 0.5), (2, 1.5)], "a/y": [(2, 2.0)]}  # NaN left out
    assert scalars(tmp_path) == in_step_order
    assert read_points(data) == [Point(1, 10.0, {"a/x": 0.5}), Point(2, 20.0, {"a/x": 1.5, "a/y": 2.0})]
    # a file cut short or changed is found out, naming it (the chaos run's check of every visible file)
    with pytest.raises(ValueError, match="x.tfevents: the record at byte .* is cut off"):
        read_points(data[:-3], "x.tfevents")
    damaged = data[:-6] + bytes([data[-6] ^ 1]) + data[-5:]
    with pytest.raises(ValueError, match="fails its checksum"):
        read_points(damaged)
    path = tmp_path / "run/tensorboard/train/events.out.tfevents.gen0001"
    path.parent.mkdir(parents=True)
    path.write_bytes(data[:-3])
    [problem] = chaos_checks.check_run(tmp_path / "run", "run")
    assert problem.startswith("run: tensorboard/train/events.out.tfevents.gen0001 is invalid: ValueError: ")
    assert problem.endswith(" is cut off")


def test_training_scalars_one_point_per_step_record_at_the_global_step(run, make_config):
    _, cfg = run
    write_metrics(cfg, 1, 100, [2.5, 2.0, 1.5])
    url = tensorboard.write_train(cfg, 1, layout.train_metrics_path(cfg.root, 1))
    assert url == layout.tensorboard_path(cfg.root, "train", 1) and url.endswith(
        "/train/events.out.tfevents.gen0001"
    )
    got = scalars(layout.tensorboard_dir(cfg.root, "train"))
    assert set(got) == TRAIN_TAGS
    assert all([s for s, _ in points] == [110, 120, 130] for points in got.values())
    assert [v for _, v in got["train/loss_policy"]] == [2.5, 2.0, 1.5]
    assert got["train/policy_accuracy"][0][1] == 0.25 and got["train/learning_rate"][0][1] == pytest.approx(
        0.01
    )
    # a model without the auxiliary heads has no ownership or score loss to show
    tensorboard.write_train(make_config(root=cfg.root, model={"aux_heads": False}), 1)
    assert set(scalars(layout.tensorboard_dir(cfg.root, "train"))) == TRAIN_TAGS - {
        "train/loss_ownership",
        "train/loss_score",
    }
    # metrics of another work directory are not the run's: nothing written for them
    assert tensorboard.write_train(cfg, 2, "/elsewhere/metrics.jsonl") is None
    assert events_files(layout.tensorboard_dir(cfg.root, "train")) == ["events.out.tfevents.gen0001"]


def test_the_train_job_adds_each_generations_training_scalars_and_the_folder_grows(tmp_path, write_config):
    from minigo_core.bench.window import random_moves, synthetic_game
    from minigo_core.data import window
    from minigo_core.jobs import train as train_job
    from minigo_core.nn import model

    config = write_config(tmp_path, model={"backend": "torch"}, train={"ranks": 1, "backend": "torch"})
    cfg = load_config(str(config))
    rng = np.random.default_rng(1)
    for generation in (0, 1):
        for game in range(cfg.selfplay.games):
            record = synthetic_game(random_moves(5, rng, max_moves=30), 5, rng, recorded_fraction=0.9)
            gamefile.write_game(layout.game_path(cfg.root, generation, game), record)
    net = model.random_model(model.ModelConfig.from_run(cfg), seed=5)
    model.save_model(layout.model_path(cfg.root, 0), net, {"generation": 0, "global_step": 0})
    folder, logged = layout.tensorboard_dir(cfg.root, "train"), []
    for generation in (1, 2):
        window_dir = layout.window_dir(cfg.root, generation)
        window.build_window(cfg, generation, window_dir, workers="threads")
        argv = ["--config", str(config), "--generation", str(generation), "--window-dir", window_dir,
                "--parent", layout.model_path(cfg.root, generation - 1),
                "--out", layout.model_path(cfg.root, generation), "--ranks", "1"]  # fmt: skip
        assert train_job.cli_main(argv) == 0
        records = storage.read_json_lines(layout.train_metrics_path(cfg.root, generation))
        logged += [r["global_step"] for r in records if r["event"] == "step"]
        assert events_files(folder) == [f"events.out.tfevents.gen{g:04d}" for g in range(1, generation + 1)]
        got = scalars(folder)  # what TensorBoard shows now: every step record of the generations trained
        assert set(got) == TRAIN_TAGS and all([s for s, _ in v] == logged for v in got.values())
        assert all(0.0 <= v <= 1.0 for _, v in got["train/policy_accuracy"])
    assert len(logged) > 2 and logged == sorted(set(logged))  # the global steps go on across generations


def test_a_rewrite_replaces_its_points_and_leaves_no_temporary_file(run):
    _, cfg = run
    write_metrics(cfg, 1, 0, [2.5, 2.0])
    tensorboard.write_train(cfg, 1)
    write_metrics(cfg, 1, 0, [3.5, 3.0])  # the generation trained again (a rerun)
    tensorboard.write_train(cfg, 1)
    folder = layout.tensorboard_dir(cfg.root, "train")
    assert events_files(folder) == ["events.out.tfevents.gen0001"]
    assert scalars(folder)["train/loss_policy"] == [(10, 3.5), (20, 3.0)]


def test_no_half_written_file_has_a_name_tensorboard_reads(run, monkeypatch):
    _, cfg = run
    write_metrics(cfg, 1, 0, [2.5])
    folder = Path(layout.tensorboard_dir(cfg.root, "train"))
    folder.mkdir(parents=True)
    stale = folder / ".tmp-events.gen0001.999.deadbeef"  # what a writer killed before its rename left
    stale.write_bytes(b"half")
    names = []
    original = storage.temporary_name
    monkeypatch.setattr(storage, "temporary_name", lambda final: names.append(original(final)) or names[-1])
    tensorboard.write_train(cfg, 1)
    assert names and not any("tfevents" in os.path.basename(n) for n in names)
    assert events_files(folder) == ["events.out.tfevents.gen0001"]  # the stale one removed, the new renamed


def write_generation_games(cfg, generation: int, make_record, start: float) -> int:
    """Generation's game files and job records (job j: game j, its clocks from `start`); its positions."""
    positions = 0
    for job in range(cfg.selfplay.games):
        url = layout.game_path(cfg.root, generation, job)
        record = make_record(board_size=9, num_moves=30, seed=10 * generation + job)
        size, sha = gamefile.write_game_digest(url, record)
        positions += record.num_positions
        entry = {"game": job, "file": os.path.basename(url), "bytes": size, "sha256": sha,
                 "moves": len(record.moves), "positions": record.num_positions}  # fmt: skip
        attempt = {"process_start_epoch": start + 4 * job, "startup_s": 1.0, "games_wall_s": 10.0 + 5 * job,
                   "kept_from_earlier_attempt": []}  # fmt: skip
        data = {"format": "minigo-selfplay-job", "format_version": 1, "generation": generation,
                "first_game": job, "games": 1, "files": [entry], "attempt": attempt}  # fmt: skip
        storage.write_text(layout.selfplay_job_path(cfg.root, generation, job), json.dumps(data))
    return positions


def test_games_complete_adds_a_generations_selfplay_scalars_and_the_folder_grows(run, make_record):
    config, cfg = run
    folder = layout.tensorboard_dir(cfg.root, "selfplay")
    expected = {}
    for generation in (0, 1):
        positions = write_generation_games(cfg, generation, make_record, start=1000.0 + 100 * generation)
        assert games_complete_job.cli_main(["--config", str(config), "--generation", str(generation)]) == 0
        # jobs 0 and 1 play from 1001 to 1011 and from 1005 to 1020: 19 s of the generation's wall time
        expected[generation] = (cfg.selfplay.games, positions, positions / 19.0)
        assert events_files(folder) == [f"events.out.tfevents.gen{g:04d}" for g in range(generation + 1)]
        got = scalars(folder)  # what TensorBoard shows now: one point per finished generation
        assert got["generation/games"] == [(g, games) for g, (games, _, _) in expected.items()]
        assert got["generation/positions"] == [(g, p) for g, (_, p, _) in expected.items()]
        speeds = got["generation/selfplay_positions_per_second"]
        assert [s for s, _ in speeds] == list(expected)
        assert [v for _, v in speeds] == pytest.approx([s for _, _, s in expected.values()], rel=1e-6)


def test_matches_and_ratings_of_the_run_and_nothing_for_other_files(run, write_match, tmp_path):
    _, cfg = run
    for generation, winners in ((1, ["player", "opponent"]), (2, ["player", "player", "draw", "opponent"])):
        url = write_match(cfg.root, generation, "gnugo:1", winners, 1000.0 + generation)
        assert tensorboard.write_match(cfg.root, url) == layout.tensorboard_path(
            cfg.root, "eval/vs_gnugo-1", generation
        )
    assert scalars(layout.tensorboard_dir(cfg.root, "eval/vs_gnugo-1")) == {
        "generation/winrate_gnugo-1": [(1, 0.5), (2, 0.625)]
    }
    elsewhere = write_match(str(tmp_path / "other"), 1, "random", ["player"], 1.0)  # not this run's match
    assert tensorboard.write_match(cfg.root, elsewhere) is None
    for name, path in (
        ("ladder", layout.ladder_rating_path),
        ("ladder_first", layout.ladder_first_rating_path),
    ):
        rating = {"player": "gen0001", "elo": 850.0, "ci95": [800.0, 900.0], "games": 40}
        storage.write_text(path(cfg.root, 1), json.dumps(rating))
        assert tensorboard.write_rating(cfg.root, path(cfg.root, 1)) == layout.tensorboard_path(
            cfg.root, name, 1
        )
    tag = "generation/elo_fixed"
    assert scalars(layout.tensorboard_dir(cfg.root, "ladder")) == {
        tag: [(1, 850.0)],
        f"{tag}_low": [(1, 800.0)],
        f"{tag}_high": [(1, 900.0)],
    }
    assert set(scalars(layout.tensorboard_dir(cfg.root, "ladder_first"))) == {
        f"{tag}_first",
        f"{tag}_first_low",
        f"{tag}_first_high",
    }
    assert tensorboard.write_rating(cfg.root, str(tmp_path / "gen0001" / "ladder.json")) is None


def test_minigo_tensorboard_rebuilds_every_file_of_a_run(run, make_record, write_match, capsys):
    config, cfg = run
    write_generation_games(cfg, 0, make_record, 1000.0)
    storage.write_text(layout.complete_marker_path(cfg.root, 0), json.dumps({"games": 2, "positions": 20}))
    write_metrics(cfg, 1, 0, [2.0])
    write_match(cfg.root, 1, "gen0", ["player"], 1.0)
    storage.write_text(layout.ladder_rating_path(cfg.root, 1), json.dumps({"elo": 9.0, "ci95": [1.0, 20.0]}))
    storage.write_text(layout.effective_config_path(cfg.root), Path(config).read_text())
    assert tensorboard_job.cli_main(["--root", cfg.root]) == 0
    assert "wrote 4 events files" in capsys.readouterr().out
    root = Path(layout.tensorboard_dir(cfg.root))
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "eval/vs_gen0/events.out.tfevents.gen0001",
        "ladder/events.out.tfevents.gen0001",
        "selfplay/events.out.tfevents.gen0000",
        "train/events.out.tfevents.gen0001",
    ]
    assert not [rel for rel in compare.artifacts(Path(cfg.root)) if rel.startswith("tensorboard/")]


def test_a_job_whose_events_cannot_be_written_warns_and_goes_on(run, monkeypatch, caplog):
    _, cfg = run
    write_metrics(cfg, 1, 0, [2.0])

    def full(url, data, temporary_of=None):
        raise storage.DiskFullError(url, OSError(28, "No space left on device"))

    monkeypatch.setattr(storage, "write_bytes", full)
    with caplog.at_level(logging.WARNING):
        assert tensorboard.update(cfg.root, tensorboard.write_train, cfg, 1) is None
    assert "no space left on device" in caplog.text and f"minigo tensorboard --root {cfg.root}" in caplog.text


def test_a_training_step_records_its_policy_accuracy():
    import torch

    from minigo_core.nn import model, training
    from minigo_core.nn.modelfile import ModelConfig

    net = model.random_model(ModelConfig(5, 1, 8, 16, "agz", aux_heads=True), seed=3, backend="torch")
    net.train()
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, size=(8, 17, 5, 5), dtype=np.uint8)
    with torch.no_grad():
        best = copy.deepcopy(net).forward_all(torch.from_numpy(x).float())[0].argmax(dim=1).numpy()
    pi = np.zeros((8, 26), dtype=np.float32)
    pi[np.arange(8), np.where(np.arange(8) < 6, best, (best + 1) % 26)] = 1.0  # 6 of 8 the net's own choice
    mb = training.MicroBatch.from_arrays(x, pi, np.ones(8, dtype=np.float32))
    opt = torch.optim.SGD(training.param_groups(net, 1e-4), lr=0.05, momentum=0.9)
    losses, accuracy = training.sgd_step_stats(net, opt, [mb], 0.05, (1.0, 1.0, 1.0), 1, torch.device("cpu"))
    assert len(losses) == len(training.LOSSES) and accuracy == pytest.approx(0.75)
