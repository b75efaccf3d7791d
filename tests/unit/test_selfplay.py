"""Self-play: reproducible games, playout-cap randomisation, resignation, the `minigo selfplay` command."""

from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest
import torch

from minigo_core.base import config
from minigo_core.data.gamefile import game_bytes, read_game
from minigo_core.game import go
from minigo_core.jobs.selfplay import cli_main
from minigo_core.nn import model
from minigo_core.selfplay.selfplay_game import game_rng, play_selfplay_game


def run_config(board_size: int = 9, **selfplay) -> config.RunConfig:
    sp = dict(readouts=16, fast_readouts=8, parallel_readouts=8, full_search_fraction=0.25)
    sp.update(selfplay)
    return config.from_dict(
        {
            "board_size": board_size,
            "seed": 5,
            "features": "agz",  # the planes these tests read
            "model": {"blocks": 1, "filters": 8, "fc_width": 8, "backend": "torch"},
            "selfplay": sp,
        }
    )


@pytest.fixture(scope="module")
def tiny_net():
    torch.set_num_threads(1)
    return model.random_model(model.ModelConfig.from_run(run_config()), seed=3, backend="torch")


class ConstantNet:
    """Uniform prior (or a strong pass prior) and a constant value from Black's view: drives resignation."""

    def __init__(self, value_black: float, pass_prior: float | None = None) -> None:
        self.value_black = value_black
        self.pass_prior = pass_prior

    def predict(self, planes):
        b, _, n, _ = planes.shape
        probs = np.full((b, n * n + 1), 1.0, dtype=np.float32)
        if self.pass_prior is not None:
            probs[:, :-1] = (1 - self.pass_prior) / (n * n)
            probs[:, -1] = self.pass_prior
        probs /= probs.sum(1, keepdims=True)
        to_play = np.where(
            planes[:, -1, 0, 0] == 1, 1.0, -1.0
        )  # agz: last plane all ones if Black is to move
        return probs, (self.value_black * to_play).astype(np.float32)


def test_same_seed_gives_identical_file_and_other_games_differ(tiny_net):
    cfg = run_config()
    first = play_selfplay_game(tiny_net, cfg, 2, 7, "models/gen0002.safetensors", model_sha256="ab")
    a = game_bytes(first)
    b = game_bytes(play_selfplay_game(tiny_net, cfg, 2, 7, "models/gen0002.safetensors", model_sha256="ab"))
    assert a == b
    # Compact: a fixed header (schema, metadata, move list) plus a few tens of bytes per recorded position
    # (the benchmark measures the per-position figure on full-length games against the 150-byte target).
    assert len(a) < 1600 + 60 * first.num_positions, (len(a), first.num_positions)
    c = play_selfplay_game(tiny_net, cfg, 2, 8, "models/gen0002.safetensors", model_sha256="ab")
    assert game_bytes(c) != a
    assert game_rng(5, 2, 7).random() == game_rng(5, 2, 7).random() != game_rng(5, 2, 8).random()


def test_game_record_is_consistent(tiny_net):
    cfg = run_config()
    record = play_selfplay_game(tiny_net, cfg, 0, 1, "m.safetensors")
    md = record.metadata
    positions = go.replay(record.moves, 9, cfg.komi)  # every move legal
    assert md["num_moves"] == len(record.moves) <= 2 * 81
    assert (
        md["board_size"] == 9
        and md["features"] == "agz"
        and md["seed"] == {"run_seed": 5, "generation": 0, "game": 1}
    )
    final = positions[-1]
    if not md["result"]["resigned"]:
        assert final.is_game_over() or final.n == 162
        assert md["result"]["score"] == final.score()
        assert md["result"]["winner"] == np.sign(final.score())
    # Recorded positions: full searches only, about a quarter of the moves; value target: the mover's view.
    assert 0 < record.num_positions < len(record.moves)
    assert record.full_search.all()
    assert (np.diff(record.move_index) > 0).all()
    assert (record.visits.sum(axis=1) >= cfg.selfplay.readouts).all()
    for i, k in enumerate(record.move_index):
        assert record.value_target[i] == md["result"]["winner"] * positions[k].to_play
        legal = positions[k].all_legal_moves()
        assert record.visits[i][~legal].sum() == 0


def test_every_move_recorded_with_full_search_fraction_one(tiny_net):
    record = play_selfplay_game(tiny_net, run_config(full_search_fraction=1.0), 0, 0, "m.safetensors")
    assert record.num_positions == len(record.moves)
    assert list(record.move_index) == list(range(len(record.moves)))


def test_resignation_ends_the_game():
    cfg = run_config(resign_threshold=-0.5, resign_disabled_fraction=0.0)
    record = play_selfplay_game(ConstantNet(-0.9), cfg, 0, 0, "m.safetensors")
    result = record.metadata["result"]
    assert result["resigned"] and result["winner"] == -1 and result["string"] == "W+R"
    assert record.metadata["num_moves"] == 0 and record.metadata["resign"]["enabled"]


