"""Pachi (`pachi:N`) and komi shifts (`SPEC+kP` / `SPEC-kP`): the grammar and its errors, the config form,
slugs that round-trip; the referee playing and scoring a game at the shifted komi (and its SGF saying so);
where the Pachi executable is found; a real `pachi:500` game against `uct:64` that finishes legally and
replays from its seeds, with its CPU counted across the processes it starts, one per game.

The Pachi games need the executable `make pachi` builds (.venv/bin/pachi, or $MINIGO_PACHI): without it they
skip, except under CI=true, where they fail."""

from __future__ import annotations

import os
import re
import sys

import pytest

from minigo_core.base.config import ConfigError, SearchSettings
from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError
from minigo_core.data.matchfile import ENDINGS
from minigo_core.game import coords, go
from minigo_core.game.result import result_string
from minigo_core.play import gtp_program
from minigo_core.play.gtp_program import PACHI_ENV, find_pachi
from minigo_core.play.match import game_sgf
from minigo_core.play.players import (
    PachiPlayer,
    PlayerError,
    RandomPlayer,
    UCTPlayer,
    make_player,
    resolve_spec,
)
from minigo_core.play.referee import referee_game

KOMI = 7.5

# ------------------------------------------------------------------------------------------------ grammar


@pytest.mark.parametrize(
    ("text", "name", "kind", "playouts", "komi_points", "slug"),
    [
        ("pachi:500", "pachi:500", "pachi", 500, None, "pachi-500"),
        ("pachi:02000", "pachi:2000", "pachi", 2000, None, "pachi-2000"),
        ("gnugo:10+k8", "gnugo:10+k8", "gnugo", None, 8.0, "gnugo-10+k8"),
        ("gnugo:1-k10.5", "gnugo:1-k10.5", "gnugo", None, -10.5, "gnugo-1-k10.5"),
        ("uct:64+k3", "uct:64+k3", "uct", 64, 3.0, "uct-64+k3"),
        ("uct:064+k3.00", "uct:64+k3", "uct", 64, 3.0, "uct-64+k3"),
        ("pachi:500-k100", "pachi:500-k100", "pachi", 500, -100.0, "pachi-500-k100"),
        ("gnugo:0+k0.5", "gnugo:0+k0.5", "gnugo", None, 0.5, "gnugo-0+k0.5"),
    ],
)
def test_pachi_and_komi_specs_parse_to_one_name(text, name, kind, playouts, komi_points, slug, make_config):
    spec = PlayerSpec.parse(text)
    assert (spec.text, spec.kind, spec.playouts, spec.komi_points, spec.slug) == (
        name,
        kind,
        playouts,
        komi_points,
        slug,
    )
    assert spec.random_percent is None and spec.generation_at(4) is None
    assert spec.rating_name(4) == name  # a komi-shifted player is a rung of its own
    assert PlayerSpec.from_slug(spec.slug) == spec
    assert PlayerSpec.parse(name) == spec
    assert PlayerSpec.parse_config(text, "evaluate.opponents[0]") == spec
    cfg = make_config(evaluate={"opponents": [text]})
    assert cfg.evaluate.opponents[0] == text


@pytest.mark.parametrize(
    "text", ["gnugo:1+k12.3456789", "gnugo:1+k0.00001", "uct:2+r0.000001", "uct:3-k99.99"]
)
def test_a_suffix_number_keeps_its_digits_so_the_name_parses_back_to_the_same_spec(text):
    """The name is the spec's identity (results files, ladder rungs): it must read back as the same spec,
    not as a rounded one (12.3457) or an exponent the grammar refuses (1e-05)."""
    spec = PlayerSpec.parse(text)
    assert spec.text == text
    assert PlayerSpec.parse(spec.text) == spec
    assert PlayerSpec.from_slug(spec.slug) == spec


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("pachi:499", ">= 500"),
        ("pachi:0", ">= 500"),
        ("pachi:500+r3", "pachi:N with N >= 500"),
        ("pachi:", "pachi:N with N >= 500"),
        ("pachi:5e2", "pachi:N with N >= 500"),
        ("gnugo:1+k0", "0 < P <= 100"),
        ("uct:8-k0.0", "0 < P <= 100"),
        ("gnugo:10+k101", "0 < P <= 100"),
        ("gnugo:1+r10+k5", "one suffix at most"),
        ("uct:8+k5-k3", "one suffix at most"),
        ("gnugo:1+k5+r10", "gnugo:LEVEL"),
        ("uct:8+k", "uct:N"),
        ("gnugo:11+k5", "LEVEL an integer 0..10"),
        ("pachi:499-k5", ">= 500"),
        ("uct:0+k5", "uct:N with N a positive integer"),
    ],
)
def test_malformed_pachi_and_komi_specs_name_the_spec_and_the_accepted_form(text, says, make_config):
    with pytest.raises(PlayerSpecError) as err:
        PlayerSpec.parse(text)
    assert repr(text) in str(err.value) and says in str(err.value)
    with pytest.raises(PlayerSpecError, match=r"config key 'evaluate\.target'"):
        PlayerSpec.parse_config(text, "evaluate.target")
    with pytest.raises(ConfigError, match=r"evaluate\.opponents\[0\]"):
        make_config(evaluate={"opponents": [text]})
    with pytest.raises(PlayerError, match=re.escape(repr(text))):
        resolve_spec(text)


