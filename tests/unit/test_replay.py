"""The compiled replay of a game (`game/native_replay.py`, `game/csrc/replay.cpp`) against the Python rules:
the same planes, colours to move, ownership and score as go.replay + features.extract_batch +
Position.ownership/score, and a window built with it byte for byte the window of the Python path."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from minigo_core.base import config, native
from minigo_core.bench.window import random_moves, synthetic_game
from minigo_core.data import gamefile, layout, storage, window
from minigo_core.game import coords, features, go, native_board, native_replay
from minigo_core.search import engine


@pytest.fixture(scope="module", autouse=True)
def _engine_built(compiled_library):
    compiled_library(native_replay.LIBRARY)  # skips without the build, fails under CI=true


def _game(board_size: int, rng: np.random.Generator, max_moves: int, pass_rate: float) -> list[coords.Move]:
    """A random legal game with passes anywhere (`pass_rate` a move), eyes filled too: captures and kos."""
    position = go.Position(board_size)
    moves: list[coords.Move] = []
    while len(moves) < max_moves and not position.is_game_over():
        legal = np.flatnonzero(position.all_legal_moves()[:-1])
        move = (
            None
            if legal.size == 0 or rng.random() < pass_rate
            else divmod(int(rng.choice(legal)), board_size)
        )
        position = position.play_move(move)
        moves.append(move)
    return moves


def _python(moves: list, board_size: int, komi: float, feature_set: str, at: np.ndarray):
    positions = go.replay(moves, board_size, komi)
    planes = features.extract_batch([positions[int(i)] for i in at], feature_set)
    to_play = np.array([positions[int(i)].to_play for i in at], dtype=np.int8)
    return positions, planes, to_play, positions[-1].ownership(), positions[-1].score()


def _assert_same(moves: list, board_size: int, komi: float, feature_set: str, at: np.ndarray) -> list:
    positions, planes, to_play, own, score = _python(moves, board_size, komi, feature_set, at)
    r = native_replay.replay_examples(moves, board_size, komi, feature_set, at)
    assert r.planes.dtype == np.uint8 and r.planes.shape == planes.shape
    np.testing.assert_array_equal(r.planes, planes)
    np.testing.assert_array_equal(r.to_play, to_play)
    assert r.ownership.dtype == np.int8
    np.testing.assert_array_equal(r.ownership, own)
    assert r.score == score  # exactly: the same double
    return positions


@pytest.mark.parametrize("feature_set", ["agz", "mlperf07"])
@pytest.mark.parametrize(("board_size", "games", "komi"), [(5, 40, 0.5), (9, 12, 7.5), (19, 2, 6.0)])
def test_the_compiled_replay_is_the_python_one(board_size, games, komi, feature_set):
    rng = np.random.default_rng(board_size * 100 + len(feature_set))
    captures = kos = passes = 0
    for g in range(games):
        moves = _game(board_size, rng, 3 * board_size * board_size, pass_rate=[0.0, 0.03, 0.2][g % 3])
        every = np.arange(len(moves) + 1)  # every position, the final one included
        positions = _assert_same(moves, board_size, komi, feature_set, every)
        captures += sum(positions[-1].caps)
        kos += sum(p.ko is not None for p in positions)
        passes += moves.count(None)
    assert captures and kos and passes  # the games exercised the rules that matter


def test_requested_positions_in_any_order_with_repeats():
    rng = np.random.default_rng(1)
    moves = random_moves(9, rng)
    at = rng.integers(0, len(moves) + 1, size=50)
    _assert_same(moves, 9, 7.5, "mlperf07", at)
    none = native_replay.replay_examples(moves, 9, 7.5, "agz", [])  # only the final position's targets
    assert none.planes.shape == (0, 17, 9, 9) and none.to_play.shape == (0,)
    assert np.array_equal(none.ownership, go.replay(moves, 9, 7.5)[-1].ownership())
    _assert_same([], 9, 7.5, "agz", np.array([0, 0]))  # the empty board: nobody owns anything
    _assert_same([None, None], 5, 0.5, "agz", np.array([2, 1, 0]))


def _record(moves: list, board_size: int, seed: int, resigned: bool, feature_set: str) -> gamefile.GameRecord:
    record = synthetic_game(moves, board_size, np.random.default_rng(seed), feature_set)
    result = {**record.metadata["result"], "resigned": resigned}
    return dataclasses.replace(record, metadata={**record.metadata, "result": result})


def _python_replayed_examples(record: gamefile.GameRecord, rows: np.ndarray, feature_set: str):
    """The Python path `window.sample_game` took before the compiled replay (the reference)."""
    positions = record.positions()
    planes = features.extract_batch([positions[int(i)] for i in record.move_index[rows]], feature_set)
    own, score = record.aux_targets(rows, positions)
    return planes, own, score


@pytest.mark.parametrize("resigned", [False, True])
@pytest.mark.parametrize("board_size", [5, 9, 19])
def test_record_examples_are_the_python_ones(board_size, resigned):
    rng = np.random.default_rng(board_size)
    for seed, feature_set in enumerate(["agz", "mlperf07"]):
        record = _record(
            _game(board_size, rng, 2 * board_size**2, 0.02), board_size, seed, resigned, feature_set
        )
        rows = np.sort(rng.choice(record.num_positions, size=record.num_positions // 2, replace=False))
        got = record.replayed_examples(rows, feature_set)
        want = _python_replayed_examples(record, rows, feature_set)
        for a, b in zip(got, want, strict=True):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_array_equal(a, b)  # NaN scores of a resigned game compare equal here
        assert np.isnan(got[2]).all() == resigned


def _write_window_games(root: str, board_size: int) -> None:
    rng = np.random.default_rng(5)
    for gen in (0, 1):
        for i in range(6):
            moves = _game(board_size, rng, 2 * board_size**2, [0.0, 0.05][i % 2])
            record = _record(moves, board_size, 10 * gen + i, resigned=i % 3 == 0, feature_set="agz")
            gamefile.write_game(layout.game_path(root, gen, i), record)


@pytest.mark.parametrize(("board_size", "feature_set"), [(9, "agz"), (5, "mlperf07")])
def test_a_window_is_byte_identical_to_the_python_path(tmp_path, monkeypatch, board_size, feature_set):
    root = str(tmp_path / "run")
    _write_window_games(root, board_size)
    cfg = config.from_dict(
        {
            "root": root,
            "board_size": board_size,
            "features": feature_set,
            "seed": 3,
            "window": {"generations": 2, "sample_fraction": 0.6},
            "train": {"ranks": 2},
        }
    )
    compiled = window.build_window(cfg, 2, str(tmp_path / "c"), workers="threads")
    monkeypatch.setattr(gamefile.GameRecord, "replayed_examples", _python_replayed_examples)
    python = window.build_window(cfg, 2, str(tmp_path / "p"), workers="threads")
    assert compiled["rows"] == python["rows"] > 0 and not compiled["skipped"]
    assert [s["sha256"] for s in compiled["shards"]] == [s["sha256"] for s in python["shards"]]
    for s in compiled["shards"]:
        a = storage.read_bytes(storage.join(str(tmp_path / "c"), s["name"]))
        assert a == storage.read_bytes(storage.join(str(tmp_path / "p"), s["name"]))


def _illegal_games() -> dict[str, list]:
    """Move lists with one illegal move each: an occupied point, a suicide, a ko retaken at once."""
    ko = [(0, 1), (0, 2), (1, 0), (1, 3), (2, 1), (2, 2), (1, 2), (1, 1), (1, 2)]  # W takes at B2; B retakes
    return {
        "the point is occupied": [(2, 2), (3, 3), (2, 2)],
        "it is suicide": [(0, 1), None, (1, 0), (0, 0)],
        "it retakes a ko": ko,
    }


@pytest.mark.parametrize("why", list(_illegal_games()))
def test_an_illegal_move_is_named_as_the_python_rules_name_it(why):
    moves = _illegal_games()[why]
    with pytest.raises(go.IllegalMove) as python:
        go.replay(moves, 5, 0.5)
    with pytest.raises(go.IllegalMove) as compiled:
        native_replay.replay_examples(moves, 5, 0.5, "agz", [0, len(moves)])
    assert str(compiled.value) == str(python.value)
    assert str(python.value).startswith(f"move {len(moves)}: ") and why in str(python.value)


def test_a_game_that_does_not_replay_is_skipped_with_the_reason(tmp_path):
    root = str(tmp_path / "run")
    rng = np.random.default_rng(2)
    moves = random_moves(9, rng, max_moves=30)
    bad = [*moves[:10], moves[3], *moves[10:]]  # move 11 plays on a stone
    url = layout.game_path(root, 0, 0)
    gamefile.write_game(url, synthetic_game(bad, 9, rng, recorded_fraction=1.0))
    cfg = config.from_dict({"root": root, "board_size": 9, "window": {"sample_fraction": 1.0}})
    sample = window.sample_game(0, 0, url, cfg, 1, 17)
    assert sample.batch is None and sample.skipped is not None
    assert sample.skipped.startswith(
        f"GameFileError: game file {url}: its move list does not replay (move 11: "
    )
    assert sample.skipped.endswith("is illegal: the point is occupied)")


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="positions 0..41 asked of a game of 40 moves"):
        native_replay.replay_examples([None] * 40, 9, 7.5, "agz", [0, 41])
    with pytest.raises(ValueError, match="unknown feature set"):
        native_replay.replay_examples([], 9, 7.5, "nope", [0])
    with pytest.raises(ValueError, match="refused its arguments: board size 20"):
        native_replay.replay_examples([], 20, 7.5, "agz", [0])


def test_the_board_table_and_the_replay_table_share_the_rules_library():
    """The Go rules are one library of `game/` (`_rules`): the replay's table and the board's are declared on
    one handle; the searcher's library compiles the board in but exports neither."""
    handle = native.load(native_replay.LIBRARY)
    assert native.load(native_board.LIBRARY) is handle
    assert handle.mg_board_create.argtypes is not None and handle.mg_replay_examples.argtypes is not None
    assert not hasattr(native.load(engine.LIBRARY), "mg_replay_examples")
    other = native.Library("minigo_core.game", "_rules", {"mg_replay_examples": (None, [])})
    with pytest.raises(ValueError, match="mg_replay_examples is declared differently by two tables"):
        native.load(other)
    assert native.loaded(other) is None


def test_an_engine_library_not_built_fails_the_window_not_the_file(tmp_path, monkeypatch):
    root = str(tmp_path / "run")
    rng = np.random.default_rng(4)
    url = layout.game_path(root, 0, 0)
    gamefile.write_game(
        url, synthetic_game(random_moves(9, rng, max_moves=20), 9, rng, recorded_fraction=1.0)
    )
    cfg = config.from_dict({"root": root, "board_size": 9, "window": {"sample_fraction": 1.0}})

    def not_built(*args, **kwargs):
        raise native.NativeUnavailable("the compiled library minigo_core/search/_engine*.so is not built")

    monkeypatch.setattr(native_replay, "replay_examples", not_built)
    with pytest.raises(native.NativeUnavailable, match="is not built"):
        window.sample_game(0, 0, url, cfg, 1, 17)