def test_resignation_disabled_records_would_be_resignation():
    cfg = run_config(resign_threshold=-0.5, resign_disabled_fraction=1.0)
    record = play_selfplay_game(ConstantNet(-0.9, pass_prior=0.9), cfg, 0, 0, "m.safetensors")
    resign = record.metadata["resign"]
    assert not resign["enabled"]
    assert not record.metadata["result"]["resigned"]
    assert resign["would_resign_move"] == 0 and resign["would_resign_color"] == "B"
    assert resign["false_positive"] == (record.metadata["result"]["winner"] == 1)


def test_nineteen_by_nineteen_game():
    cfg = run_config(board_size=19)
    record = play_selfplay_game(ConstantNet(0.0, pass_prior=0.95), cfg, 0, 0, "m.safetensors")
    assert record.visits.shape[1] == 362
    assert record.metadata["search"]["dirichlet_alpha"] == pytest.approx(0.03)


def test_cli_writes_game_file_and_job_record(tmp_path, tiny_net):
    cfg_path = tmp_path / "config.yaml"
    cfg_path.write_text(
        json.dumps(
            {
                "board_size": 9,
                "seed": 5,
                "root": str(tmp_path / "run"),
                "model": {"blocks": 1, "filters": 8, "fc_width": 8},
                "selfplay": {"readouts": 16, "fast_readouts": 8},
            }
        )
    )
    model_path = str(tmp_path / "gen0001.safetensors")
    model.save_model(model_path, tiny_net, {"generation": 1})
    out = str(tmp_path / "games" / "gen0001" / "game00004.arrow")
    argv = [
        "--config",
        str(cfg_path),
        "--model",
        model_path,
        "--generation",
        "1",
        "--game",
        "4",
        "--out",
        out,
        "--backend",
        "torch",
    ]
    job_record = str(tmp_path / "games" / "gen0001" / "job00004.json")
    assert cli_main(argv + ["--record", job_record]) == 0
    record = read_game(out)
    assert record.metadata["model"]["sha256"] == model.model_digest(model_path)
    assert record.metadata["model"]["generation"] == 1
    job = json.loads(open(job_record).read())
    assert job["files"] == [
        {
            "game": 4,
            "file": "game00004.arrow",
            "bytes": os.path.getsize(out),
            "sha256": hashlib.sha256(open(out, "rb").read()).hexdigest(),
            "moves": record.metadata["num_moves"],
            "positions": record.metadata["num_positions"],
            "result": record.metadata["result"]["string"],
        }
    ]
    assert job["attempt"]["startup_s"] > 0 and job["attempt"]["games"][0]["game"] == 4
    first = open(out, "rb").read()
    assert cli_main(argv + ["--replay"]) == 0  # played again: the same bytes
    assert open(out, "rb").read() == first
    assert [p.name for p in (tmp_path / "games" / "gen0001").iterdir() if p.name.startswith(".tmp")] == []


def test_cli_rejects_mismatched_board_size(tmp_path, tiny_net, capsys):
    cfg_path = tmp_path / "config.yaml"
    cfg_path.write_text(json.dumps({"board_size": 13}))
    model_path = str(tmp_path / "m.safetensors")
    model.save_model(model_path, tiny_net, {"generation": 0})
    argv = [
        "--config",
        str(cfg_path),
        "--model",
        model_path,
        "--generation",
        "0",
        "--game",
        "0",
        "--out",
        str(tmp_path / "g.arrow"),
        "--backend",
        "torch",
    ]
    assert cli_main(argv) == 2
    assert "13" in capsys.readouterr().err


def test_cli_count_plays_several_games_each_identical_to_a_single_game_job(tmp_path, tiny_net):
    cfg_path = tmp_path / "config.yaml"
    cfg_path.write_text(
        json.dumps(
            {
                "board_size": 9,
                "seed": 5,
                "model": {"blocks": 1, "filters": 8, "fc_width": 8},
                "selfplay": {"readouts": 8, "fast_readouts": 8},
            }
        )
    )
    model_path = str(tmp_path / "gen0002.safetensors")
    model.save_model(model_path, tiny_net, {"generation": 2})
    common = ["--config", str(cfg_path), "--model", model_path, "--generation", "2", "--backend", "torch"]
    pattern = str(tmp_path / "many" / "game{game:05d}.arrow")
    assert cli_main(common + ["--game", "3", "--count", "2", "--out", pattern]) == 0
    single = str(tmp_path / "one" / "game00004.arrow")
    assert cli_main(common + ["--game", "4", "--out", single]) == 0
    assert open(single, "rb").read() == (tmp_path / "many" / "game00004.arrow").read_bytes()
    assert read_game(str(tmp_path / "many" / "game00003.arrow")).metadata["seed"]["game"] == 3
    with pytest.raises(SystemExit):
        cli_main(common + ["--game", "0", "--count", "2", "--out", single])