def test_the_pachi_floor_is_named_in_the_refusal():
    with pytest.raises(PlayerSpecError, match=r"'pachi:499'.*N >= 500"):
        PlayerSpec.parse("pachi:499")


@pytest.mark.parametrize("text", ["random+k5", "gen3+k5", "previous-k2", "gtp:/bin/program+k5"])
def test_only_reference_players_take_a_komi_shift(text):
    """`+kP` belongs to gnugo/uct/pachi; elsewhere it is no shift (a file name, a command line), which the
    config refuses and no spec reads as a komi."""
    spec = PlayerSpec.parse(text)
    assert spec.komi_points is None and spec.kind in ("file", "gtp")
    with pytest.raises(PlayerSpecError, match="out of range"):
        PlayerSpec.parse_config(text, "evaluate.target")


def test_a_komi_shifted_uct_resolves_and_makes_a_player_that_carries_its_points():
    resolved = resolve_spec("uct:8-k2.5")
    assert resolved.name == "uct:8-k2.5" and resolved.playouts == 8
    assert resolved.describe()["komi_points"] == -2.5
    player = make_player(resolved, SearchSettings(readouts=1))
    assert isinstance(player, UCTPlayer) and player.playouts == 8
    assert (player.name, player.komi_points) == ("uct:8-k2.5", -2.5)
    plain = make_player(resolve_spec("uct:8"), SearchSettings(readouts=1))
    assert plain.komi_points == 0.0 and "komi_points" not in resolve_spec("uct:8").describe()


def test_a_komi_shifted_gnugo_resolves_with_its_points(gnugo_path):
    resolved = resolve_spec("gnugo:1+k8", gnugo_path=gnugo_path)
    assert resolved.kind == "gnugo" and resolved.level == 1 and resolved.komi_points == 8.0
    with make_player(resolved, SearchSettings(readouts=1)) as player:
        assert (player.name, player.komi_points) == ("gnugo:1+k8", 8.0)


# ------------------------------------------------------------------------------------------------ referee


def _random(name: str, komi_points: float = 0.0) -> RandomPlayer:
    """A random player given a komi shift directly (the grammar has no `random+kP`): its moves do not
    depend on the komi, so two games with the same seeds differ in their komi only."""
    player = RandomPlayer(name)
    player.komi_points = komi_points
    return player


def _rescore(record: dict, board_size: int, komi: float) -> float:
    """The record's moves replayed from the empty board and counted (Tromp-Taylor) at `komi`."""
    position = go.Position(board_size, komi)
    for vertex in record["moves"]:
        position = position.play_move(coords.from_gtp(vertex, board_size))
    return position.score()


@pytest.mark.parametrize(
    ("black_points", "white_points", "komi_played"),
    [
        (0.0, 20.0, 27.5),
        (5.0, 0.0, 2.5),
        (10.5, 0.0, -3.0),
        (3.0, 3.0, 7.5),
        (0.0, -7.5, 0.0),
        (4.0, 1.0, 4.5),
    ],
)
def test_the_referee_plays_and_scores_at_the_komi_the_players_shift(black_points, white_points, komi_played):
    seeds = (3, 4)
    plain = referee_game(_random("b"), _random("w"), 9, KOMI, seeds)
    shifted = referee_game(_random("b", black_points), _random("w", white_points), 9, KOMI, seeds)
    assert "komi" not in plain
    assert shifted["moves"] == plain["moves"]  # the same game: only the komi differs
    assert shifted["ended_by"] in ("score", "move_cap") and len(shifted["moves"]) > 20
    if komi_played == KOMI:
        assert "komi" not in shifted  # the shifts cancel: the match's komi, not recorded again
    else:
        assert shifted["komi"] == komi_played
    # the score is counted at the shifted komi: it moves by exactly the shift
    assert shifted["score"] == pytest.approx(plain["score"] - (komi_played - KOMI))
    assert shifted["score"] == pytest.approx(_rescore(shifted, 9, komi_played))
    assert shifted["result"] == result_string(shifted["score"])
    winner = 1 if shifted["score"] > 0 else -1 if shifted["score"] < 0 else 0
    assert shifted["winner_colour"] == {1: "black", -1: "white", 0: "draw"}[winner]


