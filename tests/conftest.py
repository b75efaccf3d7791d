"""Shared fixtures of every test folder (unit/, e2e/, cluster/); each factory is a fixture that returns the
factory function, so no test module imports another module of tests/. The Slurm test cluster's fixture is
in cluster/conftest.py."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import numpy as np
import pytest
import yaml

from minigo_core.base import native
from minigo_core.base.config import RunConfig, load_config
from minigo_core.bench.dag import build_run
from minigo_core.data import layout, storage
from minigo_core.data.gamefile import GameRecord
from minigo_core.game import go
from minigo_core.play.gtp_program import find_gnugo

CI_RUNS_ALL = "CI=true runs every test: `make test` installs and CI runs as root"


def _unavailable(reason: str, ci: str = CI_RUNS_ALL) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} ({ci})")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def unavailable():
    """`unavailable(reason)`: what a test needs is missing here (root, a package, a mount): the test skips
    with the reason, except under CI=true, where it fails, so CI cannot pass with the test not run."""
    return _unavailable


@pytest.fixture(scope="session")
def gnugo_path() -> str:
    """Path of GNU Go. `make test` installs it; a bare `pytest` without it skips (CI=true fails instead)."""
    try:
        return find_gnugo()
    except FileNotFoundError as e:
        _unavailable(str(e), "CI must run the GNU Go tests")


@pytest.fixture(scope="session")
def compiled_library():
    """`compiled_library(lib) -> handle`: a compiled library (`native.Library`) loaded; without its build the
    test skips, except under CI=true where it fails (CI must test the compiled code)."""

    def load(lib: native.Library):
        try:
            return native.load(lib)
        except native.NativeUnavailable as e:
            _unavailable(str(e), "CI must test the compiled libraries")

    return load


def _make_record(board_size: int = 9, num_moves: int = 40, seed: int = 0, every: int = 3) -> GameRecord:
    """A legal random game with every `every`-th position recorded, visits on legal moves only."""
    rng = np.random.default_rng(seed)
    position = go.Position(board_size, 7.5)
    moves, rows = [], []
    while len(moves) < num_moves and not position.is_game_over():
        legal = np.flatnonzero(position.all_legal_moves()[:-1])
        if position.n % every == 0:
            visits = np.zeros(board_size * board_size + 1, dtype=np.int64)
            visits[rng.choice(legal, size=min(5, legal.size), replace=False)] = rng.integers(1, 30, size=5)[
                : min(5, legal.size)
            ]
            rows.append((position.n, visits, position.to_play))
        flat = int(rng.choice(legal)) if legal.size else board_size * board_size
        move = None if flat == board_size * board_size else divmod(flat, board_size)
        if len(moves) % 17 == 16:
            move = None
        position = position.play_move(move)
        moves.append(move)
    winner = 1 if position.score() > 0 else -1
    metadata = {
        "format": "minigo-game",
        "format_version": 2,
        "board_size": board_size,
        "komi": 7.5,
        "features": "agz",
        "result": {"winner": winner, "score": position.score(), "resigned": False},
        "model": {"url": "m.safetensors", "generation": 3, "sha256": "00"},
    }
    return GameRecord(
        metadata=metadata,
        moves=moves,
        move_index=np.array([r[0] for r in rows]),
        visits=np.stack([r[1] for r in rows]),
        value_target=np.array([winner * r[2] for r in rows], dtype=np.float32),
        full_search=np.ones(len(rows), dtype=bool),
        root_value=rng.uniform(-1, 1, len(rows)).astype(np.float32),
    )


@pytest.fixture(scope="session")
def make_record():
    """`make_record(board_size=9, num_moves=40, seed=0, every=3) -> GameRecord`: a legal random game with
    every `every`-th position recorded, visits on legal moves only."""
    return _make_record


def _write_match(root: str, generation: int, opponent: str, winners: list[str], finished: float) -> str:
    """A results file as `minigo evaluate` writes it (the fields `read_match` reads), at its layout path."""
    url = layout.eval_path(root, generation, opponent.replace(":", "-"))
    data = {
        "format": "minigo-match",
        "player": {"name": f"gen{generation:04d}"},
        "opponent": {"name": opponent},
        "games": [{"index": i, "winner": w} for i, w in enumerate(winners)],
        "finished_unix": finished,
    }
    storage.write_text(url, json.dumps(data))
    return url


@pytest.fixture()
def write_match():
    """`write_match(root, generation, opponent, winners, finished) -> url`: a match results file of a run
    (`winners` from the player's side: "player", "opponent" or "draw"), at its layout path."""
    return _write_match


# ------------------------------------------------------------------------------------------- run configs
REPO = Path(__file__).resolve().parents[1]
# The config files a test config starts from, each merged over the one before (as Snakemake merges
# --configfile over the Snakefile's config.yaml). "default": config.yaml alone, which is also what the
# library's dataclass defaults say (test_config.py checks it); "tiny": the tests' tiny run.
CONFIG_BASES = {"default": ("config.yaml",), "tiny": ("config.yaml", "config/tiny.yaml")}


def _merge(base: dict, over: dict) -> dict:
    """`over` merged into `base` key by key; a mapping merges into the mapping it replaces (a section)."""
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = copy.deepcopy(value)
    return base


def _config_data(*layers: dict, base: str = "tiny", **overrides) -> dict:
    data: dict = {}
    for name in CONFIG_BASES[base]:
        _merge(data, yaml.safe_load((REPO / name).read_text()))
    for layer in (*layers, overrides):
        _merge(data, layer)
    return data


def _make_config(*layers: dict, base: str = "tiny", **overrides) -> RunConfig:
    return load_config(_config_data(*layers, base=base, **overrides))


def _write_config(directory: Path, *layers: dict, name: str = "tiny.yaml", base: str = "tiny", **overrides):
    data = _config_data({"root": str(Path(directory) / "run")}, *layers, base=base, **overrides)
    path = Path(directory) / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.fixture(scope="session")
def config_data():
    """`config_data(*layers, base="tiny", **overrides) -> dict`: a run config as a plain mapping:
    config/tiny.yaml over config.yaml (`base="default"`: config.yaml alone), then each of `layers` and the
    keyword `overrides` merged key by key (`selfplay={"games": 6}` changes that one key of the section)."""
    return _config_data


@pytest.fixture(scope="session")
def make_config():
    """`make_config(*layers, base="tiny", **overrides) -> RunConfig`: `config_data`'s mapping, validated."""
    return _make_config


@pytest.fixture(scope="session")
def write_config():
    """`write_config(directory, *layers, name="tiny.yaml", base="tiny", **overrides) -> Path`:
    `config_data`'s mapping as the YAML file `directory/name`, with the run root `directory/run` unless
    the layers or overrides set `root`."""
    return _write_config


@pytest.fixture()
def finished_run(tmp_path, write_config):
    """`finished_run(done, generations=6, games=3) -> (cfg, config file)`: a tiny run whose generations
    0..done-1 are finished (placeholder files, see `minigo_core.bench.dag.build_run`)."""

    def make(done: int, generations: int = 6, games: int = 3):
        config = write_config(tmp_path, generations=generations, selfplay={"games": games})
        run_config = build_run(str(tmp_path / "run"), config, done, games, generations)
        return load_config(str(run_config)), run_config

    return make


def _training_inputs(
    base: Path,
    run: dict,
    generation: int = 1,
    games: int = 6,
    max_moves: int = 30,
    recorded_fraction: float = 1.0,
    provenance: dict | None = None,
) -> dict:
    """What `minigo train` of `generation` reads, in `base`: the run config `run` (root `base/run`) as
    `config.json`, `games` synthetic games of at most `max_moves` moves for each generation before it (one
    generator, seed 1, generation by generation), its window, and the parent: a random model (seed 5) with
    the provenance `provenance` (default: its generation). The paths and config, by name: base, config (the
    file), cfg (the RunConfig), root, window, parent (the model), manifest (the window's)."""
    from minigo_core.bench.window import random_moves, synthetic_game
    from minigo_core.data import gamefile, window
    from minigo_core.nn import model

    root = str(base / "run")
    cfg_path = base / "config.json"
    cfg_path.write_text(json.dumps({"root": root, **run}))
    cfg = load_config(str(cfg_path))
    board = cfg.board_size
    rng = np.random.default_rng(1)
    for gen in range(generation):
        for i in range(games):
            moves = random_moves(board, rng, max_moves=max_moves)
            record = synthetic_game(moves, board, rng, recorded_fraction=recorded_fraction)
            gamefile.write_game(layout.game_path(root, gen, i), record)
    window_dir = layout.window_dir(root, generation)
    manifest = window.build_window(cfg, generation, window_dir, workers="threads")
    parent = layout.model_path(root, generation - 1)
    net = model.random_model(model.ModelConfig.from_run(cfg), seed=5)
    model.save_model(parent, net, provenance if provenance is not None else {"generation": generation - 1})
    return {"base": base, "config": str(cfg_path), "cfg": cfg, "root": root, "window": window_dir,
            "parent": parent, "manifest": manifest}  # fmt: skip


@pytest.fixture(scope="session")
def training_inputs():
    """`training_inputs(base, run, generation=1, games=6, max_moves=30, recorded_fraction=1.0,
    provenance=None) -> {base, config, cfg, root, window, parent, manifest}`: a run config (the mapping
    `run`, root `base/run`), synthetic games of the generations before `generation`, its window and a random
    parent model, for the tests of training jobs (in-process or `minigo train` started by hand)."""
    return _training_inputs
