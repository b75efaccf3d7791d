"""`minigo inspect`: summary, board at a move, SGF export read back by sgfmill, model files, directories."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from sgfmill import sgf as sgfmill_sgf

from minigo_core.data.gamefile import GameRecord, write_game
from minigo_core.game import coords
from minigo_core.jobs.inspect import cli_main
from minigo_core.nn import model
from minigo_core.report.inspect import board_at, top_moves


def game_record() -> GameRecord:
    moves = [(2, 2), (6, 6), None, (2, 6), (6, 2), None, None]
    visits = np.zeros((2, 82), dtype=np.int64)
    visits[0, [coords.to_flat((2, 2), 9), coords.to_flat((4, 4), 9), 81]] = [40, 20, 4]
    visits[1, [coords.to_flat((2, 6), 9), coords.to_flat((6, 2), 9)]] = [50, 14]
    metadata = {
        "format": "minigo-game",
        "format_version": 2,
        "board_size": 9,
        "komi": 7.5,
        "features": "agz",
        "result": {"winner": -1, "score": -7.5, "resigned": False},
        "model": {"url": "models/gen0002.safetensors", "generation": 2, "sha256": "abcdef"},
        "resign": {
            "enabled": False,
            "threshold": -0.9,
            "would_resign_move": 3,
            "would_resign_color": "W",
            "false_positive": True,
        },
    }
    return GameRecord(
        metadata=metadata,
        moves=moves,
        move_index=np.array([0, 3]),
        visits=visits,
        value_target=np.array([-1.0, 1.0], dtype=np.float32),
        full_search=np.ones(2, dtype=bool),
        root_value=np.array([0.25, -0.5], dtype=np.float32),
    )


@pytest.fixture()
def game_file(tmp_path):
    path = tmp_path / "games" / "game00000.arrow"
    write_game(str(path), game_record())
    return path


def test_summary_and_final_board(game_file, capsys):
    assert cli_main([str(game_file)]) == 0
    out = capsys.readouterr().out
    assert "W+7.5" in out and "7 moves, 2 positions recorded" in out
    assert "models/gen0002.safetensors" in out and "generation 2" in out
    assert "W would have resigned at move 3, wrongly" in out
    assert "final position" in out


def test_board_at_a_recorded_move_shows_top_moves(game_file, capsys):
    assert cli_main([str(game_file), "--move", "3"]) == 0
    out = capsys.readouterr().out
    assert "move 3: White played G7" in out
    assert "G7     50 visits" in out and "C3     14 visits" in out
    assert "root value -0.500" in out
    lines = out.splitlines()
    board_rows = [line for line in lines if line[:2].strip().isdigit() and len(line.split()) == 10]
    assert board_rows[2].split()[3] == "X"  # C7 (row 2, col 2) is Black's first move
    assert cli_main([str(game_file), "--move", "1"]) == 0
    assert "fast search: not recorded" in capsys.readouterr().out


def test_bad_move_number_is_an_error(game_file, capsys):
    assert cli_main([str(game_file), "--move", "99"]) == 1
    assert "0..7" in capsys.readouterr().err


def test_sgf_export_reads_back_with_sgfmill(game_file, tmp_path):
    out = tmp_path / "game.sgf"
    assert cli_main([str(game_file), "--sgf", str(out)]) == 0
    game = sgfmill_sgf.Sgf_game.from_bytes(out.read_bytes())
    assert game.get_size() == 9 and game.get_komi() == 7.5
    assert game.get_root().get("RE") == "W+7.5"
    nodes = [node for node in game.get_main_sequence() if node.get_move()[0] is not None]
    moves = [None if p is None else (8 - p[0], p[1]) for _, p in (node.get_move() for node in nodes)]
    assert moves == game_record().moves
    assert [node.get_move()[0] for node in nodes] == ["b", "w"] * 3 + ["b"]
    assert "C7 40 (62%)" in nodes[0].get("C") and "E5 20" in nodes[0].get("C")
    assert "G7 50" in nodes[3].get("C")
    assert not nodes[1].has_property("C")


class UniformNet:
    def predict(self, planes):
        b, _, n, _ = planes.shape
        return np.full((b, n * n + 1), 1 / (n * n + 1), dtype=np.float32), np.zeros(b, dtype=np.float32)


SEARCH = {
    "readouts": 16,
    "full_search_fraction": 0.25,
    "fast_readouts": 8,
    "parallel_readouts": 8,
    "dirichlet_alpha": 0.03,
    "dirichlet_weight": 0.25,
    "softpick_moves": 30,
    "init_unvisited": "parent",
}


@pytest.mark.parametrize(
    ("search", "shown"),
    [
        ({}, "search: puct, 16 readouts"),  # written before `selfplay.search` existed
        ({"search": "puct"}, "search: puct, 16 readouts"),
        (
            {"search": "gumbel", "gumbel_considered": 8, "gumbel_c_visit": 50.0, "gumbel_c_scale": 1.0},
            "search: gumbel (m 8, c_visit 50.0, c_scale 1.0), 16 readouts",
        ),
    ],
)
def test_summary_names_the_search(tmp_path, capsys, search, shown):
    record = game_record()
    record.metadata["search"] = {**SEARCH, **search}
    path = tmp_path / "game00000.arrow"
    write_game(str(path), record)
    assert cli_main([str(path)]) == 0
    assert shown in capsys.readouterr().out


def test_sgf_of_a_self_play_game_reads_back(tmp_path):
    from minigo_core.base import config
    from minigo_core.selfplay import selfplay_game

    cfg = config.from_dict({"selfplay": {"readouts": 8, "fast_readouts": 8}})
    record = selfplay_game.play_selfplay_game(UniformNet(), cfg, 0, 0, "m.safetensors")
    path = tmp_path / "game.arrow"
    write_game(str(path), record)
    out = tmp_path / "game.sgf"
    assert cli_main([str(path), "--sgf", str(out)]) == 0
    game = sgfmill_sgf.Sgf_game.from_bytes(out.read_bytes())
    played = [node.get_move()[1] for node in game.get_main_sequence() if node.get_move()[0] is not None]
    assert [None if p is None else (8 - p[0], p[1]) for p in played] == record.moves
    assert len(record.moves) > 20


def test_directory_listing_names_bad_files(game_file, capsys):
    (game_file.parent / "game00001.arrow").write_bytes(b"junk")
    assert cli_main([str(game_file.parent)]) == 0
    out = capsys.readouterr().out
    assert "game00000.arrow" in out and "W+7.5" in out
    assert "game00001.arrow" in out and "BAD" in out and "2 game files, 1 bad" in out


def test_model_file(tmp_path, capsys):
    torch.manual_seed(0)
    cfg = model.ModelConfig(board_size=9, blocks=1, filters=8, fc_width=8, feature_set="agz")
    net = model.DualNet(cfg)
    path = tmp_path / "gen0000.safetensors"
    model.save_model(str(path), net, {"generation": 0, "seed": 1})
    assert cli_main([str(path)]) == 0
    out = capsys.readouterr().out
    assert f"parameters: {sum(p.numel() for p in net.parameters())}" in out
    assert '"blocks": 1' in out and '"generation": 0' in out


def test_missing_and_foreign_files(tmp_path, capsys):
    assert cli_main([str(tmp_path / "nope.arrow")]) == 1
    assert "does not exist" in capsys.readouterr().err
    junk = tmp_path / "junk.arrow"
    junk.write_text("hello")
    assert cli_main([str(junk)]) == 1
    assert "not a MiniGo game file" in capsys.readouterr().err


def test_top_moves_orders_by_visits():
    visits = np.zeros(82, dtype=np.int64)
    visits[[0, 5, 81]] = [3, 9, 1]
    assert top_moves(visits, 9, 2) == [("F9", 9, 9 / 13), ("A9", 3, 3 / 13)]


def test_final_position_shows_the_ownership_target(make_record):
    record = make_record(7, num_moves=60, seed=2)
    text = board_at(record, len(record.moves))
    assert "ownership target" in text and f"score {record.positions()[-1].score():+g}" in text
    grid = [line.split() for line in text.splitlines() if line.startswith("    ")][-7:]
    assert len(grid) == 7 and all(len(row) == 7 and set(row) <= {"B", "W", "."} for row in grid)