def test_a_large_komi_shift_turns_the_game_for_the_side_that_receives_it():
    plain = referee_game(_random("b"), _random("w"), 9, KOMI, (5, 6))
    points = abs(plain["score"]) + 1.0  # just enough to turn this game
    receiver = "white" if plain["score"] > 0 else "black"
    black, white = (0.0, points) if receiver == "white" else (points, 0.0)
    shifted = referee_game(_random("b", black), _random("w", white), 9, KOMI, (5, 6))
    assert plain["winner_colour"] != receiver and shifted["winner_colour"] == receiver


def test_the_sgf_of_a_shifted_game_carries_the_komi_it_was_played_at():
    game = referee_game(_random("b"), _random("w", 20.0), 9, KOMI, (3, 4))
    results = {"board_size": 9, "komi": KOMI}
    text = game_sgf(results, {**game, "index": 0, "black_name": "b", "white_name": "w+k20"}).decode()
    assert "KM[27.5]" in text and f"RE[{game['result']}]" in text
    plain = referee_game(_random("b"), _random("w"), 9, KOMI, (3, 4))
    plain_text = game_sgf(results, {**plain, "index": 0, "black_name": "b", "white_name": "w"}).decode()
    assert "KM[7.5]" in plain_text


@pytest.mark.parametrize("shifted_colour", ["black", "white"])
def test_uct_with_a_komi_shift_plays_the_shifted_game(shifted_colour):
    """`uct:8` against `uct:8+k20` through the spec, resolution and `make_player`: both searched at the
    shifted komi, the record counted at it."""
    search = SearchSettings(readouts=1)
    plain, receiver = (make_player(resolve_spec(s), search) for s in ("uct:8", "uct:8+k20"))
    black, white = (receiver, plain) if shifted_colour == "black" else (plain, receiver)
    game = referee_game(black, white, 5, KOMI, (7, 8))
    komi = KOMI - 20.0 if shifted_colour == "black" else KOMI + 20.0
    assert game["komi"] == komi
    if game["ended_by"] in ("score", "move_cap"):
        assert game["score"] == pytest.approx(_rescore(game, 5, komi))
    # the receiver's side wins a 5x5 game with 20 points of komi in hand (the board holds 25)
    assert game["winner_colour"] == shifted_colour


# ---------------------------------------------------------------------------------------------- find_pachi


def test_find_pachi_names_the_variable_when_it_points_at_no_executable(tmp_path, monkeypatch):
    plain = tmp_path / "pachi"
    plain.write_text("#!/bin/sh\n")
    plain.chmod(0o644)
    for target in (plain, tmp_path / "missing", tmp_path):
        monkeypatch.setenv(PACHI_ENV, str(target))
        with pytest.raises(FileNotFoundError, match=rf"\${PACHI_ENV}=.*{target.name}"):
            find_pachi()
    plain.chmod(0o755)
    monkeypatch.setenv(PACHI_ENV, str(plain))
    assert find_pachi() == str(plain)


