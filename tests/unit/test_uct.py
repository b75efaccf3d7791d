"""The `uct:N` reference player: plain UCT with random playouts on the compiled board (search/csrc/uct.cpp).

Deterministic for a seed, legal moves only, never fills its own one-point eyes (unless the opponent just
passed, the search_moves rule), passes when passing wins, stronger with more playouts; the spec's grammar and
errors; a `minigo evaluate` match against the random player."""

from __future__ import annotations

import json

import numpy as np
import pytest

from minigo_core.base.config import ConfigError
from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError
from minigo_core.game import coords, go
from minigo_core.jobs.evaluate import cli_main
from minigo_core.play.players import UCTPlayer, make_player, resolve_spec
from minigo_core.play.referee import MatchSettings, play_match, referee_game
from minigo_core.search import engine


def random_positions(board_size: int, count: int, seed: int) -> list[list[int]]:
    """`count` move lists (flat) of random games cut at random lengths, none of them finished."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        pos, moves = go.Position(board_size, 7.5), []
        for _ in range(int(rng.integers(0, board_size * board_size))):
            legal = np.flatnonzero(pos.all_legal_moves()[:-1])
            if legal.size == 0:
                break
            p = int(rng.choice(legal))
            pos = pos.play_move(coords.from_flat(p, board_size))
            moves.append(p)
        out.append(moves)
    return out


def test_same_seed_same_move_and_another_seed_differs():
    positions = random_positions(9, 6, seed=1)
    first = [engine.uct_genmove(9, 7.5, m, 200, seed=11) for m in positions]
    again = [engine.uct_genmove(9, 7.5, m, 200, seed=11) for m in positions]
    other = [engine.uct_genmove(9, 7.5, m, 200, seed=12) for m in positions]
    assert [a.move for a in first] == [a.move for a in again]
    assert all(
        np.array_equal(a.visits, b.visits) and a.winrate == b.winrate
        for a, b in zip(first, again, strict=True)
    )
    assert any(not np.array_equal(a.visits, b.visits) for a, b in zip(first, other, strict=True))
    for r in first:
        assert r.visits.sum() == 200 and r.visits[r.move] == r.visits.max() and 0 <= r.winrate <= 1


def test_moves_are_legal_and_never_fill_own_eyes():
    """A self-play game of uct:32 on 7x7: every move legal; no move fills the mover's own one-point eye
    unless the opponent just passed (then the search considers every legal move, as mcts.search_moves)."""
    n = 7
    player = UCTPlayer(32)
    player.new_game(n, 7.5, seed=3)
    pos = go.Position(n, 7.5)
    while not pos.is_game_over() and pos.n < 2 * n * n:
        move = player.genmove(pos)
        assert pos.is_move_legal(move)
        if move is not None and not (pos.recent and pos.recent[-1] is None):
            assert not pos.eyeish(pos.to_play)[move], f"filled its own eye at {move} after {pos.n} moves"
        pos = pos.play_move(move)
    assert pos.n > 20
    for moves in random_positions(5, 20, seed=4):
        pos = go.replay([coords.from_flat(m, 5) for m in moves], 5, 7.5)[-1]
        move = coords.from_flat(engine.uct_genmove(5, 7.5, moves, 64, seed=5).move, 5)
        assert pos.is_move_legal(move)


def test_passes_when_passing_wins():
    """Black owns the whole 5x5 board but two one-point eyes and White just passed: passing ends the game
    won; filling an eye lets White capture everything. The search passes."""
    n = 5
    eyes = {0, n * n - 1}
    moves = []
    for p in range(n * n):
        if p not in eyes:
            moves += [p, n * n]  # Black plays, White passes
    result = engine.uct_genmove(n, 7.5, moves, 256, seed=1)
    assert result.move == n * n and result.winrate == 1.0


def test_more_playouts_win_a_clear_majority():
    strong, weak = UCTPlayer(256), UCTPlayer(8)
    records, _ = play_match(strong, weak, MatchSettings(20, 7, 7.5, seed=2024))
    wins = sum(r["winner"] == "player" for r in records)
    assert wins >= 15, f"uct:256 won only {wins} of 20 games against uct:8 on 7x7"


def test_a_game_replays_from_its_seeds():
    a = referee_game(UCTPlayer(16), UCTPlayer(16, name="other"), 5, 7.5, (1, 2))
    b = referee_game(UCTPlayer(16), UCTPlayer(16, name="other"), 5, 7.5, (1, 2))
    assert a["moves"] == b["moves"] and a["result"] == b["result"]


def test_bad_calls_are_refused():
    with pytest.raises(ValueError, match="uct search refused"):
        engine.uct_genmove(5, 7.5, [0, 0], 8, seed=1)  # occupied point
    with pytest.raises(ValueError, match="uct search refused"):
        engine.uct_genmove(5, 7.5, [25, 25], 8, seed=1)  # the game is over
    for size, playouts in ((1, 8), (20, 8), (5, 0)):
        with pytest.raises(ValueError, match="uct search refused"):
            engine.uct_genmove(size, 7.5, [], playouts, seed=1)


def test_spec_grammar_slug_and_rating_name(make_config):
    spec = PlayerSpec.parse("uct:64")
    assert (spec.kind, spec.playouts, spec.slug, spec.rating_name(3)) == ("uct", 64, "uct-64", "uct:64")
    assert PlayerSpec.from_slug("uct-64") == spec and PlayerSpec.parse("uct:064") == spec
    assert spec.generation_at(5) is None and spec.opponent_key(5) == "uct:64"
    assert PlayerSpec.parse_config("uct:8", "evaluate.opponents[0]").playouts == 8
    resolved = resolve_spec("uct:16")
    assert (resolved.kind, resolved.name, resolved.describe()["playouts"]) == ("uct", "uct:16", 16)
    assert isinstance(make_player(resolved, None), UCTPlayer)
    cfg = make_config(evaluate={"opponents": ["uct:32", "previous"], "final_opponents": ["uct:1024"]})
    assert cfg.evaluate.opponents[0] == "uct:32"


@pytest.mark.parametrize("text", ["uct:0", "uct:-5", "uct:abc", "uct:", "uct:1.5", "uct: 8"])
def test_malformed_specs_name_the_spec_and_the_accepted_form(text, make_config):
    with pytest.raises(PlayerSpecError) as err:
        PlayerSpec.parse(text)
    assert repr(text) in str(err.value) and "uct:N with N a positive integer of playouts" in str(err.value)
    with pytest.raises(ConfigError, match=r"evaluate\.opponents\[0\].*uct:N"):
        make_config(evaluate={"opponents": [text]})


def test_evaluate_uct_against_random_writes_results(write_config, tmp_path, capsys):
    config = write_config(tmp_path)
    out = tmp_path / "vs_random.json"
    argv = ["--config", str(config), "--player", "uct:16", "--opponent", "random", "--out", str(out)]
    assert cli_main([*argv, "--games", "2", "--no-early-stop"]) == 0
    assert "uct:16 vs random:" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["player"]["name"] == "uct:16" and results["player"]["kind"] == "uct"
    assert results["player"]["playouts"] == 16 and results["opponent"]["name"] == "random"
    assert results["totals"]["games"] == 2 and len(results["games"]) == 2
    for game in results["games"]:
        assert game["ended_by"] in ("score", "move_cap") and game["winner"] in ("player", "opponent", "draw")
    bad = ["--config", str(config), "--player", "uct:0", "--opponent", "random", "--out", str(tmp_path / "x")]
    assert cli_main(bad) == 2
