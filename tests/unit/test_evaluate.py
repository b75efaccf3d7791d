"""Matches: a model against GNU Go (both counts agree), against itself (~50%), and a trained model against a
uniformly random player (it wins nearly every game). The trained model is made here, in seconds: a tiny
network trained by supervised learning on 5x5 games of a capture-first heuristic (policy: the heuristic's
moves; value: the games' Tromp-Taylor results).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from minigo_core.base.config import SearchSettings
from minigo_core.game import coords, features, go, sgf
from minigo_core.game.result import parse_score
from minigo_core.jobs.evaluate import cli_main
from minigo_core.nn.model import ModelConfig, random_model, save_model
from minigo_core.play.match import run_match
from minigo_core.play.players import (
    ModelPlayer,
    PlayerError,
    PlayerSetup,
    RandomPlayer,
    make_player,
    resolve_spec,
)
from minigo_core.play.referee import MatchSettings, decided, game_seeds, match_seed, play_match, referee_game

SMALL = 5  # board for the statistical tests: 50-move games
KOMI = 0.5


def heuristic_games(board_size: int, komi: float, games: int, rng: np.random.Generator):
    """Playouts by a simple policy: capture if possible, else a random move that neither fills one of its own
    eyes nor puts itself in atari. Returns planes, the moves played and the results from the mover's view."""
    planes, moves, z = [], [], []
    for _ in range(games):
        pos = go.Position(board_size, komi)
        seen, played = [], []
        while not pos.is_game_over() and pos.n < 2 * board_size**2:
            legal = pos.all_legal_moves()[:-1]
            not_eye = legal & ~pos.eyeish(pos.to_play).reshape(-1)
            capture = legal & pos.atari_liberties(-pos.to_play).reshape(-1)
            safe = not_eye & ~pos.atari_liberties(pos.to_play).reshape(-1)
            pool = next((c for c in (capture, safe, not_eye) if c.any()), None)
            choice = None if pool is None else int(rng.choice(np.flatnonzero(pool)))
            move = None if choice is None else coords.from_flat(choice, board_size)
            seen.append(pos)
            played.append(coords.to_flat(move, board_size))
            pos = pos.play_move(move)
        winner = 1 if pos.score() > 0 else -1
        planes.append(features.extract_batch(seen, "agz"))
        moves += played
        z += [winner * p.to_play for p in seen]
    return np.concatenate(planes), np.array(moves), np.array(z, dtype=np.float32)


def train_tiny_model(path: str, seed: int = 2024, games: int = 300, steps: int = 300) -> None:
    """A 1-block, 16-filter 5x5 network after `steps` Adam steps on heuristic positions (seeded), saved."""
    torch.set_num_threads(1)
    rng = np.random.default_rng(seed)
    x, m, z = heuristic_games(SMALL, KOMI, games, rng)
    x, m, z = torch.from_numpy(x).float(), torch.from_numpy(m), torch.from_numpy(z)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = random_model(ModelConfig(SMALL, 1, 16, 16, "agz"), seed=seed)
        net.train()
        opt = torch.optim.Adam(net.parameters(), lr=3e-3)
        for _ in range(steps):
            idx = torch.from_numpy(rng.integers(0, len(x), 128))
            logits, value = net(x[idx])
            loss = F.cross_entropy(logits, m[idx]) + F.mse_loss(value, z[idx])
            opt.zero_grad()
            loss.backward()
            opt.step()
    net.eval()
    save_model(path, net, {"generation": 1, "kind": "test fixture: supervised on heuristic playouts"})


@pytest.fixture(scope="module")
def trained_model(tmp_path_factory) -> str:
    path = str(tmp_path_factory.mktemp("models") / "trained5.safetensors")
    train_tiny_model(path)
    return path


def model_player(path: str, name: str, readouts: int = 16, softpick: int = 2) -> ModelPlayer:
    spec = resolve_spec(path)
    search = SearchSettings(readouts=readouts, softpick_moves=softpick, resign_threshold=-1.0)
    player = make_player(spec, search, backend="torch")
    player.name = name
    return player


def test_trained_model_beats_uniformly_random_player(trained_model):
    spec = resolve_spec(trained_model)
    match = MatchSettings(24, SMALL, KOMI, seed=match_seed(11, 1, spec.name, "random"))
    search = SearchSettings(readouts=32, softpick_moves=2, resign_threshold=-1.0)
    results = run_match(
        spec, resolve_spec("random"), match, PlayerSetup(search, backend="torch"), generation=1
    )
    t = results["totals"]
    assert t["games"] == 24 and t["player_wins"] + t["opponent_wins"] + t["draws"] == 24
    # Nearly every game (this model wins ~95% here; 20 of 24 fails for it with probability < 1%).
    assert t["player_wins"] >= 20, [(g["black"], g["result"]) for g in results["games"]]
    assert t["ci95"][0] > 0.6
    # Both colours: the model wins as Black and as White.
    assert t["player_wins_as_black"] >= 9 and t["player_wins_as_white"] >= 9


def test_model_against_itself_scores_about_half(trained_model):
    """Two copies of one model: colours alternate, so the expected score is exactly 1/2.

    24 games are at most as variable as Binomial(24, 1/2) (pairs of games with swapped colours are negatively
    correlated); 4..20 wins holds with probability > 0.9997 under it, and the run is seeded."""
    a = model_player(trained_model, "copy-a", readouts=4, softpick=4)
    b = model_player(trained_model, "copy-b", readouts=4, softpick=4)
    records, stopped = play_match(a, b, MatchSettings(24, SMALL, KOMI, seed=5))
    assert not stopped and len(records) == 24
    assert [r["black"] for r in records[:4]] == ["player", "opponent", "player", "opponent"]
    wins = sum(r["winner"] == "player" for r in records) + 0.5 * sum(r["winner"] == "draw" for r in records)
    assert 4 <= wins <= 20, wins
    # The seeded softpick makes the games different samples, not one game repeated.
    assert len({tuple(r["moves"]) for r in records}) >= 20


