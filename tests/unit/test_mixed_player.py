"""Mixtures with random play, `gnugo:LEVEL+rP` and `uct:N+rP`: the ladder's graded rungs where neither uct:N
nor GNU Go has one. The grammar and its errors, reproducible games, the share of random moves, strength that
falls with P between its base and `random`, and GNU Go kept in step with the moves it did not choose."""

from __future__ import annotations

import pytest

from minigo_core.base.config import ConfigError
from minigo_core.base.playerspec import PlayerSpec, PlayerSpecError
from minigo_core.game import coords, go
from minigo_core.play.players import GTPPlayer, MixedPlayer, UCTPlayer, make_player, resolve_spec
from minigo_core.play.referee import MatchSettings, play_match, referee_game


@pytest.mark.parametrize(
    ("text", "name", "kind", "percent", "slug"),
    [
        ("gnugo:1+r10", "gnugo:1+r10", "gnugo", 10.0, "gnugo-1+r10"),
        ("gnugo:01+r2.50", "gnugo:1+r2.5", "gnugo", 2.5, "gnugo-1+r2.5"),
        ("uct:1+r50", "uct:1+r50", "uct", 50.0, "uct-1+r50"),
        ("uct:064+r0.5", "uct:64+r0.5", "uct", 0.5, "uct-64+r0.5"),
    ],
)
def test_mixture_specs_parse_to_one_name(text, name, kind, percent, slug, make_config):
    spec = PlayerSpec.parse(text)
    assert (spec.text, spec.kind, spec.random_percent, spec.slug) == (name, kind, percent, slug)
    assert spec.rating_name(4) == name and spec.generation_at(4) is None
    assert PlayerSpec.from_slug(slug) == spec
    assert PlayerSpec.parse(name) == spec
    cfg = make_config(evaluate={"opponents": [text]})
    assert cfg.evaluate.opponents[0] == text
    resolved = resolve_spec(text) if kind == "uct" else None
    if resolved is not None:
        assert resolved.name == name and resolved.describe()["random_percent"] == percent


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("gnugo:1+r0", "0 < P < 100"),
        ("uct:1+r100", "0 < P < 100"),
        ("uct:1+r250", "0 < P < 100"),
        ("gnugo:1+rx", "gnugo:LEVEL+rP"),
        ("gnugo:1+r", "gnugo:LEVEL+rP"),
        ("gnugo:11+r5", "LEVEL an integer 0..10"),
        ("uct:0+r5", "uct:N with N a positive integer"),
        ("uct:8+r-5", "uct:N+rP"),
        ("random+r5", "not a known spec"),
    ],
)
def test_malformed_mixtures_name_the_spec_and_the_accepted_form(text, says, make_config):
    if text.startswith("random"):
        with pytest.raises(Exception, match=says):
            resolve_spec(text)
        return
    with pytest.raises(PlayerSpecError) as err:
        PlayerSpec.parse(text)
    assert repr(text) in str(err.value) and says in str(err.value)
    with pytest.raises(ConfigError, match=r"evaluate\.opponents\[0\]"):
        make_config(evaluate={"opponents": [text]})


def _mixed_uct(playouts: int, percent: float) -> MixedPlayer:
    player = make_player(resolve_spec(f"uct:{playouts}+r{percent:g}"), None)
    assert isinstance(player, MixedPlayer) and isinstance(player.base, UCTPlayer)
    return player


def test_a_mixed_game_replays_from_its_seeds_and_plays_its_share_of_random_moves():
    games, shares = [], []
    for _ in range(2):
        mixed = _mixed_uct(32, 40)
        games.append(referee_game(mixed, UCTPlayer(32, name="other"), 7, 7.5, (11, 12)))
        shares.append(mixed.random_moves)
    assert games[0]["moves"] == games[1]["moves"] and shares[0] == shares[1]
    other = referee_game(_mixed_uct(32, 40), UCTPlayer(32, name="other"), 7, 7.5, (13, 14))
    assert other["moves"] != games[0]["moves"]
    # over many moves, the random share is near 40% (a binomial: within 4 sigma); it plays Black
    mixed, own, counted = _mixed_uct(8, 40), 0, 0
    for seed in range(12):
        record = referee_game(mixed, UCTPlayer(8, name="other"), 7, 7.5, (seed, seed + 100))
        own += (len(record["moves"]) + 1) // 2
        counted += mixed.random_moves
    sigma = (own * 0.4 * 0.6) ** 0.5
    assert abs(counted - 0.4 * own) <= 4 * sigma, (counted, own)


def test_strength_falls_with_the_random_share_between_the_base_and_random():
    # 9x9, 40 games a match: uct:8 beats uct:8+r50, which beats random (each a clear majority)
    records, _ = play_match(UCTPlayer(8), _mixed_uct(8, 50), MatchSettings(40, 9, 7.5, seed=31))
    assert sum(r["winner"] == "player" for r in records) >= 28
    records, _ = play_match(_mixed_uct(8, 50), make_player(resolve_spec("random"), None),
                            MatchSettings(40, 9, 7.5, seed=32))  # fmt: skip
    assert sum(r["winner"] == "player" for r in records) >= 28


def test_gnugo_is_told_the_random_moves_and_stays_in_step(gnugo_path):
    resolved = resolve_spec("gnugo:1+r30", gnugo_path=gnugo_path)
    results = []
    for _ in range(2):
        with make_player(resolved, None) as mixed:
            assert isinstance(mixed, MixedPlayer) and isinstance(mixed.base, GTPPlayer)
            assert mixed.client is mixed.base.client  # its CPU time is counted like GNU Go's
            record = referee_game(mixed, UCTPlayer(16), 7, 7.5, (5, 6))
            assert mixed.random_moves > 0
            # GNU Go's own board holds the referee's final position: every random move reached it
            stones = {c: set(mixed.base._send(f"list_stones {c}").split()) for c in ("black", "white")}
            results.append((record["moves"], record["result"], mixed.final_score()))
    assert results[0] == results[1]
    position = go.Position(7, 7.5)
    for move in results[0][0]:
        position = position.play_move(None if move is None else coords.from_gtp(move, 7))
    for colour, value in (("black", go.BLACK), ("white", go.WHITE)):
        points = (position.board.ravel() == value).nonzero()[0]
        mine = {coords.to_gtp(coords.from_flat(int(p), 7), 7) for p in points}
        assert {v.upper() for v in stones[colour]} == mine


def test_minigo_gtp_serves_a_uct_mixture():
    import subprocess
    import sys
    from pathlib import Path

    script = b"1 name\n2 boardsize 9\n3 genmove b\n4 genmove w\n5 genmove b\n6 quit\n"
    argv = [sys.executable, "-m", "minigo_core.cli", "gtp", "--model", "uct:8+r50"]
    root = Path(__file__).resolve().parents[2]
    runs = [subprocess.run(argv, input=script, capture_output=True, cwd=root, timeout=120) for _ in range(2)]
    assert runs[0].returncode == 0, runs[0].stderr.decode()
    responses = runs[0].stdout.decode().split("\n\n")[:-1]
    assert responses[0] == "=1 MiniGo-uct8+r50" and all(r[0] == "=" for r in responses)
    assert runs[0].stdout == runs[1].stdout  # seeded: the same moves again
    bad = subprocess.run([*argv[:-1], "uct:8+r0"], input=b"quit\n", capture_output=True, cwd=root, timeout=60)
    assert bad.returncode == 2 and b"0 < P < 100" in bad.stderr
