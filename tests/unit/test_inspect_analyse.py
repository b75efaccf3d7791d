"""`minigo inspect GAME --analyse --model M`: a self-play game analysed by a model, as an SGF that sgfmill
reads with a comment at every move (win rate, score, best move); the bad uses exit 2 naming the option."""

from __future__ import annotations

import re

import numpy as np
import pytest
from sgfmill import sgf as sgfmill_sgf

from minigo_core.data.gamefile import write_game
from minigo_core.game import coords, go
from minigo_core.gtp import review
from minigo_core.jobs.inspect import cli_main

VISITS = 16


class UniformNet:
    def predict(self, planes):
        b, _, n, _ = planes.shape
        return np.full((b, n * n + 1), 1 / (n * n + 1), dtype=np.float32), np.zeros(b, dtype=np.float32)


@pytest.fixture(scope="module")
def self_play_game(tmp_path_factory):
    """A 9x9 self-play game file (a uniform net, 8 readouts a move) and its record."""
    from minigo_core.base import config
    from minigo_core.selfplay import selfplay_game

    cfg = config.from_dict({"selfplay": {"readouts": 8, "fast_readouts": 8}})
    record = selfplay_game.play_selfplay_game(UniformNet(), cfg, 0, 0, "gen0001.safetensors")
    path = tmp_path_factory.mktemp("games") / "game00000.arrow"
    write_game(str(path), record)
    return str(path), record


@pytest.fixture(scope="module")
def analysed(self_play_game, tiny_model, tmp_path_factory):
    path, record = self_play_game
    out = tmp_path_factory.mktemp("sgf") / "game.sgf"
    code = cli_main([path, "--analyse", "--model", tiny_model, "--visits", str(VISITS), "--threads", "1",
                     "--out", str(out)])  # fmt: skip
    assert code == 0
    return sgfmill_sgf.Sgf_game.from_bytes(out.read_bytes()), record


def legal_vertex(text: str, position: go.Position) -> bool:
    if text == "pass":
        return True
    move = coords.from_gtp(text, position.board_size)
    return move is not None and position.is_move_legal(move)


def test_every_move_has_a_comment_with_win_rate_and_best_move(analysed):
    game, record = analysed
    assert game.get_size() == 9 and game.get_komi() == record.komi
    nodes = [node for node in game.get_main_sequence() if node.get_move()[0] is not None]
    assert len(nodes) == len(record.moves) > 20
    played = [None if p is None else (8 - p[0], p[1]) for _, p in (node.get_move() for node in nodes)]
    assert played == record.moves
    positions = record.positions()
    for i, node in enumerate(nodes):
        comment = node.get("C")
        mover = "Black" if i % 2 == 0 else "White"
        assert comment.startswith(f"{mover} to move: Black "), comment
        assert re.search(r"Black \d+\.\d% \(score (B\+|W\+|0)", comment), comment
        assert int(re.search(r"after (\d+) visits", comment).group(1)) >= VISITS, comment
        best = re.search(r"best: (\S+) \(pv ([^)]*)\)", comment)
        assert best, comment
        assert legal_vertex(best.group(1), positions[i]), (i, best.group(1))
        assert best.group(2).split()[0] == best.group(1)
        assert f"played: {coords.to_gtp(record.moves[i], 9)}" in comment
        assert 0.0 <= float(node.get_raw("SBKV")) <= 100.0
        assert ("mistake?" in comment) == node.has_property("BM")
    root = game.get_root().get("C")
    assert "tiny.safetensors" in root and f"{VISITS} visits" in root


def test_the_final_position_of_a_finished_game_is_its_result(analysed):
    game, record = analysed
    last = [node for node in game.get_main_sequence() if node.get_move()[0] is not None][-1]
    assert not record.resigned  # two passes, or the move limit: the final position is scored, not searched
    final = record.positions()[-1]
    assert "the game is over" in last.get("C") and review.score_text(final.score()) in last.get("C")
    assert game.get_root().get("RE") == review.score_text(final.score())


def test_to_stdout_by_default(self_play_game, tiny_model, capsys):
    path, record = self_play_game
    assert cli_main([path, "--analyse", "--model", tiny_model, "--visits", "2", "--threads", "1"]) == 0
    data = capsys.readouterr().out.encode()
    game = sgfmill_sgf.Sgf_game.from_bytes(data)
    assert len([n for n in game.get_main_sequence() if n.get_move()[0] is not None]) == len(record.moves)


def test_mistakes_are_marked():
    before = review.TurnAnalysis(3, go.WHITE, 0.40, -1.0, 16, "E5", ("E5", "D4"))
    after = review.TurnAnalysis(4, go.BLACK, 0.55, 0.5, 16, "C3", ("C3",))
    comment = review.move_comment(before, after, "D4")
    assert comment.startswith("White to move: Black 40.0% (score W+1.0) after 16 visits; best: E5 (pv E5 D4)")
    assert "played: D4" in comment and "White's win rate -15.0%: mistake?" in comment
    assert review.is_mistake(before, after)
    fair = review.TurnAnalysis(4, go.BLACK, 0.45, 0.0, 16, "C3")
    assert not review.is_mistake(before, fair) and "mistake?" not in review.move_comment(before, fair, "D4")


def test_analyse_needs_a_model(self_play_game, capsys):
    path, _ = self_play_game
    assert cli_main([path, "--analyse"]) == 2
    assert "--analyse needs --model" in capsys.readouterr().err
    assert cli_main([path, "--model", "m.safetensors"]) == 2
    assert "--analyse" in capsys.readouterr().err


def test_analyse_needs_a_game_file(tmp_path, tiny_model, capsys, self_play_game):
    path, _ = self_play_game
    assert cli_main([tiny_model, "--analyse", "--model", tiny_model]) == 2
    assert "--analyse analyses a game file" in capsys.readouterr().err
    folder = str(tmp_path)
    assert cli_main([folder, "--analyse", "--model", tiny_model]) == 2
    assert "--analyse analyses a game file" in capsys.readouterr().err
    junk = tmp_path / "junk.arrow"
    junk.write_text("hello")
    assert cli_main([str(junk), "--analyse", "--model", tiny_model]) == 2
    assert "--analyse" in capsys.readouterr().err
    assert cli_main([path, "--analyse", "--model", str(tmp_path / "none.safetensors")]) == 2
    assert "--model" in capsys.readouterr().err


def test_the_model_must_play_the_game_s_board(tmp_path, tiny_model, make_record, capsys):
    path = tmp_path / "game7.arrow"
    write_game(str(path), make_record(7, num_moves=20, seed=1))
    assert cli_main([str(path), "--analyse", "--model", tiny_model, "--threads", "1"]) == 2
    err = capsys.readouterr().err
    assert "--model" in err and "9x9" in err and "7x7" in err