def test_model_against_gnugo_ends_with_a_result_both_agree_on(gnugo_path, tmp_path):
    torch.set_num_threads(1)
    path = str(tmp_path / "tiny9.safetensors")
    save_model(path, random_model(ModelConfig(9, 1, 8, 16, "agz"), seed=3), {"generation": 0})
    model = model_player(path, "tiny9", readouts=8, softpick=0)
    with make_player(resolve_spec("gnugo:1", gnugo_path=gnugo_path), SearchSettings()) as gnugo:
        game = referee_game(model, gnugo, 9, 7.5, seeds=game_seeds(1, 0))
        # The referee's record replays to the position both sides counted.
        final = go.replay([coords.from_gtp(v, 9) for v in game["moves"]], 9, 7.5)[-1]
    assert game["ended_by"] == "score" and final.is_game_over()
    assert game["score"] == final.score()
    theirs = parse_score(game["engine_scores"]["gnugo:1"])
    assert theirs is not None and np.sign(theirs) == np.sign(game["score"]) and game["scores_agree"] is True


def test_early_stop_is_exact():
    assert decided(11, 11, 20) == "above"  # 11 of 20 already: above 50% whatever follows
    assert decided(10, 10, 20) is None  # 10 wins then 10 losses would be exactly 50%: not decided
    assert decided(0, 10, 20) == "not_above"  # at most 10 of 20: cannot pass 50%
    assert decided(3, 10, 20) is None
    records, stopped = play_match(
        RandomPlayer("r"), ScriptedLoser(), MatchSettings(20, SMALL, KOMI, 1, early_stop=True)
    )
    assert stopped and len(records) == 11 and all(r["winner"] == "player" for r in records)


class ScriptedLoser(RandomPlayer):
    """Resigns at once: the other side wins every game."""

    def __init__(self) -> None:
        super().__init__("loser")

    def genmove(self, position):
        return "resign"


def test_player_specs(tmp_path):
    root = str(tmp_path)
    assert resolve_spec("gen0", root).name == "gen0000"
    prev = resolve_spec("previous", root, generation=7)
    assert prev.name == "gen0006" and prev.url.endswith("models/gen0006.safetensors")
    gnugo = resolve_spec("gnugo:3")
    assert gnugo.name == "gnugo:3" and gnugo.argv[gnugo.argv.index("--level") + 1] == "3"
    assert resolve_spec("random").kind == "random"
    assert resolve_spec("gtp:/usr/games/gnugo --mode gtp").argv == ("/usr/games/gnugo", "--mode", "gtp")
    assert resolve_spec(f"{root}/models/gen0012.safetensors").name == "gen0012"
    assert resolve_spec(f"{root}/elsewhere/best.safetensors").name == "model:best"
    for bad in ("previous", "gnugo:11", "gnugo:x", "gtp:", "nonsense"):
        with pytest.raises(PlayerError):
            resolve_spec(bad, root, generation=0)


def test_evaluate_command_writes_results_and_sgf(trained_model, tmp_path, capsys):
    root = tmp_path / "run"
    (root / "models").mkdir(parents=True)
    (root / "models" / "gen0001.safetensors").write_bytes(open(trained_model, "rb").read())
    config = tmp_path / "config.yaml"
    config.write_text(
        f"root: {root}\nboard_size: {SMALL}\nkomi: {KOMI}\nmodel: {{backend: torch}}\n"
        "evaluate: {games: 4, readouts: 8, softpick_moves: 2}\n"
    )
    out = root / "eval" / "gen0001" / "vs_random.json"
    argv = [
        "--config",
        str(config),
        "--generation",
        "1",
        "--opponent",
        "random",
        "--out",
        str(out),
        "--sgf-dir",
        str(tmp_path / "sgf"),
        "--no-early-stop",
    ]
    assert cli_main(argv) == 0
    assert "gen0001 vs random:" in capsys.readouterr().out
    results = json.loads(out.read_text())
    assert results["player"]["name"] == "gen0001" and results["opponent"]["name"] == "random"
    assert results["readouts"] == 8 and len(results["games"]) == 4 and results["totals"]["games"] == 4
    for game in results["games"]:
        assert game["ended_by"] in ("score", "resign", "move_cap", "illegal_move")
        assert game["winner"] in ("player", "opponent", "draw")
        data = (tmp_path / "sgf" / f"game{game['index']:03d}.sgf").read_bytes()
        moves, size, komi, result = sgf.read_sgf(data)
        assert size == SMALL and komi == KOMI and result == game["result"]
        assert [coords.to_gtp(m, SMALL) for m in moves] == game["moves"]
    # Re-running the match reproduces it (seeds come from the run seed, the generation and the names).
    again = tmp_path / "again.json"
    rerun = ["--config", str(config), "--generation", "1", "--opponent", "random", "--out", str(again)]
    assert cli_main(rerun + ["--no-early-stop"]) == 0
    replayed = json.loads(again.read_text())["games"]
    assert [g["moves"] for g in replayed] == [g["moves"] for g in results["games"]]
    # Errors name what is wrong.
    assert (
        cli_main(
            [
                "--config",
                str(config),
                "--generation",
                "0",
                "--opponent",
                "previous",
                "--out",
                str(tmp_path / "x.json"),
            ]
        )
        == 2
    )
    assert "previous" in capsys.readouterr().err