def test_find_pachi_looks_beside_python_then_on_path_then_says_make_pachi(tmp_path, monkeypatch):
    venv_bin, path_bin = tmp_path / "venv" / "bin", tmp_path / "path"
    venv_bin.mkdir(parents=True)
    path_bin.mkdir()
    monkeypatch.delenv(PACHI_ENV, raising=False)
    monkeypatch.setattr(sys, "executable", str(venv_bin / "python"))
    monkeypatch.setenv("PATH", str(path_bin))
    with pytest.raises(FileNotFoundError, match=r"`make pachi`.*MINIGO_PACHI"):
        find_pachi()
    with pytest.raises(PlayerError, match=r"'pachi:500'.*`make pachi`"):
        resolve_spec("pachi:500")
    (venv_bin / "pachi").mkdir()  # a folder of that name is no executable
    on_path = path_bin / "pachi"
    on_path.write_text("#!/bin/sh\n")
    on_path.chmod(0o755)
    assert find_pachi() == str(on_path)
    (venv_bin / "pachi").rmdir()
    beside = venv_bin / "pachi"
    beside.write_text("#!/bin/sh\n")
    beside.chmod(0o755)
    assert find_pachi() == str(beside)  # the venv's own (what `make pachi` builds) before PATH's
    resolved = resolve_spec("pachi:700+k4")
    assert resolved.argv == (str(beside),) and resolved.playouts == 700 and resolved.komi_points == 4.0
    assert resolved.describe()["komi_points"] == 4.0


# ------------------------------------------------------------------------------------------- Pachi games


@pytest.fixture(scope="module")
def pachi(unavailable) -> str:
    """Path of Pachi (`make pachi`); without it the test skips (CI=true: fails)."""
    try:
        return gtp_program.find_pachi()
    except FileNotFoundError as e:
        unavailable(str(e))


def _pachi_game(seeds: tuple[int, int], max_moves: int | None = None) -> tuple[dict, float]:
    """pachi:500 (Black) against uct:64 on 9x9, each player made afresh: (record, Pachi's CPU s)."""
    search = SearchSettings(readouts=1)
    with make_player(resolve_spec("pachi:500"), search) as pachi_player, UCTPlayer(64) as uct:
        assert isinstance(pachi_player, PachiPlayer)
        game = referee_game(pachi_player, uct, 9, KOMI, seeds, max_moves)
        info = pachi_player.info()
        assert "Pachi" in info["engine_name"] and info["playouts"] == 500
        return game, pachi_player.program_cpu_seconds()


def _check_legal(game: dict, komi: float = KOMI) -> None:
    """Every move legal, the game ended as a game ends, a count that is the Tromp-Taylor count at `komi`."""
    assert game["ended_by"] in ENDINGS and game["ended_by"] != "illegal_move", game.get("note")
    position = go.Position(9, komi)
    for vertex in game["moves"]:
        position = position.play_move(coords.from_gtp(vertex, 9))  # raises on an illegal move
    if game["ended_by"] in ("score", "move_cap"):
        assert game["score"] == pytest.approx(position.score())
        assert game["result"] == result_string(game["score"])
    else:
        assert game["result"] in ("B+R", "W+R")


def test_a_pachi_game_finishes_legally_and_replays_from_its_seeds(pachi):
    first, cpu = _pachi_game((11, 12))
    _check_legal(first)
    assert len(first["moves"]) >= 10 and cpu > 0.0
    again, _ = _pachi_game((11, 12))
    assert again["moves"] == first["moves"] and again["result"] == first["result"]
    # only Pachi's seed differs: another game (its first 30 moves are enough to tell)
    other, _ = _pachi_game((13, 12), max_moves=30)
    _check_legal(other)
    assert other["moves"] != first["moves"][: len(other["moves"])]


def test_a_pachi_player_restarts_per_game_and_counts_the_cpu_of_every_process(pachi):
    """Each game is a fresh Pachi seeded by the game (its seed is a command-line option only); the CPU of the
    closed processes stays counted, so a game's cost is the difference before and after it."""
    search = SearchSettings(readouts=1)
    with make_player(resolve_spec("pachi:500-k2"), search) as player, UCTPlayer(8) as uct:
        assert player.komi_points == -2.0 and player.name == "pachi:500-k2"
        before = player.program_cpu_seconds()
        first_pid = player.client.pid
        # Pachi White, giving 2 points: komi 5.5; 16 moves a game are enough to count CPU
        game = referee_game(uct, player, 9, KOMI, (21, 22), max_moves=16)
        assert game["komi"] == KOMI - 2.0
        _check_legal(game, KOMI - 2.0)
        after_one = player.program_cpu_seconds()
        second_pid = player.client.pid
        referee_game(uct, player, 9, KOMI, (23, 24), max_moves=16)
        after_two = player.program_cpu_seconds()
        assert first_pid != second_pid != player.client.pid  # a new process per game
        assert after_one - before > 0.05 and after_two - after_one > 0.05
        assert after_two >= player.client.cpu_seconds()  # the live process's CPU is part of it
    assert player.client is None and os.path.exists(pachi)
